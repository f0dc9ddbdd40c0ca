"""Default (corrected) mode: each divergence from the released scorer, shown on a small real-code example with
the compat result next to ours and the reason ours is right."""

from __future__ import annotations

import pytest
from rapidfuzz import fuzz

from benchsmith.evaluate.cceval.scoring import Language, Mode, score_example

PY, JAVA, TS, CS = Language.PYTHON, Language.JAVA, Language.TYPESCRIPT, Language.CSHARP


def both(prompt: str, gt: str, pred: str, lang: Language):
    compat = score_example("t", prompt, gt, pred, lang, Mode.COMPAT)
    ours = score_example("t", prompt, gt, pred, lang, Mode.DEFAULT)
    return compat, ours


# ---- comments ----------------------------------------------------------------------------------------------


def test_python_floor_division_is_code_not_a_comment() -> None:
    # `//` is floor division in Python; dropping it made a wrong completion an exact match.
    c, d = both("def half(n):\n    return ", "n", "n // 2", PY)
    assert c.pred.strip() == "n" and c.em == 1
    assert d.pred == "n // 2" and d.em == 0


def test_url_in_string_survives() -> None:
    prompt = 'class A {\n  void f() {\n    String u = '
    gt = '"https://example.org/a";'
    c, d = both(prompt, gt, '"https://example.org/b";', JAVA)
    # Compat cuts both strings at `//`, so two different URLs are an exact match.
    assert c.em == 1
    assert d.pred == '"https://example.org/b";' and d.target == gt and d.em == 0


def test_hash_in_csharp_string_is_not_a_comment() -> None:
    prompt = "class A {\n  void F() {\n    var c = "
    c, d = both(prompt, '"#fff";', '"#000";', CS)
    assert c.em == 1  # both became `"`
    assert d.em == 0 and d.pred == '"#000";'


def test_block_comments_are_removed() -> None:
    prompt = "class A {\n  int f() {\n    return "
    c, d = both(prompt, "x + 1;", "x /* plus one */ + 1;", JAVA)
    assert c.em == 0  # released keeps /* */ comments
    assert d.pred == "x + 1;" and d.em == 1


def test_python_comment_removed_by_parser() -> None:
    c, d = both("x = ", "compute()", "compute()  # uses the cache", PY)
    assert d.pred == "compute()" and d.em == 1 and d.es == 100.0
    assert c.em == 1  # the regex agrees here: a real comment


# ---- truncation ----------------------------------------------------------------------------------------------


def test_completion_starting_with_brace_is_cut() -> None:
    # Released: the terminator at index 0 is "not found", so every following line is kept.
    prompt = "class A {\n  void f()\n  "
    pred = "{\n    g();\n  }\n"
    c, d = both(prompt, "{", pred, JAVA)
    assert c.pred == pred and c.em == 0
    assert d.pred == "{" and d.em == 1


def test_terminator_inside_string_does_not_cut() -> None:
    prompt = "class A {\n  void F() {\n    Log("
    gt = '"a;b{c}");'
    c, d = both(prompt, gt, gt, CS)
    assert c.pred == '"a;' and c.em == 0  # an exact copy scored as wrong
    assert d.pred == gt and d.em == 1


def test_exact_copy_of_one_line_groundtruth_with_several_terminators_matches() -> None:
    prompt = "class A {\n  public int X "
    gt = "{ get; set; }"
    c, d = both(prompt, gt, gt + "\n  public int Y { get; }\n", CS)
    assert c.em == 0 and d.em == 1
    java_prompt = "class A {\n  void f(int n) {\n    "
    loop = "for (int i = 0; i < n; i++) {"
    c, d = both(java_prompt, loop, loop + "\n      g(i);\n", JAVA)
    assert c.pred == "for (int i = 0;" and c.em == 0
    assert d.pred == loop and d.em == 1


def test_template_substitution_braces_are_not_statement_ends() -> None:
    prompt = "function f(n: number) {\n  const s = "
    gt = "`n=${n}`;"
    c, d = both(prompt, gt, gt + "\n  return s;\n", TS)
    assert c.pred == "`n=${" and c.em == 0
    assert d.pred == gt and d.em == 1


