"""Cgroups, for confined toolchain runs and the program sandbox alike: where this machine lets us make them (cgroup
v2 with memory and pids delegated, v1 memory + pids, or none: then an address-space rlimit and a process cap stand
in), the files a memory limit is written to and read back from, and the cgroups of one run (``RunCgroups``), made
before it, read for the out-of-memory verdict and removed after it.  The sandbox's long-lived private directory
(fork servers sit in it) is ``cgroup_tree.PrivateCgroups``, built on the same pieces."""

from __future__ import annotations

import errno
import os
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from benchsmith.confine.records import Limits, MemoryControl


@dataclass(frozen=True)
class CgroupFiles:
    """The memory controller's files of one cgroup version."""

    version: int
    limit: tuple[str, ...]  # written with the limit in bytes, the first one required (v1: memory, memory+swap)
    swap_zero: str | None  # written with 0 (no swap beyond the limit)
    events: str  # has an "oom_kill N" line
    peak: str  # the high-water mark in bytes
    peak_resettable: bool  # writing 0 to ``peak`` resets it (v1)

    @property
    def label(self) -> str:
        return f"v{self.version}"


V1 = CgroupFiles(1, ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"), None, "memory.oom_control",
                 "memory.max_usage_in_bytes", True)
V2 = CgroupFiles(2, ("memory.max",), "memory.swap.max", "memory.events", "memory.peak", False)
FILES = {MemoryControl.CGROUP_V1: V1, MemoryControl.CGROUP_V2: V2}


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


def _cgroup_mounts() -> list[tuple[str, str, str, str]]:
    """(mount root, mount point, fs type, super options) of every cgroup mount, from mountinfo: the mount root
    matters where only a subtree of the hierarchy is mounted (a container without a cgroup namespace)."""
    out = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields, rest = left.split(), right.split()
                if len(fields) >= 5 and len(rest) >= 3 and rest[0] in ("cgroup", "cgroup2"):
                    out.append((fields[3], fields[4].replace("\\040", " "), rest[0], rest[2]))
    except OSError:
        pass
    return out


def _resolve(mount_root: str, mount_point: str, path: str) -> str | None:
    """Where our cgroup ``path`` (as /proc/self/cgroup names it) is under a mount of ``mount_root``."""
    if mount_root == "/":
        return os.path.join(mount_point, path.lstrip("/"))
    root = mount_root.rstrip("/")
    if path == root or path.startswith(root + "/"):
        return os.path.join(mount_point, path[len(root):].lstrip("/"))
    return None


def own_cgroup_dir(controller: str) -> str | None:
    """The directory of the cgroup we sit in: of the v2 hierarchy (``controller`` ''), else of the v1 hierarchy
    that has ``controller``."""
    own = _own_cgroups().get(controller)
    if own is None:
        return None
    for root, point, fstype, opts in _cgroup_mounts():
        if controller == "" and fstype != "cgroup2":
            continue
        if controller and (fstype != "cgroup" or controller not in opts.split(",")):
            continue
        base = _resolve(root, point, own)
        if base is not None and os.path.isdir(base):
            return base
    return None


@dataclass(frozen=True)
class CgroupLayout:
    memory: MemoryControl | None
    memory_parent: str | None  # directory new memory cgroups are made in
    pids_parent: str | None  # directory new pids cgroups are made in ('' when the memory one also has pids)

    @property
    def memory_files(self) -> CgroupFiles | None:
        return FILES.get(self.memory) if self.memory_parent else None  # type: ignore[arg-type]


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


def find_layout() -> CgroupLayout:
    """Where new cgroups can be made: v2 first (the hierarchy the kernel develops), where it delegates memory."""
    v2 = own_cgroup_dir("")
    if v2 is not None:
        if not _try_child(v2, ["memory.max"]):
            try:  # the root cgroup may have processes and still delegate its controllers
                with open(os.path.join(v2, "cgroup.subtree_control"), "w") as fh:
                    fh.write("+memory +pids")
            except OSError:
                pass
        if _try_child(v2, ["memory.max", "pids.max"]):
            return CgroupLayout(MemoryControl.CGROUP_V2, v2, "")
        if _try_child(v2, ["memory.max"]):
            pids = own_cgroup_dir("pids")
            return CgroupLayout(MemoryControl.CGROUP_V2, v2,
                                pids if pids and _try_child(pids, ["pids.max"]) else None)
    mem = own_cgroup_dir("memory")
    pids = own_cgroup_dir("pids")
    pids_ok = pids if pids and _try_child(pids, ["pids.max"]) else None
    if mem and _try_child(mem, ["memory.limit_in_bytes"]):
        return CgroupLayout(MemoryControl.CGROUP_V1, mem, pids_ok)
    if v2 is not None and _try_child(v2, ["pids.max"]):
        return CgroupLayout(MemoryControl.RLIMIT, None, v2)
    return CgroupLayout(MemoryControl.RLIMIT, None, pids_ok)


