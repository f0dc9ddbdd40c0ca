"""Forged verdicts (issue 13): a program judged by the HumanExtension harness cannot make a wrong answer pass --
not by printing or forging records, exiting early, lying equality, killing or writing to the harness, patching
builtins, or finding the expected values in its reach; each case fails and leaves nothing behind.
"""

from __future__ import annotations

import textwrap

import pytest

from benchsmith.evaluate.sandbox import Sandbox, Verdict
from tests.hostile.traces import NAME_ME, assert_nothing_left, needs, new_token
from tests.timing import scaled


FACT_TESTS = ("def check(candidate):\n    assert candidate(7) == 5040\n    assert candidate(3) == 6\n\n"
              "def test_check():\n    check(factorial)\n\ntest_check()\n")


GOOD_FACT = "def factorial(n):\n    out = 1\n    for i in range(2, n + 1):\n        out *= i\n    return out\n"


def _judged(sandbox: Sandbox, source: str, tests: str = FACT_TESTS):
    from benchsmith.evaluate.humanext.judge import harness_program, judge, plan_tests

    plan = plan_tests(tests)
    res = sandbox.run(harness_program(source, plan))
    return judge(plan, res), res


def _channel_is_clean(res, token: str) -> None:
    """Only the harness's records are on the results channel: nothing the program wrote."""
    import json

    for line in res.stdout.splitlines():
        assert token not in line
        rec = json.loads(line)
        assert set(rec) <= {"i", "v", "error", "not_plain", "too_large", "fatal", "end", "at", "done", "violation"}


def test_judged_control_a_correct_program_passes(strict):
    j, res = _judged(strict, GOOD_FACT)
    assert j.verdict is Verdict.PASSED, j.detail


@pytest.mark.parametrize("name, source", [
    ("print marker and exit 0", "import os, sys\nprint('{token}-reached')\nsys.stdout.flush()\nos._exit(0)\n"),
    # what it writes on its own reply pipe is its answer (a program that knew 5040 could just return it); what
    # must not work is a claim of success without values: a fake end record, a verdict, the harness's keys
    ("fake end records on every descriptor then exit", textwrap.dedent("""
        import json, os
        fake = b''.join(json.dumps(r).encode() + b'\\n' for r in ({{"done": 2}}, {{"verdict": "passed"}},
                                                                 {{"i": 5, "v": 1}}, {{"end": "ok", "at": 2}}))
        for fd in range(0, 64):
            try:
                os.write(fd, fake + b'{token}-reached\\n')
            except OSError:
                pass
        os._exit(0)
    """)),
    ("atexit prints fake records", textwrap.dedent("""
        import atexit
        atexit.register(lambda: print('{{"i": 0, "v": 5040}}\\n{{"i": 1, "v": 6}}\\n{{"done": 2}}\\n{token}-reached'))
        def factorial(n):
            return 0
    """)),
    ("exits early inside the call", "import sys\ndef factorial(n):\n    print('{token}-reached')\n    sys.exit(0)\n"),
    ("int subclass equal to everything", textwrap.dedent("""
        class Liar(int):
            def __eq__(self, other):
                return True
            __hash__ = int.__hash__
        def factorial(n):
            return Liar(0)
    """)),
    ("object equal to everything", textwrap.dedent("""
        class Any:
            def __eq__(self, other):
                return True
        def factorial(n):
            return Any()
    """)),
    ("kills the harness after faking", textwrap.dedent("""
        import os, signal
        def factorial(n):
            os.write(1, b'{{"i": 0, "v": 5040}}\\n{token}-reached\\n')
            os.kill(os.getppid(), signal.SIGKILL)
            return 5040
    """)),
    ("opens the harness's results channel through /proc", textwrap.dedent("""
        import os
        def factorial(n):
            fd = os.open('/proc/%d/fd/1' % os.getppid(), os.O_WRONLY)
            os.write(fd, b'{{"i": 0, "v": 5040}}\\n{{"i": 1, "v": 6}}\\n{{"done": 2}}\\n{token}-reached\\n')
            os._exit(0)
    """)),
    ("patches builtins the comparison might use", textwrap.dedent("""
        import builtins
        builtins.int.__eq__ if False else None
        class AlwaysEq(list):
            pass
        builtins.list = AlwaysEq
        builtins.round = lambda *a: 5040
        def factorial(n):
            print('{token}-reached')
            return None
    """)),
])
def test_forged_verdicts_fail(strict, name, source):
    token = new_token()
    j, res = _judged(strict, NAME_ME.format(token=token) + source.format(token=token))
    assert j.verdict is Verdict.FAILED, (name, j.verdict, j.detail, res.stderr[-500:])
    if "/proc" in name:  # refused outright: the harness is not dumpable (hidepid even hides it)
        assert j.error.startswith(("PermissionError", "FileNotFoundError")), j.detail
    _channel_is_clean(res, token)
    assert_nothing_left(token)


