"""Pipeline steps in the datatrove style: each step consumes and yields records, and every item it drops is
recorded as an ``Exclusion`` with a stable reason through one channel, the ``DropLedger`` the steps share, which
counts it and streams it to ``excluded.jsonl`` (never silently lost).

Steps also publish progress as ``StepEvent``s to an observer (``benchsmith/progress.py`` draws them); a step
never knows how, or whether, its progress is shown."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Callable, Generic, Iterable, Iterator, TypeVar

from benchsmith.records import Exclusion, Reason, Stage

T = TypeVar("T")


@dataclass(frozen=True)
class StepEvent:
    """What a step reports while it works: its label, items done and total (None: unknown)."""

    step: str
    done: int = 0
    total: int | None = None
    force: bool = False  # a new phase: show it now rather than at the observer's next tick


Observer = Callable[[StepEvent], None]


@dataclass
class DropLedger:
    """The one drop channel: per-reason counts of dropped items plus the exclusions themselves (streamed to a sink
    when given), and per-stage counts of items kept."""

    kept: collections.Counter = field(default_factory=collections.Counter)
    dropped: collections.Counter = field(default_factory=collections.Counter)
    sink: Callable[[Exclusion], None] | None = None
    exclusions: list[Exclusion] = field(default_factory=list)

    def keep(self, stage: Stage | str, n: int = 1) -> None:
        self.kept[str(stage)] += n

    def drop(self, exclusion: Exclusion) -> None:
        self.dropped[str(exclusion.reason)] += 1
        if self.sink is not None:
            self.sink(exclusion)
        else:
            self.exclusions.append(exclusion)

    def merge(self, other: "DropLedger") -> None:
        self.kept.update(other.kept)
        self.dropped.update(other.dropped)
        for exc in other.exclusions:
            self.drop(exc)


class Step(Generic[T]):
    """A pipeline stage.  Subclasses implement ``run``; ``drop`` records why an item left the pipeline, ``report``
    tells the observer how far it got."""

    stage: Stage = Stage.EXAMPLE_FILTER
    # Items kept are tallied per stage in a shard's stats.json; steps added later than that format (the
    # repository-level ones, sampling, retrieval) leave the tally as it was so that builds stay byte-identical.
    tally_kept: bool = True

    def __init__(self, counter: DropLedger | None = None, observer: Observer | None = None) -> None:
        self.counter = counter or DropLedger()
        self.observer = observer

    @property
    def ledger(self) -> DropLedger:
        return self.counter

    def drop(self, item_id: str, reason: Reason, detail: str = "", repository: str = "") -> None:
        self.counter.drop(Exclusion(item_id, self.stage, reason, detail, repository))

    def report(self, step: str, done: int = 0, total: int | None = None, force: bool = False) -> None:
        if self.observer is not None:
            self.observer(StepEvent(step, done, total, force))

    def run(self, items: Iterable[T]) -> Iterator[T]:  # pragma: no cover - interface
        raise NotImplementedError

    def __call__(self, items: Iterable[T]) -> Iterator[T]:
        for item in self.run(items):
            if self.tally_kept:
                self.counter.keep(self.stage)
            yield item


class Filter(Step[T]):
    """A step that keeps or drops each item; ``check`` returns None to keep or (reason, detail) to drop."""

    def check(self, item: T) -> tuple[Reason, str] | None:  # pragma: no cover - interface
        raise NotImplementedError

    def item_id(self, item: T) -> str:
        return getattr(item, "task_id", repr(item))

    def repository(self, item: T) -> str:
        meta = getattr(item, "metadata", None)
        return getattr(meta, "repository", "") if meta is not None else ""

    def dropped(self, item: T) -> None:
        """Called for each item ``check`` drops, before the drop is recorded."""

    def run(self, items: Iterable[T]) -> Iterator[T]:
        for item in items:
            verdict = self.check(item)
            if verdict is None:
                yield item
            else:
                reason, detail = verdict
                self.dropped(item)
                self.drop(self.item_id(item), reason, detail, self.repository(item))


def chain(items: Iterable[T], *steps: Callable[[Iterable[T]], Iterator[T]]) -> Iterator[T]:
    for step in steps:
        items = step(items)
    yield from items
