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


class ProgressObserver:
    """Observer of a pipeline's ``StepEvent``s (``benchsmith/pipeline.py``) that publishes them to a progress file,
    so the build process can draw the worker's progress whichever executor ran it."""

    def __init__(self, path: str | os.PathLike | None) -> None:
        self.file = ProgressFile(path)

    def __call__(self, event) -> None:
        self.file.update(event.step, event.done, event.total, force=event.force)


def track(items, total: int, enabled: bool, title: str, watch: Path, key: Callable[[object], str],
          label: Callable[[object], str]):
    """Yield ``(task, summary)`` pairs from ``items`` while drawing one bar for the units and one per unit in
    flight with its stage and items done (read from the workers' progress files under ``watch``, named
    ``key(task)``.json, so it works the same for the inline, pool and Ray executors).  Summaries need ``files``
    and ``examples``."""
    if not enabled:
        yield from items
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(f"[bold]{title}[/] {{task.description}}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[info]}"), TimeElapsedColumn(), transient=False) as bar:
        t = bar.add_task("repositories", total=total, info="files 0  examples 0")
        rows: dict[str, object] = {}
        lock = threading.Lock()

        def draw(states: dict[str, dict]) -> None:
            with lock:
                for k, st in sorted(states.items()):
                    if k not in rows:
                        rows[k] = bar.add_task(f"  {k.rsplit('-', 1)[0][:36]}", total=None, info="")
                    bar.update(rows[k], completed=st.get("done") or 0, total=st.get("total"),
                               info=str(st.get("stage", "")))

        poller = Poller(watch, draw)
        poller.start()
        files = examples = 0
        try:
            for task, summary in items:
                files += summary.files
                examples += summary.examples
                k = key(task)
                ProgressFile(watch / f"{k}.json").clear()
                with lock:
                    if k in rows:
                        bar.remove_task(rows.pop(k))
                    bar.update(t, advance=1, info=f"files {files}  examples {examples}",
                               description=label(task)[:40])
                yield task, summary
        finally:
            poller.stop()