def test_expected_values_are_not_in_the_programs_reach(strict):
    """The candidate searches its own file, its frames' constants and every object in memory for the expected
    value; it is in none of them, so it can only compute it (here: it gives up and returns 0)."""
    token = new_token()
    source = NAME_ME.format(token=token) + textwrap.dedent("""
        import gc, sys
        def factorial(n):
            if n != 7:  # later calls could find its own earlier answers in the harness's locals
                return 6
            hay = [open(__file__).read()]
            f = sys._getframe().f_back  # not our own locals: they hold the needle once it is made
            while f is not None:
                hay += [repr(c) for c in f.f_code.co_consts]
                hay.append(repr(f.f_locals)[:100000])
                f = f.f_back
            for obj in gc.get_objects():
                try:
                    hay.append(repr(obj)[:10000])
                except Exception:
                    pass
            import re
            # the assertion's text, or the number on its own (not inside an address); never a constant here:
            # this code is in the haystack too
            number = str(int('50') * 100 + 40)
            needles = [re.compile(r'candidate\\(7\\)\\s*==\\s*(\\d+)'),
                       re.compile(r'(?<![0-9a-fA-Fx])(' + number + r')(?![0-9a-fA-F])')]
            for s in hay:
                for needle in needles:
                    m = needle.search(s)
                    if m:
                        return int(m.group(1))
            return 0
    """)
    j, res = _judged(strict, source)
    assert j.verdict is Verdict.FAILED and j.returned == "0", (j.detail, res.stderr[-500:])
    # the search itself works: with the tests in the program, as before, it finds the answer and passes
    leaky = strict.run(source + "\n" + FACT_TESTS.replace("candidate(3) == 6", "candidate(3) in (0, 6)"))
    assert leaky.verdict is Verdict.PASSED, leaky.stderr[-500:]
    _channel_is_clean(res, token)
    assert_nothing_left(token)


def test_reading_the_variants_and_references_cannot_pass(strict, tmp_path):
    """A program that looks for the tests/reference files it was built from finds nothing: they are hidden."""
    needs(strict, "root")
    token = new_token()
    variants = tmp_path / "variants.jsonl"
    variants.write_text('{"tests": "assert candidate(7) == 5040"}\n')
    source = textwrap.dedent(f"""
        import os
        def factorial(n):
            for p in ({str(variants)!r}, '/work/shared/data/humanextension/data.json'):
                try:
                    if '5040' in open(p).read():
                        return 5040 if n == 7 else 6
                except OSError:
                    pass
            return -1
    """)
    with Sandbox(timeout=scaled(5), workers=1, hide=[tmp_path]) as sb:
        j, res = _judged(sb, NAME_ME.format(token=token) + source)
    assert j.verdict is Verdict.FAILED and j.returned == "-1", j.detail
    assert_nothing_left(token)
