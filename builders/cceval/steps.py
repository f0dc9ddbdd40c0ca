"""The CrossCodeEval steps for one repository, after the core ones (``benchsmith.repobuild.repository``:
checkout -> snapshot -> repository filters -> analyze):

    cut -> example filters -> screens -> sample -> predictability score -> retrieve

``cut`` turns the analysed repository's cross-file references into examples, and the rest yield examples; the last,
``retrieve``, yields each example with its retrieval variants (``Retrieved``), which the family's writers put in
the split and variant files.  Every drop goes through the one ``DropLedger`` the steps share (streamed to
``excluded.jsonl``).  Progress is published as step events to an observer; no step draws anything.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Iterable, Iterator

from benchsmith.builders.cceval.examples import ExampleCutter
from benchsmith.builders.cceval.filters import default_filters
from benchsmith.builders.cceval.screens import PredictabilityScore, profile_screens
from benchsmith.pipeline import DropLedger, Observer, Step
from benchsmith.records import Reason, Stage
from benchsmith.builders.cceval.records import CompletionExample, CursorRule
from benchsmith.repobuild.repository import Repository


class Cut(Step[Repository]):
    """Repository -> examples: the example cutter over its cross-file references (it drops with its own stage)."""

    stage = Stage.EXAMPLE_BUILDER
    tally_kept = False  # the cutter tallies its own

    def run(self, items: Iterable[Repository]) -> Iterator[CompletionExample]:
        for repo in items:
            cutter = ExampleCutter(repo.analyzer, repo.snap.by_path(), repo.name, repo.checkout.commit,
                                   self.counter, on_file=lambda done, total: self.report("cutting examples", done,
                                                                                         total),
                                   first_per_statement=repo.config.first_reference_per_statement,
                                   cursor=repo.config.cursor, seed=repo.config.seed,
                                   tree_views=repo.result.tree_views,
                                   kinds=frozenset(repo.config.kinds) if repo.config.kinds is not None else None)
            yield from cutter(repo.result.refs)


class Sample(Step[CompletionExample]):
    """``--max-per-repo N``: a seeded sample of N examples; the others are recorded as ``sampled_out``."""

    stage = Stage.SAMPLE
    tally_kept = False

    def __init__(self, repo: Repository, counter: DropLedger, observer: Observer | None = None) -> None:
        super().__init__(counter, observer)
        self.repo = repo

    def run(self, items: Iterable[CompletionExample]) -> Iterator[CompletionExample]:
        cfg = self.repo.config
        examples = list(items)
        if cfg.max_per_repo is None or len(examples) <= cfg.max_per_repo:
            yield from examples
            return
        rng = random.Random(f"{cfg.seed}:{self.repo.name}")
        keep = set(rng.sample(range(len(examples)), cfg.max_per_repo))
        for i, ex in enumerate(examples):
            if i in keep:
                yield ex
            else:
                self.drop(ex.metadata.task_id, Reason.SAMPLED_OUT,
                          f"--max-per-repo {cfg.max_per_repo} (seed {cfg.seed}): not in the sample",
                          self.repo.name)


class Retrieve(Step[CompletionExample]):
    """Cross-file context for every kept example, one variant per retriever and query: each example leaves with
    its variants (``Retrieved``), for the family's writers."""

    stage = Stage.RETRIEVAL
    tally_kept = False

    def __init__(self, repo: Repository, counter: DropLedger, observer: Observer | None = None) -> None:
        super().__init__(counter, observer)
        self.repo = repo

    def run(self, items: Iterable[CompletionExample]) -> Iterator[Retrieved]:
        examples = list(items)
        cfg = self.repo.config
        variants: dict[str, list[CompletionExample]] = {}
        if cfg.retrievers and examples:
            from benchsmith.builders.cceval.retrieval import RetrievalConfig, retrieve_for_repo

            rcfg = RetrievalConfig(retrievers=tuple(cfg.retrievers), **cfg.retrieval)
            analyzer = self.repo.analyzer
            variants = retrieve_for_repo(examples, self.repo.snap.files, analyzer.language,
                                         analyzer.comment_prefix, rcfg)
        # each variant file keeps the examples' order; one may hold only some of them (the definition oracle)
        by_task = {stem: {v.metadata.task_id: v for v in records} for stem, records in sorted(variants.items())}
        for ex in examples:
            yield Retrieved(ex, {stem: found.get(ex.metadata.task_id) for stem, found in by_task.items()})


@dataclass(frozen=True)
class Retrieved:
    """A kept example and its retrieval variants: file stem -> the example with its cross-file context, or None
    where that variant has no record of it."""

    example: CompletionExample
    variants: dict[str, CompletionExample | None]


def cceval_steps(repo: Repository, ledger: DropLedger, observer: Observer | None = None) -> list[Step]:
    """The CrossCodeEval steps, in order (see the module docstring), after the core repository steps."""
    cfg = repo.config
    return [
        Cut(ledger, observer),
        # the released cursor brings the released groundtruth ends, and with them the released scorer's blind spots
        *default_filters(dataclasses.replace(cfg.example_filters, as_released=cfg.cursor is CursorRule.RELEASED),
                         ledger),
        *profile_screens(cfg.screens, ledger),
        Sample(repo, ledger, observer),
        PredictabilityScore(ledger, cfg.screens),
        Retrieve(repo, ledger, observer),
    ]
