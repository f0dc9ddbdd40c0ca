"""The cgroups of confined runs: where this machine lets us make them (cgroup v2 with memory and pids delegated, v1
memory + pids, or none: then an address-space rlimit and a process cap stand in), and the cgroups of one run, made
before it, read for the out-of-memory verdict and removed after it."""

from __future__ import annotations

import errno
import os
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from benchsmith.enums import StrEnum

if TYPE_CHECKING:
    from benchsmith.confine.records import Limits


class MemoryControl(StrEnum):
    CGROUP_V2 = "cgroup_v2"
    CGROUP_V1 = "cgroup_v1"
    RLIMIT = "rlimit_as"  # per-process address space plus a process cap


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
class CgroupLayout:
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


def find_layout() -> CgroupLayout:
    v2 = _v2_parent()
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
            pids = _v1_parent("pids")
            return CgroupLayout(MemoryControl.CGROUP_V2, v2,
                                 pids if pids and _try_child(pids, ["pids.max"]) else None)
    mem = _v1_parent("memory")
    pids = _v1_parent("pids")
    pids_ok = pids if pids and _try_child(pids, ["pids.max"]) else None
    if mem and _try_child(mem, ["memory.limit_in_bytes"]):
        return CgroupLayout(MemoryControl.CGROUP_V1, mem, pids_ok)
    if v2 is not None and _try_child(v2, ["pids.max"]):
        return CgroupLayout(MemoryControl.RLIMIT, None, v2)
    return CgroupLayout(MemoryControl.RLIMIT, None, pids_ok)


class RunCgroups:
    """The cgroups of one confined run: made before, read for the OOM verdict and removed after."""

    def __init__(self, layout: CgroupLayout, name: str, limits: "Limits") -> None:
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
