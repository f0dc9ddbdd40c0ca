"""Throwaway uids for untrusted runs as root: one per run from a private range, ``flock``-ed so that concurrent
runs, even in other processes, never share one.  Toolchain confinement and the program sandbox each lease from a
range of their own (``UidLease`` subclasses), both declared here so that they provably never overlap: a toolchain
and a generated program never share a uid either.  ``become`` is how a child process takes its leased uid."""

from __future__ import annotations

import fcntl
import itertools
import os
import random
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from benchsmith.scratch import runtime_dir  # /run for root: a name no other user can plant


@dataclass(frozen=True)
class UidRange:
    base: int
    span: int

    def __contains__(self, uid: object) -> bool:
        return isinstance(uid, int) and self.base <= uid < self.base + self.span


# High enough to collide with no real account or the usual container sub-uid ranges; uids need no passwd entry.
SANDBOX_UIDS = UidRange(1_900_000_000, 1 << 16)  # generated programs (benchsmith.evaluate.sandbox)
TOOLCHAIN_UIDS = UidRange(1_910_000_000, 1 << 16)  # confined toolchains (benchsmith.confine)
assert SANDBOX_UIDS.base + SANDBOX_UIDS.span <= TOOLCHAIN_UIDS.base - 1  # and the container uid below the latter


def become(uid: int) -> None:
    """Drop to ``uid`` (as its own gid, no supplementary groups) for good: in a child, between fork and exec."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


class UidLease:
    """Exclusive use of one uid of ``[base, base + span)``, across threads and processes (flock on a lock file in a
    private directory named after ``pool``).  Subclasses set the range, the pool name and the error they raise."""

    base: ClassVar[int]
    span: ClassVar[int] = 1 << 16
    pool: ClassVar[str]
    error: ClassVar[type[Exception]] = RuntimeError
    _counter: ClassVar[itertools.count]
    _lock_dir: ClassVar[Path | None] = None
    _dir_lock: ClassVar[threading.Lock]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # a random start per process: two processes starting together rarely probe the same lock first
        cls._counter = itertools.count(random.SystemRandom().randrange(cls.span))
        cls._lock_dir = None
        cls._dir_lock = threading.Lock()

    def __init__(self) -> None:
        self.uid: int | None = None
        self._fd: int | None = None

    @classmethod
    def _dir(cls) -> Path:
        with cls._dir_lock:
            if cls._lock_dir is None:
                path = runtime_dir() / f"benchsmith-{cls.pool}-uids-{os.geteuid()}"
                path.mkdir(mode=0o700, exist_ok=True)
                st = path.lstat()
                if st.st_uid != os.geteuid() or st.st_mode & 0o077 or not stat.S_ISDIR(st.st_mode):
                    raise cls.error(f"{path} is not a private directory of ours; remove it and retry")
                cls._lock_dir = path
            return cls._lock_dir

    def __enter__(self):
        lock_dir = self._dir()
        for _ in range(self.span):
            uid = self.base + next(self._counter) % self.span
            fd = os.open(lock_dir / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return self
        raise self.error(f"no free {self.pool} uid")  # pragma: no cover - 65536 concurrent runs

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            os.close(self._fd)  # releases the flock
            self._fd = None
