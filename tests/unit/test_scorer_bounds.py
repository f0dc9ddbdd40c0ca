"""Bounded parsing in the scorer's own process (issue 22): model output is untrusted, so code extraction, style
classification, result decoding and judging are linear or capped, every sample gets a recorded verdict (a sample
that breaks judging is ``judge_error``), and the report is always written.  Speeds are measured by
``bench/judge_bounds.py``, not here: these tests assert the exact results."""

from __future__ import annotations

import ast
import json
import random
import re
import textwrap

import pytest

from benchsmith.cli import main
from benchsmith.evaluate.generation.truncation import code_blocks, extract_code
from benchsmith.evaluate.humanext import judge_values as JV
from benchsmith.evaluate.humanext.style import SOURCE_LIMIT, Style, classify_source
from benchsmith.evaluate.sandbox import Sandbox, Verdict
from benchsmith.evaluate.humanext.records import Setting
from tests.unit.test_humanext_report import ADD_ONE, ADD_TWO, TESTS, v, write_jsonl

# ------------------------------------------------------------------------------------------- code extraction

_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w+#.-]*)[^\n]*\n", re.MULTILINE)


def regex_blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks as the former regular expressions found them (quadratic on blank lines): the
    reference the linear scanner must agree with."""
    blocks, pos = [], 0
    while True:
        m = _FENCE.search(text, pos)
        if m is None:
            return blocks
        fence, tag = m.group(1), m.group(2).lower()
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        end = close.search(text, m.end())
        if end is None:
            return blocks + [(tag, text[m.end():])]
        blocks.append((tag, text[m.end():end.start()]))
        pos = end.end()


def test_the_linear_fence_scanner_finds_what_the_regular_expressions_found():
    atoms = ["```", "````", "~~~", "```python", "``` py extra", "~~~~", "\n", "\n", " ", "\t", "x", "def f(x):",
             "async def f(", "```\r", "#", "\r\n", "é", "\u00a0", "\f", "`"]
    rng = random.Random(22)
    for _ in range(20000):
        text = "".join(rng.choice(atoms) for _ in range(rng.randrange(14)))
        assert code_blocks(text) == regex_blocks(text), text


def test_a_completion_of_blank_lines_is_extracted_exactly():
    blank = "\n" * 30_000
    fenced = "Here:\n```python\n" + blank + "def f(x):\n    return x\n```\nthanks"
    assert extract_code(fenced, "f") == blank + "def f(x):\n    return x\n"
    assert extract_code("```\n" + blank, "f") == blank  # unterminated: to the end
    assert extract_code(blank, "f") is blank  # no fence: the text itself
    tabs = "```python\n" + " \t\n" * 10_000 + "```\n"
    assert code_blocks(tabs) == [("python", " \t\n" * 10_000)]


# ----------------------------------------------------------------------------------------- style and plans


def test_style_of_unparseable_or_oversized_sources():
    deep = "def f(x):\n    return " + "+".join(["x"] * 100_000) + "\n"
    assert classify_source(deep, "f", "g").style is Style.UNPARSEABLE
    big = "def f(x):\n    return g(x)\n" + "#" * SOURCE_LIMIT
    assert classify_source(big, "f", "g").style is Style.UNPARSEABLE
    assert classify_source("def f(x):\n    return g(x)\n", "f", "g").style is Style.BLACK_BOX  # control


# ------------------------------------------------------------------------------------------ parent evaluation


def _eval(expr: str, values: dict) -> object:
    return JV.SafeEval(values.__getitem__).eval(ast.parse(expr, mode="eval").body)


def test_collections_of_hash_colliding_values_are_refused_in_the_parent():
    colliding = [k * (2 ** 61 - 1) for k in range(1, 3001)]
    for expr in ("set(_bs_call_0)", "frozenset(_bs_call_0)", "dict(map(lambda k: (k, 0), _bs_call_0))"):
        with pytest.raises(JV.EvalError, match="3000 elements share one hash value"):
            _eval(expr, {0: colliding})
    assert _eval("len(set(_bs_call_0))", {0: list(range(3000))}) == 3000  # control
    assert _eval("set(_bs_call_0) == {-1, -2}", {0: [-1, -2]})  # hash(-1) == hash(-2): two are nothing


def test_searching_and_whole_collection_calls_are_charged_by_length():
    big = list(range(20_000))
    for expr in ("all(map(lambda x: x in _bs_call_0, _bs_call_0))",
                 "all(map(lambda x: x in set(_bs_call_0), _bs_call_0))",
                 "all(map(lambda x: sorted(_bs_call_0) != [], _bs_call_0))",
                 "all(map(lambda x: _bs_call_2 != _bs_call_2[:-1], _bs_call_0))"):
        with pytest.raises(JV.EvalError, match="too expensive"):
            _eval(expr, {0: big, 1: set(big), 2: "x" * 20_000})
    assert _eval("all(map(lambda x: x in _bs_call_1, _bs_call_0))", {0: big, 1: set(big)})  # found by hash
    assert _eval("sum(map(lambda x: x in _bs_call_0, range(50)))", {0: big}) == 50  # within the budget


def test_exact_numbers_stay_bounded():
    import decimal
    import fractions

    assert JV.decode({"decimal": "1.50"}) == 1.5 and JV.decode({"fraction": [1, 3]}) == fractions.Fraction(1, 3)
    with pytest.raises(JV.EvalError, match="power too large"):
        _eval("_bs_call_0 ** 100000", {0: fractions.Fraction(3, 2)})
    for bad in ({"decimal": "1e5000"}, {"decimal": "x"}, {"decimal": "1" * 10_001}, {"fraction": [1, -2]},
                {"fraction": [1.0, 2]}):
        with pytest.raises(JV.EvalError):
            JV.decode(bad)
    assert JV.decode({"decimal": "NaN"}).is_nan() and isinstance(JV.decode({"decimal": "-0"}), decimal.Decimal)
    # 1/p over the first 6000 primes: the sum's denominator outgrows any honest answer long before the end
    primes = [p for p in range(2, 60_000) if all(p % d for d in range(2, int(p ** 0.5) + 1))][:6000]
    with pytest.raises(JV.EvalError, match="fraction too large"):
        _eval("sum(_bs_call_0) == 1", {0: [fractions.Fraction(1, p) for p in primes]})
    assert _eval("sum(_bs_call_0)", {0: [fractions.Fraction(1, 2)] * 4}) == 2  # control
    assert _eval("sum(_bs_call_0, 0.5)", {0: [0.1] * 10}) == sum([0.1] * 10, 0.5)  # floats: the builtin's sum


# ------------------------------------------------------------------------------------------------- the sandbox


def test_only_a_tail_of_stderr_is_kept_and_it_still_names_the_cause():
    program = "import sys\nsys.stderr.write('x' * 300_000)\nraise MemoryError('out of room')\n"
    with Sandbox(timeout=10, workers=1, output_cap=1 << 20, stderr_keep=4096) as sb:
        res = sb.run(program)
    assert res.verdict is Verdict.MEMORY
    assert len(res.stderr) == 4096 and res.stderr.endswith("MemoryError: out of room\n")


def test_run_many_reduces_each_result_as_it_ends():
    seen: list[int] = []

    def reduce(i, res):
        seen.append(i)
        return (i, res.verdict.value, len(res.stdout))

    with Sandbox(timeout=10, workers=2) as sb:
        out = sb.run_many([f"print('x' * {n})" for n in (10, 20, 30)], reduce=reduce)
    assert out == [(0, "passed", 11), (1, "passed", 21), (2, "passed", 31)]
    assert sorted(seen) == [0, 1, 2]


# ------------------------------------------------------------------------------------------------ end to end

HOSTILE_PREDICTIONS = {
    "recursion": "    return x + 2\ny = " + "+".join(["1"] * 100_000) + "\n",
    "surrogate": "    raise ValueError('\\udc80')\n",
    "collide": textwrap.indent(textwrap.dedent("""
        import json, os
        rec = (json.dumps({"i": 0, "v": {"set": [k * (2**61 - 1) for k in range(1, 30000)]}}) + "\\n").encode()
        for fd in range(3, 16):
            try:
                os.write(fd, rec)
            except OSError:
                pass
        os._exit(0)
    """), "    "),
    # 1.5 MiB of stderr per call, two calls: under the 4 MiB cap, of which 64 KiB are kept
    "chatty": "    import sys\n    sys.stderr.write('x' * (3 << 19))\n    return x + 2\n",
    "blank": "```python\n" + "\n" * 30_000 + "def add_two(x):\n    return x + 2\n```\n",
    "good": "    return x + 2\n",
}


def test_the_scorer_writes_its_report_whatever_the_samples_do(tmp_path):
    variants, preds = [], []
    for name, pred in HOSTILE_PREDICTIONS.items():
        variants.append(v(f"{name}/oracle", name, Setting.ORACLE, ADD_ONE + "\n\n" + ADD_TWO, TESTS, "add_two",
                          "add_one").to_dict())
        preds.append({"task_id": f"{name}/oracle", "pred": pred})
    write_jsonl(tmp_path / "variants.jsonl", variants)
    write_jsonl(tmp_path / "m.jsonl", preds)
    rc = main(["score", "humanext", "--variants", str(tmp_path / "variants.jsonl"), "--predictions",
               str(tmp_path / "m.jsonl"), "--output", str(tmp_path / "out"), "--quiet", "--workers", "2",
               "--timeout", "20"])
    assert rc == 0
    rows = {r["pair_id"]: r for r in map(json.loads, (tmp_path / "out" / "samples.jsonl").read_text().splitlines())}
    assert (tmp_path / "out" / "report.md").is_file()
    assert rows["recursion"]["verdict"] == "failed" and rows["recursion"]["style"] == "unparseable"
    assert rows["recursion"]["detail"].startswith("the program failed before the tests ran: RecursionError")
    assert rows["surrogate"]["detail"] == "assert candidate(1) == 3: the candidate raised ValueError: \\udc80"
    assert rows["collide"]["detail"] == ("assert candidate(1) == 3: the candidate sent a set or dict whose 29999 "
                                         "elements share one hash value")
    assert [rows[n]["passed"] for n in ("chatty", "blank", "good")] == [True] * 3, rows["chatty"]["detail"]
    assert {r["verdict"] for r in rows.values()} == {"failed", "passed"}


# ------------------------------------------------------------------------------------------- the cceval scorer

CC_PROMPT = "import os\n\ndef f(x):\n    y = os.path."


@pytest.mark.parametrize("mode", ["default", "compat-cceval"])
def test_blank_lines_after_an_unfinished_statement_score_as_a_few_do(mode):
    """Each prefix the Python cut tries parses the whole prompt; blank lines add nothing to try (30k of them took
    16 s in default mode and minutes in compat before), so the score is the one of three blank lines."""
    from benchsmith.evaluate.cceval.scoring import Language, Mode, score_example

    few, many = ("join(\n" + "\n" * n for n in (3, 30_000))
    a = score_example("t", CC_PROMPT, "join(x, 'a')\n", few, Language.PYTHON, Mode(mode))
    b = score_example("t", CC_PROMPT, "join(x, 'a')\n", many, Language.PYTHON, Mode(mode))
    # compat keeps a completion with no valid prefix whole, as the released scorer did: its blanks differ
    assert (a.pred.rstrip(), a.em, a.es, a.pred_ids) == (b.pred.rstrip(), b.em, b.es, b.pred_ids)


def test_the_python_cut_tries_a_bounded_number_of_prefixes(monkeypatch):
    from benchsmith.evaluate.cceval import compat, default
    from benchsmith.evaluate.cceval.common import PREFIX_TRIES
    from benchsmith.evaluate.cceval.scoring import Language

    calls = {"compat": 0, "default": 0}

    def counting(name, fn):
        def wrapper(*args):
            calls[name] += 1
            return fn(*args)
        return wrapper

    monkeypatch.setattr(compat, "_has_error_node", counting("compat", compat._has_error_node))
    monkeypatch.setattr(default, "_python_statement_end", counting("default", default._python_statement_end))
    endless = "join(x +\n" + "a +\n" * 1000  # no prefix is a statement
    assert compat.postprocess_code_lines(CC_PROMPT, endless, Language.PYTHON) == endless
    assert default.process(CC_PROMPT, endless, Language.PYTHON, True).before_comments == "join(x +"
    assert calls == {"compat": PREFIX_TRIES, "default": 1 + PREFIX_TRIES}  # the full text, then the prefixes
    near = "join(x,\n" + "a,\n" * (PREFIX_TRIES - 10) + ")\nz = (\n"
    assert compat.postprocess_code_lines(CC_PROMPT, near, Language.PYTHON) == near[:near.index(")\n") + 1]
