"""Execute untrusted Python programs (model completions + tests) in a hardened sandbox.

Every program runs as its own process, in its own session and directory, with stdin from /dev/null, output
capped (the run is killed at the cap) and a wall-clock timeout after which everything it started is killed.
The strongest launch mode this machine allows is probed once per process (:func:`probe_isolation`,
:attr:`Sandbox.isolation` says what is in force):

* ``root_forkserver`` (root; the default): a pristine fork server per worker (``sandbox_zygote.py``) sits in
  its own **network namespace** (a loopback that is down: no host sockets, no outside world), **pid namespace**
  (a program can neither see nor signal our processes; everything it started -- daemons that called setsid()
  included -- is killed and reaped before the next run) and **mount namespace** (every file system read-only,
  a size-limited private tmpfs on /tmp and /dev/shm that is emptied after each run, a /proc showing only the
  namespace).  Each program is forked from it under a **throwaway uid** (one per run from a private range,
  ``flock``-ed so concurrent sandboxes, even in other processes, never share one; RLIMIT_NPROC therefore counts
  only the run's own processes), with rlimits (CPU seconds, address space, file size, processes, open files, no
  core dumps) and no-new-privileges.  Forking an idle interpreter instead of starting one is the speed-up.
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
"""
from __future__ import annotations

import ctypes
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
from benchsmith.enums import StrEnum

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWIPC = 0x08000000

# Private uid range for sandboxed runs (as root).  High enough to collide with no real account or the usual
# container sub-uid ranges; uids need no passwd entry.
UID_BASE = 1_900_000_000
UID_SPAN = 1 << 16
MIB = 1024 * 1024


class Verdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"  # non-zero exit (assertion, exception, syntax error ...)
    TIMEOUT = "timeout"  # wall clock or CPU time limit
    MEMORY = "memory"  # address-space limit hit (MemoryError)
    OUTPUT_LIMIT = "output_limit"  # stdout/stderr over the cap, or file-size limit
    ERROR = "error"  # the sandbox itself could not run the program


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


# --------------------------------------------------------------------------------------------------------------
# child-side setup (runs between fork and exec: only pre-resolved objects and plain system calls)

_LIBC = ctypes.CDLL(None, use_errno=True)


