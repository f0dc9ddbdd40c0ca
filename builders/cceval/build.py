"""Build a CrossCodeEval-style split: per repository, source -> snapshot -> repo filters -> analyzer -> cut ->
filters -> retrieval, each repository written to its own shard; shards are merged in the order the repositories
were given.

Shards make builds resumable: a shard directory appears atomically (renamed into place) with a DONE marker that
records the configuration fingerprint, so a rerun skips exactly the repositories that finished under the same
configuration, and a run killed at any moment loses at most the repositories in flight.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.confine import DEFAULT_MEMORY_MB
from benchsmith.builders.cceval.cost import COST_FILE, CostMeter, cut_off, provenance, write_cost
from benchsmith.builders.cceval.filters import ExampleFilterConfig
from benchsmith.builders.cceval.screens import ScreenProfile
from benchsmith.builders.cceval.split_stats import (example_shares, merged_self_consistency, screens_stats,
                                                    shard_self_consistency)
from benchsmith.builders.cceval.steps import Repository, cceval_steps
from benchsmith.executors import ExecutorKind, WorkerDied, run_tasks
from benchsmith.files import FileLimits
from benchsmith.jsonio import AtomicWriter, dumps, read_jsonl, write_json
from benchsmith.layout import EXCLUDED_FILE, SPLIT_FILE
from benchsmith.pipeline import DropLedger, chain
from benchsmith.progress import ProgressObserver, track
from benchsmith.records import CursorRule, Exclusion, Reason, ReferenceKind, RepoSpec, Stage
from benchsmith.runner import ToolchainBackend
from benchsmith.scratch import claim_build_scratch, private_dir
from benchsmith.shards import (DONE_FILE, LOCK_FILE, SHARDS_DIR, STAGING_PREFIX, STATS_FILE, OutputLock,  # noqa: F401
                               finish_shard, merge_jsonl, new_staging, read_done, record_failure, remove_leftovers,
                               shard_is_done, shard_stats, summed_drops)
from benchsmith.sources import RepoFilterConfig, is_remote, repo_name, source_identity
from benchsmith.toolchain_lock import parser_versions


@dataclass
class BuildConfig:
    language: str
    output: str
    repos: list[RepoSpec] = field(default_factory=list)
    repo_filters: RepoFilterConfig = RepoFilterConfig()
    file_limits: FileLimits = FileLimits()
    example_filters: ExampleFilterConfig = ExampleFilterConfig()
    screens: ScreenProfile = ScreenProfile.DEFAULT  # model-free predictability screens (builders/cceval/screens.py)
    backend: ToolchainBackend = ToolchainBackend.LOCAL
    timeout: float = 900.0
    toolchain_memory_mb: int = DEFAULT_MEMORY_MB  # each toolchain run's whole process tree
    allow_unconfined: bool = False  # run toolchains unconfined where the machine cannot confine them
    retrievers: tuple[str, ...] = ("bm25",)
    retrieval: dict[str, Any] = field(default_factory=dict)  # extra RetrievalConfig fields
    max_per_repo: int | None = None
    seed: int = 0
    first_reference_per_statement: bool = False  # the earlier cutting rule (ExampleCutter.first_per_statement)
    cursor: CursorRule = CursorRule.NAME  # --cursor: at the name, or where the released benchmark puts it
    kinds: tuple[ReferenceKind, ...] | None = None  # --kinds: the reference kinds cut (None: all)
    workers: int | None = None
    executor: ExecutorKind = ExecutorKind.LOCAL
    ray_address: str | None = None
    force: bool = False
    workdir: str | None = None

    def fingerprint(self) -> str:
        """What determines a shard's content (not where or how fast it is computed)."""
        keep = {k: v for k, v in _jsonable(dataclasses.asdict(self)).items()
                if k not in ("output", "repos", "workers", "executor", "ray_address", "force", "workdir")}
        return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    if hasattr(obj, "value") and not isinstance(obj, (int, float, str)):
        return obj.value
    return obj


@dataclass
class RepoTask:
    spec: RepoSpec
    name: str
    shard: str
    config: BuildConfig


@dataclass
class ShardSummary:
    name: str
    skipped: bool = False  # finished in an earlier run
    examples: int = 0
    excluded: int = 0
    files: int = 0
    seconds: float = 0.0
    status: str = "ok"
    tool_versions: dict[str, str] = field(default_factory=dict)
    identity: str | None = None  # what the shard was built from (see sources.source_identity)
    fingerprint: str = ""  # the shard's key: configuration, toolchain, repository id and identity


