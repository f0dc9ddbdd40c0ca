"""The cceval pipeline as declared steps: the step list, and sampling's drops recorded like every other drop."""

from __future__ import annotations

import json
from pathlib import Path

from benchsmith.builders.cceval.build import build
from benchsmith.builders.cceval.config import BuildConfig
from benchsmith.families import FAMILIES
from benchsmith.repobuild.repository import Repository, core_steps
from benchsmith.repobuild.shard import make_analyzer
from benchsmith.sources import resolve
from benchsmith.pipeline import DropLedger
from benchsmith.records import Reason, RepoSpec, Stage

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "python" / "shoplib"


def test_steps_are_declared_in_pipeline_order(tmp_path):
    cfg = BuildConfig(language="python", output=str(tmp_path))
    repo = Repository("r", resolve(RepoSpec(str(SAMPLE))), tmp_path, cfg, make_analyzer(cfg))
    ledger = DropLedger()
    names = [type(s).__name__ for s in [*core_steps(ledger, None), *FAMILIES.load("cceval").steps(repo, ledger, None)]]
    assert names[:5] == ["Checkout", "Snapshot", "RepositoryFilters", "Analyze", "Cut"]
    assert names[-3:] == ["Sample", "PredictabilityScore", "Retrieve"]  # the score: released examples only


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_max_per_repo_records_every_sampled_out_example(tmp_path):
    def run(out: Path, n: int | None):
        cfg = BuildConfig(language="python", output=str(out), repos=[RepoSpec(str(SAMPLE))], retrievers=(),
                          max_per_repo=n, workers=1)
        return build(cfg, progress=False)

    full = run(tmp_path / "full", None)
    assert full.stats["examples"] >= 2
    sampled = run(tmp_path / "sampled", 1)
    assert sampled.stats["examples"] == 1
    excluded = _read(tmp_path / "sampled" / "python" / "excluded.jsonl")
    out = [e for e in excluded if e["reason"] == Reason.SAMPLED_OUT.value]
    assert len(out) == full.stats["examples"] - 1 == sampled.stats["dropped"][Reason.SAMPLED_OUT.value]
    assert all(e["stage"] == Stage.SAMPLE.value for e in out)
    kept = {ex["metadata"]["task_id"] for ex in _read(tmp_path / "sampled" / "python" / "line_completion.jsonl")}
    every = {ex["metadata"]["task_id"] for ex in _read(tmp_path / "full" / "python" / "line_completion.jsonl")}
    assert kept | {e["item_id"] for e in out} == every and not kept & {e["item_id"] for e in out}
