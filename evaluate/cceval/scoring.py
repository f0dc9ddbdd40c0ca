"""CrossCodeEval line-completion metrics (EM, ES, identifier EM/precision/recall/F1) in two modes.

- ``Mode.COMPAT``: the released scorer's numbers exactly (``compat``).
- ``Mode.DEFAULT``: benchsmith's corrected scorer (``default``); its differences are listed there.

Typical use::

    scores = [score_example(tid, prompt, gt, pred, Language.PYTHON, Mode.COMPAT) for ...]
    results = aggregate(scores) | describe(Mode.COMPAT)
"""

from __future__ import annotations

from benchsmith.evaluate.cceval.common import (
    METRICS,
    EditSim,
    ExampleScore,
    Language,
    Mode,
    aggregate,
    exact_match,
    grammar_versions,
    identifier_match,
    require_compat_language,
)

__all__ = [
    "METRICS",
    "EditSim",
    "ExampleScore",
    "Language",
    "Mode",
    "aggregate",
    "describe",
    "exact_match",
    "identifier_match",
    "score_example",
    "COMPAT_GRAMMAR_SERIES",
]

# The tree-sitter-python release series checked to reproduce all 600 golden cases (0.25 parses a bare
# ``try:`` without an ERROR node and changes a compat truncation).
COMPAT_GRAMMAR_SERIES = "0.23."


def score_example(
    task_id: str,
    prompt: str,
    groundtruth: str,
    pred: str,
    language: Language,
    mode: Mode = Mode.DEFAULT,
    sample: int = 0,
) -> ExampleScore:
    if mode is Mode.COMPAT:
        from benchsmith.evaluate.cceval import compat

        require_compat_language(language)
        return compat.score_example(task_id, prompt, groundtruth, pred, language, sample)
    from benchsmith.evaluate.cceval import default

    return default.score_example(task_id, prompt, groundtruth, pred, language, sample)


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def describe(mode: Mode) -> dict:
    """What the numbers mean, for results.json: mode, edit-similarity definition, grammar versions."""
    grammars = grammar_versions()  # tree-sitter and every registered analyzer's grammar
    info = {
        "mode": mode.value,
        "edit_sim": (EditSim.DIFFLIB_FUZZ_RATIO if mode is Mode.COMPAT else EditSim.RAPIDFUZZ_RATIO).value,
        "versions": grammars,
    }
    if mode is Mode.COMPAT:
        info["reference"] = "amazon-science/cceval scripts/eval_metric.py @25f9cab757f5607695a4e7cbe7c4fee09d423d4c"
        info["grammar_verified"] = grammars["tree-sitter-python"].startswith(COMPAT_GRAMMAR_SERIES)
    else:
        info["rapidfuzz"] = _version("rapidfuzz")
    return info
