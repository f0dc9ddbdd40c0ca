"""Per-repository progress that crosses process (and Ray node) boundaries.

A worker writes a tiny JSON file per repository (stage, files done, files total), replaced atomically and at most a
few times a second; the build process polls the directory and draws one bar per repository in flight.  Nothing
here touches the build's outputs, so progress can never change what a build writes."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Callable


class ProgressFile:
    def __init__(self, path: str | os.PathLike | None, min_interval: float = 0.25) -> None:
        self.path = Path(path) if path else None
        self.min_interval = min_interval
        self._last = 0.0

    def update(self, stage: str, done: int, total: int | None, force: bool = False) -> None:
        if self.path is None:
            return
        now = time.monotonic()
        if not force and now - self._last < self.min_interval:
            return
        self._last = now
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"stage": stage, "done": done, "total": total}))
            os.replace(tmp, self.path)
        except OSError:
            pass  # progress is best effort; the build itself must not fail over it

    def clear(self) -> None:
        if self.path is not None:
            try:
                self.path.unlink()
            except OSError:
                pass


def read_all(directory: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return out
    for entry in entries:
        if entry.name.endswith(".json") and not entry.name.startswith("."):
            try:
                out[entry.name[:-5]] = json.loads(Path(entry.path).read_text())
            except (OSError, ValueError):
                continue
    return out


class Poller(threading.Thread):
    """Calls ``draw(states)`` with every repository's latest state until stopped."""

    def __init__(self, directory: Path, draw: Callable[[dict[str, dict]], None], interval: float = 0.3) -> None:
        super().__init__(daemon=True)
        self.directory, self.draw, self.interval = directory, draw, interval
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.draw(read_all(self.directory))

    def stop(self) -> None:
        self._stop_event.set()
        self.join(timeout=2)
