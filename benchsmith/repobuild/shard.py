"""One repository, one shard: the walk of a repository through a build, top to bottom.

1. ``sources.resolve``: the source's identity (a commit, an archive digest, a tree digest) from one call;
2. the analyzer, made once: its toolchain versions are part of the shard's key, and it runs the analysis;
3. the shard's key (configuration, toolchain, repository id, identity): a shard finished under the same key is
   reused as it is (resume);
4. the core repository steps (``repository.core_steps``: checkout, snapshot, repository filters, analyze), then
   the family's own steps (``BenchmarkFamily.steps``), chained; every drop goes to ``excluded.jsonl``;
5. the family's writers turn what the last step yields into the shard's JSONL files;
6. the shard's stats.json (the core's counts, then each writer's own figures), its measured cost and its DONE
   marker; the directory is renamed into place, so a killed run loses at most the repositories in flight.

Nothing here raises: a failure becomes a recorded exclusion in the shard (``internal_error``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchsmith.jsonio import AtomicWriter, write_json
from benchsmith.layout import EXCLUDED_FILE
from benchsmith.pipeline import DropLedger, chain
from benchsmith.records import Exclusion, Reason, RepoSpec, Stage
from benchsmith.registry import load_entry
from benchsmith.repobuild.cost import COST_FILE, CostMeter, provenance
from benchsmith.repobuild.repository import Repository, core_steps
from benchsmith.repobuild.scratch import progress_dir, shard_dirname, scratch_dir
from benchsmith.scratch import private_dir
from benchsmith.shards import finish_shard, new_staging, read_done, record_failure

if TYPE_CHECKING:
    from benchsmith.analyzers.base import Analyzer
    from benchsmith.families import BenchmarkFamily, Writer
    from benchsmith.repobuild.config import RepoBuildConfig


@dataclass
class RepoTask:
    spec: RepoSpec
    name: str
    shard: str
    config: "RepoBuildConfig"
    family: str  # the family's registry entry ("module:attr"): a worker process imports it from there


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


def make_analyzer(cfg: "RepoBuildConfig") -> "Analyzer":
    from benchsmith.analyzers import AnalyzerOptions, get_analyzer

    return get_analyzer(cfg.language, AnalyzerOptions(backend=cfg.backend, timeout=cfg.timeout,
                                                      memory_mb=cfg.toolchain_memory_mb,
                                                      allow_unconfined=cfg.allow_unconfined))


def toolchain_versions(analyzer: "Analyzer") -> dict[str, str]:
    """The analyzer's toolchain and tree-sitter parser versions as they are now (part of every shard key)."""
    from benchsmith.toolchain_lock import parser_versions

    try:
        return {**dict(parser_versions(analyzer.grammar_module)), **analyzer.tool_versions()}
    except Exception as exc:  # noqa: BLE001 - an unknown version is a version too: it never matches a real one
        return {"error": type(exc).__name__}


def shard_fingerprint(cfg: "RepoBuildConfig", name: str, identity: str | None, toolchain: dict[str, str]) -> str:
    from benchsmith import __version__

    key = {"config": cfg.fingerprint(), "benchsmith": __version__, "toolchain": dict(sorted(toolchain.items())),
           "repository": name, "identity": identity}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]


class _Outputs:
    """The shard's JSONL files, opened as the family's writers first name them."""

    def __init__(self, staging: Path, writers: list["Writer"]) -> None:
        self.staging, self.writers = staging, writers
        self.files: dict[str, AtomicWriter] = {}
        for w in writers:
            for stem in w.required:
                self._file(stem)

    def _file(self, stem: str) -> AtomicWriter:
        if stem not in self.files:
            self.files[stem] = AtomicWriter(self.staging / f"{stem}.jsonl")
        return self.files[stem]

    def write(self, item: Any) -> None:
        for w in self.writers:
            for stem, record in w.records(item):
                out = self._file(stem)
                if record is not None:
                    out.write_record(record.to_dict())
                    w.written(stem, record)

    def commit(self) -> None:
        for stem in sorted(self.files):
            self.files[stem].commit()

    def abort(self) -> None:
        for f in self.files.values():
            f.abort()


