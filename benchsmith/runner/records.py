"""What a run is given and what it returns: the backend, per-process rlimits, the result, the missing-tool error."""

from __future__ import annotations

import resource
from dataclasses import dataclass, field

from benchsmith.enums import StrEnum
from benchsmith.tool_errors import ToolMissing  # noqa: F401 - part of the runner's records

DEFAULT_OUTPUT_CAP = 64 * 1024 * 1024


class ToolchainBackend(StrEnum):
    """Where a toolchain runs (``build cceval --toolchain-backend``); not a model backend
    (``evaluate.generation``'s ``GenerationBackend``) nor a sandbox (``evaluate.sandbox``'s ``SandboxBackend``)."""

    LOCAL = "local"
    DOCKER = "docker"
    PODMAN = "podman"


@dataclass(frozen=True)
class Limits:
    """POSIX rlimits applied in the child before exec (None = inherit)."""

    cpu_seconds: int | None = None
    address_space: int | None = None  # bytes
    file_size: int | None = None  # bytes
    processes: int | None = None
    open_files: int | None = None

    def apply(self) -> None:
        for res, value in (
            (resource.RLIMIT_CPU, self.cpu_seconds),
            (resource.RLIMIT_AS, self.address_space),
            (resource.RLIMIT_FSIZE, self.file_size),
            (resource.RLIMIT_NPROC, self.processes),
            (resource.RLIMIT_NOFILE, self.open_files),
        ):
            if value is not None:
                resource.setrlimit(res, (value, value))


@dataclass
class RunResult:
    argv: list[str]
    returncode: int | None  # None when killed on timeout
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False
    duration: float = 0.0
    extra: dict = field(default_factory=dict)
    # a confined run whose process tree hit its memory limit (the kernel killed it; ``stderr`` ends with a line
    # that says so)
    oom: bool = False

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.returncode == 0

