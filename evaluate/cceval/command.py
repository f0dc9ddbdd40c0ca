"""``benchsmith score cceval``: score line completions against a built CrossCodeEval split.

Inputs: ``--prompts`` (the split JSONL: ``prompt``, ``groundtruth``, ``metadata.task_id``) and ``--predictions``
(``{"task_id", "pred"}`` per line; several lines for one task are several samples). Every task needs at least
one prediction and every prediction a known task: anything else is an error naming the file line and task id,
so nothing silently leaves the denominator.

Several samples per task: each sample is scored on its own (one row each in the detailed files, with a
``sample`` index), and ``results.json`` averages the samples of a task first, then the tasks.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from benchsmith.jsonio import parse_jsonl
from benchsmith.layout import DETAILED_RESULTS_FILE, RESULTS_FILE, TRUNCATED_PREDICTIONS_FILE

from benchsmith.evaluate.cceval.common import ExampleScore, Language, Mode, aggregate, require_compat_language
from benchsmith.evaluate.predictions import Prediction, Wording, check_text, read_predictions

COMPAT_CHOICES = {"cceval": Mode.COMPAT}


class ScoreInputError(ValueError):
    """Bad prompts/predictions input; the message names the file, line, task id and what to fix."""


@dataclass(frozen=True)
class Task:
    task_id: str
    prompt: str
    groundtruth: str
    language: Language
    line: int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompts", required=True, type=Path, help="built split JSONL (CrossCodeEval schema)")
    parser.add_argument("--predictions", required=True, type=Path, help='JSONL of {"task_id", "pred"} (several lines per task = samples)')
    parser.add_argument("--output", required=True, type=Path, help="directory for results.json, detailed_results.jsonl, prediction_truncated.jsonl")
    parser.add_argument(
        "--compat",
        choices=sorted(COMPAT_CHOICES),
        default=None,
        help="reproduce a released scorer exactly (cceval: amazon-science/cceval eval_metric.py, quirks included)",
    )
    parser.add_argument(
        "--language",
        default=None,
        help=f"{'|'.join(m.value for m in Language)} (compat: the first four); used when a record has no "
        "metadata.language "
        "(default: the prompts file's parent directory name)",
    )


def _fail(path: Path, line: int, msg: str) -> ScoreInputError:
    return ScoreInputError(f"{path}:{line}: {msg}")


PREDICTION_WORDING = Wording(
    missing_task_id="missing 'task_id' (a non-empty string)",
    missing_pred="task {task_id!r}: missing 'pred'",
    pred_not_str="task {task_id!r}: 'pred' must be a string, got {type}",
    unknown_task="task {task_id!r} is not in the prompts file (extra id; wrong split?)",
)


def load_tasks(path: Path, language: str | None) -> list[Task]:
    fallback: Language | None = None
    if language:
        fallback = Language.parse(language)
    else:
        try:
            fallback = Language.parse(path.resolve().parent.name)
        except ValueError:
            fallback = None
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise ScoreInputError(f"cannot read prompts file {path}: {exc.strerror}") from None
    with fh:
        for line in parse_jsonl(fh, path, error=ScoreInputError):
            lineno, rec = line.lineno, line.obj
            meta = rec.get("metadata")
            task_id = meta.get("task_id") if isinstance(meta, dict) else None
            if not isinstance(task_id, str) or not task_id:
                raise _fail(path, lineno, "missing metadata.task_id (a non-empty string)")
            for field in ("prompt", "groundtruth"):
                if not isinstance(rec.get(field), str):
                    raise _fail(path, lineno, f"task {task_id!r}: field {field!r} missing or not a string")
                check_text(f"{path}:{lineno}", task_id, field, rec[field], ScoreInputError)
            if task_id in seen:
                raise _fail(path, lineno, f"task {task_id!r} already defined on line {seen[task_id]}")
            seen[task_id] = lineno
            lang_name = meta.get("language")
            if isinstance(lang_name, str) and lang_name:
                try:
                    lang = Language.parse(lang_name)
                except ValueError as exc:
                    raise _fail(path, lineno, f"task {task_id!r}: {exc}") from None
                if language and lang is not fallback:
                    raise _fail(
                        path, lineno, f"task {task_id!r}: metadata.language is {lang.value} but --language is {language}"
                    )
            elif fallback is not None:
                lang = fallback
            else:
                raise _fail(
                    path,
                    lineno,
                    f"task {task_id!r}: no metadata.language; pass --language (the parent directory "
                    f"{path.resolve().parent.name!r} is not a language name)",
                )
            tasks.append(Task(task_id, rec["prompt"], rec["groundtruth"], lang, lineno))
    if not tasks:
        raise ScoreInputError(f"{path}: no tasks found (empty prompts file)")
    return tasks


def load_predictions(path: Path, tasks: list[Task]) -> dict[str, list[Prediction]]:
    by_task = read_predictions(path, {t.task_id for t in tasks}, PREDICTION_WORDING, ScoreInputError)
    missing = [t.task_id for t in tasks if t.task_id not in by_task]
    if missing:
        shown = ", ".join(repr(m) for m in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise ScoreInputError(
            f"{path}: no prediction for {len(missing)} of {len(tasks)} tasks: {shown}{more}; every task must be "
            "predicted (use an empty 'pred' for a deliberate empty completion)"
        )
    return by_task


def score_all(tasks: list[Task], preds: dict[str, list[Prediction]], mode: Mode, progress: bool = True) -> list[ExampleScore]:
    from benchsmith.evaluate.cceval.scoring import score_example

    jobs = [(t, k, p) for t in tasks for k, p in enumerate(preds[t.task_id])]
    out: list[ExampleScore] = []
    if progress:
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            tid = bar.add_task(f"scoring ({mode.value})", total=len(jobs))
            for t, k, p in jobs:
                out.append(score_example(t.task_id, t.prompt, t.groundtruth, p.pred, t.language, mode, k))
                bar.advance(tid)
    else:
        for t, k, p in jobs:
            out.append(score_example(t.task_id, t.prompt, t.groundtruth, p.pred, t.language, mode, k))
    return out


def build_results(tasks: list[Task], scores: list[ExampleScore], mode: Mode) -> dict:
    from benchsmith.evaluate.cceval.scoring import describe

    results = aggregate(scores)
    langs = sorted({t.language.value for t in tasks})
    results["language"] = langs[0] if len(langs) == 1 else langs
    if len(langs) > 1:
        lang_of = {t.task_id: t.language.value for t in tasks}
        results["by_language"] = {
            lang: aggregate(s for s in scores if lang_of[s.task_id] == lang) for lang in langs
        }
    results.update(describe(mode))
    return results


def write_outputs(out_dir: Path, results: dict, scores: list[ExampleScore]) -> None:
    from benchsmith.jsonio import write_json, write_jsonl

    multi = "samples" in results
    write_jsonl(out_dir / DETAILED_RESULTS_FILE, (s.detailed(multi) for s in scores))
    write_jsonl(out_dir / TRUNCATED_PREDICTIONS_FILE, (s.truncated(multi) for s in scores))
    # results.json last: its presence means the other two files are complete.
    write_json(out_dir / RESULTS_FILE, results)


def print_table(results: dict, out_dir: Path) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"CrossCodeEval scores ({results['mode']}, {results['language']})")
    rows = [("all", results)] + sorted(results.get("by_language", {}).items())
    table.add_column("split")
    for m in ("em", "es", "id_em", "id_precision", "id_recall", "id_f1"):
        table.add_column(m, justify="right")
    table.add_column("tasks", justify="right")
    for name, r in rows:
        table.add_row(name, *(f"{r[m]:.2f}" for m in ("em", "es", "id_em", "id_precision", "id_recall", "id_f1")), str(r["total"]))
    console = Console()
    console.print(table)
    console.print(f"es = {results['edit_sim']}")
    console.print(f"wrote {out_dir}/results.json, detailed_results.jsonl, prediction_truncated.jsonl")


def run(args: argparse.Namespace) -> int:
    mode = COMPAT_CHOICES[args.compat] if args.compat else Mode.DEFAULT
    try:
        tasks = load_tasks(args.prompts, args.language)
        if mode is Mode.COMPAT:
            for lang in sorted({t.language for t in tasks}, key=lambda m: m.value):
                require_compat_language(lang)
        preds = load_predictions(args.predictions, tasks)
    except (ScoreInputError, ValueError) as exc:
        print(f"benchsmith score cceval: error: {exc}", file=sys.stderr)
        return 2
    scores = score_all(tasks, preds, mode, progress=sys.stderr.isatty())
    results = build_results(tasks, scores, mode)
    if mode is Mode.COMPAT and not results.get("grammar_verified", True):
        print(
            "benchsmith score cceval: warning: tree-sitter-python "
            f"{results['versions']['tree-sitter-python']} is not the 0.23 series checked against the released "
            "scorer; Python truncation may differ (pip install 'tree-sitter-python>=0.23,<0.24')",
            file=sys.stderr,
        )
    write_outputs(args.output, results, scores)
    print_table(results, args.output)
    return 0
