"""A process's private memory cgroup directory, for callers that keep long-lived processes in cgroups of their own
(the sandbox's fork servers) and make per-run children under them.

An rlimit on address space holds per process: six forked children each get the whole allowance.  A memory cgroup
charges every page of the tree -- anonymous memory, System V / POSIX shared memory, files on its tmpfs -- and the
kernel OOM-kills inside the group when it is over.  The controller is the one ``find_layout`` found for confined
runs (v2 where our cgroup delegates memory to its children, else v1); in it we make ``<prefix><pid>-<token>`` and
give each user a child of it.  Directories of processes that died before they could clean up are swept first.
"""

from __future__ import annotations

import os
import secrets
import threading
from pathlib import Path

from benchsmith.confine import cgroups
from benchsmith.confine.cgroups import CgroupFiles, CgroupLayout


class PrivateCgroups:
    """Our private cgroup directory; ``child()`` makes one per fork server or run."""

    def __init__(self, root: Path, files: CgroupFiles) -> None:
        self.root = root
        self.files = files
        self._n = 0
        self._lock = threading.Lock()

    @property
    def label(self) -> str:
        return self.files.label

    @classmethod
    def create(cls, layout: CgroupLayout, prefix: str) -> tuple["PrivateCgroups | None", str]:
        """(usable cgroups, "") or (None, why not)."""
        if os.geteuid() != 0:
            return None, "not root: cannot create memory cgroups"
        files = layout.memory_files
        if files is None or layout.memory_parent is None:
            return None, "no memory controller we may use (neither delegated in cgroup v2 nor a v1 hierarchy)"
        base = Path(layout.memory_parent)
        sweep(base, prefix)
        root = base / f"{prefix}{os.getpid()}-{secrets.token_hex(4)}"
        try:
            root.mkdir(mode=0o700)
            try:
                if files.version == 2:
                    # children of our directory need the controller; our directory holds no process
                    cgroups.write(root, "cgroup.subtree_control", "+memory")
                probe = root / "probe"
                probe.mkdir()
                cgroups.write(probe, files.limit[0], 64 << 20)
                probe.rmdir()
            except OSError:
                cgroups.remove(root)
                raise
        except OSError as exc:
            return None, f"cgroup {files.label} at {base}: {exc.strerror or exc}"
        return cls(root, files), ""

    def child(self, tag: str) -> Path:
        with self._lock:
            self._n += 1
            path = self.root / f"{tag}{self._n}"
        path.mkdir(mode=0o700)
        if self.files.version == 2:
            try:
                cgroups.write(path, "cgroup.subtree_control", "+memory")  # a fork server makes run children in it
            except OSError:
                pass
        return path

    def limit(self, path: Path, memory: int) -> None:
        cgroups.set_memory_limit(path, self.files, memory)

    def oom_kills(self, path: Path) -> int:
        return cgroups.oom_kills(path, self.files)

    def remove(self, path: Path) -> None:
        cgroups.remove(path)

    def close(self) -> None:
        cgroups.remove(self.root)


def sweep(base: Path, prefix: str) -> None:
    """Remove the private directories (``<prefix><pid>-...``) of processes that are gone."""
    try:
        entries = list(base.iterdir())
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(prefix):
            continue
        pid = entry.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            cgroups.remove(entry)
