"""Inputs of ``benchsmith score humanext``: the builder's variants and one predictions file per model, checked so
that every error names the file, line and task id."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from benchsmith.evaluate.predictions import Prediction, Wording, read_predictions
from benchsmith.layout import HUMANEXT_DIR, VARIANTS_FILE
from benchsmith.evaluate.humanext.records import PromptVariant, Setting

SETTING_ORDER = [Setting.DIRECT, Setting.IRRELEVANT, Setting.ORACLE, Setting.STEP_BY_STEP, Setting.MULTI_AUXILIARY]
SETTING_LABEL = {
    Setting.DIRECT: "Direct",
    Setting.IRRELEVANT: "Irrelevant",
    Setting.ORACLE: "Oracle",
    Setting.STEP_BY_STEP: "Step-by-step",
    Setting.MULTI_AUXILIARY: "Multi-aux",
}
CODE_BLOCK_MODES = ("auto", "never", "always")


class ReportInputError(ValueError):
    """Bad variants/predictions input; the message names the file, line, task id and what to fix."""


# ------------------------------------------------------------------------------------------------------ inputs


@dataclass
class ModelPredictions:
    name: str
    path: Path
    by_task: dict[str, list[Prediction]]


def variants_path(path: Path) -> Path:
    if path.is_file():
        return path
    for cand in (path / VARIANTS_FILE, path / HUMANEXT_DIR / VARIANTS_FILE):
        if cand.is_file():
            return cand
    raise ReportInputError(f"{path}: no variants.jsonl here (expected the file, or a directory holding it "
                           "or humanext/variants.jsonl as written by `benchsmith build humanext`)")


def load_variants(path: Path) -> list[PromptVariant]:
    from benchsmith.jsonio import iter_jsonl

    src = variants_path(path)
    out: list[PromptVariant] = []
    seen: dict[str, int] = {}
    for line in iter_jsonl(src, error=ReportInputError):
        lineno, obj = line.lineno, line.obj
        where = f"{src}:{lineno}"
        missing = [k for k in ("task_id", "pair_id", "setting", "prompt", "stop", "entry_point",
                               "auxiliary_name", "tests") if k not in obj]
        if missing:
            raise ReportInputError(f"{where}: variant {obj.get('task_id', '?')!r} lacks {', '.join(missing)}")
        try:
            v = PromptVariant.from_dict(obj)
        except (TypeError, ValueError) as exc:
            raise ReportInputError(f"{where}: variant {obj.get('task_id')!r}: {exc}") from None
        if not isinstance(v.stop, list) or not all(isinstance(s, str) for s in v.stop):
            raise ReportInputError(f"{where}: variant {v.task_id!r}: stop must be a list of strings")
        if v.task_id in seen:
            raise ReportInputError(f"{where}: duplicate task_id {v.task_id!r} (first on line {seen[v.task_id]})")
        seen[v.task_id] = lineno
        out.append(v)
    if not out:
        raise ReportInputError(f"{src}: no variants")
    return out


PREDICTION_WORDING = Wording(
    missing_task_id="missing or non-string task_id (a non-empty string)",
    missing_pred="task {task_id!r}: missing or non-string pred (no 'pred' key)",
    pred_not_str="task {task_id!r}: missing or non-string pred (got {type})",
    unknown_task="task {task_id!r} is not in the variants file (predictions for another build?)",
)


def load_predictions(path: Path, name: str, known: set[str]) -> ModelPredictions:
    by_task = read_predictions(path, known, PREDICTION_WORDING, ReportInputError)
    if not by_task:
        raise ReportInputError(f"{path}: no predictions")
    return ModelPredictions(name, path, by_task)


def model_names(paths: Sequence[Path], names: Sequence[str] | None) -> list[str]:
    names = list(names or [])
    if len(names) > len(paths):
        raise ReportInputError(f"{len(names)} --model-name for {len(paths)} --predictions files")
    # a file name's undecodable bytes (surrogate escapes) cannot be written in the UTF-8 report: escape them
    out = [n.encode("utf-8", "backslashreplace").decode("utf-8") for n in names + [p.stem for p in paths[len(names):]]]
    dup = [n for n, c in Counter(out).items() if c > 1]
    if dup:
        raise ReportInputError(f"model name {dup[0]!r} is used twice; give each file its own --model-name")
    return out
