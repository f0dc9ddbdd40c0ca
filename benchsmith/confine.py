"""Toolchain confinement: every pylint/javac/tsc/mcs/go run sees only the toolchain and its input, as nobody.

A confined run (``runner.run(..., confine=Confinement(...))``) is started through a small init program
(``_confine_init.py``, run by our own interpreter with ``-I -S``) that, as root and before the tool starts:

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

``probe()`` finds out once per process what the machine grants; :func:`require` raises
:class:`ConfinementUnavailable` (one line saying what is missing) where it cannot confine, unless the user
allowed unconfined runs (``--allow-unconfined``).
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from benchsmith import uids
from benchsmith.enums import StrEnum
from benchsmith.runner import ToolMissing

MIB = 1024 * 1024
GIB = 1024 * MIB
DEFAULT_MEMORY_MB = 3072

# Private uid range for toolchain runs (as root); disjoint from the generated-program sandbox's range so the two
# never hand out the same uid.  uids need no passwd entry.
UID_BASE = 1_910_000_000
UID_SPAN = 1 << 16
# The uid container backends run toolchains as when we are root (inside the engine's own namespaces).
CONTAINER_UID = UID_BASE - 1

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# /etc entries toolchains read: the dynamic linker's cache, alternatives (javac/java/node links), the JDK's and
# mono's configuration, time zone and name-service basics.  Not /etc as a whole (host configuration, keys).
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "java-8-openjdk", "java-11-openjdk",
               "java-17-openjdk", "java-21-openjdk", "mono", "localtime", "timezone", "nsswitch.conf", "host.conf",
               "ssl", "ca-certificates", "os-release", "mime.types", "fonts")
DEV_NODES = ("null", "zero", "full", "random", "urandom")
CONFINE_EXIT = 125  # the init program exits with this when it could not set the confinement up
_INIT_SOURCE = (Path(__file__).with_name("_confine_init.py")).read_text(encoding="utf-8")


class ConfinementUnavailable(ToolMissing):
    """The kernel (or our privileges) cannot confine toolchains; the message says what is missing.  A ``ToolMissing``:
    analyzers record the repository as not analysable here instead of running the toolchain unconfined."""


class MemoryControl(StrEnum):
    CGROUP_V2 = "cgroup_v2"
    CGROUP_V1 = "cgroup_v1"
    RLIMIT = "rlimit_as"  # per-process address space plus a process cap


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


# ----------------------------------------------------------------------------------------------------------------
# throwaway uids


class UidLease(uids.UidLease):
    """A uid of the toolchains' own private range (never one a sandboxed program gets)."""

    base = UID_BASE
    span = UID_SPAN
    pool = "toolchain"
    error = ConfinementUnavailable


# ----------------------------------------------------------------------------------------------------------------
# cgroups


def _own_cgroups() -> dict[str, str]:
    """controller (or '' for the v2 hierarchy) -> our cgroup path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _hid, controllers, path = parts
        for c in controllers.split(",") if controllers else [""]:
            out[c] = path
    return out


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, fs type, options) of every mount."""
    out = []
    try:
        for line in Path("/proc/self/mounts").read_text().splitlines():
            f = line.split()
            if len(f) >= 4:
                out.append((f[1].replace("\\040", " "), f[2], f[3]))
    except OSError:
        pass
    return out


@dataclass(frozen=True)
class _CgroupLayout:
    memory: MemoryControl | None
    memory_parent: str | None  # directory new memory cgroups are made in
    pids_parent: str | None  # directory new pids cgroups are made in ('' when the memory one also has pids)


def _v2_parent() -> str | None:
    own = _own_cgroups().get("")
    if own is None:
        return None
    for mnt, fstype, _opts in _mounts():
        if fstype == "cgroup2":
            base = os.path.join(mnt, own.lstrip("/"))
            if os.path.isdir(base):
                return base
    return None


def _v1_parent(controller: str) -> str | None:
    own = _own_cgroups().get(controller)
    if own is None:
        return None
    for mnt, fstype, opts in _mounts():
        if fstype == "cgroup" and controller in opts.split(","):
            base = os.path.join(mnt, own.lstrip("/"))
            if os.path.isdir(base):
                return base
    return None


