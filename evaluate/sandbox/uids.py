"""Throwaway uids for runs as root: one per run from a private range, ``flock``-ed so that concurrent sandboxes,
even in other processes, never share one; and killing whatever a uid left behind."""

from __future__ import annotations

import fcntl
import itertools
import os
import random
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from benchsmith.evaluate.sandbox.launch import _TRUE
from benchsmith.evaluate.sandbox.records import SandboxUnavailable, UID_BASE, UID_SPAN


class UidLease:
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

    def __enter__(self) -> "UidLease":
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


def kill_uid(uid: int) -> None:
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
