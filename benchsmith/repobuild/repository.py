"""The core repository steps every per-repository family starts with:

    checkout -> snapshot -> repository filters -> analyze

They carry the repository itself (a ``Repository``) and drop it with a reason when it cannot go on; what is left
of it once ``Analyze`` has run (its files, its analysis) is what a family's own steps consume.  Every drop goes
through the one ``DropLedger`` the steps share, items left out by a stage's helpers (archive members, files,
configuration files, analyzer exclusions) too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from benchsmith.pipeline import Filter
from benchsmith.records import Checkout as CheckoutRecord
from benchsmith.records import Reason, Stage

if TYPE_CHECKING:
    from benchsmith.analyzers.base import AnalysisResult, Analyzer
    from benchsmith.files import RepoSnapshot
    from benchsmith.repobuild.config import RepoBuildConfig
    from benchsmith.sources import ResolvedSource


@dataclass
class Repository:
    """One repository on its way through the steps; also what the shard summary reads."""

    name: str
    source: "ResolvedSource"  # the spec and its identity, resolved once (sources.resolve)
    scratch: Path  # per-repository working directory, removed afterwards
    config: "RepoBuildConfig"
    analyzer: "Analyzer"  # made once per repository task, for the shard key's versions and the run
    status: str = "ok"  # "excluded" once a repository step drops it
    files: int = 0
    tool_versions: dict[str, str] = field(default_factory=dict)
    checkout: CheckoutRecord | None = None
    snap: "RepoSnapshot | None" = None
    result: "AnalysisResult | None" = None

    @property
    def identity(self) -> str | None:
        return self.source.identity


class RepoStep(Filter[Repository]):
    """A repository-level step: ``check`` returns None to pass the repository on, or (reason, detail) to drop
    it (recorded with the repository's id as item and repository, its status set to excluded)."""

    tally_kept = False

    def item_id(self, repo: Repository) -> str:
        return repo.name

    def repository(self, repo: Repository) -> str:
        return repo.name

    def dropped(self, repo: Repository) -> None:
        repo.status = "excluded"


class Checkout(RepoStep):
    stage = Stage.SOURCE

    def check(self, repo: Repository) -> tuple[Reason, str] | None:
        from benchsmith.sources import SourceError

        try:
            repo.checkout = repo.source.materialise(repo.name, repo.scratch,
                                                    full_history=repo.config.repo_filters.created_after is not None)
        except SourceError as exc:
            return exc.reason, exc.detail
        for e in repo.checkout.exclusions:  # archive members left out (links, duplicates, over budget)
            self.counter.drop(e)
        return None


class Snapshot(RepoStep):
    stage = Stage.REPO_FILTER

    def check(self, repo: Repository) -> tuple[Reason, str] | None:
        from benchsmith.files import snapshot

        cfg = repo.config
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

    def check(self, repo: Repository) -> tuple[Reason, str] | None:
        from benchsmith.repo_filters import check_repository

        return check_repository(repo.checkout, repo.snap, repo.config.repo_filters)


class Analyze(RepoStep):
    stage = Stage.ANALYZER

    def check(self, repo: Repository) -> tuple[Reason, str] | None:
        from benchsmith.analyzers.definitions import resolve_definitions

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


def core_steps(ledger, observer) -> list[RepoStep]:
    """The repository steps in order; a family's steps follow them."""
    return [Checkout(ledger, observer), Snapshot(ledger, observer), RepositoryFilters(ledger, observer),
            Analyze(ledger, observer)]


__all__ = ["Analyze", "Checkout", "Repository", "RepoStep", "RepositoryFilters", "Snapshot", "core_steps"]