def _unshare(flags: int) -> None:
    if _LIBC.unshare(ctypes.c_int(flags)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")


@dataclass(frozen=True)
class _ChildPlan:
    netns_flags: int  # 0 = no namespace
    uid: int | None  # setuid to this in the child (ROOT_UID mode)
    limits: Limits
    cpu_seconds: int | None = None
    cgroup_procs: str | None = None  # join this cgroup ("0" = ourselves) before anything else

    def __call__(self) -> None:
        if self.cgroup_procs is not None:
            fd = os.open(self.cgroup_procs, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)
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


_SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"
_UNSHARE = shutil.which("unshare", path=_SYSTEM_PATH)
_SETPRIV = shutil.which("setpriv", path=_SYSTEM_PATH)
_SH = shutil.which("sh", path=_SYSTEM_PATH) or "/bin/sh"
_TRUE = shutil.which("true", path=_SYSTEM_PATH) or "/bin/true"
# PID 1 of a pid namespace ignores default-action signals (SIGXCPU ...); a shell as PID 1 keeps the program's
# signal semantics, waits for it and returns its status (128+signal when killed).
_SHIM = [_SH, "-c", '"$@"; exit $?', "sh"]


def _command(iso: "Isolation", uid: int | None, argv: list[str]) -> tuple[list[str], int, int | None]:
    """(argv to execute, unshare flags for the preexec, uid to setuid to in the preexec)."""
    if iso.mode is LaunchMode.ROOT_NAMESPACES:
        assert uid is not None and _UNSHARE and _SETPRIV
        priv = [_SETPRIV, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--"]
        return ([_UNSHARE, "--pid", "--fork", "--kill-child", "--mount-proc", *_SHIM, *priv, *argv],
                CLONE_NEWIPC | (CLONE_NEWNET if iso.network_namespace else 0), None)
    if iso.mode is LaunchMode.ROOT_UID:
        return list(argv), CLONE_NEWIPC | (CLONE_NEWNET if iso.network_namespace else 0), uid
    if iso.mode is LaunchMode.USER_NAMESPACES:
        assert _UNSHARE
        return ([_UNSHARE, "--user", "--map-root-user", "--net", "--ipc", "--pid", "--fork", "--kill-child",
                 "--mount-proc", *_SHIM, *argv], 0, None)
    return list(argv), 0, None


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
    """SIGKILL every process owned by ``uid`` (kill(-1) from a helper that becomes that uid).

    Needed only without a pid namespace: there, a child that called setsid() outlives the process group."""

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


_PROBE_PROGRAM = (
    # fractions: a stdlib module nobody imported yet, so the sandboxed uid must be able to read the stdlib
    "import fractions, json, os, socket, sys; print(json.dumps({'ifaces': sorted(n for _, n in socket.if_nameindex()), "
    "'pid': os.getpid(), 'uid': os.getuid(), 'version': sys.version, 'prefix': sys.prefix}))"
)


def _modes_to_try(forkserver: bool = True) -> list[tuple[LaunchMode, bool]]:
    if os.geteuid() == 0:
        out = [(LaunchMode.ROOT_FORKSERVER, True)] if forkserver else []
        if _UNSHARE and _SETPRIV:
            out.append((LaunchMode.ROOT_NAMESPACES, True))
        out += [(LaunchMode.ROOT_UID, True), (LaunchMode.ROOT_UID, False)]
        return out
    out = [(LaunchMode.USER_NAMESPACES, True)] if _UNSHARE else []
    out += [(LaunchMode.PLAIN, True), (LaunchMode.PLAIN, False)]
    return out


def probe_isolation(python: str | None = None, forkserver: bool = True) -> Isolation:
    """Find an interpreter the sandboxed user can execute and the strongest confinement the kernel grants us."""
    import json

    key = f"{python or ''}|{forkserver}"
    with _PROBE_LOCK:
        if key in _PROBED:
            return _PROBED[key]
        failures: list[str] = []
        for interp in _candidate_interpreters(python):
            own = _own_view(interp)
            if own is None:
                failures.append(f"{interp}: does not run even unconfined")
                continue
            for mode, netns in _modes_to_try(forkserver):
                iso = Isolation(interpreter=interp, mode=mode, network_namespace=netns,
                                pid_namespace=mode in (LaunchMode.ROOT_FORKSERVER, LaunchMode.ROOT_NAMESPACES,
                                                       LaunchMode.USER_NAMESPACES),
                                separate_uid=mode in (LaunchMode.ROOT_FORKSERVER, LaunchMode.ROOT_NAMESPACES,
                                                      LaunchMode.ROOT_UID))
                res = _probe_once(iso)
                label = f"{interp} [{mode.value}, netns={'yes' if netns else 'no'}]"
                if isinstance(res, str):
                    failures.append(f"{label}: {res}")
                    continue
                if res.returncode != 0:
                    failures.append(f"{label}: exit {res.returncode}: {res.stderr.strip()[-300:]}")
                    continue
                try:
                    facts = json.loads(res.stdout)
                except ValueError:
                    failures.append(f"{label}: unreadable probe output {res.stdout[:200]!r}")
                    continue
                if netns and facts["ifaces"] != ["lo"]:
                    failures.append(f"{label}: still sees interfaces {facts['ifaces']}")
                    continue
                if iso.pid_namespace and facts["pid"] > 5:
                    failures.append(f"{label}: pid {facts['pid']} is not in a fresh pid namespace")
                    continue
                if iso.separate_uid and facts["uid"] < UID_BASE:
                    failures.append(f"{label}: still runs as uid {facts['uid']}")
                    continue
                if (facts["version"], facts["prefix"]) != own:
                    # e.g. a venv under a 0700 home: the binary starts but cannot read its own stdlib/libpython
                    # and silently falls back to another installation's; use an interpreter it can fully read
                    failures.append(f"{label}: sees a different installation ({facts['prefix']}) than ours")
                    break
                notes = []
                if not netns:
                    notes.append("the kernel refused a network namespace: sandboxed programs can use the network")
                    warnings.warn("benchsmith sandbox: no network namespace available; programs are NOT cut off "
                                  "from the network (" + " | ".join(failures)[-500:] + ")",
                                  RuntimeWarning, stacklevel=3)
                if res.extra.get("readonly_failures"):
                    notes.append("could not make read-only: " + ", ".join(res.extra["readonly_failures"]))
                if mode is LaunchMode.ROOT_FORKSERVER:
                    notes.append("private tmpfs /tmp, /var/tmp and /dev/shm")
                cgroup = None
                if iso.separate_uid:
                    cg = _memory_cgroups()
                    cgroup = cg.label if cg is not None else None
                    if cg is None:
                        notes.append("no memory cgroup (" + _cgroup_note() + ")")
                if mode is not LaunchMode.ROOT_FORKSERVER:
                    notes.append("host file systems visible (read-only is enforced only by the fork server)")
                if not iso.separate_uid:
                    notes.append("not root: programs run as our own uid, so they can read/delete files we can; "
                                 "run as root or use --backend container for that")
                iso = Isolation(interpreter=interp, mode=mode, network_namespace=netns,
                                pid_namespace=iso.pid_namespace, separate_uid=iso.separate_uid,
                                notes=tuple(notes), ipc_namespace=mode is not LaunchMode.PLAIN or netns,
                                private_root=mode is LaunchMode.ROOT_FORKSERVER, memory_cgroup=cgroup)
                _PROBED[key] = iso
                return iso
        raise SandboxUnavailable("no Python interpreter runs in the sandbox: " + " | ".join(failures))


def _own_view(interp: str) -> tuple[str, str] | None:
    """(sys.version, sys.prefix) of ``interp`` run as ourselves, to compare with what the sandboxed user gets."""
    import json

    try:
        res = runner.run([interp, "-s", "-B", "-c", "import json, sys; print(json.dumps([sys.version, sys.prefix]))"],
                         inherit_env=False, timeout=30, output_cap=64 * 1024)
        version, prefix = json.loads(res.stdout)
        return version, prefix
    except (OSError, ValueError, runner.ToolMissing):
        return None


def _probe_once(iso: Isolation) -> runner.RunResult | str:
    if iso.mode is LaunchMode.ROOT_FORKSERVER:
        zygote = None
        try:
            zygote = _Zygote(iso.interpreter, iso.network_namespace, hide=default_hidden_paths())
            with _UidLease() as lease:
                res = zygote.run(_zygote_request(lease.uid, Limits(address_space=1024 * MIB), None, 1024 * MIB),
                                 _PROBE_PROGRAM, timeout=20, output_cap=64 * 1024)
            res.extra["readonly_failures"] = zygote.readonly_failures
            return res
        except (OSError, ValueError, subprocess.SubprocessError, _ZygoteDied) as exc:
            return f"{type(exc).__name__}: {exc}"
        finally:
            if zygote is not None:
                zygote.close()
    with tempfile.TemporaryDirectory(prefix="bs-sbx-probe-") as tmp:
        lease = _UidLease() if iso.separate_uid else None
        try:
            if lease is not None:
                lease.__enter__()
                os.chown(tmp, lease.uid, lease.uid)
            uid = lease.uid if lease is not None else None
            netns = CLONE_NEWNET | CLONE_NEWIPC if os.geteuid() == 0 else CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC
            argv, flags, setuid = _command(iso, uid, [iso.interpreter, "-s", "-B", "-c", _PROBE_PROGRAM])
            if iso.mode is LaunchMode.PLAIN and iso.network_namespace:
                flags = netns
            plan = _ChildPlan(netns_flags=flags, uid=setuid, limits=Limits(address_space=1024 * MIB))
            return runner.run(argv, cwd=tmp, env=_child_env(tmp), inherit_env=False, timeout=20,
                              output_cap=64 * 1024, preexec=plan)
        except (OSError, subprocess.SubprocessError, runner.ToolMissing) as exc:
            return f"{type(exc).__name__}: {exc}"
        finally:
            if lease is not None:
                if lease.uid is not None and iso.mode is LaunchMode.ROOT_UID:
                    _kill_uid(lease.uid)
                lease.__exit__(None, None, None)


# --------------------------------------------------------------------------------------------------------------
# memory cgroups and hidden paths

_CGROUPS_LOCK = threading.Lock()
_CGROUPS: list = []  # [MemoryCgroups | None, why-not] once probed


def _memory_cgroups():
    """This process's private memory cgroup directory (probed and created once; removed at exit), or None."""
    with _CGROUPS_LOCK:
        if not _CGROUPS:
            from benchsmith.evaluate.sandbox_cgroup import MemoryCgroups

            cg, why = MemoryCgroups.probe()
            _CGROUPS[:] = [cg, why]
            if cg is not None:
                import atexit

                atexit.register(cg.close)
        return _CGROUPS[0]


def _cgroup_note() -> str:
    _memory_cgroups()
    return _CGROUPS[1]


def default_hidden_paths() -> list[str]:
    """What a sandboxed program must never read: benchsmith's own package and data directories (wherever it is
    installed), the project tree it runs from, and the workspace's shared data (HumanExtension releases ...)."""
    import benchsmith

    out = [Path(benchsmith.__file__).resolve().parent]
    for mod in ("benchsmith.evaluate", "benchsmith.builders", "benchsmith.analyzers"):
        try:
            spec = __import__(mod, fromlist=["_"])
            out.append(Path(spec.__file__).resolve().parent)
        except Exception:  # noqa: BLE001 - an absent optional part hides nothing
            continue
    root = runner.repo_root()
    out += [root, root.parent / "shared"]
    if os.environ.get("BENCHSMITH_SHARED_DATA"):
        out.append(Path(os.environ["BENCHSMITH_SHARED_DATA"]))
    return [str(p) for p in out]


# --------------------------------------------------------------------------------------------------------------
# fork server


class _ZygoteDied(RuntimeError):
    pass


_ZYGOTE_SOURCE = (Path(__file__).with_name("sandbox_zygote.py")).read_text(encoding="utf-8")
# trusted standard-library modules the fork server compiles once, so that programs importing them (the judge's
# harness) do not compile them on every run
HARNESS_MODULE = "_benchsmith_judge_harness"
_PRELOAD = {HARNESS_MODULE: (Path(__file__).parent / "humanext" / "judge_harness.py").read_text(encoding="utf-8")}


def _zygote_request(uid: int | None, limits: Limits, cpu: int | None, memory: int | None = None) -> dict:
    return {
        "script": "program.py", "uid": uid, "env": _child_env("/nonexistent"),  # HOME/TMPDIR set by the server
        "cpu": cpu,
        "as": limits.address_space, "fsize": limits.file_size, "nofile": limits.open_files,
        "nproc": limits.processes,
        "memory": memory,  # the run's cgroup limit and System V shared memory cap
    }


class _Zygote:
    """Our end of one fork server (``sandbox_zygote.py``): one request at a time."""

    def __init__(self, interpreter: str, netns: bool = True, private_fs: bool = True, scratch_mb: int = 64,
                 hide: Sequence[str] = (), cgroup: Path | None = None, cgroup_version: int = 1) -> None:
        import json
        import socket

        self.cgroup = cgroup
        config = {"netns": netns, "private_fs": private_fs, "scratch_mb": int(scratch_mb), "hide": list(hide),
                  "cgroup": str(cgroup) if cgroup is not None else None, "cgroup_version": cgroup_version,
                  "preload": _PRELOAD}
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            env = _child_env("/")
            self.proc = subprocess.Popen(
                [interpreter, "-s", "-B", "-c", _ZYGOTE_SOURCE, str(theirs.fileno()), json.dumps(config)],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=env, cwd="/", start_new_session=True,
            )
        finally:
            theirs.close()
        self.sock = ours
        try:
            hello = self._recv(30)
        except (OSError, ValueError, _ZygoteDied) as exc:
            self.close()
            raise _ZygoteDied(f"fork server did not start: {exc}") from exc
        if not hello.get("ready"):
            self.close()
            raise _ZygoteDied(f"fork server did not start: {hello.get('error', hello)}")
        self.readonly_failures: list[str] = list(hello.get("readonly_failures", []))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _recv(self, timeout: float | None) -> dict:
        import json

        self.sock.settimeout(timeout)
        data = self.sock.recv(1 << 16)
        if not data:
            raise _ZygoteDied(f"fork server exited (status {self.proc.poll()})")
        return json.loads(data)

    def run(self, request: dict, program: str, timeout: float, output_cap: int) -> runner.RunResult:
        """One program; output pipes and the control socket are multiplexed in the calling thread."""
        import array
        import json
        import selectors
        import socket

        src = os.memfd_create("program.py", os.MFD_CLOEXEC)
        try:
            data = program.encode("utf-8", errors="surrogatepass")
            view = memoryview(data)
            while view:
                view = view[os.write(src, view):]
            os.lseek(src, 0, os.SEEK_SET)
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            try:
                self.sock.settimeout(30)
                self.sock.sendmsg([json.dumps(request).encode()],
                                  [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [out_w, err_w, src]))])
            except OSError as exc:
                os.close(out_r)
                os.close(err_r)
                raise _ZygoteDied(f"fork server unreachable: {exc}") from exc
            finally:
                os.close(out_w)
                os.close(err_w)
        finally:
            os.close(src)
        start = time.monotonic()
        sel = selectors.DefaultSelector()
        try:
            reply = self._recv(30)
            if "pid" not in reply:
                raise _ZygoteDied(f"fork server refused the request: {reply}")
            chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
            sizes = {out_r: 0, err_r: 0}
            truncated = killed = timed_out = False
            status: int | None = None
            report: dict = {}

            def kill() -> None:
                nonlocal killed
                if not killed:
                    killed = True
                    try:  # the server kills the program's session and everything else in its pid namespace
                        self.sock.send(b'{"kill": 1}')
                    except OSError:
                        pass

            self.sock.setblocking(False)
            sel.register(out_r, selectors.EVENT_READ)
            sel.register(err_r, selectors.EVENT_READ)
            sel.register(self.sock, selectors.EVENT_READ)
            deadline = start + timeout
            open_pipes = 2
            while open_pipes or status is None:
                if status is None and not timed_out:
                    wait = deadline - time.monotonic()
                    if wait <= 0:
                        timed_out = True
                        kill()
                        deadline = time.monotonic() + 30  # grace for the server to reap and report
                        continue
                else:
                    wait = deadline - time.monotonic()
                    if wait <= 0:
                        raise _ZygoteDied("fork server did not report a killed program's status")
                for key, _ in sel.select(wait):
                    fd = key.fd
                    if key.fileobj is self.sock:
                        data = self.sock.recv(1 << 16)
                        if not data:
                            raise _ZygoteDied(f"fork server exited (status {self.proc.poll()})")
                        report = json.loads(data)
                        status = int(report["status"])
                        sel.unregister(self.sock)
                        continue
                    data = os.read(fd, 65536)
                    if not data:
                        sel.unregister(fd)
                        open_pipes -= 1
                        continue
                    room = output_cap - sizes[fd]
                    if room > 0:
                        chunks[fd].append(data[:room])
                        sizes[fd] += min(room, len(data))
                    if len(data) > room:
                        truncated = True
                        kill()  # keep draining until the pipes close
        finally:
            sel.close()
            self.sock.setblocking(True)
            os.close(out_r)
            os.close(err_r)
        rc = os.waitstatus_to_exitcode(status)
        return runner.RunResult(
            argv=["<fork server>", request["script"]],
            returncode=None if timed_out else rc,
            stdout=b"".join(chunks[out_r]).decode("utf-8", errors="replace"),
            stderr=b"".join(chunks[err_r]).decode("utf-8", errors="replace"),
            timed_out=timed_out,
            truncated=truncated,
            duration=time.monotonic() - start,
            extra={"killed": killed, "oom": report.get("oom", 0), "peak": report.get("peak")},
        )

    def close(self) -> None:
        try:
            self.sock.close()  # EOF ends the server
        finally:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.cgroup is not None:
                from benchsmith.evaluate.sandbox_cgroup import _remove_tree

                _remove_tree(self.cgroup)
                self.cgroup = None


