"""A per-repository build of any benchmark family: every repository to its own shard (``shard.process_repo``),
spread over workers, then the shards merged in the order the repositories were given.

Shards make builds resumable: a shard directory appears atomically (renamed into place) with a DONE marker that
records the shard's key, so a rerun skips exactly the repositories that finished under the same configuration,
and a run killed at any moment loses at most the repositories in flight.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.executors import run_tasks
from benchsmith.families import FAMILIES, BenchmarkFamily
from benchsmith.jsonio import write_json
from benchsmith.layout import STATS_FILE
from benchsmith.progress import track
from benchsmith.records import RepoSpec
from benchsmith.repobuild.config import RepoBuildConfig
from benchsmith.repobuild.cost import COST_FILE, cut_off, write_cost
from benchsmith.repobuild.scratch import lang_dir, progress_dir, scratch_dir, shard_dirname
from benchsmith.repobuild.shard import (RepoTask, ShardSummary, process_repo, record_failed_task,
                                        required_stems)
from benchsmith.scratch import claim_build_scratch
from benchsmith.shards import LOCK_FILE, SHARDS_DIR, OutputLock, merge_jsonl, remove_leftovers, shard_stats, summed_drops
from benchsmith.sources import is_remote, repo_name


@dataclass
class BuildSummary:
    shards: list[ShardSummary]
    output_dir: Path
    stats: dict[str, Any]


def unique_names(specs: list[RepoSpec]) -> list[str]:
    """Repository ids, made unique in input order (two archives of the same name get #2, #3 ...)."""
    seen: dict[str, int] = {}
    out = []
    for spec in specs:
        name = repo_name(spec)
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


# A shard is found by the repository's resolved source (its directory name alone would let r2/proj resume
# r1/proj's shard) and accepted only when its DONE marker holds the same key: the configuration, the toolchain
# versions, benchsmith's version, the repository id (task ids contain it) and the source's identity (a content
# hash for directories and archives, the commit for git).
def shard_location(name: str, spec: RepoSpec) -> str:
    """Shard directory name: readable repository id + a digest of the id and the resolved source."""
    safe = "".join(c if c.isalnum() or c in "._-@" else "_" for c in name)[:80]
    where = "\0".join((name, spec.source, spec.commit or ""))
    return f"{safe}-{hashlib.sha256(where.encode('utf-8', 'surrogateescape')).hexdigest()[:16]}"


def build_fingerprint(cfg: RepoBuildConfig, shards: list[ShardSummary]) -> str:
    """The whole split's key: options, the repository list in order (ids and identities) and toolchains."""
    key = {"config": cfg.fingerprint(), "repositories": [[s.name, s.fingerprint] for s in shards]}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def build(family: str, config: RepoBuildConfig, progress: bool = True) -> BuildSummary:
    """Run every repository of ``config`` through ``family`` (resuming finished shards unless ``config.force``)
    and merge the shards.

    Memory: only one small ``ShardSummary`` per repository is kept here; records stay in the shard files and the
    merge streams them, so the build's footprint does not grow with the number of repositories."""
    entry = FAMILIES[family]
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
                          os.path.abspath(shards_root / shard_location(name, _absolute(spec))), task_config, entry)
                 for spec, name in zip(config.repos, names)]
        results: dict[str, ShardSummary] = {}
        for task, summary in track(run_tasks(process_repo, tasks, workers=config.workers, kind=config.executor,
                                             ray_address=config.ray_address, on_error=record_failed_task),
                                   len(tasks), progress, config.language, progress_dir(config),
                                   key=lambda t: shard_dirname(t.name), label=lambda t: t.name):
            results[task.name] = summary
        ordered = [results[t.name] for t in tasks]
        stats = merge_shards(FAMILIES.load(family), out, [Path(t.shard) for t in tasks], ordered, config)
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


def merge_shards(family: BenchmarkFamily, out: Path, shards: list[Path], summaries: list[ShardSummary],
                 config: RepoBuildConfig) -> dict:
    """Concatenate shards in repository order into the final files, and the split's stats.json: the core's counts,
    then the family's own figures."""
    merge_jsonl(out, shards, always=[f"{stem}.jsonl" for stem in required_stems(family.writers(config))])
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
        **family.split_stats(out, shards, config),
        # the measured seconds live in their own file: in stats.json they would make two fresh builds differ
        "construction_cost": COST_FILE,
    }
    write_json(out / STATS_FILE, stats)
    write_cost(out, shards, per_shard)
    return stats
