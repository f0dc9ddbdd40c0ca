"""The CrossCodeEval pipeline for one repository, as declared steps:

    checkout -> snapshot -> repository filters -> analyze -> cut -> example filters -> screens -> sample -> retrieve

The first four carry the repository itself (a ``Repository``: its checkout, file snapshot, analysis) and drop it
with a reason when it cannot go on; ``cut`` turns its cross-file references into examples, and the rest yield
examples.  Every drop goes through the one ``DropLedger`` the steps share (streamed to ``excluded.jsonl``),
items left out by a stage's helpers (archive members, files, analyzer exclusions) too.  Progress is published as
step events to an observer; no step draws anything.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from benchsmith.analyzers.definitions import resolve_definitions
from benchsmith.builders.cceval.examples import ExampleCutter
from benchsmith.builders.cceval.filters import default_filters
from benchsmith.builders.cceval.screens import PredictabilityScore, profile_screens
from benchsmith.pipeline import DropLedger, Observer, Step
from benchsmith.records import CompletionExample, CursorRule, Reason, RepoSpec, Stage

if TYPE_CHECKING:
    from benchsmith.builders.cceval.build import BuildConfig


@dataclass
class Repository:
    """One repository on its way through the repository-level steps; also what the shard summary reads."""

    name: str
    spec: RepoSpec
    scratch: Path  # per-repository working directory, removed afterwards
    config: "BuildConfig"
    status: str = "ok"  # "excluded" once a repository-level step drops it
    identity: str | None = None
    files: int = 0
    tool_versions: dict[str, str] = field(default_factory=dict)
    extra_files: dict[str, list] = field(default_factory=dict)  # retrieval variants: file stem -> examples
    checkout: Any = None
    snap: Any = None
    analyzer: Any = None
    result: Any = None


class RepoStep(Step[Repository]):
    """A repository-level step: ``process`` returns None to pass the repository on, or (reason, detail) to drop
    it (recorded with the repository's id as item and repository)."""

    tally_kept = False

    def process(self, repo: Repository) -> tuple[Reason, str] | None:  # pragma: no cover - interface
        raise NotImplementedError

    def run(self, items: Iterable[Repository]) -> Iterator[Repository]:
        for repo in items:
            verdict = self.process(repo)
            if verdict is None:
                yield repo
            else:
                repo.status = "excluded"
                self.drop(repo.name, verdict[0], verdict[1], repo.name)


class Checkout(RepoStep):
    stage = Stage.SOURCE

    def process(self, repo: Repository) -> tuple[Reason, str] | None:
        from benchsmith.sources import SourceError, is_remote, materialise

        spec = dataclasses.replace(repo.spec, name=repo.name)
        try:
            repo.checkout = materialise(spec, repo.scratch,
                                        full_history=repo.config.repo_filters.created_after is not None)
        except SourceError as exc:
            return exc.reason, exc.detail
        for e in repo.checkout.exclusions:  # archive members left out (links, duplicates, over budget)
            self.counter.drop(e)
        if repo.checkout.kind == "git" and is_remote(spec.source) and repo.checkout.commit:
            repo.identity = f"git:{spec.source}@{repo.checkout.commit}"
        return None


class Snapshot(RepoStep):
    stage = Stage.REPO_FILTER

    def process(self, repo: Repository) -> tuple[Reason, str] | None:
        from benchsmith.analyzers import AnalyzerOptions, get_analyzer
        from benchsmith.files import snapshot

        cfg = repo.config
        repo.analyzer = get_analyzer(cfg.language, AnalyzerOptions(backend=cfg.backend, timeout=cfg.timeout,
                                                                   memory_mb=cfg.toolchain_memory_mb,
                                                                   allow_unconfined=cfg.allow_unconfined))
        self.report("reading files", 0, None, force=True)
        repo.snap = snapshot(repo.checkout.path, repo.analyzer.extensions, repo.scratch / "tree",
                             repo_name=repo.name, limits=cfg.file_limits,
                             on_file=lambda n: self.report("reading files", n, None))
        for e in repo.snap.exclusions:
            self.counter.drop(e)
        repo.files = len(repo.snap.files)
        if not repo.snap.files:
            return Reason.NO_SOURCE_FILES, f"no {cfg.language} source files"
        return None


class RepositoryFilters(RepoStep):
    stage = Stage.REPO_FILTER

    def process(self, repo: Repository) -> tuple[Reason, str] | None:
        from benchsmith.repo_filters import check_repository

        return check_repository(repo.checkout, repo.snap, repo.config.repo_filters)


class Analyze(RepoStep):
    stage = Stage.ANALYZER

    def process(self, repo: Repository) -> tuple[Reason, str] | None:
        analyzer = repo.analyzer
        repo.snap.configs = analyzer.read_configs(repo.checkout.path)
        for path, reason, detail in getattr(repo.snap.configs, "skipped", ()):  # read_data_files' DataFiles
            self.drop(f"{repo.name}/{path}", reason, detail, repo.name)
        work = repo.scratch / "analysis"
        work.mkdir()
        self.report(f"analysing ({analyzer.language} toolchain, 2 whole-tree runs)", 0, len(repo.snap.files),
                    force=True)
        repo.result = analyzer.analyze(repo.snap, work)
        repo.result.stats["definitions_found"] = resolve_definitions(analyzer, repo.snap.by_path(), repo.result.refs)
        repo.tool_versions = repo.result.tool_versions
        for e in repo.result.exclusions:
            self.counter.drop(e)
        if not repo.result.refs:
            # recorded, yet the repository goes on (with nothing to cut), as it always has
            detail = "no cross-file references found"
            if repo.result.no_refs_detail:
                detail += f" ({repo.result.no_refs_detail})"
            self.drop(repo.name, Reason.NO_CROSSFILE_REFS, detail, repo.name)
        return None


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
    """Cross-file context for every kept example, one variant file per retriever and query (into
    ``repo.extra_files``); the examples themselves pass unchanged."""

    stage = Stage.RETRIEVAL
    tally_kept = False

    def __init__(self, repo: Repository, counter: DropLedger, observer: Observer | None = None) -> None:
        super().__init__(counter, observer)
        self.repo = repo

    def run(self, items: Iterable[CompletionExample]) -> Iterator[CompletionExample]:
        examples = list(items)
        cfg = self.repo.config
        if cfg.retrievers and examples:
            from benchsmith.builders.cceval.retrieval import RetrievalConfig, retrieve_for_repo

            rcfg = RetrievalConfig(retrievers=tuple(cfg.retrievers), **cfg.retrieval)
            analyzer = self.repo.analyzer
            self.repo.extra_files.update(retrieve_for_repo(examples, self.repo.snap.files, analyzer.language,
                                                           analyzer.comment_prefix, rcfg))
        yield from examples


def cceval_steps(repo: Repository, ledger: DropLedger, observer: Observer | None = None) -> list[Step]:
    """The declared pipeline, in order (see the module docstring)."""
    cfg = repo.config
    return [
        Checkout(ledger, observer),
        Snapshot(ledger, observer),
        RepositoryFilters(ledger, observer),
        Analyze(ledger, observer),
        Cut(ledger, observer),
        # the released cursor brings the released groundtruth ends, and with them the released scorer's blind spots
        *default_filters(dataclasses.replace(cfg.example_filters, as_released=cfg.cursor is CursorRule.RELEASED),
                         ledger),
        *profile_screens(cfg.screens, ledger),
        Sample(repo, ledger, observer),
        PredictabilityScore(ledger, cfg.screens),
        Retrieve(repo, ledger, observer),
    ]