def unique_names(specs: list[RepoSpec]) -> list[str]:
    """Repository ids, made unique in input order (two archives of the same name get #2, #3 ...)."""
    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        name = repo_name(spec)
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def lang_dir(config: BuildConfig) -> Path:
    return Path(config.output) / config.language


def _shard_dirname(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "._-@" else "_" for c in name)
    return f"{safe}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


# -- shard identity ------------------------------------------------------------------------------------------
# A shard is found by the repository's resolved source (its directory name alone would let r2/proj resume
# r1/proj's shard) and accepted only when its DONE marker holds the same key: the configuration, the toolchain
# versions, benchsmith's version, the repository id (task ids contain it) and the source's identity (a content
# hash for directories and archives, the commit for git).


def _shard_location(name: str, spec: RepoSpec) -> str:
    """Shard directory name: readable repository id + a digest of the id and the resolved source."""
    safe = "".join(c if c.isalnum() or c in "._-@" else "_" for c in name)[:80]
    where = "\0".join((name, spec.source, spec.commit or ""))
    return f"{safe}-{hashlib.sha256(where.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"


def toolchain_versions(cfg: BuildConfig) -> dict[str, str]:
    """The analyzer's toolchain and tree-sitter parser versions as they are now (part of every shard key)."""
    try:
        analyzer = get_analyzer(cfg.language, AnalyzerOptions(backend=cfg.backend, timeout=cfg.timeout))
        return {**dict(parser_versions(analyzer.grammar_module)), **analyzer.tool_versions()}
    except Exception as exc:  # noqa: BLE001 - an unknown version is a version too: it never matches a real one
        return {"error": type(exc).__name__}


def shard_fingerprint(cfg: BuildConfig, name: str, identity: str | None, toolchain: dict[str, str]) -> str:
    from benchsmith import __version__

    key = {"config": cfg.fingerprint(), "benchsmith": __version__, "toolchain": dict(sorted(toolchain.items())),
           "repository": name, "identity": identity}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]


def build_fingerprint(cfg: BuildConfig, shards: list[ShardSummary]) -> str:
    """The whole split's key: options, the repository list in order (ids and identities) and toolchains."""
    key = {"config": cfg.fingerprint(), "repositories": [[s.name, s.fingerprint] for s in shards]}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def process_repo(task: RepoTask) -> ShardSummary:
    """All per-repository work; never raises (any failure becomes a recorded exclusion in the shard)."""
    cfg = task.config
    shard = Path(task.shard)
    toolchain = toolchain_versions(cfg)
    identity = source_identity(task.spec, cfg.file_limits.max_bytes)
    fp = shard_fingerprint(cfg, task.name, identity, toolchain)
    done = None if cfg.force or identity is None else read_done(shard, fp)
    if done is not None:
        return ShardSummary(task.name, skipped=True, examples=done.get("examples", 0),
                            excluded=done.get("excluded", 0), files=done.get("files", 0),
                            tool_versions=done.get("tool_versions", {}), identity=identity, fingerprint=fp)
    start, meter = time.monotonic(), CostMeter.start()
    scratch_base = private_dir(scratch_dir(cfg))  # never through a link planted at its name
    tmp_root = Path(tempfile.mkdtemp(prefix="repo-", dir=scratch_base))
    staging = new_staging(shard)
    summary = ShardSummary(task.name, identity=identity)
    excluded = AtomicWriter(staging / EXCLUDED_FILE)
    # Tool messages can quote our scratch directory, whose name is random: replace it so that reruns and other
    # workers write the same bytes.
    scratch = sorted({str(tmp_root), os.path.realpath(tmp_root)}, key=len, reverse=True)

    def sink(e: Exclusion) -> None:
        detail = e.detail
        for path in scratch:
            detail = detail.replace(path, "<workdir>")
        excluded.write_record((dataclasses.replace(e, detail=detail) if detail != e.detail else e).to_dict())

    ledger = DropLedger(sink=sink)
    repo = Repository(task.name, task.spec, tmp_root, cfg, identity=identity)
    observer = ProgressObserver(progress_dir(cfg) / f"{_shard_dirname(task.name)}.json")
    self_check = None
    try:
        with AtomicWriter(staging / SPLIT_FILE) as w:
            for ex in chain([repo], *cceval_steps(repo, ledger, observer)):
                w.write_record(ex.to_dict())
                summary.examples += 1
        for key, records in sorted(repo.extra_files.items()):
            with AtomicWriter(staging / f"{key}.jsonl") as w:
                for ex in records:
                    w.write_record(ex.to_dict())
        self_check = shard_self_consistency(staging / SPLIT_FILE, cfg.language)
    except Exception as exc:  # noqa: BLE001 - a bug on one repository must not lose the others
        tb = traceback.format_exc(limit=3).strip().splitlines()
        ledger.drop(Exclusion(task.name, Stage.SOURCE, Reason.INTERNAL_ERROR,
                              f"{type(exc).__name__}: {exc} | {' / '.join(tb[-3:])}", task.name))
        repo.status = "error"
        for name in os.listdir(staging):
            if name.endswith(".jsonl") and name != EXCLUDED_FILE:
                (staging / name).unlink()
        (staging / SPLIT_FILE).write_text("")
        summary.examples = 0
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    excluded.commit()
    summary.status, summary.files, summary.tool_versions = repo.status, repo.files, repo.tool_versions
    summary.identity = repo.identity  # an unpinned git URL resolved to the commit actually cloned
    summary.excluded = sum(ledger.dropped.values())
    summary.seconds = time.monotonic() - start
    stats = {"repository": task.name, "status": summary.status, "examples": summary.examples,
             "files": summary.files, "dropped": dict(sorted(ledger.dropped.items())),
             "kept": dict(sorted(ledger.kept.items())),
             "self_consistency": self_check, "provenance": provenance(repo.checkout)}
    write_json(staging / COST_FILE, meter.stop(summary.examples))  # a measurement: kept out of stats.json
    fp = summary.fingerprint = shard_fingerprint(cfg, task.name, summary.identity, toolchain)
    # an unresolvable source never resumes: no DONE marker
    done = None if summary.identity is None else {
        "fingerprint": fp, "identity": summary.identity, "toolchain": toolchain, "examples": summary.examples,
        "excluded": summary.excluded, "files": summary.files, "tool_versions": summary.tool_versions}
    finish_shard(staging, shard, stats, done)
    return summary