def process_repo(task: RepoTask) -> ShardSummary:
    """All per-repository work; never raises (any failure becomes a recorded exclusion in the shard)."""
    from benchsmith.sources import resolve

    cfg = task.config
    family: "BenchmarkFamily" = load_entry(task.family)
    shard = Path(task.shard)
    source = resolve(task.spec, cfg.file_limits.max_bytes)
    try:
        analyzer: Any = make_analyzer(cfg)
        toolchain = toolchain_versions(analyzer)
    except Exception as exc:  # noqa: BLE001 - recorded in the shard below, as any failure of the run
        analyzer, toolchain = exc, {"error": type(exc).__name__}
    fp = shard_fingerprint(cfg, task.name, source.identity, toolchain)
    done = None if cfg.force or source.identity is None else read_done(shard, fp)
    if done is not None:
        return ShardSummary(task.name, skipped=True, examples=done.get("examples", 0),
                            excluded=done.get("excluded", 0), files=done.get("files", 0),
                            tool_versions=done.get("tool_versions", {}), identity=source.identity, fingerprint=fp)
    start, meter = time.monotonic(), CostMeter.start()
    scratch_base = private_dir(scratch_dir(cfg))  # never through a link planted at its name
    tmp_root = Path(tempfile.mkdtemp(prefix="repo-", dir=scratch_base))
    staging = new_staging(shard)
    summary = ShardSummary(task.name)
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
    repo = Repository(task.name, source, tmp_root, cfg, analyzer)
    observer = _observer(cfg, task.name)
    writers = family.writers(cfg)
    outputs = _Outputs(staging, writers)
    ok = True
    try:
        if isinstance(analyzer, Exception):
            raise analyzer
        for item in chain([repo], *core_steps(ledger, observer), *family.steps(repo, ledger, observer)):
            outputs.write(item)
            summary.examples += 1
        outputs.commit()
    except Exception as exc:  # noqa: BLE001 - a bug on one repository must not lose the others
        ok = False
        outputs.abort()
        tb = traceback.format_exc(limit=3).strip().splitlines()
        ledger.drop(Exclusion(task.name, Stage.SOURCE, Reason.INTERNAL_ERROR,
                              f"{type(exc).__name__}: {exc} | {' / '.join(tb[-3:])}", task.name))
        repo.status = "error"
        for name in os.listdir(staging):
            if name.endswith(".jsonl") and name != EXCLUDED_FILE:
                (staging / name).unlink()
        for stem in required_stems(writers):
            (staging / f"{stem}.jsonl").write_text("")
        summary.examples = 0
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    excluded.commit()
    summary.status, summary.files, summary.tool_versions = repo.status, repo.files, repo.tool_versions
    summary.identity = source.identity  # an unpinned git URL names the commit actually cloned
    summary.excluded = sum(ledger.dropped.values())
    summary.seconds = time.monotonic() - start
    stats: dict[str, Any] = {"repository": task.name, "status": summary.status, "examples": summary.examples,
                             "files": summary.files, "dropped": dict(sorted(ledger.dropped.items())),
                             "kept": dict(sorted(ledger.kept.items()))}
    for w in writers:
        stats.update(w.stats(ok))
    stats["provenance"] = provenance(repo.checkout)
    write_json(staging / COST_FILE, meter.stop(summary.examples))  # a measurement: kept out of stats.json
    fp = summary.fingerprint = shard_fingerprint(cfg, task.name, summary.identity, toolchain)
    # an unresolvable source never resumes: no DONE marker
    done = None if summary.identity is None else {
        "fingerprint": fp, "identity": summary.identity, "toolchain": toolchain, "examples": summary.examples,
        "excluded": summary.excluded, "files": summary.files, "tool_versions": summary.tool_versions}
    finish_shard(staging, shard, stats, done)
    return summary


def required_stems(writers: list["Writer"]) -> list[str]:
    return [stem for w in writers for stem in w.required]


def _observer(cfg: "RepoBuildConfig", name: str):
    from benchsmith.progress import ProgressObserver

    return ProgressObserver(progress_dir(cfg) / f"{shard_dirname(name)}.json")


def record_failed_task(task: RepoTask, exc: BaseException) -> ShardSummary:
    """A repository whose task produced no result (its worker died; an error escaped ``process_repo``): its
    shard records the reason and is retried by the next run (``shards.record_failure``)."""
    from benchsmith.executors import WorkerDied

    what = "worker died" if isinstance(exc, WorkerDied) else type(exc).__name__
    writers = load_entry(task.family).writers(task.config)
    record_failure(Path(task.shard),
                   Exclusion(task.name, Stage.SOURCE, Reason.INTERNAL_ERROR, f"{what}: {exc}", task.name),
                   EXCLUDED_FILE, [f"{stem}.jsonl" for stem in required_stems(writers)],
                   {"repository": task.name, "status": "error", "examples": 0, "files": 0,
                    "dropped": {str(Reason.INTERNAL_ERROR): 1}, "kept": {}})
    return ShardSummary(task.name, excluded=1, status="error")
