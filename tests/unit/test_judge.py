"""The parent-side judge: which tests it parses, how it compares, and that it agrees with plain `assert`."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import pytest

from benchsmith.evaluate.humanext import judge as J
from benchsmith.evaluate.humanext import judge_values as JV
from benchsmith.evaluate.sandbox import ExecResult, Sandbox, Verdict
from tests.timing import scaled

TESTS = textwrap.dedent("""
    def check(candidate):
        assert candidate(2, k=3) == 5
        assert round(candidate(0.1, k=0.2), 2) == 0.3
        assert candidate(1, k=0) is not None and candidate(-1, k=1) in (0, 1)

    def test_check():
        check(add)

    test_check()
""")


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(timeout=scaled(5), memory_mb=512, workers=2) as sb:
        yield sb


def run(sandbox, source: str, tests: str = TESTS) -> J.Judgment:
    plan = J.plan_tests(tests)
    return J.judge(plan, sandbox.run(J.harness_program(source, plan)))


def plain_assert(source: str, tests: str) -> bool:
    """What the original harness said: the program with its tests, in a plain interpreter."""
    res = subprocess.run([sys.executable, "-c", source + "\n" + tests], capture_output=True, timeout=30)
    return res.returncode == 0


def test_plan_collects_calls_in_order_with_kwargs():
    plan = J.plan_tests(TESTS)
    assert plan.entry == "add"
    assert [(c.args, c.kwargs) for c in plan.calls] == [((2,), (("k", 3),)), ((0.1,), (("k", 0.2),)),
                                                        ((1,), (("k", 0),)), ((-1,), (("k", 1),))]
    assert [c.line for c in plan.checks] == [3, 4, 5]
    assert plan.checks[2].calls == (2, 3)


@pytest.mark.parametrize("tests, reason", [
    ("def check(candidate):\n    for x in range(3):\n        assert candidate(x) == x\ncheck(f)\n", "For statement"),
    ("def check(candidate):\n    assert candidate(1).real == 1\ncheck(f)\n", "attribute"),
    ("def check(candidate):\n    assert candidate(helper(1)) == 1\ncheck(f)\n", "helper"),
    ("def check(candidate):\n    assert candidate(candidate(1)) == 1\ncheck(f)\n", "inside another"),
    ("def check(candidate):\n    assert candidate(1) is 5\ncheck(f)\n", "`is`"),
    ("def check(candidate):\n    assert candidate(1) == 1\n", "never call"),
    ("def check(candidate):\n    assert candidate(1) == 1\ncheck(f)\ncheck(g)\n", "different candidates"),
    ("import os\ndef check(candidate):\n    assert candidate(1) == 1\ncheck(f)\n", "Import"),
    ("def check(candidate):\n    assert [x for x in candidate(1)] == [1]\ncheck(f)\n", "ListComp"),
])
def test_other_shapes_are_not_judged_and_say_why(tests, reason):
    plan, why = J.try_plan(tests)
    assert plan is None and reason in why


@pytest.mark.parametrize("source, tests", [
    ("def f(x):\n    return True", "def check(candidate):\n    assert candidate(1) == 1\ncheck(f)\n"),
    ("def f(x):\n    return 1", "def check(candidate):\n    assert candidate(1) is True\ncheck(f)\n"),
    ("def f(x):\n    return (1, 2)", "def check(candidate):\n    assert candidate(1) == [1, 2]\ncheck(f)\n"),
    ("def f(x):\n    return [1.0, 2]", "def check(candidate):\n    assert candidate(1) == [1, 2.0]\ncheck(f)\n"),
    ("def f(x):\n    return 0.1 + 0.2", "def check(candidate):\n    assert candidate(1) == 0.3\ncheck(f)\n"),
    ("def f(x):\n    return float('nan')", "def check(candidate):\n    assert candidate(1) != candidate(2)\ncheck(f)\n"),
    ("def f(x):\n    return {1: 'a', (2, 3): {4}}",
     "def check(candidate):\n    assert candidate(0) == {(2, 3): {4}, 1: 'a'}\ncheck(f)\n"),
    ("def f(x):\n    return -0.0", "import math\ndef check(candidate):\n    assert math.copysign(1, candidate(0)) < 0\n"
                                   "check(f)\n"),
    ("def f(x):\n    return sorted(x)", "def check(candidate):\n    assert candidate([3, 1]) == [1, 3]\n"
                                       "    assert candidate([]) == []\ncheck(f)\n"),
    ("def f(x):\n    return x * 3", "def check(candidate):\n    assert abs(candidate(0.1) - 0.3) < 1e-9\ncheck(f)\n"),
])
def test_verdicts_agree_with_the_plain_assert(sandbox, source, tests):
    plan, why = J.try_plan(tests)
    if plan is None:  # math.copysign is not among the functions the judge knows: the other path
        assert "copysign" in why or "attribute" in why
        return
    assert run(sandbox, source, tests).passed is plain_assert(source, tests)


def test_failure_names_the_assertion_and_the_value(sandbox):
    j = run(sandbox, "def add(a, k):\n    return a - k\n")
    assert j.verdict is Verdict.FAILED and j.line == 3
    assert j.assertion == "assert candidate(2, k=3) == 5" and j.returned == "-1"
    raising = run(sandbox, "def add(a, k):\n    return {}[a]\n")
    assert raising.error.startswith("KeyError") and raising.returned is None
    broken = run(sandbox, "def add(a, k:\n")
    assert broken.verdict is Verdict.FAILED and "SyntaxError" in broken.detail
    assert run(sandbox, "def add(a, k):\n    return a + k\n").passed


def test_timeouts_and_memory_keep_their_verdicts(sandbox):
    assert run(sandbox, "def add(a, k):\n    while True:\n        pass\n").verdict is Verdict.TIMEOUT
    hog = run(sandbox, "def add(a, k):\n    return [bytearray(2**20) for _ in range(2000)]\n")
    assert hog.verdict in (Verdict.MEMORY, Verdict.FAILED) and not hog.passed
    # an earlier failed assertion decides, even when a later call hangs (the original stopped at the first)
    early = run(sandbox, "def add(a, k):\n    if a == 2:\n        return 0\n    while True:\n        pass\n")
    assert early.verdict is Verdict.FAILED and early.line == 3


def test_decoding_builds_only_plain_data():
    assert JV.decode({"tuple": [1, {"set": [2]}]}) == (1, {2})
    assert JV.decode({"dict": [[{"tuple": [1]}, None]]}) == {(1,): None}
    for bad in ({"object": []}, {"set": [[1]]}, {"tuple": 1, "x": 2}, {"dict": [[1]]}, {"complex": [1, 2]}):
        with pytest.raises(JV.EvalError):
            JV.decode(bad)
    assert math.isnan(JV.decode(float("nan")))


def test_parent_side_evaluation_is_bounded():
    import ast

    fetch = {0: 10 ** 6, 1: "x"}.__getitem__
    for expr in ("2 ** _bs_call_0", "[0] * _bs_call_0 * 100", "_bs_call_1 * (_bs_call_0 * 10)",
                 "list(range(_bs_call_0 * 100))", "1 << (_bs_call_0 * 100)"):
        with pytest.raises(JV.EvalError):
            JV.SafeEval(fetch).eval(ast.parse(expr, mode="eval").body)
    per_element = ast.parse("len(list(map(lambda x: x + x + x, range(_bs_call_0))))", mode="eval").body
    assert JV.SafeEval({0: 10 ** 5}.__getitem__).eval(per_element) == 10 ** 5
    with pytest.raises(JV.EvalError, match="too expensive"):
        JV.SafeEval({0: 10 ** 6}.__getitem__).eval(per_element)


def test_protocol_violations_fail():
    plan = J.plan_tests("def check(candidate):\n    assert candidate(1) == 1\ncheck(f)\n")

    def res(stdout: str) -> ExecResult:
        return ExecResult(Verdict.PASSED, 0, stdout, "", 0.0)

    assert J.judge(plan, res('{"i": 0, "v": 1}\n{"done": 1}\n')).passed
    assert not J.judge(plan, res('{"i": 0, "v": 1}\n')).passed  # no end record
    assert not J.judge(plan, res('{"i": 0, "v": 1}\n{"i": 0, "v": 1}\n{"done": 1}\n')).passed
    assert not J.judge(plan, res('{"i": 1, "v": 1}\n{"done": 1}\n')).passed
    assert not J.judge(plan, res('{"done": 0}\n')).passed
    assert not J.judge(plan, res('passed\n')).passed
    assert not J.judge(plan, res('{"i": 0, "v": {"object": 1}}\n{"done": 1}\n')).passed


def test_only_exact_types_cross_and_stdlib_dicts_travel_as_dicts(sandbox):
    tests = "def check(candidate):\n    assert candidate(1) == {'a': 1}\ncheck(f)\n"
    ok = "import collections\ndef f(x):\n    d = collections.defaultdict(int)\n    d['a'] += x\n    return d\n"
    assert run(sandbox, ok, tests).passed
    for bad in ("class D(dict):\n    pass\ndef f(x):\n    return D(a=1)\n",
                "class S(str):\n    __hash__ = str.__hash__\n    def __eq__(self, o):\n        return True\ndef f(x):\n    return {S('a'): 1}\n",
                "def f(x):\n    l = []\n    l.append(l)\n    return l\n"):
        j = run(sandbox, bad, tests)
        assert j.verdict is Verdict.FAILED and "not plain data" in j.detail, j.detail
