"""Build a CrossCodeEval split: the core per-repository runner (``benchsmith.repobuild``) with the CrossCodeEval
family (``family.py``); here only what the command shows of it."""

from __future__ import annotations

import os
import sys

from benchsmith.builders.cceval.config import BuildConfig
from benchsmith.jsonio import read_jsonl
from benchsmith.repobuild.build import BuildSummary
from benchsmith.repobuild.build import build as build_family


def build(config: BuildConfig, progress: bool = True) -> BuildSummary:
    return build_family("cceval", config, progress)


def iter_examples(path: str | os.PathLike):
    from benchsmith.builders.cceval.records import CompletionExample

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


__all__ = ["BuildConfig", "build", "iter_examples", "print_summary"]
