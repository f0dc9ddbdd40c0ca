"""What a confined run is given (``Confinement`` with its ``Limits``), what the machine grants (``Capabilities``),
the error when it grants too little, and the toolchains' private uid range."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchsmith import uids
from benchsmith.enums import StrEnum
from benchsmith.tool_errors import ToolMissing


class MemoryControl(StrEnum):
    CGROUP_V2 = "cgroup_v2"
    CGROUP_V1 = "cgroup_v1"
    RLIMIT = "rlimit_as"  # per-process address space plus a process cap


MIB = 1024 * 1024
GIB = 1024 * MIB
DEFAULT_MEMORY_MB = 3072

# Private uid range for toolchain runs (as root); ``benchsmith.uids`` keeps it disjoint from the sandbox's.
UID_BASE = uids.TOOLCHAIN_UIDS.base
UID_SPAN = uids.TOOLCHAIN_UIDS.span
# The uid container backends run toolchains as when we are root (inside the engine's own namespaces).
CONTAINER_UID = UID_BASE - 1


class ConfinementUnavailable(ToolMissing):
    """The kernel (or our privileges) cannot confine toolchains; the message says what is missing.  A ``ToolMissing``:
    analyzers record the repository as not analysable here instead of running the toolchain unconfined."""


@dataclass(frozen=True)
class Limits:
    """Limits on one confined run's whole process tree (memory, processes) and on each process (the rest)."""

    memory_bytes: int = DEFAULT_MEMORY_MB * MIB
    processes: int = 512  # tasks: a JVM's threads count
    cpu_seconds: int | None = None  # None: derived from the run's timeout
    file_size: int = 1 * GIB
    open_files: int = 4096
    scratch_bytes: int = 512 * MIB  # each private tmpfs
    # Only without a memory cgroup: runtimes that reserve far more address space than they use (JVM, V8, Go)
    # get this much on top of ``memory_bytes`` as their address-space limit.
    address_space_extra: int = 0


@dataclass(frozen=True)
class Confinement:
    """What one toolchain run may see: host paths shown read-only at the same path (``read``), private tmpfs
    directories (``scratch``; gone after the run) and host directories it may write (``write``; given to the
    throwaway uid for the run and taken back after it)."""

    read: tuple[str, ...] = ()
    scratch: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    # read paths that are our own data (trees we wrote): made readable to the throwaway uid before the run
    grant: tuple[str, ...] = ()


@dataclass(frozen=True)
class Capabilities:
    """What this machine grants (``probe()``)."""

    available: bool
    memory: MemoryControl | None
    user_namespace: bool
    missing: str = ""  # one line, when not available
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        if not self.available:
            return f"toolchains NOT confined: {self.missing}"
        parts = ["throwaway uid", "mount/pid/net/ipc/uts namespaces", "read-only minimal root",
                 f"memory via {self.memory.value if self.memory else 'nothing'}"]
        if self.user_namespace:
            parts.append("user namespace")
        return "toolchains confined: " + ", ".join(parts + list(self.notes))


class UidLease(uids.UidLease):
    """A uid of the toolchains' own private range (never one a sandboxed program gets)."""

    base = UID_BASE
    span = UID_SPAN
    pool = "toolchain"
    error = ConfinementUnavailable
