"""CrossCodeEval as a benchmark family (``benchsmith.families``): its steps after the core repository steps, the
writers of its split and retrieval variants, its figures in stats.json, its export schema and its commands."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from benchsmith.families import BenchmarkFamily, SplitFiles, Writer
from benchsmith.layout import SPLIT_GLOB, SPLIT_STEM

if TYPE_CHECKING:
    from benchsmith.builders.cceval.config import BuildConfig
    from benchsmith.builders.cceval.steps import Retrieved
    from benchsmith.pipeline import DropLedger, Observer, Step
    from benchsmith.repobuild.repository import Repository


CCEVAL_SCHEMA: Any = ("dict", {
    "prompt": "string",
    "groundtruth": "string",
    "right_context": "string",
    "metadata": ("dict", {
        "task_id": "string",
        "repository": "string",
        "file": "string",
        "context_start_lineno": "int64",
        "groundtruth_start_lineno": "int64",
        "right_context_start_lineno": "int64",
    }),
    "crossfile_context": ("dict", {
        "text": "string",
        "list": ("list", ("dict", {"retrieved_chunk": "string", "filename": "string", "score": "float64"})),
    }),
})


class SplitWriter(Writer):
    """``line_completion.jsonl``, and the shard's self-consistency tallied from the scores the scorability
    filter already gave each example (the build's final check, summed over shards in stats.json)."""

    required = (SPLIT_STEM,)

    def __init__(self, language: str) -> None:
        from benchsmith.builders.cceval.scorability import SelfConsistency
        from benchsmith.records import Language

        self.check = SelfConsistency(Language(language))

    def records(self, item: "Retrieved") -> Iterable[tuple[str, Any]]:
        yield SPLIT_STEM, item.example

    def written(self, stem: str, record: Any) -> None:
        self.check.add_example(record)

    def stats(self, ok: bool) -> dict[str, Any]:
        from benchsmith.builders.cceval.scorability import raw_tallies

        return {"self_consistency": raw_tallies(self.check.tallies) if ok else None}


class VariantWriter(Writer):
    """``line_completion_<setting>_<retriever>.jsonl``: the examples with their retrieved cross-file context."""

    def records(self, item: "Retrieved") -> Iterable[tuple[str, Any]]:
        yield from item.variants.items()


class CrossCodeEval(BenchmarkFamily):
    name = "cceval"
    files = SplitFiles(folder=None, glob=SPLIT_GLOB)
    schema = CCEVAL_SCHEMA
    commands = {
        "build cceval": ("benchsmith.builders.cceval.command",
                         "build a CrossCodeEval-style cross-file completion split"),
        "screen": ("benchsmith.builders.cceval.model_screen",
                   "drop examples a model completes from in-file context alone"),
        "audit": ("benchsmith.builders.cceval.audit",
                  "audit a built split: predictability screens, self-consistency, concentration, duplicates, "
                  "lengths"),
        "collect": ("benchsmith.builders.cceval.collect",
                    "pick PyPI, npm or Debian packages that meet the paper's criteria; write a repos file of pinned "
                    "sources"),
        "score cceval": ("benchsmith.evaluate.cceval.command", "score cross-file completions (EM, ES, identifier "
                                                                "match)"),
        "report formats": ("benchsmith.evaluate.cceval.report_formats",
                           "CrossCodeEval scores of one model per prompt format and context placement, side by "
                           "side"),
    }

    def check_record(self, record: dict) -> None:
        from benchsmith.json_types import SchemaError

        missing = [k for k in ("prompt", "groundtruth", "right_context", "metadata") if k not in record]
        if missing:
            raise SchemaError(f"missing CrossCodeEval field(s) {missing}")

    def steps(self, repo: "Repository", ledger: "DropLedger", observer: "Observer | None") -> list["Step"]:
        from benchsmith.builders.cceval.steps import cceval_steps

        return cceval_steps(repo, ledger, observer)

    def writers(self, config: "BuildConfig") -> list[Writer]:
        return [SplitWriter(config.language), VariantWriter()]

    def split_stats(self, out: Path, shards: list[Path], config: "BuildConfig") -> dict[str, Any]:
        from benchsmith.builders.cceval.split_stats import example_shares, merged_self_consistency, screens_stats
        from benchsmith.layout import SPLIT_FILE

        return {
            "screens": screens_stats(config.screens),
            "cursor": config.cursor.value,
            "kinds": [k.value for k in config.kinds] if config.kinds is not None else "all",
            **example_shares(out / SPLIT_FILE),
            "self_consistency": merged_self_consistency(shards, config.language),
        }


FAMILY = CrossCodeEval()
