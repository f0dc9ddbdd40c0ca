"""Output capping and group kills: a tool that prints gigabytes cannot exhaust our memory, and nothing it started
outlives the run."""

from __future__ import annotations

import os
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
