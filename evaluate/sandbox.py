"""Execute untrusted Python programs (model completions + tests) in a hardened sandbox.

Every program runs as its own process, in its own session and temporary directory, through
:func:`benchsmith.runner.run` (process group killed on timeout, stdin closed, output capped).  On top of that:

* **rlimits**: CPU seconds, address space, file size, processes/threads, open files, no core dumps.
* **no network**: the child enters a fresh network namespace (``unshare(CLONE_NEWNET)``; only a loopback that is
  down), so it can neither reach the host's sockets nor the outside world.  As non-root this needs user
  namespaces (``CLONE_NEWUSER|CLONE_NEWNET``); when the kernel refuses, :attr:`Isolation.network_namespace` is
  False and a warning says so.
* **a throwaway uid** (when we run as root): each run gets an unused uid from a private range (locked with
  ``flock`` so concurrent sandboxes, even in other processes, never share one).  The program therefore cannot
  read or delete our files (``/root``, pytest's tmp dirs are 0700), cannot signal its parent, and RLIMIT_NPROC
  counts only its own processes.  After the run every process of that uid is killed (``kill(-1)`` as that uid), so
  children that escaped the process group with ``setsid`` die too.
* **minimal environment**: ``HOME``/``TMPDIR`` point to the run's directory, ``PATH`` is ``/usr/bin:/bin``,
  ``PYTHONHASHSEED=0`` (deterministic verdicts), user site-packages off (``-s``).  We build the environment
  ourselves, so ``python -I`` would add nothing but would drop ``PYTHONHASHSEED``.

The ``container`` backend runs the same program in the sandbox image (``containers/sandbox.Dockerfile``) with
``--network none``, memory and pids limits, a read-only root file system and an unprivileged user.

A program PASSES iff it exits with status 0; the other verdicts say why it did not.
"""

from __future__ import annotations

import ctypes
import enum
import fcntl
import itertools
import math
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from benchsmith import runner
from benchsmith.runner import Backend, ContainerSpec, Limits, Mount

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000

# Private uid range for sandboxed runs (as root).  High enough to collide with no real account or the usual
# container sub-uid ranges; uids need no passwd entry.
UID_BASE = 1_900_000_000
UID_SPAN = 1 << 16
MIB = 1024 * 1024