def scratch_dir(config: BuildConfig) -> Path:
    """Where this build's repositories are extracted and analysed: one directory per output directory, so a
    killed run's leftovers (checkouts, stubbed trees) are found and removed by the next run of the same build;
    under the output directory (or ``workdir``), never at a name another user could plant (benchsmith.scratch)."""
    if not config.workdir:
        return lang_dir(config) / SHARDS_DIR / "scratch"
    key = hashlib.sha1(str(Path(config.output).resolve() / config.language).encode()).hexdigest()[:12]
    return Path(config.workdir) / f"benchsmith-build-{key}"


def progress_dir(config: BuildConfig) -> Path:
    return scratch_dir(config) / "progress"


def record_failed_task(task: RepoTask, exc: BaseException) -> ShardSummary:
    """A repository whose task produced no result (its worker died; an error escaped ``process_repo``): its
    shard records the reason and is retried by the next run (``shards.record_failure``)."""
    what = "worker died" if isinstance(exc, WorkerDied) else type(exc).__name__
    record_failure(Path(task.shard),
                   Exclusion(task.name, Stage.SOURCE, Reason.INTERNAL_ERROR, f"{what}: {exc}", task.name),
                   EXCLUDED_FILE, [SPLIT_FILE],
                   {"repository": task.name, "status": "error", "examples": 0, "files": 0,
                    "dropped": {str(Reason.INTERNAL_ERROR): 1}, "kept": {}})
    return ShardSummary(task.name, excluded=1, status="error")


@dataclass
class BuildSummary:
    shards: list[ShardSummary]
    output_dir: Path
    stats: dict[str, Any]


