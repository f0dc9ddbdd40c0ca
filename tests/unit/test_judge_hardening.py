"""The judge as the tests' own ``==`` would judge honest values (issue 22), and hostile values that still fail.

Values of well-known types are turned into plain data by structure in the trusted harness -- numpy scalars and
0-d arrays (their ``item()``), ``Counter`` (a dict), namedtuples (their tuple), ``Decimal``/``Fraction`` (exact,
tagged, rebuilt here) -- and compared here as plain data.  A type whose equality or hashing the candidate defines
still never reaches a comparison: it is "not plain data", whatever its name or module says.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from benchsmith.evaluate.humanext import judge as J
from benchsmith.evaluate.sandbox import ExecResult, Sandbox, Verdict
from tests.hostile.traces import NAME_ME, assert_nothing_left, new_token


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(timeout=10, memory_mb=1024, workers=2, output_cap=4 << 20) as sb:
        yield sb


def _tests_for(assertion: str) -> str:
    return f"def check(candidate):\n    assert {assertion}\n\ncheck(f)\n"


def judged(sandbox, source: str, assertion: str) -> J.Judgment:
    plan = J.plan_tests(_tests_for(assertion))
    return J.judge(plan, sandbox.run(J.harness_program(source, plan)))


def plain_assert(source: str, assertion: str) -> bool:
    """What the tests' own ``==`` says: the program with its tests, in a plain interpreter."""
    res = subprocess.run([sys.executable, "-c", source + "\n" + _tests_for(assertion)], capture_output=True,
                         timeout=120)
    return res.returncode == 0


NP = "import numpy as np\n"
HONEST = [
    ("numpy.float64", NP + "def f(x):\n    return np.float64(x) / 4\n", "candidate(2) == 0.5"),
    ("numpy 0-d array", NP + "def f(x):\n    return np.array(x) * 2\n", "candidate(3) == 6"),
    ("numpy scalars in a list", NP + "def f(x):\n    return [np.int64(x), np.bool_(x > 1), np.str_('a')]\n",
     "candidate(2) == [2, True, 'a']"),
    ("numpy sum as a dict value", NP + "def f(x):\n    return {'s': np.arange(x).sum()}\n", "candidate(4) == {'s': 6}"),
    ("numpy float32 that is exact", NP + "def f(x):\n    return np.float32(x) / 4\n", "candidate(2) == 0.5"),
    ("Counter", "from collections import Counter\ndef f(s):\n    return Counter(s)\n",
     "candidate('abca') == {'a': 2, 'b': 1, 'c': 1}"),
    ("Counter with a zero count", "from collections import Counter\ndef f(s):\n    c = Counter(s)\n"
     "    c['z'] = 0\n    return c\n", "candidate('a') == {'a': 1}"),
    ("OrderedDict and defaultdict", "from collections import OrderedDict, defaultdict\ndef f(x):\n"
     "    d = defaultdict(list)\n    d[x].append(1)\n    return [OrderedDict(b=2, a=1), d]\n",
     "candidate(0) == [{'a': 1, 'b': 2}, {0: [1]}]"),
    ("namedtuple", "from collections import namedtuple\nP = namedtuple('P', 'x y')\ndef f(a):\n"
     "    return P(a, a + 1)\n", "candidate(1) == (1, 2)"),
    ("typing.NamedTuple with a method", "from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n"
     "    y: int = 0\n    def norm(self):\n        return abs(self.x)\ndef f(a):\n    return [P(a), {P(a, 1)}]\n",
     "candidate(2) == [(2, 0), {(2, 1)}]"),
    ("subclass of a namedtuple", "from collections import namedtuple\nclass P(namedtuple('P', 'x y')):\n"
     "    __slots__ = ()\n    def total(self):\n        return self.x + self.y\ndef f(a):\n    return P(a, 0)\n",
     "candidate(5) == (5, 0)"),
    ("Decimal compared with a float", "from decimal import Decimal\ndef f(x):\n    return Decimal(x) / 2\n",
     "candidate(3) == 1.5"),
    ("Decimal('0.1') is not 0.1", "from decimal import Decimal\ndef f(x):\n    return Decimal('0.1')\n",
     "candidate(1) == 0.1"),
    ("Fraction compared with numbers", "from fractions import Fraction\ndef f(x):\n    return Fraction(1, x)\n",
     "candidate(4) == 0.25 and candidate(1) == 1"),
]