def test_typescript_statement_without_semicolon_is_cut_at_line_end() -> None:
    prompt = "function f() {\n  const a = "
    c, d = both(prompt, "g()", "g()\n  const b = h()\n  return a\n", TS)
    assert c.em == 0  # no `;` anywhere: the released code keeps all lines
    assert d.pred == "g()" and d.em == 1


def test_python_error_earlier_in_prompt_does_not_keep_every_line() -> None:
    # A stray `)` earlier in the file (a merge leftover, say) is an ERROR for the grammar, so no prefix ever
    # parses cleanly and the released code keeps the whole multi-line completion.
    prompt = "x = 1)\n\ndef f(a):\n    b = "
    c, d = both(prompt, "a + 1", "a + 1\n    c = b * 2\n    return c\n", PY)
    assert c.pred == "a + 1\n    c = b * 2\n    return c\n" and c.em == 0
    assert d.pred == "a + 1" and d.em == 1


def test_python_multiline_statement_is_kept_whole() -> None:
    prompt = "def f(a):\n    return g(\n        a,\n"
    pred = "        b,\n    )\n    unreachable()\n"
    c, d = both(prompt, "        b,\n    )", pred, PY)
    assert d.pred == "        b,\n    )" and d.em == 1


def test_python_block_header_is_its_own_line() -> None:
    c, d = both("", "def g() -> int:", "def g() -> int:\n    return 1\n", PY)
    assert c.em == d.em == 1 and d.pred == "def g() -> int:"


def test_uncut_completion_is_right_stripped() -> None:
    c, d = both("x = ", "1", "1   ", PY)
    assert c.pred == "1   " and d.pred == "1"


# ---- identifiers ---------------------------------------------------------------------------------------------


def test_string_prefixes_are_not_identifiers() -> None:
    c, d = both("msg = ", 'f"{name}!"', 'f"{name}!"', PY)
    assert c.pred_ids == ["f"]  # the f of the f-string; `name` removed with the string
    assert d.pred_ids == ["name"]


def test_literals_and_predefined_types_are_not_identifiers() -> None:
    c, d = both("let v", ": number = undefined;", ": any = null;", TS)
    assert set(c.pred_ids) == {"any", "null"} and set(c.target_ids) == {"number", "undefined"}
    assert d.pred_ids == [] and d.target_ids == []
    _, d = both("class A {\n  void F() {\n    ", "var ok = true;", "var ok = false;", CS)
    assert d.pred_ids == ["ok"]


def test_non_ascii_identifier_start_is_kept() -> None:
    c, d = both("class A {\n  void F() {\n    var ", "élan = 1;", "élan = 2;", CS)
    assert c.pred_ids == [] and d.pred_ids == ["élan"]


def test_words_in_template_literal_are_not_identifiers() -> None:
    c, d = both("const msg = ", "`hello ${user} world`;", "`hello ${user} world`;", TS)
    assert c.target_ids == ["hello", "user", "world"]  # (the compat prediction was cut at `${`)
    assert d.target_ids == d.pred_ids == ["user"]


# ---- edit similarity -----------------------------------------------------------------------------------------


def test_edit_similarity_is_rapidfuzz_without_autojunk() -> None:
    target = "self.assertEqual(" + ", ".join(f"value_{i}" for i in range(30)) + ")"
    pred = "self.assertEqual(" + ", ".join(f"value_{i}" for i in range(29, -1, -1)) + ")"
    assert len(target) >= 200
    c, d = both("    ", target, pred, PY)
    assert d.es == pytest.approx(fuzz.ratio(pred, target))
    # difflib's popularity pruning (autojunk) cannot seed matches on frequent characters of a long target.
    assert c.es < d.es - 5


def test_empty_prediction_against_empty_target() -> None:
    c, d = both("x = 1  ", "# only a comment", "", PY)
    assert (c.em, c.es) == (1, 100.0)
    assert (d.em, d.es, d.id_f1) == (1, 100.0, 0)


def test_python_statement_that_never_ends_falls_back_to_first_line() -> None:
    # The bracket is never closed, so no line ends the statement: released keeps every line, we keep the
    # first one (the unit of a CrossCodeEval groundtruth).
    c, d = both("def f():\n    x = ", "g(a)", "g(\n        a,\n", PY)
    assert c.pred == "g(\n        a,\n"
    assert d.pred == "g("
