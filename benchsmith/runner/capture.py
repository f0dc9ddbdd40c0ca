"""Output capping and group kills: a tool that prints gigabytes cannot exhaust our memory, and nothing it started
outlives the run."""

from __future__ import annotations

import os
import select
import signal
import subprocess


def read_capped(stream, cap: int, sink: list[bytes], flags: dict) -> None:
    total = 0
    while True:
        chunk = stream.read(65536)
        if not chunk:
            break
        if total < cap:
            keep = chunk[: cap - total]
            sink.append(keep)
            total += len(keep)
            if len(keep) < len(chunk):
                _mark_truncated(flags)
        else:
            _mark_truncated(flags)  # keep draining so the child never blocks on a full pipe
    stream.close()


def _mark_truncated(flags: dict) -> None:
    first = not flags.get("truncated")
    flags["truncated"] = True
    on_cap = flags.get("on_cap")
    if first and on_cap is not None:
        on_cap()


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def wait_exit(proc: subprocess.Popen, timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``proc`` to exit; False when it did not.  Woken by the exit itself
    through a pidfd (Linux 5.3+): ``Popen.wait(timeout)`` polls with sleeps of up to 50 ms, which every toolchain
    run would pay as latency after the tool is done."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # an older kernel or another OS
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        poller = select.poll()  # not select(): a process with many files open may get a pidfd above FD_SETSIZE
        poller.register(fd, select.POLLIN)
        ready = poller.poll(max(0.0, timeout) * 1000)
    finally:
        os.close(fd)
    if not ready:
        return False
    proc.wait()
    return True
