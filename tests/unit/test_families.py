"""A benchmark family is a registry entry: a toy one -- its step and its writer, nothing else -- built end to end
by the core per-repository runner, its split found by the export like every other family's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from benchsmith.export import discover_splits
from benchsmith.families import FAMILIES, BenchmarkFamily, SplitFiles, Writer, is_language_dir
from benchsmith.pipeline import Step
from benchsmith.records import Record, RepoSpec, Stage
from benchsmith.repobuild.build import build
from benchsmith.repobuild.config import RepoBuildConfig

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "python" / "shoplib"


@dataclass
class ApiUse(Record):
    """One example of the toy benchmark: which file a cross-file name used in ``file`` is defined in."""

    task_id: str
    file: str
    symbol: str
    defining_file: str


class ApiUses(Step):
    stage = Stage.EXAMPLE_BUILDER
    tally_kept = False

    def run(self, items):
        for repo in items:
            for ref in repo.result.refs:
                if ref.defining_file:
                    yield ApiUse(f"{repo.name}/{ref.file}:{ref.line + 1}:{ref.column + 1}", ref.file, ref.symbol,
                                 ref.defining_file)


class ApiUseWriter(Writer):
    required = ("api_usage",)

    def records(self, item):
        yield "api_usage", item


class ApiUsage(BenchmarkFamily):
    name = "api_usage"
    files = SplitFiles(folder=None, glob="api_usage.jsonl")

    def steps(self, repo, ledger, observer):
        return [ApiUses(ledger, observer)]

    def writers(self, config):
        return [ApiUseWriter()]


TOY = ApiUsage()


def test_a_new_benchmark_family_is_built_end_to_end(tmp_path):
    FAMILIES.register("api_usage", f"{__name__}:TOY")
    try:
        cfg = RepoBuildConfig(language="python", output=str(tmp_path), repos=[RepoSpec(str(SAMPLE))], workers=1)
        summary = build("api_usage", cfg, progress=False)
        rows = [json.loads(x) for x in (tmp_path / "python" / "api_usage.jsonl").read_text().splitlines()]
        stats = json.loads((tmp_path / "python" / "stats.json").read_text())
        found = {(s.family, s.group, s.path.name) for s in discover_splits(tmp_path)}
    finally:
        FAMILIES.unregister("api_usage")
    assert rows and all(r["defining_file"] != r["file"] and r["symbol"] for r in rows)
    assert summary.stats == stats and stats["examples"] == len(rows) and stats["repositories_with_examples"] == 1
    assert (tmp_path / "python" / stats["construction_cost"]).is_file()
    assert (tmp_path / "python" / "excluded.jsonl").is_file()
    assert ("api_usage", "python", "api_usage.jsonl") in found
    assert "api_usage" not in FAMILIES


def test_a_family_folder_is_never_taken_for_a_language(tmp_path):
    for name in ("python", "humanext", "hf", ".shards"):
        (tmp_path / name).mkdir()
    assert [p.name for p in sorted(tmp_path.iterdir()) if is_language_dir(p)] == ["python"]
