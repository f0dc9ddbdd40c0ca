"""Toolchain confinement: every pylint/javac/tsc/mcs/go run sees only the toolchain and its input, as nobody.

A confined run (``runner.run(..., confine=Confinement(...))``) is started through a small init program
(``init_program.py``, run by our own interpreter with ``-I -S``) that, as root and before the tool starts:

* joins a fresh **cgroup** per run: memory (v2 ``memory.max`` where the machine delegates it, else the v1
  ``memory.limit_in_bytes`` plus ``memsw``) and pids, so the limits hold for the tool's whole process tree;
  without a memory cgroup the tool gets an address-space rlimit together with a process cap instead;
* enters new **mount, pid, network, IPC and UTS** namespaces (no interface but a loopback that is down);
* builds a new root on a small tmpfs holding, **read-only**, only the system directories (``/usr``, ``/lib*``,
  a handful of ``/etc`` entries the JDK, mono and the dynamic linker read), the toolchain's own directories and
  the paths the caller names (the vetted snapshot, the stubbed tree, our driver and config files), each at its
  own path, so argv and diagnostics are the same as unconfined; a private tmpfs on ``/tmp``, ``/dev/shm`` and
  each scratch path; ``/proc`` of the new pid namespace; minimal ``/dev``; then ``pivot_root`` so nothing else
  of the host (its ``/tmp``, ``/var/tmp``, ``/run``, ``/home``, ``/root``, our output) exists in it;
* becomes a **throwaway uid** (one per run from a private range, ``flock``-ed so concurrent runs, even in other
  processes, never share one; never root), with no groups, no new privileges, a fresh **user namespace** when
  the kernel allows an unprivileged one, and rlimits (CPU seconds, processes, file size, open files, no core);
* stays as PID 1 of the namespace, reaping, so when the tool exits (or we kill the run) every process it left
  behind dies with the namespace.

``benchsmith.runner.probe_confinement()`` finds out once per process what the machine grants, with one real
confined run; ``require_confinement`` raises :class:`ConfinementUnavailable` (one line saying what is missing) where
it cannot confine, unless the user allowed unconfined runs (``--allow-unconfined``).  They live with the runner,
which starts every confined run: this package never depends on the runner.

This is also the isolation layer of the program sandbox (``benchsmith.evaluate.sandbox``, which imports from here,
never the reverse): its memory cgroups are made where ``cgroups.find_layout`` finds the machine lets us (one v1/v2
detection and delegation check, one set of limit/OOM/peak files, one removal), in a private directory
(``cgroup_tree.PrivateCgroups``) its fork servers sit in; its probe checks the facts ``capabilities`` checks
(``NAMESPACE_FACTS``, ``confinement_problems``); its uids come from ``benchsmith.uids`` beside ours.

By job: ``records`` (what a run is given, what the machine grants, the uid range), ``capabilities`` (what a probe's report means, the cgroup layout),
``cgroups`` (layout, files, one run's cgroups), ``cgroup_tree`` (a long-lived private cgroup directory with
children), ``view`` (what the tool sees of the host, permission hand-over), ``launch`` (one run) and
``init_program.py`` (the init program itself, never imported).
"""

from benchsmith.confine.capabilities import NAMESPACE_FACTS, cgroup_layout, confinement_problems, missing_basics
from benchsmith.confine.cgroup_tree import PrivateCgroups
from benchsmith.confine.cgroups import CgroupFiles, CgroupLayout, RunCgroups
from benchsmith.confine.launch import CONFINE_EXIT, Prepared, oom_message, prepare
from benchsmith.confine.records import (CONTAINER_UID, DEFAULT_MEMORY_MB, GIB, MIB, UID_BASE, UID_SPAN, Capabilities,
                                        Confinement, ConfinementUnavailable, Limits, MemoryControl, UidLease)
from benchsmith.confine.view import (DEV_NODES, ETC_ENTRIES, SYSTEM_DIRS, chown_tree, executable_paths, grant_read,
                                     python_paths)

__all__ = ["Confinement", "Limits", "Capabilities", "ConfinementUnavailable", "MemoryControl",
           "CgroupFiles", "CgroupLayout", "PrivateCgroups", "NAMESPACE_FACTS", "confinement_problems",
           "python_paths", "executable_paths", "grant_read", "prepare", "DEFAULT_MEMORY_MB", "CONTAINER_UID",
           "CONFINE_EXIT", "DEV_NODES", "ETC_ENTRIES", "GIB", "MIB", "Prepared", "RunCgroups", "SYSTEM_DIRS",
           "UID_BASE", "UID_SPAN", "UidLease", "cgroup_layout", "chown_tree", "missing_basics", "oom_message"]
