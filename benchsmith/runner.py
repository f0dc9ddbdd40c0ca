"""The one hardened subprocess runner every external tool goes through.

Guarantees, whatever the tool does: it runs in a new session/process group, with stdin closed, a wall-clock
timeout after which the *whole group* is killed, capped stdout/stderr (a tool that prints gigabytes cannot exhaust
our memory), an explicit environment, and optional rlimits.  The result carries the exit code but callers parse
diagnostics from the output; exit codes of linters/compilers are not trusted on their own.

Toolchain backends (``ToolchainBackend``): ``local`` runs the argv directly; ``docker``/``podman`` wrap the same
argv in ``<engine> run`` against an image from ``containers/``: no network, a read-only root with a tmpfs ``/tmp``,
every capability dropped, no new privileges, the caller's uid:gid, memory/pids limits, ``Limits`` as ``--ulimit``s,
and the given mounts (read-only unless marked writable; only an output directory should be). A run that is killed
(timeout, output cap) also removes its container: killing the engine client alone would leave the container running.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence
from benchsmith.enums import StrEnum

if TYPE_CHECKING:
    from benchsmith.confine import Confinement

DEFAULT_OUTPUT_CAP = 64 * 1024 * 1024
_PR_SET_PDEATHSIG = 1


def _load_prctl():
    """libc's prctl, resolved once in the parent so the forked child only makes the call (Linux only)."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()


class ToolchainBackend(StrEnum):
    """Where a toolchain runs (``build cceval --toolchain-backend``); not a model backend
    (``evaluate.generation``'s ``GenerationBackend``) nor a sandbox (``evaluate.sandbox``'s ``SandboxBackend``)."""

    LOCAL = "local"
    DOCKER = "docker"
    PODMAN = "podman"


Backend = ToolchainBackend  # the old name, kept so code written against it still runs


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


def caller_user() -> str:
    """``uid:gid`` a container runs as: the caller's own when not root (files it reads or writes have the caller's
    permissions; rootless engines map it), else a throwaway non-root uid (``confine.CONTAINER_UID``): root's
    toolchains never run as root, not even inside the engine's namespaces."""
    if os.getuid() == 0:
        from benchsmith.confine import CONTAINER_UID

        return f"{CONTAINER_UID}:{CONTAINER_UID}"
    return f"{os.getuid()}:{os.getgid()}"


@dataclass(frozen=True)
class ContainerSpec:
    """How to run a command in a toolchain image instead of on the host."""

    engine: ToolchainBackend
    image: str
    mounts: tuple[Mount, ...] = ()
    workdir: str | None = None
    memory: str | None = "4g"
    pids: int | None = 512
    # more `<engine> run` options; they come after the defaults, so a --user/--name here wins and a --tmpfs
    # here replaces the default tmpfs on the same path
    extra_args: tuple[str, ...] = ()
    user: str | None = field(default_factory=caller_user)
    read_only: bool = True
    # /dev/shm: with --ipc none the engine mounts none (POSIX shared memory still works, in the container's own
    # tmpfs; System V IPC is the container's own)
    tmpfs: tuple[str, ...] = ("/tmp:rw,nosuid,nodev,size=512m,mode=1777", "/dev/shm:rw,nosuid,nodev,size=64m,mode=1777")


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


_ULIMITS = (("cpu", "cpu_seconds"), ("as", "address_space"), ("fsize", "file_size"), ("nofile", "open_files"))


def _option_values(args: Sequence[str], option: str) -> list[str]:
    """Values of ``option`` in ``args`` (both ``--opt value`` and ``--opt=value``)."""
    out = []
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            out.append(args[i + 1])
        elif arg.startswith(option + "="):
            out.append(arg.split("=", 1)[1])
    return out


def _mount_arg(m: Mount) -> str:
    for path in (m.host, m.container):
        # ',' and '=' would smuggle extra mount options into --mount; relative paths mean something else to
        # the engine (a named volume, or the daemon's working directory).
        if not os.path.isabs(path) or "," in path or "=" in path or "\n" in path:
            raise ValueError(f"mount path {path!r} must be absolute and free of ',', '=' and newlines")
    if not os.path.exists(m.host):
        # `-v` would silently create a missing host path (as root); fail instead.
        raise FileNotFoundError(f"mount source {m.host} does not exist")
    return f"type=bind,source={m.host},target={m.container}" + ("" if m.writable else ",readonly")


def container_name(argv: Sequence[str]) -> str | None:
    """The ``--name`` a ``container_argv`` result gives its container."""
    names = _option_values(argv, "--name")
    return names[-1] if names else None


