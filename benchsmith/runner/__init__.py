"""The one hardened subprocess runner every external tool goes through.

Guarantees, whatever the tool does: it runs in a new session/process group, with stdin closed, a wall-clock
timeout after which the *whole group* is killed, capped stdout/stderr (a tool that prints gigabytes cannot exhaust
our memory), an explicit environment, and optional rlimits.  The result carries the exit code but callers parse
diagnostics from the output; exit codes of linters/compilers are not trusted on their own.

Backends: ``local`` runs the argv directly; ``docker``/``podman`` wrap the same argv in ``<engine> run`` against an
image from ``containers/``: no network, a read-only root with a tmpfs ``/tmp``, every capability dropped, no new
privileges, the caller's uid:gid, memory/pids limits, ``Limits`` as ``--ulimit``s, and the given mounts
(read-only unless marked writable; only an output directory should be).  A run that is killed (timeout, output
cap) also removes its container: killing the engine client alone would leave the container running.

By job: ``records`` (what a run is given and returns), ``local`` (the run), ``container`` (the engine's argv and
mounts), ``capture`` (output capping, group kill), ``confinement`` (what confinement the machine grants: one real
confined run, once per process; the refusal to run unconfined unless allowed).
"""

from benchsmith.runner.confinement import probe_confinement, require_confinement
from benchsmith.runner.container import ContainerSpec, Mount, caller_user, container_argv, container_name
from benchsmith.runner.local import repo_root, run, which
from benchsmith.runner.records import DEFAULT_OUTPUT_CAP, ToolchainBackend, Limits, RunResult, ToolMissing

__all__ = ["ToolchainBackend", "ContainerSpec", "DEFAULT_OUTPUT_CAP", "Limits", "Mount", "RunResult", "ToolMissing",
           "caller_user", "container_argv", "container_name", "probe_confinement", "repo_root",
           "require_confinement", "run", "which"]