def _try_child(parent: str, files: Sequence[str]) -> bool:
    """Can we make a child cgroup of ``parent`` that has every one of ``files``?"""
    probe = os.path.join(parent, f"benchsmith-probe-{os.getpid()}-{random.randrange(1 << 30)}")
    try:
        os.mkdir(probe)
    except OSError:
        return False
    try:
        return all(os.path.exists(os.path.join(probe, f)) for f in files)
    finally:
        try:
            os.rmdir(probe)
        except OSError:
            pass


def _layout() -> _CgroupLayout:
    v2 = _v2_parent()
    if v2 is not None:
        if not _try_child(v2, ["memory.max"]):
            try:  # the root cgroup may have processes and still delegate its controllers
                with open(os.path.join(v2, "cgroup.subtree_control"), "w") as fh:
                    fh.write("+memory +pids")
            except OSError:
                pass
        if _try_child(v2, ["memory.max", "pids.max"]):
            return _CgroupLayout(MemoryControl.CGROUP_V2, v2, "")
        if _try_child(v2, ["memory.max"]):
            pids = _v1_parent("pids")
            return _CgroupLayout(MemoryControl.CGROUP_V2, v2,
                                 pids if pids and _try_child(pids, ["pids.max"]) else None)
    mem = _v1_parent("memory")
    pids = _v1_parent("pids")
    pids_ok = pids if pids and _try_child(pids, ["pids.max"]) else None
    if mem and _try_child(mem, ["memory.limit_in_bytes"]):
        return _CgroupLayout(MemoryControl.CGROUP_V1, mem, pids_ok)
    if v2 is not None and _try_child(v2, ["pids.max"]):
        return _CgroupLayout(MemoryControl.RLIMIT, None, v2)
    return _CgroupLayout(MemoryControl.RLIMIT, None, pids_ok)


