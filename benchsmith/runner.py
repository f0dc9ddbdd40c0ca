"""The one hardened subprocess runner every external tool goes through.

Guarantees, whatever the tool does: it runs in a new session/process group, with stdin closed, a wall-clock
timeout after which the *whole group* is killed, capped stdout/stderr (a tool that prints gigabytes cannot exhaust
our memory), an explicit environment, and optional rlimits.  The result carries the exit code but callers parse
diagnostics from the output; exit codes of linters/compilers are not trusted on their own.

Backends: ``local`` runs the argv directly; ``docker``/``podman`` wrap the same argv in ``<engine> run`` against an
image from ``containers/`` with ``--network none`` and the given mounts (read-only unless marked writable).
"""

from __future__ import annotations

import enum
import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping, Sequence

DEFAULT_OUTPUT_CAP = 64 * 1024 * 1024


class Backend(str, enum.Enum):
    LOCAL = "local"
    DOCKER = "docker"
    PODMAN = "podman"

    def __str__(self) -> str:
        return self.value


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


@dataclass(frozen=True)
class Mount:
    host: str
    container: str
    writable: bool = False


@dataclass(frozen=True)
class ContainerSpec:
    """How to run a command in a toolchain image instead of on the host."""

    engine: Backend
    image: str
    mounts: tuple[Mount, ...] = ()
    workdir: str | None = None
    memory: str | None = "4g"
    pids: int | None = 512
    extra_args: tuple[str, ...] = ()  # more `<engine> run` options (--name, --user, --read-only, --tmpfs ...)


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

    @property
    def ok(self) -> bool:
        return not self.timed_out and self.returncode == 0


class ToolMissing(RuntimeError):
    pass


def _read_capped(stream, cap: int, sink: list[bytes], flags: dict) -> None:
    total = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        if total < cap:
            keep = chunk[: cap - total]
            sink.append(keep)
            total += len(keep)
            if len(keep) < len(chunk):
                _mark_truncated(flags)
        else:
            _mark_truncated(flags)  # keep draining so the child never blocks on a full pipe
    stream.close()


def _mark_truncated(flags: dict) -> None:
    first = not flags.get("truncated")
    flags["truncated"] = True
    on_cap = flags.get("on_cap")
    if first and on_cap is not None:
        on_cap()


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def container_argv(argv: Sequence[str], spec: ContainerSpec, env: Mapping[str, str] | None) -> list[str]:
    engine = spec.engine.value
    out = [engine, "run", "--rm", "-i", "--network", "none", "--security-opt", "no-new-privileges"]
    if spec.memory:
        out += ["--memory", spec.memory]
    if spec.pids:
        out += ["--pids-limit", str(spec.pids)]
    for m in spec.mounts:
        out += ["-v", f"{m.host}:{m.container}:{'rw' if m.writable else 'ro'}"]
    if spec.workdir:
        out += ["-w", spec.workdir]
    out += list(spec.extra_args)
    for k, v in sorted((env or {}).items()):
        out += ["-e", f"{k}={v}"]
    out.append(spec.image)
    out += list(argv)
    return out


def run(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 600.0,
    output_cap: int = DEFAULT_OUTPUT_CAP,
    limits: Limits | None = None,
    container: ContainerSpec | None = None,
    inherit_env: bool = True,
    preexec: Callable[[], None] | None = None,
    kill_on_output_cap: bool = False,
    after_exit: Callable[[], None] | None = None,
) -> RunResult:
    """Run ``argv`` hardened.  Never raises for tool failures; raises ``ToolMissing`` if the program is absent.

    ``preexec`` runs in the child before ``limits`` are applied (namespaces, dropping privileges);
    ``kill_on_output_cap`` kills the group as soon as either stream exceeds ``output_cap`` instead of draining
    until the timeout; ``after_exit`` runs once the group is dead but before the output readers are joined (to
    kill processes that left the group and still hold the pipes).
    """
    argv = [str(a) for a in argv]
    if container is not None:
        full_env = None
        argv = container_argv(argv, container, env)
        exe = argv[0]
    else:
        full_env = dict(os.environ) if inherit_env else {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        full_env.update(env or {})
        exe = argv[0]
    if shutil.which(exe, path=(full_env or os.environ).get("PATH")) is None and not os.path.isfile(exe):
        raise ToolMissing(f"{exe!r} not found on PATH; run `make setup` (or install it) and retry")

    def child_setup() -> None:
        if preexec is not None:
            preexec()
        if limits is not None:
            limits.apply()

    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=child_setup if (limits is not None or preexec is not None) else None,
        close_fds=True,
    )
    out_chunks: list[bytes] = []
    err_chunks: list[bytes] = []
    flags: dict = {}
    if kill_on_output_cap:
        flags["on_cap"] = lambda: _kill_group(proc)
    readers = [
        threading.Thread(target=_read_capped, args=(proc.stdout, output_cap, out_chunks, flags), daemon=True),
        threading.Thread(target=_read_capped, args=(proc.stderr, output_cap, err_chunks, flags), daemon=True),
    ]
    for t in readers:
        t.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        # Kill the group even on normal exit: a tool may leave daemons/grandchildren behind.
        _kill_group(proc)
        proc.wait()
        if after_exit is not None:
            after_exit()
    for t in readers:
        t.join(timeout=5)
    return RunResult(
        argv=argv,
        returncode=None if timed_out else proc.returncode,
        stdout=b"".join(out_chunks).decode("utf-8", errors="replace"),
        stderr=b"".join(err_chunks).decode("utf-8", errors="replace"),
        timed_out=timed_out,
        truncated=bool(flags.get("truncated")),
        duration=time.monotonic() - start,
    )


def which(program: str) -> str | None:
    return shutil.which(program)


def repo_root() -> Path:
    """The benchsmith source tree (for containers/ and the project-local toolchain prefix)."""
    return Path(__file__).resolve().parent.parent