@pytest.mark.parametrize("name, source, assertion", HONEST, ids=[c[0] for c in HONEST])
def test_well_known_values_are_judged_as_the_tests_own_equality(sandbox, name, source, assertion):
    j = judged(sandbox, source, assertion)
    expected = plain_assert(source, assertion)
    assert j.passed is expected, (name, j.verdict, j.detail)
    if not expected:  # a wrong value fails as a wrong value, shown as such
        assert j.verdict is Verdict.FAILED and j.returned is not None, j.detail


def test_a_narrow_numpy_float_is_compared_at_its_exact_value(sandbox):
    """NumPy 2 compares ``float32(0.1) == 0.1`` after rounding the Python float to float32 (True); the judge
    compares the float32's exact value (0.10000000149011612), so it can be stricter than the tests' ``==``, never
    more lenient: an exact value that equals the expected one is one NumPy finds equal too."""
    source = NP + "def f(x):\n    return np.float32(0.1)\n"
    j = judged(sandbox, source, "candidate(1) == 0.1")
    assert j.verdict is Verdict.FAILED and j.returned == "0.10000000149011612"
    # NumPy 1.x promoted to float64 and said False too; NumPy 2 says True: the judge is the stricter of the two
    import numpy

    assert plain_assert(source, "candidate(1) == 0.1") is (int(numpy.__version__.split(".")[0]) >= 2)


# Hostile values: each fails with exactly this reason (the candidate's equality never runs in the comparison).
HOSTILE = [
    ("namedtuple whose __eq__ is always true", textwrap.dedent("""
        from collections import namedtuple
        class P(namedtuple('P', 'x y')):
            def __eq__(self, other):
                return True
            __hash__ = tuple.__hash__
        def f(a):
            return P(0, 0)
    """), "returned a __main__.P, not plain data"),
    ("tuple with _fields and its own hash", textwrap.dedent("""
        class P(tuple):
            _fields = ('x', 'y')
            def __hash__(self):
                return 0
        def f(a):
            return P((1, 2))
    """), "returned a __main__.P, not plain data"),
    ("a class dressed as numpy.float64", textwrap.dedent("""
        class float64(float):
            __module__ = 'numpy'
            def __eq__(self, other):
                return True
            __hash__ = float.__hash__
        float64.__qualname__ = 'float64'
        def f(a):
            return float64(0)
    """), "returned a numpy.float64, not plain data"),
    ("a fake numpy module that calls everything a numpy scalar", textwrap.dedent("""
        import sys, types
        fake = types.ModuleType('numpy')
        fake.generic = object
        fake.ndarray = object
        sys.modules['numpy'] = fake
        class Any:
            def __eq__(self, other):
                return True
            def item(self):
                return self
        def f(a):
            return Any()
    """), "returned a __main__.Any, not plain data"),
    ("Decimal subclass equal to everything", textwrap.dedent("""
        from decimal import Decimal
        class D(Decimal):
            def __eq__(self, other):
                return True
            __hash__ = Decimal.__hash__
        def f(a):
            return D(0)
    """), "returned a __main__.D, not plain data"),
    ("Counter subclass", textwrap.dedent("""
        from collections import Counter
        class C(Counter):
            def __eq__(self, other):
                return True
        def f(a):
            return C()
    """), "returned a __main__.C, not plain data"),
    ("Fraction whose numerator was patched", textwrap.dedent("""
        import fractions
        class Any(int):
            def __eq__(self, other):
                return True
            __hash__ = int.__hash__
        fractions.Fraction.numerator = property(lambda self: 'three')
        def f(a):
            return fractions.Fraction(1, 2)
    """), "raised TypeError"),
    ("0-d numpy array holding an object equal to everything", textwrap.dedent("""
        import numpy as np
        class Any:
            def __eq__(self, other):
                return True
        def f(a):
            return np.array(Any(), dtype=object)
    """), "returned a __main__.Any, not plain data"),
]