class RunCgroups:
    """The cgroups of one confined run: made before, read for the OOM verdict and removed after."""

    def __init__(self, layout: _CgroupLayout, name: str, limits: Limits) -> None:
        self.layout = layout
        self.dirs: list[str] = []
        self.memory_dir: str | None = None
        self.limits = limits
        if layout.memory_parent:
            d = os.path.join(layout.memory_parent, name)
            self._make(d)
            self.memory_dir = d
            if layout.memory is MemoryControl.CGROUP_V2:
                self._write(d, "memory.max", str(limits.memory_bytes))
                if os.path.exists(os.path.join(d, "memory.swap.max")):
                    self._write(d, "memory.swap.max", "0")
                if layout.pids_parent == "":
                    self._write(d, "pids.max", str(limits.processes))
            else:
                self._write(d, "memory.limit_in_bytes", str(limits.memory_bytes))
                if os.path.exists(os.path.join(d, "memory.memsw.limit_in_bytes")):
                    self._write(d, "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        if layout.pids_parent:
            d = os.path.join(layout.pids_parent, name)
            self._make(d)
            self._write(d, "pids.max", str(limits.processes))

    def _make(self, d: str) -> None:
        if os.path.isdir(d):  # a leftover of a killed run with this uid
            _kill_cgroup(d)
            _rmdir(d)
        os.mkdir(d)
        self.dirs.append(d)

    @staticmethod
    def _write(d: str, name: str, value: str) -> None:
        with open(os.path.join(d, name), "w") as fh:
            fh.write(value)

    @property
    def procs_files(self) -> list[str]:
        return [os.path.join(d, "cgroup.procs") for d in self.dirs]

    def oom(self) -> bool:
        """Did the run hit its memory limit (the kernel killed one of its processes for it)?"""
        d = self.memory_dir
        if d is None:
            return False
        name = "memory.events" if self.layout.memory is MemoryControl.CGROUP_V2 else "memory.oom_control"
        try:
            for line in Path(d, name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and int(value) > 0:
                    return True
        except (OSError, ValueError):
            pass
        if self.layout.memory is MemoryControl.CGROUP_V1:
            try:  # kernels without an oom_kill counter: the limit was reached
                peak = int(Path(d, "memory.max_usage_in_bytes").read_text())
                fails = int(Path(d, "memory.failcnt").read_text())
                return fails > 0 and peak >= self.limits.memory_bytes * 0.98
            except (OSError, ValueError):
                return False
        return False

    def peak(self) -> int | None:
        d = self.memory_dir
        if d is None:
            return None
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            try:
                return int(Path(d, name).read_text())
            except (OSError, ValueError):
                continue
        return None

    def close(self) -> None:
        for d in reversed(self.dirs):
            _kill_cgroup(d)
            _rmdir(d)
        self.dirs = []


def _kill_cgroup(d: str) -> None:
    for _ in range(20):
        try:
            pids = [int(p) for p in Path(d, "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)


def _rmdir(d: str) -> None:
    for attempt in range(50):
        try:
            os.rmdir(d)
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or attempt == 49:
                return
            time.sleep(0.01)


# ----------------------------------------------------------------------------------------------------------------
# probing


_PROBE_LOCK = threading.RLock()
_PROBED: Capabilities | None = None
_LAYOUT: _CgroupLayout | None = None


def _missing_basics() -> str:
    if sys.platform != "linux":
        return f"toolchain confinement needs Linux namespaces (this is {sys.platform})"
    if os.geteuid() != 0:
        return ("toolchain confinement runs each toolchain as a throwaway uid, which needs root "
                f"(running as uid {os.geteuid()})")
    return ""


def probe(refresh: bool = False) -> Capabilities:
    """What confinement this machine grants, found by confining a real probe program once per process."""
    global _PROBED, _LAYOUT
    with _PROBE_LOCK:
        if _PROBED is not None and not refresh:
            return _PROBED
        missing = _missing_basics()
        if missing:
            _PROBED = Capabilities(False, None, False, missing)
            return _PROBED
        _LAYOUT = _layout()
        caps = _probe_run(_LAYOUT)
        _PROBED = caps
        return caps


_PROBE_PROGRAM = (
    "import json, os, socket, sys\n"
    "def can(p):\n"
    "    try:\n"
    "        os.stat(p); return True\n"
    "    except OSError: return False\n"
    "w = False\n"
    "try:\n"
    "    open('/usr/.benchsmith-probe', 'w'); w = True\n"
    "except OSError: pass\n"
    "print(json.dumps({'uid': os.getuid(), 'pid': os.getpid(), 'ifaces': sorted(n for _, n in socket.if_nameindex()),"
    " 'host_files': [p for p in sys.argv[1:] if can(p)], 'write_usr': w,"
    " 'hostname': socket.gethostname(), 'userns': open('/proc/self/uid_map').read().split()}))\n"
)


def _probe_run(layout: _CgroupLayout) -> Capabilities:
    from benchsmith import runner

    conf = Confinement(read=tuple(python_paths()), limits=Limits(memory_bytes=512 * MIB, processes=64))
    # host files the probe must not see: one of ours in the temporary directory, and what only root may read
    sentinel = tempfile.NamedTemporaryFile(prefix="benchsmith-confine-probe-", delete=False)
    sentinel.close()
    host_files = [sentinel.name, "/etc/shadow", "/run", "/var/tmp"]
    try:
        res = runner.run([sys.executable, "-I", "-S", "-B", "-c", _PROBE_PROGRAM, *host_files], timeout=60,
                         confine=conf, output_cap=1 << 16)
    except (OSError, ConfinementUnavailable, runner.ToolMissing) as exc:
        return Capabilities(False, None, False, f"the confined probe did not start: {exc}")
    finally:
        os.unlink(sentinel.name)
    if res.returncode != 0:
        tail = [ln for ln in (res.stderr or res.stdout).strip().splitlines() if ln.strip()]
        return Capabilities(False, None, False, "the kernel refused a confined toolchain run: "
                            + (tail[-1][:300] if tail else f"exit status {res.returncode}"))
    try:
        facts = json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return Capabilities(False, None, False, f"unreadable confined probe output {res.stdout[:200]!r}")
    problems = []
    if not UID_BASE <= int(facts["uid"]) < UID_BASE + UID_SPAN:
        problems.append(f"the probe ran as uid {facts['uid']}")
    if facts["pid"] > 5:
        problems.append("no fresh pid namespace")
    if facts["ifaces"] != ["lo"]:
        problems.append(f"network interfaces {facts['ifaces']} visible")
    if facts["host_files"]:
        problems.append(f"host files visible ({', '.join(facts['host_files'])})")
    if facts["write_usr"]:
        problems.append("the system directories are writable")
    if problems:
        return Capabilities(False, None, False, "confinement incomplete: " + "; ".join(problems))
    userns = len(facts["userns"]) == 3 and facts["userns"][2] == "1"
    notes = []
    if layout.memory is MemoryControl.RLIMIT:
        notes.append("no memory cgroup: address-space limit per process and a process cap")
    return Capabilities(True, layout.memory, userns, notes=tuple(notes))


def require(allow_unconfined: bool = False) -> Capabilities:
    """The machine's capabilities; raises ``ConfinementUnavailable`` when toolchains cannot be confined and the user
    did not allow unconfined runs."""
    caps = probe()
    if not caps.available and not allow_unconfined:
        raise ConfinementUnavailable(f"cannot confine toolchains: {caps.missing}; refusing to analyse untrusted "
                                     "repositories (pass --allow-unconfined to run them unconfined anyway)")
    return caps


# ----------------------------------------------------------------------------------------------------------------
# what the tool sees


def python_paths() -> list[str]:
    """Directories our interpreter needs: its prefixes and every absolute entry of sys.path that belongs to an
    installation (stdlib, site-packages), never a source tree the process happens to have on its path."""
    out = []
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    out += sorted(prefixes)
    for p in sys.path:
        if not p or not os.path.isabs(p) or not os.path.exists(p):
            continue
        real = os.path.realpath(p)
        if any(real == q or real.startswith(q + os.sep) for q in prefixes) or \
                os.path.basename(real) in ("site-packages", "dist-packages"):
            out.append(p)
    return _dedupe(out)


def executable_paths(exe: str) -> list[str]:
    """The directories along ``exe``'s symlink chain (``/usr/bin/javac`` -> ``/etc/alternatives`` -> the JDK)."""
    out = []
    cur = exe
    for _ in range(16):
        out.append(os.path.dirname(cur))
        try:
            target = os.readlink(cur)
        except OSError:
            break
        cur = os.path.join(os.path.dirname(cur), target)
    real = os.path.realpath(exe)
    out.append(os.path.dirname(real))
    return _dedupe(out)


def _dedupe(paths: Iterable[str]) -> list[str]:
    seen, out = set(), []
    for p in paths:
        p = os.path.normpath(p)
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def grant_read(paths: Iterable[str]) -> None:
    """Make our own data under ``paths`` readable to other uids (files o+r, directories o+rx), without following
    symlinks.  Only the named paths and what is under them change; their parent directories keep their modes, so a
    tree under a private directory stays unreachable for other host users."""
    for top in paths:
        try:
            st = os.lstat(top)
        except OSError:
            continue
        _grant_one(top, st)
        if stat.S_ISDIR(st.st_mode):
            stack = [top]
            while stack:
                d = stack.pop()
                try:
                    entries = list(os.scandir(d))
                except OSError:
                    continue
                for e in entries:
                    try:
                        est = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    _grant_one(e.path, est)
                    if stat.S_ISDIR(est.st_mode):
                        stack.append(e.path)


def _grant_one(path: str, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        want = 0o005
    elif stat.S_ISREG(st.st_mode):
        want = 0o004 | (0o001 if st.st_mode & 0o100 else 0)
    else:
        return
    if st.st_mode & want != want and st.st_uid == os.geteuid():
        try:
            os.chmod(path, stat.S_IMODE(st.st_mode) | want)
        except OSError:
            pass


def chown_tree(paths: Iterable[str], uid: int, gid: int) -> None:
    """lchown everything under ``paths`` (symlinks not followed)."""
    for top in paths:
        if not os.path.lexists(top):
            continue
        try:
            os.lchown(top, uid, gid)
        except OSError:
            pass
        if os.path.isdir(top) and not os.path.islink(top):
            for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
                for name in dirnames + filenames:
                    try:
                        os.lchown(os.path.join(dirpath, name), uid, gid)
                    except OSError:
                        pass


# ----------------------------------------------------------------------------------------------------------------
# one run


@dataclass
class Prepared:
    """A confined run ready to start: the argv to execute and what to undo afterwards."""

    argv: list[str]
    env: dict[str, str]
    lease: UidLease
    cgroups: RunCgroups | None
    root_dir: str
    write: tuple[str, ...]
    limits: Limits
    memory: MemoryControl | None

    def oom(self) -> bool:
        return self.cgroups.oom() if self.cgroups is not None else False

    def close(self) -> None:
        if self.cgroups is not None:
            self.cgroups.close()
        chown_tree(self.write, os.geteuid(), os.getegid())
        try:
            os.rmdir(self.root_dir)
        except OSError:
            shutil.rmtree(self.root_dir, ignore_errors=True)
        self.lease.__exit__(None, None, None)


def _system_env(env: dict[str, str]) -> dict[str, str]:
    out = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    out.update(env)
    return out


def prepare(argv: Sequence[str], conf: Confinement, cwd: str | None, env: dict[str, str],
            timeout: float) -> Prepared:
    """Lease a uid, make the run's cgroups and the empty directory the new root is mounted on, and return the
    init program's argv.  The caller must ``close()`` the result."""
    global _LAYOUT
    missing = _missing_basics()
    if missing:
        raise ConfinementUnavailable(missing)
    with _PROBE_LOCK:
        if _LAYOUT is None:
            _LAYOUT = _layout()
        layout = _LAYOUT
    exe = argv[0]
    if not os.path.isabs(exe):
        found = shutil.which(exe, path=env.get("PATH") or os.environ.get("PATH"))
        if found is None:
            raise FileNotFoundError(exe)
        exe = os.path.abspath(found)
    argv = [exe, *argv[1:]]
    lease = UidLease().__enter__()
    uid = lease.uid
    assert uid is not None
    cgroups = None
    root_dir = ""
    try:
        limits = conf.limits
        if layout.memory_parent or layout.pids_parent:
            cgroups = RunCgroups(layout, f"benchsmith-tool-{uid}", limits)
        root_dir = tempfile.mkdtemp(prefix="bs-confine-root-")
        os.chmod(root_dir, 0o700)
        grant_read(conf.grant)
        chown_tree(conf.write, uid, uid)
        read = _dedupe([*SYSTEM_DIRS, *executable_paths(exe), *conf.read])
        cpu = limits.cpu_seconds if limits.cpu_seconds is not None else max(60, int(timeout * 2) + 10)
        rlimit_as = None
        if layout.memory not in (MemoryControl.CGROUP_V1, MemoryControl.CGROUP_V2):
            rlimit_as = limits.memory_bytes + limits.address_space_extra
        plan = {
            "root": root_dir,
            "uid": uid,
            "cwd": os.path.abspath(cwd) if cwd else "/",
            "read": read,
            "etc": [e for e in ETC_ENTRIES if os.path.lexists(os.path.join("/etc", e))],
            "dev": list(DEV_NODES),
            "scratch": _dedupe(["/tmp", "/dev/shm", *conf.scratch]),
            "write": list(_dedupe(conf.write)),
            "scratch_bytes": limits.scratch_bytes,
            "cgroup_procs": cgroups.procs_files if cgroups else [],
            "rlimits": {"cpu": cpu, "fsize": limits.file_size, "nofile": limits.open_files,
                        "nproc": limits.processes, "as": rlimit_as},
            "hostname": "benchsmith",
        }
        init = [sys.executable, "-I", "-S", "-B", "-c", _INIT_SOURCE, json.dumps(plan), "--", *argv]
        return Prepared(init, _system_env(env), lease, cgroups, root_dir, tuple(conf.write), limits, layout.memory)
    except BaseException:
        if cgroups is not None:
            cgroups.close()
        if root_dir:
            shutil.rmtree(root_dir, ignore_errors=True)
        chown_tree(conf.write, os.geteuid(), os.getegid())
        lease.__exit__(None, None, None)
        raise


def oom_message(limits: Limits) -> str:
    return f"toolchain memory limit: the run was killed at its {limits.memory_bytes // MIB} MiB memory limit"


__all__ = ["Confinement", "Limits", "Capabilities", "ConfinementUnavailable", "MemoryControl", "probe", "require",
           "python_paths", "executable_paths", "grant_read", "prepare", "DEFAULT_MEMORY_MB", "CONTAINER_UID"]
