"""What a sandboxed run is and what it returned: verdicts, results, launch modes, the isolation in force."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.enums import StrEnum
from benchsmith.uids import SANDBOX_UIDS


CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWIPC = 0x08000000

# Private uid range for sandboxed runs (as root); ``benchsmith.uids`` keeps it disjoint from the toolchains'.
UID_BASE = SANDBOX_UIDS.base
UID_SPAN = SANDBOX_UIDS.span
MIB = 1024 * 1024


class Verdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # non-zero exit (assertion, exception, syntax error ...)
    TIMEOUT = "timeout"  # wall clock or CPU time limit
    MEMORY = "memory"  # address-space limit hit (MemoryError)
    OUTPUT_LIMIT = "output_limit"  # stdout/stderr over the cap, or file-size limit
    ERROR = "error"  # the sandbox itself could not run the program
    JUDGE_ERROR = "judge_error"  # the run finished but judging its results broke (recorded, never a crash)


class SandboxBackend(StrEnum):
    LOCAL = "local"
    CONTAINER = "container"


@dataclass
class ExecResult:
    verdict: Verdict
    returncode: int | None
    stdout: str
    stderr: str
    duration: float
    detail: str = ""

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASSED


class LaunchMode(StrEnum):
    """How the local backend confines a program (the strongest one this machine allows is probed)."""

    ROOT_FORKSERVER = "root_forkserver"  # as ROOT_NAMESPACES, but forked from a pristine zygote (no exec)
    ROOT_NAMESPACES = "root_namespaces"  # netns + pid/mount ns (util-linux unshare) + throwaway uid (setpriv)
    ROOT_UID = "root_uid"  # throwaway uid via setuid in the child; escaped processes killed by uid
    USER_NAMESPACES = "user_namespaces"  # non-root: unshare --user --net --pid
    PLAIN = "plain"  # rlimits, process group, temp dir only
    CONTAINER = "container"  # the container backend


@dataclass(frozen=True)
class Isolation:
    """What the local backend could actually enforce on this machine (probed once per process)."""

    interpreter: str
    mode: LaunchMode
    network_namespace: bool
    pid_namespace: bool
    separate_uid: bool
    notes: tuple[str, ...] = ()
    ipc_namespace: bool = False  # System V IPC / POSIX queues private to each run
    private_root: bool = False  # minimal read-only root: no host /tmp, /run, /home, /root, project or data
    memory_cgroup: str | None = None  # "v1"/"v2": the memory limit holds for the run's whole process tree

    def describe(self) -> str:
        parts = [
            f"interpreter {self.interpreter}",
            f"mode {self.mode.value}",
            "network namespace" if self.network_namespace else "NO network namespace",
            "pid namespace" if self.pid_namespace else "no pid namespace",
            "IPC namespace per run" if self.ipc_namespace else "host System V IPC",
            "throwaway uid per run" if self.separate_uid else "same uid as the caller",
            "minimal read-only root (no host /tmp, /var/tmp, /run, /home, /root, project tree or data)"
            if self.private_root else "the host's file system tree",
            f"memory limit on the whole process tree (cgroup {self.memory_cgroup})" if self.memory_cgroup
            else "memory limit per process (address space) plus a process cap: no cgroup",
        ]
        return "; ".join(parts + list(self.notes))


class SandboxUnavailable(RuntimeError):
    pass