@pytest.mark.parametrize("name, source, reason", HOSTILE, ids=[c[0] for c in HOSTILE])
def test_hostile_look_alikes_still_fail(sandbox, name, source, reason):
    token = new_token()
    j = judged(sandbox, NAME_ME.format(token=token) + source, "candidate(1) == (1, 2)")
    assert j.verdict is Verdict.FAILED, (name, j.verdict, j.detail)
    assert j.detail == f"assert candidate(1) == (1, 2): the candidate {reason}" or (
        reason.startswith("raised") and j.detail.startswith(f"assert candidate(1) == (1, 2): the candidate {reason}")
    ), j.detail
    assert_nothing_left(token)


# What the candidate may write on its own reply pipe is its answer (it holds the pipe); these forged records
# carry values the parent must refuse to build, or must not choke on.
FORGE = textwrap.dedent("""
    import json, os
    def f(a):
        rec = {record}
        for fd in range(3, 16):
            try:
                os.write(fd, rec)
            except OSError:
                pass
        os._exit(0)
""")


@pytest.mark.parametrize("name, record, detail", [
    ("a set of ints that all hash to 0",
     '(json.dumps({"i": 0, "v": {"set": [k * (2**61 - 1) for k in range(1, 5001)]}}) + "\\n").encode()',
     "assert candidate(1) == (1, 2): the candidate sent a set or dict whose 5000 elements share one hash value"),
    ("a dict whose keys all hash to 0",
     '(json.dumps({"i": 0, "v": {"dict": [[k * (2**61 - 1), 0] for k in range(1, 500)]}}) + "\\n").encode()',
     "assert candidate(1) == (1, 2): the candidate sent a set or dict whose 499 elements share one hash value"),
    ("a Decimal past the digit limit", '(json.dumps({"i": 0, "v": {"decimal": "1e999999"}}) + "\\n").encode()',
     "assert candidate(1) == (1, 2): the candidate sent decimal exponent 999999 out of range"),
    ("a Fraction over zero", '(json.dumps({"i": 0, "v": {"fraction": [1, 0]}}) + "\\n").encode()',
     "assert candidate(1) == (1, 2): the candidate sent not plain data"),
    ("nesting deeper than any stack", 'b"{\\"i\\": 0, \\"v\\": " + b"[" * 200000 + b"]" * 200000 + b"}\\n"',
     "results channel: unreadable record for call 0"),
    ("nesting within the stack", 'b"{\\"i\\": 0, \\"v\\": " + b"[" * 900 + b"]" * 900 + b"}\\n"',
     "assert candidate(1) == (1, 2): the candidate sent value nested too deeply"),
])
def test_forged_values_are_refused_not_built(sandbox, name, record, detail):
    j = judged(sandbox, FORGE.format(record=record), "candidate(1) == (1, 2)")
    assert j.verdict is Verdict.FAILED, (name, j.detail)
    assert j.detail == detail


def test_an_unencodable_message_is_escaped_not_fatal(sandbox):
    j = judged(sandbox, "def f(a):\n    raise ValueError('\\udc80' * 3)\n", "candidate(1) == (1, 2)")
    assert j.verdict is Verdict.FAILED
    assert j.error == "ValueError: \\udc80\\udc80\\udc80"
    assert j.detail == "assert candidate(1) == (1, 2): the candidate raised ValueError: \\udc80\\udc80\\udc80"
    json.dumps(j.detail, ensure_ascii=False).encode("utf-8")  # what the report writer does


def test_a_judgment_that_breaks_is_a_judge_error_verdict():
    plan = J.plan_tests(_tests_for("candidate(1) == 1"))
    broken = ExecResult(Verdict.PASSED, 0, None, "", 0.0)  # type: ignore[arg-type] - no output at all
    j = J.judge(plan, broken)
    assert j.verdict is Verdict.JUDGE_ERROR and not j.passed
    assert j.detail == "judging failed: AttributeError: 'NoneType' object has no attribute 'splitlines'"


def test_tests_nested_past_the_parser_take_the_other_path():
    deep = "def check(candidate):\n    assert candidate(1) == " + "(" * 5000 + "1" + ")" * 5000 + "\ncheck(f)\n"
    plan, why = J.try_plan(deep)
    assert plan is None and why is not None
    long_sum = "def check(candidate):\n    assert candidate(1) == " + "+".join(["1"] * 100_000) + "\ncheck(f)\n"
    plan, why = J.try_plan(long_sum)
    assert plan is None and why == "tests not parsed here: RecursionError"