class _ZygotePool:
    def __init__(self, interpreter: str, netns: bool, scratch_mb: int, hide: Sequence[str] = (),
                 cgroups=None) -> None:
        self.interpreter = interpreter
        self.netns = netns
        self.scratch_mb = scratch_mb
        self.hide = list(hide)
        self.cgroups = cgroups
        self._idle: list[_Zygote] = []
        self._lock = threading.Lock()

    def acquire(self) -> _Zygote:
        with self._lock:
            while self._idle:
                z = self._idle.pop()
                if z.alive():
                    return z
                z.close()
        cgroup = self.cgroups.child("z") if self.cgroups is not None else None
        try:
            return _Zygote(self.interpreter, self.netns, scratch_mb=self.scratch_mb, hide=self.hide, cgroup=cgroup,
                           cgroup_version=self.cgroups.files.version if self.cgroups is not None else 1)
        except BaseException:
            if cgroup is not None:
                self.cgroups.remove(cgroup)
            raise

    def release(self, zygote: _Zygote, healthy: bool) -> None:
        if not healthy or not zygote.alive():
            zygote.close()
            return
        with self._lock:
            self._idle.append(zygote)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for z in idle:
            z.close()


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
        scratch_mb: int = 64,
        open_files: int = 256,
        python: str | None = None,
        image: str | None = None,
        engine: str | None = None,
        forkserver: bool = True,
        hide: Sequence[str | os.PathLike] = (),
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
        self.scratch_mb = int(scratch_mb)
        self.open_files = int(open_files)
        self.python = python
        self._image = image
        self._engine = Backend(engine) if engine else None
        self.forkserver = forkserver
        # never readable from inside (fork server): ours by default, plus the caller's inputs and outputs
        self.hide = tuple(default_hidden_paths()) + tuple(str(Path(h).resolve()) for h in hide)
        self._isolation: Isolation | None = None
        self._zygotes: _ZygotePool | None = None
        self._zygote_lock = threading.Lock()

    def close(self) -> None:
        """Stop the fork servers (they also stop by themselves when this process exits)."""
        if self._zygotes is not None:
            self._zygotes.close()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass

    # -- introspection -----------------------------------------------------------------------------------------
    @property
    def isolation(self) -> Isolation:
        if self.backend is SandboxBackend.CONTAINER:
            return Isolation(interpreter=f"python in {self.image}", mode=LaunchMode.CONTAINER,
                             network_namespace=True, pid_namespace=True, separate_uid=True,
                             notes=("--network none, --ipc none, read-only root, --user 65534, --cap-drop ALL",),
                             ipc_namespace=True, private_root=True, memory_cgroup="container")
        if self._isolation is None:
            self._isolation = probe_isolation(self.python, self.forkserver)
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
        ctx = None
        advance: Callable[[], None] | None = None
        if progress:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            ctx = Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn(), transient=False)
            task = ctx.add_task("executing", total=len(programs))
            lock = threading.Lock()

            def tick() -> None:
                with lock:
                    ctx.advance(task)

            advance = tick
            ctx.start()
        try:
            with ThreadPoolExecutor(max_workers=min(self.workers, len(programs)),
                                    thread_name_prefix="sandbox") as pool:
                def one(i: int) -> None:
                    results[i] = self.run(programs[i], timeout)
                    if advance is not None:
                        advance()

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
            # RLIMIT_NPROC counts every process of the uid: meaningful only with a throwaway uid
            processes=self.max_processes if self.isolation.separate_uid else None,
            open_files=self.open_files,
        )

    def _run_forkserver(self, program: str, timeout: float) -> ExecResult:
        iso = self.isolation
        with self._zygote_lock:
            if self._zygotes is None:
                self._zygotes = _ZygotePool(iso.interpreter, iso.network_namespace, self.scratch_mb, self.hide,
                                            _memory_cgroups() if iso.memory_cgroup else None)
        pool = self._zygotes
        with _UidLease() as lease:
            request = _zygote_request(lease.uid, self._limits(timeout), max(1, math.ceil(timeout)) + 1,
                                      self.memory_mb * MIB)
            for attempt in (1, 2):  # a fork server that died is replaced once
                zygote = pool.acquire()
                try:
                    res = zygote.run(request, program, timeout, self.output_cap)
                except _ZygoteDied as exc:
                    pool.release(zygote, healthy=False)
                    if attempt == 2:
                        return ExecResult(Verdict.ERROR, None, "", "", 0.0, detail=str(exc))
                    continue
                pool.release(zygote, healthy=True)
                return _verdict(res)
        raise AssertionError("unreachable")  # pragma: no cover

    def _run_local(self, program: str, timeout: float) -> ExecResult:
        iso = self.isolation
        if iso.mode is LaunchMode.ROOT_FORKSERVER:
            return self._run_forkserver(program, timeout)
        tmp = tempfile.mkdtemp(prefix="bs-sbx-")
        lease = _UidLease() if iso.separate_uid else None
        cgroup: Path | None = None
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
            argv, flags, setuid = _command(iso, uid, [iso.interpreter, "-s", "-B", "program.py"])
            if iso.mode is LaunchMode.PLAIN and iso.network_namespace:
                flags = CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC
            cgroups = _memory_cgroups() if iso.memory_cgroup else None
            if cgroups is not None:
                cgroup = cgroups.child("run")
                cgroups.limit(cgroup, self.memory_mb * MIB)
            plan = _ChildPlan(netns_flags=flags, uid=setuid, limits=self._limits(timeout),
                              cpu_seconds=max(1, math.ceil(timeout)) + 1,
                              cgroup_procs=str(cgroup / "cgroup.procs") if cgroup is not None else None)
            kill_after = uid is not None and not iso.pid_namespace
            res = runner.run(
                argv, cwd=tmp, env=_child_env(tmp), inherit_env=False, timeout=timeout, output_cap=self.output_cap,
                preexec=plan, kill_on_output_cap=True,
                # without a pid namespace, children that left the process group are found by their uid
                after_exit=(lambda: _kill_uid(uid)) if kill_after else None,
            )
            if cgroups is not None and cgroup is not None:
                res.extra["oom"] = cgroups.oom_kills(cgroup)
            return _verdict(res)
        finally:
            if cgroup is not None:
                _memory_cgroups().remove(cgroup)
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
                    "--name", name, "--user", "65534:65534", "--read-only", "--cap-drop", "ALL", "--ipc", "none",
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
            return _verdict(res, oom_on_sigkill=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def _verdict(res: runner.RunResult, oom_on_sigkill: bool = False) -> ExecResult:
    rc = res.returncode
    tail = res.stderr[-2000:]
    if res.timed_out:
        verdict, detail = Verdict.TIMEOUT, "wall-clock timeout"
    elif rc == 125 and "sandbox setup failed" in tail:
        verdict, detail = Verdict.ERROR, _last_line(tail)
    elif rc == 0:
        verdict, detail = Verdict.PASSED, ""
    elif res.truncated:
        verdict, detail = Verdict.OUTPUT_LIMIT, "output over the cap"
    elif rc in (-signal.SIGXCPU, 128 + signal.SIGXCPU):
        verdict, detail = Verdict.TIMEOUT, "CPU time limit"
    elif rc in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or "File too large" in tail:
        verdict, detail = Verdict.OUTPUT_LIMIT, "file size limit"
    elif res.extra.get("oom"):
        verdict, detail = Verdict.MEMORY, "memory limit of the process tree (OOM-killed in its cgroup)"
    elif "MemoryError" in tail or "Cannot allocate memory" in tail:
        verdict, detail = Verdict.MEMORY, "memory limit"
    elif oom_on_sigkill and rc in (-signal.SIGKILL, 128 + signal.SIGKILL):
        verdict, detail = Verdict.MEMORY, "killed (out of memory in the container)"
    else:
        verdict, detail = Verdict.FAILED, _last_line(tail) or f"exit status {rc}"
    return ExecResult(verdict=verdict, returncode=rc, stdout=res.stdout, stderr=res.stderr,
                      duration=res.duration, detail=detail)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


__all__ = ["Verdict", "ExecResult", "Sandbox", "SandboxBackend", "Isolation", "LaunchMode", "SandboxUnavailable",
           "probe_isolation"]
