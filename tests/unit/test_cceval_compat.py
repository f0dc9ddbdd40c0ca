"""Compat mode reproduces the released CrossCodeEval scorer on the 600 golden cases (every per-example field
and every aggregate), plus direct checks of the quirks it must keep."""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from benchsmith.evaluate.cceval.scoring import Language, Mode, aggregate, score_example
from benchsmith.evaluate.cceval import compat as mc
from benchsmith.evaluate.cceval.common import COMPAT_LANGUAGES
from tests.shared_data import shared_data

GOLDEN = shared_data("cceval-metrics")
FIELDS = (
    "pred_postprocessed",
    "pred_truncated",
    "target_processed",
    "em",
    "es",
    "id_em",
    "id_precision",
    "id_recall",
    "id_f1",
    "pred_ids",
    "target_ids",
)


@lru_cache(maxsize=1)
def _cases() -> list[dict]:
    if not (GOLDEN / "cases.jsonl").is_file():
        return []
    with open(GOLDEN / "cases.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def _ids() -> list[str]:
    return [c["task_id"] for c in _cases()] or ["golden-data-absent"]


def _require_golden() -> None:
    if not _cases():
        pytest.skip(f"golden CrossCodeEval scorer data not found at {GOLDEN}")


@lru_cache(maxsize=None)
def _scored(task_id: str):
    case = next(c for c in _cases() if c["task_id"] == task_id)
    return case, score_example(
        case["task_id"], case["prompt"], case["groundtruth"], case["prediction"], Language.parse(case["language"]), Mode.COMPAT
    )


def _as_fields(s) -> dict:
    return {
        "pred_postprocessed": s.pred_postprocessed,
        "pred_truncated": s.pred,
        "target_processed": s.target,
        "em": s.em,
        "es": s.es,
        "id_em": s.id_em,
        "id_precision": s.id_precision,
        "id_recall": s.id_recall,
        "id_f1": s.id_f1,
        "pred_ids": s.pred_ids,
        "target_ids": s.target_ids,
    }


@pytest.mark.parametrize("task_id", _ids())
def test_golden_case(task_id: str) -> None:
    _require_golden()
    case, score = _scored(task_id)
    got = _as_fields(score)
    for field in FIELDS:
        # json.dumps also tells int 0 from float 0.0, as the released detailed_results.json does.
        assert json.dumps(got[field]) == json.dumps(case[field]), f"{task_id} {field}: {got[field]!r} != {case[field]!r}"


@pytest.mark.parametrize("language", sorted(l.value for l in COMPAT_LANGUAGES))
def test_golden_aggregate(language: str) -> None:
    _require_golden()
    expected = json.loads((GOLDEN / "aggregate.json").read_text())[language]
    scores = [_scored(c["task_id"])[1] for c in _cases() if c["language"] == language]
    assert aggregate(scores) == expected


def test_golden_covers_all_languages() -> None:
    _require_golden()
    counts = {l.value: sum(c["language"] == l.value for c in _cases()) for l in COMPAT_LANGUAGES}
    assert counts == {"python": 150, "java": 150, "typescript": 150, "csharp": 150}


# ---- quirks checked directly (no golden data needed) ----------------------------------------------------------


def test_remove_comments_is_language_agnostic_regex() -> None:
    assert mc.remove_comments('x = a // b') == "x = a "
    assert mc.remove_comments('s = "#fff";') == 's = "'
    assert mc.remove_comments('u = "https://h/x"') == 'u = "https:'
    # '.' matches '\r', so a comment at the end of a CRLF line takes the '\r' with it.
    assert mc.remove_comments("a; // c\r\nb;") == "a; \nb;"
    assert mc.remove_comments("/* kept */ a") == "/* kept */ a"


def test_bracket_truncation_index_zero_is_not_a_cut() -> None:
    assert mc.bracket_statement("foo(); bar();") == "foo();"
    assert mc.bracket_statement("{\n  x();\n}") == "{\n  x();\n}"
    assert mc.bracket_statement('s = "a;b";') == 's = "a;'


def test_python_cut_ignores_missing_nodes_and_only_cuts_before_newline() -> None:
    prompt = "def f():\n    x = "
    assert mc.postprocess_code_lines(prompt, "1\n    y = 2\n", Language.PYTHON) == "1"
    # No prefix ending at a newline parses (open bracket never closed): the completion is returned as is.
    assert mc.postprocess_code_lines(prompt, "g(\n  a,\n", Language.PYTHON) == "g(\n  a,\n"
    # A header without a body is valid for the grammar, so the cut lands right after it.
    assert mc.postprocess_code_lines("", "def g() -> int:\n    return 1\n", Language.PYTHON) == "def g() -> int:"


def test_identifiers_keep_released_quirks() -> None:
    assert mc.extract_identifiers('f"{x}" + r"y"', Language.PYTHON) == ["f", "r"]
    assert mc.extract_identifiers("x = True and None", Language.PYTHON) == ["x", "True"]
    assert mc.extract_identifiers("var élan = größe;", Language.CSHARP) == ["var", "größe"]
    assert mc.extract_identifiers("const t = `a ${b} c`;", Language.TYPESCRIPT) == ["t", "a", "b", "c"]


def test_edit_similarity_uses_difflib_autojunk_and_half_even() -> None:
    import difflib

    assert mc.edit_similarity("", "") == 100
    assert mc.edit_similarity(" ", "x") == 0
    assert mc.edit_similarity("ab", "ac") == 50
    # Exact halves go to the even integer: 2*1/16 -> 12.5 -> 12, 2*3/16 -> 37.5 -> 38.
    assert mc.edit_similarity("a1234567", "a89BCDEF") == 12
    assert mc.edit_similarity("abc12345", "abc6789D") == 38
    assert mc.edit_similarity("abc", "axyzc") == round(100 * difflib.SequenceMatcher(None, "abc", "axyzc").ratio())
    # autojunk: in a 200+ char target, frequent characters cannot seed matches; the score is lower than the
    # plain longest-common-subsequence ratio.
    target = "a" * 150 + "b" * 60
    pred = "b" * 60 + "a" * 150
    plain = difflib.SequenceMatcher(None, pred, target, autojunk=False).ratio()
    assert mc.edit_similarity(pred, target) < round(100 * plain)