def container_argv(
    argv: Sequence[str], spec: ContainerSpec, env: Mapping[str, str] | None, limits: Limits | None = None
) -> list[str]:
    engine = spec.engine.value
    out = [engine, "run", "--rm", "-i", "--network", "none", "--ipc", "none", "--security-opt", "no-new-privileges",
           "--cap-drop", "ALL", "--name", f"benchsmith-{uuid.uuid4().hex[:16]}",
           # output reaches us through the attached streams; a log driver would also copy it to the daemon's
           # disk, unbounded
           "--log-driver", "none"]
    if spec.read_only:
        out.append("--read-only")
    if spec.user:
        out += ["--user", spec.user]
        if spec.engine is ToolchainBackend.PODMAN and os.getuid() != 0:
            # rootless podman maps the caller to root inside; keep-id maps it to the same uid instead, so
            # --user <caller> reads the caller's files
            out.append("--userns=keep-id")
    replaced = {t.split(":", 1)[0] for t in _option_values(spec.extra_args, "--tmpfs")}
    for t in spec.tmpfs:
        if t.split(":", 1)[0] not in replaced:
            out += ["--tmpfs", t]
    if spec.memory:
        # swap equal to memory: the limit is the limit, not memory plus as much swap again
        out += ["--memory", spec.memory, "--memory-swap", spec.memory]
    pids = [p for p in (spec.pids, limits.processes if limits else None) if p]
    if pids:
        out += ["--pids-limit", str(min(pids))]
    for name, attr in _ULIMITS:
        value = getattr(limits, attr, None) if limits else None
        if value is not None:
            out += ["--ulimit", f"{name}={value}:{value}"]
    for m in spec.mounts:
        out += ["--mount", _mount_arg(m)]
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
    die_with_parent: bool = True,
    confine: "Confinement | None" = None,
) -> RunResult:
    """Run ``argv`` hardened.  Never raises for tool failures; raises ``ToolMissing`` if the program is absent.

    ``preexec`` runs in the child before ``limits`` are applied (namespaces, dropping privileges);
    ``kill_on_output_cap`` kills the group as soon as either stream exceeds ``output_cap`` instead of draining
    until the timeout; ``after_exit`` runs once the group is dead but before the output readers are joined (to
    kill processes that left the group and still hold the pipes); ``die_with_parent`` has the kernel kill the
    tool when the thread that started it dies (a SIGKILLed build must not leave a compiler running for minutes).
    ``confine`` runs the tool confined (``benchsmith.confine``): a throwaway uid in fresh namespaces on a minimal
    read-only view, with only the environment given here (plus PATH/HOME/TMPDIR/LANG), and that run's limits in
    place of ``limits``; ignored for container runs, which get the engine's confinement instead.
    """
    argv = [str(a) for a in argv]
    handed: list[str] = []
    if container is not None:
        handed = _hand_mounts(container)
        full_env = None
        # rlimits belong to the tool in the container (as --ulimit), not to the engine client
        argv = container_argv(argv, container, env, limits)
        limits = None
        exe = argv[0]
    else:
        full_env = dict(os.environ) if inherit_env else {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        full_env.update(env or {})
        exe = argv[0]
    if shutil.which(exe, path=(full_env or os.environ).get("PATH")) is None and not os.path.isfile(exe):
        raise ToolMissing(f"{exe!r} not found on PATH; run `make setup` (or install it) and retry")
    prepared = None
    if confine is not None and container is None:
        from benchsmith import confine as confinement

        if not os.path.isabs(exe):
            argv[0] = os.path.abspath(shutil.which(exe, path=(full_env or os.environ).get("PATH")) or exe)
        prepared = confinement.prepare(argv, confine, str(cwd) if cwd is not None else None, dict(env or {}),
                                       timeout)
        argv, full_env, limits, cwd = prepared.argv, prepared.env, None, "/"
        try:
            return _run(argv, cwd, full_env, timeout, output_cap, limits, None, preexec, kill_on_output_cap,
                        after_exit, die_with_parent, prepared)
        finally:
            prepared.close()
    try:
        return _run(argv, cwd, full_env, timeout, output_cap, limits, container, preexec, kill_on_output_cap,
                    after_exit, die_with_parent, None)
    finally:
        if handed:
            from benchsmith.confine import chown_tree

            chown_tree(handed, os.geteuid(), os.getegid())


def _hand_mounts(spec: ContainerSpec) -> list[str]:
    """As root, a container runs as the throwaway ``CONTAINER_UID``: make the read-only mounts (our own data)
    readable to it and give it the writable ones for the run; returns what to take back afterwards."""
    from benchsmith.confine import CONTAINER_UID, chown_tree, grant_read

    if os.geteuid() != 0 or spec.user != f"{CONTAINER_UID}:{CONTAINER_UID}":
        return []
    grant_read([m.host for m in spec.mounts if not m.writable])
    writable = [m.host for m in spec.mounts if m.writable]
    chown_tree(writable, CONTAINER_UID, CONTAINER_UID)
    return writable


def _run(argv, cwd, full_env, timeout, output_cap, limits, container, preexec, kill_on_output_cap, after_exit,
         die_with_parent, prepared) -> RunResult:
    parent = os.getpid()

    def child_setup() -> None:
        if die_with_parent and _PRCTL is not None:
            _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != parent:  # the parent died before the request took effect
                os._exit(137)
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
        preexec_fn=child_setup if (limits is not None or preexec is not None or die_with_parent) else None,
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
        if container is not None and (timed_out or proc.returncode < 0):
            _remove_container(argv)
        if after_exit is not None:
            after_exit()
    for t in readers:
        t.join(timeout=5)
    stderr = b"".join(err_chunks).decode("utf-8", errors="replace")
    oom = prepared is not None and not timed_out and prepared.oom()
    if oom:
        from benchsmith.confine import oom_message

        stderr = stderr.rstrip("\n") + ("\n" if stderr.strip() else "") + oom_message(prepared.limits) + "\n"
    return RunResult(
        argv=argv,
        returncode=None if timed_out else proc.returncode,
        stdout=b"".join(out_chunks).decode("utf-8", errors="replace"),
        stderr=stderr,
        timed_out=timed_out,
        truncated=bool(flags.get("truncated")),
        duration=time.monotonic() - start,
        oom=oom,
    )


def _remove_container(argv: Sequence[str]) -> None:
    """The client was killed; the container it started may still run.  Remove it by name (best effort)."""
    name = container_name(argv)
    if name is None:
        return
    try:
        subprocess.run([argv[0], "rm", "-f", name], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired):
        pass


def which(program: str) -> str | None:
    return shutil.which(program)


def repo_root() -> Path:
    """The benchsmith source tree (for containers/ and the project-local toolchain prefix)."""
    return Path(__file__).resolve().parent.parent