def build(config: BuildConfig, progress: bool = True) -> BuildSummary:
    """Run every repository (resuming finished shards unless ``config.force``) and merge the shards.

    Memory: only one small ``ShardSummary`` per repository is kept here; records stay in the shard files and the
    merge streams them, so the build's footprint does not grow with the number of repositories."""
    out = lang_dir(config)
    shards_root = out / SHARDS_DIR
    shards_root.mkdir(parents=True, exist_ok=True)
    with OutputLock(shards_root / LOCK_FILE, out):
        remove_leftovers(out, shards_root)
        own_workdir = claim_build_scratch(scratch_dir(config))  # a fresh one where tools need another path
        if own_workdir is not None:
            config = dataclasses.replace(config, workdir=str(own_workdir))
        names = unique_names(config.repos)
        # Tasks carry absolute paths: a Ray worker (or any worker) may run in another working directory.
        task_config = dataclasses.replace(
            config, output=os.path.abspath(config.output),
            workdir=os.path.abspath(config.workdir) if config.workdir else None)
        tasks = [RepoTask(_absolute(spec), name,
                          os.path.abspath(shards_root / _shard_location(name, _absolute(spec))), task_config)
                 for spec, name in zip(config.repos, names)]
        results: dict[str, ShardSummary] = {}
        for task, summary in track(run_tasks(process_repo, tasks, workers=config.workers, kind=config.executor,
                                             ray_address=config.ray_address, on_error=record_failed_task),
                                   len(tasks), progress, config.language, progress_dir(config),
                                   key=lambda t: _shard_dirname(t.name), label=lambda t: t.name):
            results[task.name] = summary
        ordered = [results[t.name] for t in tasks]
        stats = merge_shards(out, [Path(t.shard) for t in tasks], ordered, config)
        shutil.rmtree(progress_dir(config), ignore_errors=True)
        try:
            scratch_dir(config).rmdir()  # empty once every task cleaned up after itself
        except OSError:
            pass
        if own_workdir is not None:
            shutil.rmtree(own_workdir, ignore_errors=True)
    return BuildSummary(ordered, out, stats)


def _absolute(spec: RepoSpec) -> RepoSpec:
    if is_remote(spec.source):
        return spec
    return dataclasses.replace(spec, source=os.path.abspath(os.path.expanduser(spec.source)))


def merge_shards(out: Path, shards: list[Path], summaries: list[ShardSummary], config: BuildConfig) -> dict:
    """Concatenate shards in repository order into the final files, and the split's stats.json."""
    merge_jsonl(out, shards, always=[SPLIT_FILE])
    per_shard = shard_stats(shards)
    per_repo = [{"repository": st["repository"], "status": st["status"], "files": st["files"],
                 "examples": st["examples"], "excluded": sum(st.get("dropped", {}).values()),
                 "provenance": st.get("provenance")} for st in per_shard]
    tool_versions: dict[str, str] = {}
    for summary in summaries:
        tool_versions.update(summary.tool_versions)
    stats = {
        "language": config.language,
        "repositories": len(shards),
        "repositories_with_examples": sum(1 for r in per_repo if r["examples"]),
        "examples": sum(r["examples"] for r in per_repo),
        "files": sum(r["files"] for r in per_repo),
        "dropped": summed_drops(per_shard),
        "per_repository": per_repo,
        "cut_off": cut_off(config.repo_filters),
        "tool_versions": dict(sorted(tool_versions.items())),
        "config_fingerprint": config.fingerprint(),
        "build_fingerprint": build_fingerprint(config, summaries),
        "screens": screens_stats(config.screens),
        "cursor": config.cursor.value,
        "kinds": [k.value for k in config.kinds] if config.kinds is not None else "all",
        **example_shares(out / SPLIT_FILE),
        "self_consistency": merged_self_consistency(shards, config.language),
        # the measured seconds live in their own file: in stats.json they would make two fresh builds differ
        "construction_cost": COST_FILE,
    }
    write_json(out / STATS_FILE, stats)
    write_cost(out, shards, per_shard)  # measured times: a file of their own, so stats.json stays reproducible
    return stats


def iter_examples(path: str | os.PathLike):
    from benchsmith.records import CompletionExample

    for obj in read_jsonl(path):
        yield CompletionExample.from_dict(obj)


def print_summary(summary: BuildSummary, file=sys.stdout) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file)
    table = Table(title=f"{summary.stats['language']}: {summary.stats['examples']} examples "
                        f"from {summary.stats['repositories']} repositories -> {summary.output_dir}")
    for col in ("repository", "status", "files", "examples", "excluded", "seconds"):
        table.add_column(col, justify="right" if col in ("files", "examples", "excluded", "seconds") else "left")
    for s in summary.shards:
        table.add_row(s.name, "resumed" if s.skipped else s.status, str(s.files), str(s.examples), str(s.excluded),
                      "-" if s.skipped else f"{s.seconds:.1f}")
    console.print(table)
    if summary.stats["dropped"]:
        reasons = Table(title="exclusions by reason")
        reasons.add_column("reason")
        reasons.add_column("count", justify="right")
        for k, v in sorted(summary.stats["dropped"].items(), key=lambda kv: (-kv[1], kv[0])):
            reasons.add_row(k, str(v))
        console.print(reasons)


__all__ = ["BuildConfig", "build", "process_repo", "merge_shards", "print_summary", "iter_examples", "dumps"]
