"""Throwaway uids for runs as root: one per run from a private range, ``flock``-ed so that concurrent sandboxes,
even in other processes, never share one; and killing whatever a uid left behind."""

from __future__ import annotations

import os
import signal
import subprocess

from benchsmith import uids
from benchsmith.evaluate.sandbox.launch import _TRUE
from benchsmith.evaluate.sandbox.records import SandboxUnavailable, UID_BASE, UID_SPAN


class UidLease(uids.UidLease):
    """A uid of the sandbox's own private range (never one a toolchain gets)."""

    base = UID_BASE
    span = UID_SPAN
    pool = "sandbox"
    error = SandboxUnavailable


def kill_uid(uid: int) -> None:
    """SIGKILL every process owned by ``uid`` (kill(-1) from a helper that becomes that uid).

    Needed only without a pid namespace: there, a child that called setsid() outlives the process group."""

    def become_and_kill() -> None:
        uids.become(uid)
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
