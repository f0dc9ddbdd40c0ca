"""Reading a predictions file: JSONL of ``{"task_id", "pred"}``, one line per sample (several lines for a task
are several samples). Shared by ``benchsmith score cceval`` and ``benchsmith score humanext``: the checks are the
same for both; only the wording of some messages (which their users and tests know) and the name of the file
the ids must come from differ, so those are parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Container

from benchsmith.jsonio import parse_jsonl

ErrorType = Callable[[str], Exception]


@dataclass(frozen=True)
class Prediction:
    task_id: str
    pred: str
    line: int  # 1-based line in the predictions file


@dataclass(frozen=True)
class Wording:
    """Message templates for one command, each placed after ``{path}:{line}: ``. ``{task_id}`` (the id as read)
    and ``{type}`` (the JSON value's Python type name) are filled in with ``str.format``."""

    missing_task_id: str  # task_id absent, not a string, or empty
    missing_pred: str  # no "pred" key
    pred_not_str: str  # "pred" present but not a string
    unknown_task: str  # a task id the scored file does not define


def check_text(where: str, task_id: str, field: str, text: str, error: ErrorType) -> None:
    """Refuse text holding a lone surrogate: JSON allows ``\\ud800`` but it is not text, and no parser or UTF-8
    output file takes it. ``where`` is ``{path}:{line}``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise error(f"{where}: task {task_id!r}: {field!r} holds an unpaired surrogate at character "
                    f"{exc.start}; fix the producer's UTF-8 handling") from None


def read_predictions(path: Path, known: Container[str], wording: Wording,
                     error: ErrorType = ValueError) -> dict[str, list[Prediction]]:
    """Predictions by task id, each task's samples in file order; every problem raises ``error`` with a message
    naming the file, line and (where there is one) task id. Coverage (every task predicted, at least one
    prediction) is the caller's rule and is not checked here."""
    by_task: dict[str, list[Prediction]] = {}
    try:
        fh = open(path, encoding="utf-8")
    except OSError as exc:
        raise error(f"cannot read predictions file {path}: {exc.strerror}") from None
    with fh:
        for line in parse_jsonl(fh, path, expect="a JSON object with task_id and pred", error=error):
            where, rec = f"{path}:{line.lineno}", line.obj
            task_id = rec.get("task_id")
            if not isinstance(task_id, str) or not task_id:
                raise error(f"{where}: {wording.missing_task_id.format(task_id=task_id, type=type(task_id).__name__)}")
            if "pred" not in rec:
                raise error(f"{where}: {wording.missing_pred.format(task_id=task_id, type='NoneType')}")
            pred = rec["pred"]
            if not isinstance(pred, str):
                raise error(f"{where}: {wording.pred_not_str.format(task_id=task_id, type=type(pred).__name__)}")
            check_text(where, task_id, "pred", pred, error)
            if task_id not in known:
                raise error(f"{where}: {wording.unknown_task.format(task_id=task_id, type='str')}")
            by_task.setdefault(task_id, []).append(Prediction(task_id, pred, line.lineno))
    return by_task
