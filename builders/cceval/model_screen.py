"""``benchsmith screen``: apply the model predictability screen to a finished split.

For each ``DIR/<lang>/line_completion.jsonl`` the examples not screened before are completed by a model from their
in-file prompt alone (the rule and the model run: ``benchsmith.evaluate.screen``), and those it completes are
dropped from the split.

What a drop changes, all replaced atomically and in this order (a killed run leaves a state a rerun repairs):
``excluded.jsonl`` (one ``Exclusion`` per dropped example: stage ``screen``, reason
``predictable_without_crossfile``), ``line_completion.jsonl`` and every retrieval variant
``line_completion_*.jsonl`` (the lines of kept examples are copied byte for byte), then ``stats.json``
(``dropped[reason]``, ``examples``, per-repository counts, and a ``screen`` section), then what is derived from
the split: ``audit.json``, and the card, ``hf/`` and ``parquet/`` where the build wrote them
(``builders/cceval/derived.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from benchsmith.builders.cceval.derived import rewrite_derived
from benchsmith.evaluate.screen import REASON, RULE, ScreenError, ScreenItem, ScreenOptions, predictable
from benchsmith.jsonio import iter_jsonl
from benchsmith.records import Stage

from benchsmith.layout import EXCLUDED_FILE as EXCLUDED, SPLIT_FILE as SPLIT, STATS_FILE as STATS, VARIANT_GLOB
from benchsmith.pipeline import DropLedger, Step


@dataclass
class LanguageResult:
    language: str
    directory: Path
    screened: int = 0
    newly_dropped: list[str] = field(default_factory=list)
    kept: int = 0
    files: list[str] = field(default_factory=list)


def language_dirs(root: str | Path, language: str | None = None) -> list[Path]:
    """``root/<lang>`` directories holding a split (sorted), or ``root`` itself when it holds one."""
    root = Path(root)
    if not root.is_dir():
        raise ScreenError(f"{root}: not a directory")
    if language is not None:
        d = root / language
        if not (d / SPLIT).is_file():
            raise ScreenError(f"{d / SPLIT}: no such split (build it first, or check --language)")
        return [d]
    found = sorted(d for d in root.iterdir() if d.is_dir() and (d / SPLIT).is_file())
    if not found and (root / SPLIT).is_file():
        found = [root]
    if not found:
        raise ScreenError(f"{root}: no <lang>/{SPLIT} inside; give the output directory of `benchsmith build cceval`")
    return found


def _task_id(obj: dict, where: str) -> str:
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("task_id"), str):
        raise ScreenError(f"{where}: missing metadata.task_id")
    return meta["task_id"]


def _load_examples(path: Path) -> list[ScreenItem]:
    out, seen = [], {}
    for line in iter_jsonl(path, error=ScreenError):
        lineno, obj = line.lineno, line.obj
        where = f"{path}:{lineno}"
        tid = _task_id(obj, where)
        if tid in seen:
            raise ScreenError(f"{where}: duplicate task_id {tid!r} (first at line {seen[tid]})")
        seen[tid] = lineno
        for name in ("prompt", "groundtruth"):
            if not isinstance(obj.get(name), str):
                raise ScreenError(f"{where}: field {name!r} must be a string")
        meta = obj["metadata"]
        out.append(ScreenItem(tid, obj["prompt"], obj["groundtruth"], str(meta.get("repository", ""))))
    return out


def _existing_screen_exclusions(path: Path) -> tuple[list[str], set[str]]:
    """Raw lines of excluded.jsonl, and the item ids already excluded by screening."""
    if not path.is_file():
        return [], set()
    lines, ids = [], set()
    for line in iter_jsonl(path, error=ScreenError):
        lines.append(line.raw)
        obj = line.obj
        if obj.get("stage") == Stage.SCREEN.value and obj.get("reason") == REASON.value:
            ids.add(str(obj.get("item_id")))
    return lines, ids


class ModelScreen(Step[ScreenItem]):
    """The model predictability screen as a pipeline step: the examples a model completes from their in-file
    prompt alone are dropped through the ledger (stage ``screen``, reason ``predictable_without_crossfile``), the
    others pass on in order.  It batches: the model sees all items before the first one is yielded."""

    stage = Stage.SCREEN
    tally_kept = False  # stats.json's screen section carries the screen's figures

    def __init__(self, backend, opts: ScreenOptions, advance: Callable[[int], None] | None = None,
                 counter: DropLedger | None = None) -> None:
        super().__init__(counter)
        self.backend, self.opts, self.advance = backend, opts, advance

    def run(self, items):
        items = list(items)
        dropped = set()
        for exclusion in predictable(items, self.backend, self.opts, self.advance):
            dropped.add(exclusion.item_id)
            self.counter.drop(exclusion)
        yield from (item for item in items if item.task_id not in dropped)


def screen_language(directory: str | Path, backend, opts: ScreenOptions,
                    advance: Callable[[int], None] | None = None) -> LanguageResult:
    """Screen one ``<lang>`` directory in place with an open backend (see the module docstring)."""
    from benchsmith.jsonio import AtomicWriter

    directory = Path(directory)
    result = LanguageResult(language=directory.name, directory=directory)
    examples = _load_examples(directory / SPLIT)
    excluded_lines, already = _existing_screen_exclusions(directory / EXCLUDED)
    todo = [e for e in examples if e.task_id not in already]

    ledger = DropLedger()
    for _kept in ModelScreen(backend, opts, advance, counter=ledger)(todo):
        pass
    new = ledger.exclusions
    result.screened = len(todo)
    result.newly_dropped = [x.item_id for x in new]
    drop = already | set(result.newly_dropped)

    # 1) the exclusions first: if we die after this, a rerun re-applies them to the splits
    if new:
        with AtomicWriter(directory / EXCLUDED) as w:
            for raw in excluded_lines:
                w.write(raw)
            for x in new:
                w.write_record(x.to_dict())
    # 2) every split file of this language: copy kept lines byte for byte
    splits = [directory / SPLIT] + sorted(p for p in directory.glob(VARIANT_GLOB) if p.is_file())
    for path in splits:
        removed, kept = 0, 0
        w = AtomicWriter(path)
        try:
            for line in iter_jsonl(path, error=ScreenError):
                if _task_id(line.obj, f"{path}:{line.lineno}") in drop:
                    removed += 1
                    continue
                kept += 1
                w.write(line.raw)
        except BaseException:
            w.abort()
            raise
        if removed:
            w.commit()
            result.files.append(path.name)
        else:
            w.abort()
        if path.name == SPLIT:
            result.kept = kept
    # 3) the figures, then every view of the split (audit, card, hf, parquet) through the build's own writers
    _update_stats(directory / STATS, directory / EXCLUDED, drop, examples, result, opts)
    rewrite_derived(directory)
    return result


def _update_stats(stats_path: Path, excluded_path: Path, drop: set[str], examples: list[ScreenItem],
                  result: LanguageResult, opts: ScreenOptions) -> None:
    from benchsmith.jsonio import write_json

    stats = json.loads(stats_path.read_text(encoding="utf-8")) if stats_path.is_file() else {}
    if not isinstance(stats, dict):
        raise ScreenError(f"{stats_path}: expected a JSON object")
    _lines, recorded = _existing_screen_exclusions(excluded_path)
    dropped = dict(stats.get("dropped") or {})
    dropped[REASON.value] = len(recorded)
    stats["dropped"] = dict(sorted(dropped.items()))
    stats["examples"] = result.kept
    previous = stats.get("screen") if isinstance(stats.get("screen"), dict) else {}
    accounted = set(previous.get("dropped_task_ids") or [])
    # per-repository rows: move examples dropped since the last update from "examples" to "excluded"
    repo_of = {e.task_id: e.repository for e in examples}
    delta: dict[str, int] = {}
    for tid in drop - accounted:
        if tid in repo_of:
            delta[repo_of[tid]] = delta.get(repo_of[tid], 0) + 1
    for row in stats.get("per_repository") or []:
        if isinstance(row, dict) and row.get("repository") in delta:
            k = delta[row["repository"]]
            row["examples"] = max(0, int(row.get("examples", 0)) - k)
            row["excluded"] = int(row.get("excluded", 0)) + k
    if "repositories_with_examples" in stats and isinstance(stats.get("per_repository"), list):
        stats["repositories_with_examples"] = sum(1 for r in stats["per_repository"]
                                                  if isinstance(r, dict) and r.get("examples"))
    if isinstance(stats.get("self_consistency"), dict):
        # the build's self-check (builders/cceval/scorability) must describe the examples still kept
        from benchsmith.builders.cceval.scorability import self_consistency  # lazy: it loads the scorers
        from benchsmith.jsonio import read_jsonl
        from benchsmith.records import Language

        try:
            language = Language(stats.get("language"))
        except ValueError:
            language = None
        if language is not None:
            stats["self_consistency"] = self_consistency(read_jsonl(stats_path.parent / SPLIT), language)
    stats["screen"] = {"model": opts.model_label, "backend": opts.backend_label, "rule": RULE,
                       "max_new_tokens": opts.max_new_tokens, "dropped": len(drop),
                       "dropped_task_ids": sorted(drop | accounted)}
    write_json(stats_path, stats)


def screen(root: str | Path, backend, opts: ScreenOptions, language: str | None = None,
           advance: Callable[[int], None] | None = None) -> list[LanguageResult]:
    """Screen every language directory under ``root`` (or just ``language``)."""
    return [screen_language(d, backend, opts, advance) for d in language_dirs(root, language)]


# -------------------------------------------------------------------------------------------------------- CLI


def add_arguments(p: argparse.ArgumentParser) -> None:
    from benchsmith.evaluate.generation.command import add_backend_arguments

    p.add_argument("--model", default="bigcode/starcoderbase-1b",
                   help="hub name, local directory or .gguf file (default bigcode/starcoderbase-1b)")
    p.add_argument("--input", required=True, metavar="DIR", help="output directory of `benchsmith build cceval`")
    p.add_argument("--language", "--lang", dest="language", help="only DIR/<language> (default: every language)")
    p.add_argument("--max-new-tokens", type=int, default=50)
    p.add_argument("--max-prompt-tokens", type=int,
                   help="in-file prompt budget, cut on the left (default: the model's window minus new tokens)")
    add_backend_arguments(p)


def run(args: argparse.Namespace) -> int:
    from benchsmith.evaluate.generation.command import _progress, open_backend
    from benchsmith.evaluate.generation.base import BackendUnavailable, GenerationError
    from benchsmith.evaluate.generation.prompting import BudgetError

    try:
        dirs = language_dirs(args.input, args.language)
        totals = {d: len(_load_examples(d / SPLIT)) for d in dirs}
        backend = open_backend(args)
    except (ScreenError, BackendUnavailable, GenerationError, ValueError, FileNotFoundError) as exc:
        print(f"benchsmith screen: {exc}", file=sys.stderr)
        return 2
    opts = ScreenOptions(max_new_tokens=args.max_new_tokens, max_prompt_tokens=args.max_prompt_tokens,
                         model_label=args.model, backend_label=args.model_backend)
    results = []
    try:
        with _progress(args.quiet, sum(totals.values()), f"screen {Path(args.model).name}") as advance:
            for d in dirs:
                results.append(screen_language(d, backend, opts, advance))
    except (ScreenError, BudgetError, GenerationError) as exc:
        print(f"benchsmith screen: {exc}", file=sys.stderr)
        return 1
    finally:
        backend.close()
    _print_table(results, args.quiet)
    return 0


def _print_table(results: list[LanguageResult], quiet: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title="screening: examples completed without cross-file context")
    for col in ("language", "screened", "dropped now", "kept", "files rewritten"):
        table.add_column(col, justify="left" if col in ("language", "files rewritten") else "right")
    for r in results:
        table.add_row(r.language, str(r.screened), str(len(r.newly_dropped)), str(r.kept), ", ".join(r.files) or "-")
    Console(stderr=True, quiet=quiet).print(table)