# -- one cgroup directory ----------------------------------------------------------------------------------------
def write(d: str | os.PathLike, name: str, value: object) -> None:
    with open(os.path.join(d, name), "w") as fh:
        fh.write(str(value))


def set_memory_limit(d: str | os.PathLike, files: CgroupFiles, memory: int, previous: int | None = None) -> None:
    """Limit the tree in ``d`` to ``memory`` bytes without swap.  v1 wants memory <= memory+swap at every step:
    lower the memory limit first, raise memory+swap first (``previous``: the limit in force, None = unlimited)."""
    order = files.limit if previous is None or previous > memory else tuple(reversed(files.limit))
    for name in order:
        try:
            write(d, name, memory)
        except OSError:
            if name == files.limit[0]:  # the memory limit itself is required; memory+swap where it exists
                raise
    if files.swap_zero and previous is None:
        try:
            write(d, files.swap_zero, 0)
        except OSError:
            pass


def oom_kills(d: str | os.PathLike, files: CgroupFiles) -> int:
    """How many processes the kernel killed in ``d`` for being over its memory limit."""
    try:
        for line in Path(d, files.events).read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
    except OSError:
        pass
    return 0


def peak_bytes(d: str | os.PathLike, files: CgroupFiles) -> int | None:
    try:
        return int(Path(d, files.peak).read_text())
    except (OSError, ValueError):
        return None


def kill_members(d: str | os.PathLike) -> None:
    """SIGKILL every process in ``d`` until it is empty (or 20 tries: a process may be exiting)."""
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


def remove(d: str | os.PathLike) -> None:
    """Kill what is left in ``d`` and its children and remove them, bottom-up (cgroup directories go with rmdir,
    their files cannot be unlinked; a cgroup whose last process is still exiting is busy for a moment)."""
    try:
        subs = [e.path for e in os.scandir(d) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for sub in subs:
        remove(sub)
    kill_members(d)
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


class RunCgroups:
    """The cgroups of one confined run: made before, read for the OOM verdict and removed after."""

    def __init__(self, layout: CgroupLayout, name: str, limits: "Limits") -> None:
        self.layout = layout
        self.dirs: list[str] = []
        self.memory_dir: str | None = None
        self.limits = limits
        files = layout.memory_files
        if layout.memory_parent and files is not None:
            d = os.path.join(layout.memory_parent, name)
            self._make(d)
            self.memory_dir = d
            set_memory_limit(d, files, limits.memory_bytes)
            if layout.memory is MemoryControl.CGROUP_V2 and layout.pids_parent == "":
                write(d, "pids.max", limits.processes)
        if layout.pids_parent:
            d = os.path.join(layout.pids_parent, name)
            self._make(d)
            write(d, "pids.max", limits.processes)

    def _make(self, d: str) -> None:
        if os.path.isdir(d):  # a leftover of a killed run with this uid
            remove(d)
        os.mkdir(d)
        self.dirs.append(d)

    @property
    def procs_files(self) -> list[str]:
        return [os.path.join(d, "cgroup.procs") for d in self.dirs]

    def oom(self) -> bool:
        """Did the run hit its memory limit (the kernel killed one of its processes for it)?"""
        d, files = self.memory_dir, self.layout.memory_files
        if d is None or files is None:
            return False
        if oom_kills(d, files) > 0:
            return True
        if files is V1:
            try:  # kernels without an oom_kill counter: the limit was reached
                peak = int(Path(d, files.peak).read_text())
                fails = int(Path(d, "memory.failcnt").read_text())
                return fails > 0 and peak >= self.limits.memory_bytes * 0.98
            except (OSError, ValueError):
                return False
        return False

    def peak(self) -> int | None:
        files = self.layout.memory_files
        return peak_bytes(self.memory_dir, files) if self.memory_dir and files else None

    def close(self) -> None:
        for d in reversed(self.dirs):
            remove(d)
        self.dirs = []
