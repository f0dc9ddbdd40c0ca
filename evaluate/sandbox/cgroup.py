"""Memory cgroups for the sandbox: one limit over a run's whole process tree (forks, shared memory, tmpfs).

An rlimit on address space holds per process: six forked children each get the whole allowance.  A memory
cgroup charges every page of the tree -- anonymous memory, System V / POSIX shared memory, files on its tmpfs --
and the kernel OOM-kills inside the group when it is over.  We use the controller of the cgroup we already sit
in (v2 where its memory controller can be delegated to a child, else v1), create a private directory
``benchsmith-sbx-<pid>-<token>`` there, and give each run a child of it.  Where neither works (not root, a
read-only cgroupfs, a container without the controller) ``probe`` says why and the sandbox falls back to
address space + process limits, saying so in ``Sandbox.isolation``.
"""

from __future__ import annotations

import os
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path

PREFIX = "benchsmith-sbx-"


@dataclass(frozen=True)
class CgroupFiles:
    version: int
    limit: tuple[str, ...]  # written with the limit in bytes, first one required
    swap_zero: str | None  # written with 0 (no swap beyond the limit)
    events: str  # has an "oom_kill N" line
    peak: str


V1 = CgroupFiles(1, ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"), None, "memory.oom_control",
                 "memory.max_usage_in_bytes")
V2 = CgroupFiles(2, ("memory.max",), "memory.swap.max", "memory.events", "memory.peak")


def _mounts() -> list[tuple[str, str, str, str]]:
    """(mount root, mount point, fstype, super options) of every cgroup mount."""
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


def _own_paths() -> dict[str, str]:
    """controller ("" for v2) -> our cgroup path, from /proc/self/cgroup."""
    out: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3:
                    for ctrl in parts[1].split(",") if parts[1] else [""]:
                        out[ctrl] = parts[2]
    except OSError:
        pass
    return out


def _resolve(mount_root: str, mount_point: str, path: str) -> Path | None:
    if path == mount_root or path.startswith(mount_root.rstrip("/") + "/") or mount_root == "/":
        rel = path[len(mount_root.rstrip("/")):].lstrip("/") if mount_root != "/" else path.lstrip("/")
        return Path(mount_point) / rel
    return None


def _candidates() -> list[tuple[Path, CgroupFiles]]:
    own = _own_paths()
    out: list[tuple[Path, CgroupFiles]] = []
    for root, point, fstype, opts in _mounts():
        if fstype == "cgroup2" and "" in own:
            base = _resolve(root, point, own[""])
            if base is not None:
                out.append((base, V2))
        elif fstype == "cgroup" and "memory" in opts.split(",") and "memory" in own:
            base = _resolve(root, point, own["memory"])
            if base is not None:
                out.append((base, V1))
    out.sort(key=lambda c: -c[1].version)  # v2 first: it is the one the kernel develops
    return out


def _write(path: Path, value: object) -> None:
    with open(path, "w") as f:
        f.write(str(value))


class MemoryCgroups:
    """Our private cgroup directory; ``child()`` makes one per fork server or exec run."""

    _lock = threading.Lock()

    def __init__(self, root: Path, files: CgroupFiles) -> None:
        self.root = root
        self.files = files
        self._n = 0

    @property
    def label(self) -> str:
        return f"v{self.files.version}"

    @classmethod
    def probe(cls) -> tuple["MemoryCgroups | None", str]:
        """(usable cgroups, "") or (None, why not)."""
        if os.geteuid() != 0:
            return None, "not root: cannot create memory cgroups"
        why = []
        for base, files in _candidates():
            try:
                _sweep(base)
                root = base / f"{PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
                root.mkdir(mode=0o700)
                try:
                    if files.version == 2:
                        # only where our own cgroup delegates the controller to its children
                        if "memory" not in (root / "cgroup.controllers").read_text().split():
                            raise OSError(f"the memory controller is not enabled below {base}")
                        # children of our directory need the controller; our directory holds no process
                        _write(root / "cgroup.subtree_control", "+memory")
                    probe = root / "probe"
                    probe.mkdir()
                    _write(probe / files.limit[0], 64 << 20)
                    probe.rmdir()
                except OSError:
                    _remove_tree(root)
                    raise
                return cls(root, files), ""
            except OSError as exc:
                why.append(f"cgroup v{files.version} at {base}: {exc.strerror or exc}")
        return None, "; ".join(why) or "no cgroup memory controller mounted"

    def child(self, tag: str) -> Path:
        with self._lock:
            self._n += 1
            path = self.root / f"{tag}{self._n}"
        path.mkdir(mode=0o700)
        if self.files.version == 2:
            try:
                _write(path / "cgroup.subtree_control", "+memory")  # a fork server makes run children in it
            except OSError:
                pass
        return path

    def limit(self, path: Path, memory: int) -> None:
        for i, name in enumerate(self.files.limit):
            try:
                _write(path / name, memory)
            except OSError:
                if i == 0:
                    raise
        if self.files.swap_zero:
            try:
                _write(path / self.files.swap_zero, 0)
            except OSError:
                pass

    def oom_kills(self, path: Path) -> int:
        try:
            for line in (path / self.files.events).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and value.strip().isdigit():
                    return int(value)
        except OSError:
            pass
        return 0

    def remove(self, path: Path) -> None:
        _remove_tree(path)

    def close(self) -> None:
        _remove_tree(self.root)


def _remove_tree(path: Path) -> None:
    """cgroup directories go bottom-up with rmdir (their files cannot be unlinked)."""
    if not path.is_dir():
        return
    for sub in [p for p in path.iterdir() if p.is_dir()]:
        _remove_tree(sub)
    for _ in range(20):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            import time

            time.sleep(0.01)


def _sweep(base: Path) -> None:
    """Remove directories of sandboxes whose process is gone (killed before it could clean up)."""
    try:
        entries = list(base.iterdir())
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if not name.startswith(PREFIX):
            continue
        pid = name[len(PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            _remove_tree(entry)


__all__ = ["MemoryCgroups", "CgroupFiles", "V1", "V2"]
