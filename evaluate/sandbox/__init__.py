"""Execute untrusted Python programs (model completions + tests) in a hardened sandbox.

Every program runs as its own process, in its own session and directory, with stdin from /dev/null, output
capped (the run is killed at the cap) and a wall-clock timeout after which everything it started is killed.
The strongest launch mode this machine allows is probed once per process (:func:`probe_isolation`,
:attr:`Sandbox.isolation` says what is in force):

* ``root_forkserver`` (root; the default): a pristine fork server per worker (``zygote.py``) sits in
  its own **network namespace** (a loopback that is down: no host sockets, no outside world), **pid namespace**
  (a program can neither see nor signal our processes; everything it started -- daemons that called setsid()
  included -- is killed and reaped before the next run) and **mount namespace** (every file system read-only,
  a size-limited private tmpfs on /tmp and /dev/shm that is emptied after each run, a /proc showing only the
  namespace).  Each program is forked from it under a **throwaway uid** (one per run from a private range,
  ``flock``-ed so concurrent sandboxes, even in other processes, never share one; RLIMIT_NPROC therefore counts
  only the run's own processes), with rlimits (CPU seconds, address space, file size, processes, open files, no
  core dumps), no-new-privileges and no kernel keys (a session keyring of its own, the key syscalls refused
  by a seccomp filter: ``zygote_keys``; every local mode).  Forking an idle interpreter instead of starting one is the speed-up.
* ``root_namespaces`` / ``root_uid`` (root, no fork server): the same limits around a fresh interpreter per
  program (util-linux ``unshare``/``setpriv``; or setuid in the child and ``kill(-1)`` as that uid afterwards).
* ``user_namespaces`` (non-root): ``unshare --user --net --pid``; the program keeps our uid, so our files are
  as readable to it as to us.  ``plain``: rlimits only, with a warning when no network namespace is possible.

The environment is minimal in every mode: ``HOME``/``TMPDIR`` = the run's directory, ``PATH`` = system
directories, ``PYTHONHASHSEED=0`` (same verdicts on every run), no user site-packages (``-s``).  We build the
environment ourselves, so ``python -I`` would add nothing but would drop ``PYTHONHASHSEED``.

The ``container`` backend runs the same program in the sandbox image (``containers/sandbox.Dockerfile``) with
``--network none``, memory and pids limits, a read-only root file system, ``--cap-drop ALL`` and uid 65534.

A program PASSES iff it exits with status 0; the other verdicts say why it did not.

Each way of running is a backend behind one interface (``backends.Backend``: ``run(program, timeout) ->
ExecResult``): ``ForkServerBackend`` (``root_forkserver``), ``ExecBackend`` (the other local modes) and
``ContainerBackend``; ``Sandbox`` picks one (``isolation=probe_mode(mode)`` forces a local mode) and runs programs
on a pool of threads.  ``tests/unit/test_sandbox_conformance.py`` holds every backend the machine can run to the
same contract (verdicts, limits, no network, no writes outside its directory, nothing left running).

The isolation layer under the backends is ``benchsmith.confine``'s, shared with toolchain confinement: cgroups
(where the machine lets us make them, v1 or v2, delegation, limits, OOM counts, removal: ``confine.cgroups``; the
sandbox's private directory its fork servers sit in: ``confine.cgroup_tree``), the facts a confinement probe
checks (``confine.capabilities``) and the disjoint throwaway uid ranges with their leases (``benchsmith.uids``).
The fork server is the sandbox's own speed layer: a separate program that is handed its cgroup directory and the
names of that cgroup version's files, so it needs nothing else of ours.

Modules by job: ``records`` (verdicts, results, modes), ``probe`` (what this machine allows), ``launch`` (local
launch modes), ``uids`` (the sandbox's uid lease, killing what a uid left), ``limits`` (the private memory cgroup,
hidden paths), ``forkserver`` (our end of the fork servers), ``zygote`` (the fork server itself: a separate
program, read as a file and run with ``python -c``), ``backends``, ``core`` (``Sandbox``), ``verdicts``.
"""

from benchsmith.evaluate.sandbox.backends import Backend, ContainerBackend, ExecBackend, ForkServerBackend
from benchsmith.evaluate.sandbox.core import Sandbox
from benchsmith.evaluate.sandbox.forkserver import HARNESS_MODULE
from benchsmith.evaluate.sandbox.probe import probe_isolation, probe_mode
from benchsmith.evaluate.sandbox.records import (ExecResult, Isolation, LaunchMode, SandboxBackend, SandboxUnavailable,
                                                 Verdict)

__all__ = ["Verdict", "ExecResult", "Sandbox", "SandboxBackend", "Isolation", "LaunchMode", "SandboxUnavailable",
           "probe_isolation", "probe_mode", "HARNESS_MODULE", "Backend", "ForkServerBackend", "ExecBackend",
           "ContainerBackend"]