class Verdict(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"  # non-zero exit (assertion, exception, syntax error ...)
    TIMEOUT = "timeout"  # wall clock or CPU time limit
    MEMORY = "memory"  # address-space limit hit (MemoryError)
    OUTPUT_LIMIT = "output_limit"  # stdout/stderr over the cap, or file-size limit
    ERROR = "error"  # the sandbox itself could not run the program

    def __str__(self) -> str:
        return self.value


class SandboxBackend(str, enum.Enum):
    LOCAL = "local"
    CONTAINER = "container"

    def __str__(self) -> str:
        return self.value


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


@dataclass(frozen=True)
class Isolation:
    """What the local backend could actually enforce on this machine (probed once per process)."""

    interpreter: str
    network_namespace: bool
    separate_uid: bool
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        parts = [
            f"interpreter {self.interpreter}",
            "network namespace" if self.network_namespace else "NO network namespace",
            "throwaway uid per run" if self.separate_uid else "same uid as the caller",
        ]
        return "; ".join(parts + list(self.notes))


class SandboxUnavailable(RuntimeError):
    pass


# --------------------------------------------------------------------------------------------------------------
# child-side setup (runs between fork and exec: keep it to async-signal-tolerant calls on pre-resolved objects)

_LIBC = ctypes.CDLL(None, use_errno=True)


def _unshare(flags: int) -> None:
    if _LIBC.unshare(ctypes.c_int(flags)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


@dataclass(frozen=True)
class _ChildPlan:
    netns_flags: int  # 0 = no namespace
    uid: int | None
    limits: Limits
    cpu_seconds: int | None = None

    def __call__(self) -> None:
        if self.netns_flags:
            _unshare(self.netns_flags)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if self.cpu_seconds is not None:
            # soft < hard: the kernel sends SIGXCPU first, which tells a CPU-time kill from other SIGKILLs
            resource.setrlimit(resource.RLIMIT_CPU, (self.cpu_seconds, self.cpu_seconds + 1))
        self.limits.apply()
        os.umask(0o077)
        if self.uid is not None:
            os.setgroups([])
            os.setresgid(self.uid, self.uid, self.uid)
            os.setresuid(self.uid, self.uid, self.uid)


# --------------------------------------------------------------------------------------------------------------
# throwaway uids (root only)


class _UidLease:
    """Exclusive use of one uid from the private range, across threads and processes (flock on a lock file)."""

    _counter = itertools.count(random.SystemRandom().randrange(UID_SPAN))
    _lock_dir: Path | None = None
    _dir_lock = threading.Lock()

    def __init__(self) -> None:
        self.uid: int | None = None
        self._fd: int | None = None

    @classmethod
    def _dir(cls) -> Path:
        with cls._dir_lock:
            if cls._lock_dir is None:
                path = Path(tempfile.gettempdir()) / f"benchsmith-sandbox-uids-{os.geteuid()}"
                path.mkdir(mode=0o700, exist_ok=True)
                st = path.lstat()
                if st.st_uid != os.geteuid() or st.st_mode & 0o077 or not path.is_dir() or path.is_symlink():
                    raise SandboxUnavailable(f"{path} is not a private directory of ours; remove it and retry")
                cls._lock_dir = path
            return cls._lock_dir

    def __enter__(self) -> "_UidLease":
        lock_dir = self._dir()
        for _ in range(UID_SPAN):
            uid = UID_BASE + next(self._counter) % UID_SPAN
            fd = os.open(lock_dir / str(uid), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return self
        raise SandboxUnavailable("no free sandbox uid")  # pragma: no cover - 65536 concurrent runs

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the flock
            self._fd = None


def _kill_uid(uid: int) -> None:
    """SIGKILL every process owned by ``uid`` (kill(-1) from a helper that becomes that uid)."""

    def become_and_kill() -> None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        for _ in range(3):
            try:
                os.kill(-1, signal.SIGKILL)
            except ProcessLookupError:
                break

    try:
        subprocess.run(
            [_TRUE], preexec_fn=become_and_kill, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, close_fds=True, timeout=10,
        )
    except (OSError, subprocess.SubprocessError):  # pragma: no cover - /bin/true vanished
        pass


_TRUE = shutil.which("true", path="/usr/bin:/bin") or "/bin/true"


# --------------------------------------------------------------------------------------------------------------
# probing what this machine allows

_PROBE_LOCK = threading.Lock()
_PROBED: dict[str, Isolation] = {}


def _candidate_interpreters(preferred: str | None) -> list[str]:
    if preferred:
        return [preferred]
    out: list[str] = []
    for cand in (sys.executable, os.path.realpath(sys.executable),
                 shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin"),
                 shutil.which("python", path="/usr/local/bin:/usr/bin:/bin")):
        if cand and cand not in out:
            out.append(cand)
    return out


_PROBE_PROGRAM = "import socket, sys; print(sys.version_info[0], sys.version_info[1], [n for _, n in socket.if_nameindex()])"


def probe_isolation(python: str | None = None) -> Isolation:
    """Find an interpreter the sandboxed user can execute and which namespaces the kernel grants us."""
    key = python or ""
    with _PROBE_LOCK:
        if key in _PROBED:
            return _PROBED[key]
        is_root = os.geteuid() == 0
        notes: list[str] = []
        netns_options = [CLONE_NEWNET] if is_root else [CLONE_NEWUSER | CLONE_NEWNET]
        netns_options.append(0)
        failures: list[str] = []
        for interp in _candidate_interpreters(python):
            for flags in netns_options:
                res = _probe_once(interp, flags, is_root)
                if res is None:
                    failures.append(f"{interp} (netns={'yes' if flags else 'no'}): could not start")
                    continue
                if res.returncode != 0:
                    failures.append(f"{interp} (netns={'yes' if flags else 'no'}): {res.stderr.strip()[-300:]}")
                    continue
                names = res.stdout.strip()
                has_netns = bool(flags) and "'lo']" in names and names.count("'") == 2
                if flags and not has_netns:
                    notes.append(f"namespace probe saw interfaces {names}")
                if not has_netns:
                    notes.append(
                        "the kernel refused a new network namespace: sandboxed programs can use the network"
                    )
                    warnings.warn("benchsmith sandbox: no network namespace available; programs are NOT cut off "
                                  "from the network", RuntimeWarning, stacklevel=3)
                if not is_root:
                    notes.append("not root: programs run as our own uid, so they can read/delete files we can "
                                 "and signal our processes; run as root or use --backend container")
                iso = Isolation(interpreter=interp, network_namespace=has_netns, separate_uid=is_root,
                                notes=tuple(notes))
                _PROBED[key] = iso
                return iso
        raise SandboxUnavailable("no Python interpreter runs in the sandbox: " + " | ".join(failures))


def _probe_once(interp: str, flags: int, is_root: bool) -> runner.RunResult | None:
    with tempfile.TemporaryDirectory(prefix="bs-sbx-probe-") as tmp:
        lease = _UidLease() if is_root else None
        try:
            if lease is not None:
                lease.__enter__()
                os.chown(tmp, lease.uid, lease.uid)
            plan = _ChildPlan(netns_flags=flags, uid=lease.uid if lease else None,
                              limits=Limits(cpu_seconds=10, address_space=1024 * MIB))
            return runner.run([interp, "-s", "-B", "-c", _PROBE_PROGRAM], cwd=tmp, env=_child_env(tmp),
                              inherit_env=False, timeout=20, output_cap=64 * 1024, preexec=plan)
        except (OSError, subprocess.SubprocessError, runner.ToolMissing):
            return None
        finally:
            if lease is not None:
                if lease.uid is not None:
                    _kill_uid(lease.uid)
                lease.__exit__(None, None, None)


def _child_env(home: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


# --------------------------------------------------------------------------------------------------------------


def _detect_engine() -> Backend:
    for engine in (Backend.DOCKER, Backend.PODMAN):
        if shutil.which(engine.value):
            return engine
    raise SandboxUnavailable("the container backend needs docker or podman on PATH")


class Sandbox:
    """Run complete Python programs hardened; ``run_many`` uses a pool of worker threads."""

    def __init__(
        self,
        backend: str | SandboxBackend = "local",
        timeout: float = 10.0,
        memory_mb: int = 1024,
        max_processes: int = 64,
        output_cap: int = 64 * 1024,
        workers: int | None = None,
        *,
        file_size_mb: int = 16,
        open_files: int = 256,
        python: str | None = None,
        image: str | None = None,
        engine: str | None = None,
    ) -> None:
        self.backend = SandboxBackend(backend)
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.timeout = float(timeout)
        self.memory_mb = int(memory_mb)
        self.max_processes = int(max_processes)
        self.output_cap = int(output_cap)
        self.workers = max(1, int(workers or os.cpu_count() or 1))
        self.file_size_mb = int(file_size_mb)
        self.open_files = int(open_files)
        self.python = python
        self._image = image
        self._engine = Backend(engine) if engine else None
        self._isolation: Isolation | None = None

    # -- introspection -----------------------------------------------------------------------------------------
    @property
    def isolation(self) -> Isolation:
        if self.backend is SandboxBackend.CONTAINER:
            return Isolation(interpreter=f"python in {self.image}", network_namespace=True, separate_uid=True,
                             notes=("container: --network none, read-only root, --user 65534",))
        if self._isolation is None:
            self._isolation = probe_isolation(self.python)
        return self._isolation

    @property
    def image(self) -> str:
        if self._image is None:
            from benchsmith.containers import image_tag

            self._image = image_tag("sandbox.Dockerfile")
        return self._image

    @property
    def engine(self) -> Backend:
        if self._engine is None:
            self._engine = _detect_engine()
        return self._engine

    # -- running -----------------------------------------------------------------------------------------------
    def run(self, program: str, timeout: float | None = None) -> ExecResult:
        timeout = self.timeout if timeout is None else float(timeout)
        start = time.monotonic()
        try:
            if self.backend is SandboxBackend.CONTAINER:
                return self._run_container(program, timeout)
            return self._run_local(program, timeout)
        except SandboxUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - one broken run must not lose a batch
            return ExecResult(Verdict.ERROR, None, "", "", time.monotonic() - start,
                              detail=f"sandbox error: {type(exc).__name__}: {exc}")

    def run_many(self, programs: Sequence[str], timeout: float | None = None,
                 progress: bool = False) -> list[ExecResult]:
        programs = list(programs)
        if not programs:
            return []
        _ = self.isolation  # probe once, before the threads start
        results: list[ExecResult | None] = [None] * len(programs)
        bar: Callable[[], None] = lambda: None
        ctx = None
        if progress:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            ctx = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), transient=False)
            task = ctx.add_task("executing", total=len(programs))
            lock = threading.Lock()

            def bar() -> None:
                with lock:
                    ctx.advance(task)

            ctx.start()
        try:
            with ThreadPoolExecutor(max_workers=min(self.workers, len(programs)),
                                    thread_name_prefix="sandbox") as pool:
                def one(i: int) -> None:
                    results[i] = self.run(programs[i], timeout)
                    bar()

                for fut in [pool.submit(one, i) for i in range(len(programs))]:
                    fut.result()
        finally:
            if ctx is not None:
                ctx.stop()
        return [r for r in results if r is not None]

    # -- backends ----------------------------------------------------------------------------------------------
    def _limits(self, timeout: float) -> Limits:
        return Limits(
            address_space=self.memory_mb * MIB,
            file_size=self.file_size_mb * MIB,
            processes=self.max_processes if os.geteuid() == 0 else None,
            open_files=self.open_files,
        )

    def _run_local(self, program: str, timeout: float) -> ExecResult:
        iso = self.isolation
        is_root = os.geteuid() == 0
        tmp = tempfile.mkdtemp(prefix="bs-sbx-")
        lease = _UidLease() if is_root else None
        try:
            if lease is not None:
                lease.__enter__()
            path = Path(tmp) / "program.py"
            path.write_text(program, encoding="utf-8")
            uid = lease.uid if lease is not None else None
            if uid is not None:
                os.chown(tmp, uid, uid)
                os.chown(path, uid, uid)
            os.chmod(tmp, 0o700)
            netns = 0
            if iso.network_namespace:
                netns = CLONE_NEWNET if is_root else CLONE_NEWUSER | CLONE_NEWNET
            plan = _ChildPlan(netns_flags=netns, uid=uid, limits=self._limits(timeout),
                              cpu_seconds=max(1, math.ceil(timeout)) + 1)
            res = runner.run(
                [iso.interpreter, "-s", "-B", "program.py"],
                cwd=tmp, env=_child_env(tmp), inherit_env=False, timeout=timeout, output_cap=self.output_cap,
                preexec=plan, kill_on_output_cap=True,
                after_exit=(lambda: _kill_uid(uid)) if uid is not None else None,
            )
            return _verdict(res)
        finally:
            if lease is not None:
                lease.__exit__(None, None, None)
            shutil.rmtree(tmp, ignore_errors=True)

    def _run_container(self, program: str, timeout: float) -> ExecResult:
        engine = self.engine
        tmp = tempfile.mkdtemp(prefix="bs-sbx-")
        name = f"bs-sbx-{uuid.uuid4().hex[:16]}"
        try:
            path = Path(tmp) / "program.py"
            path.write_text(program, encoding="utf-8")
            os.chmod(tmp, 0o755)
            os.chmod(path, 0o644)
            spec = ContainerSpec(
                engine=engine, image=self.image, mounts=(Mount(tmp, "/sandbox/src"),), workdir="/sandbox/work",
                memory=f"{self.memory_mb}m", pids=self.max_processes,
                extra_args=(
                    "--name", name, "--user", "65534:65534", "--read-only", "--cap-drop", "ALL",
                    "--tmpfs", f"/sandbox/work:rw,size={self.file_size_mb}m,mode=1777",
                    "--tmpfs", "/tmp:rw,size=16m,mode=1777",
                    "--ulimit", f"cpu={max(1, math.ceil(timeout)) + 1}",
                    "--ulimit", f"fsize={self.file_size_mb * MIB}",
                    "--ulimit", f"nofile={self.open_files}",
                    "--ulimit", "core=0",
                ),
            )
            env = {k: v for k, v in _child_env("/sandbox/work").items() if k != "PATH"}
            res = runner.run(
                ["python", "-s", "-B", "/sandbox/src/program.py"], env=env, timeout=timeout,
                output_cap=self.output_cap, container=spec, kill_on_output_cap=True,
                # killing the engine client does not stop the container; remove it by name
                after_exit=lambda: runner.run([engine.value, "rm", "-f", name], timeout=60, output_cap=4096),
            )
            return _verdict(res)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _verdict(res: runner.RunResult) -> ExecResult:
    rc = res.returncode
    tail = res.stderr[-2000:]
    if res.timed_out:
        verdict, detail = Verdict.TIMEOUT, "wall-clock timeout"
    elif rc == 0:
        verdict, detail = Verdict.PASSED, ""
    elif res.truncated:
        verdict, detail = Verdict.OUTPUT_LIMIT, "output over the cap"
    elif rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        verdict, detail = Verdict.TIMEOUT, "CPU time limit"
    elif rc in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or "File too large" in tail:
        verdict, detail = Verdict.OUTPUT_LIMIT, "file size limit"
    elif "MemoryError" in tail or "Cannot allocate memory" in tail or rc == 137:
        verdict, detail = Verdict.MEMORY, "memory limit"
    else:
        verdict, detail = Verdict.FAILED, _last_line(tail) or f"exit status {rc}"
    return ExecResult(verdict=verdict, returncode=rc, stdout=res.stdout, stderr=res.stderr,
                      duration=res.duration, detail=detail)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


__all__ = ["Verdict", "ExecResult", "Sandbox", "SandboxBackend", "Isolation", "SandboxUnavailable",
           "probe_isolation"]
