"""Run each pair's reference (auxiliary + target reference) against its own tests in the sandbox.

Tests the judge understands (``benchsmith.evaluate.humanext.judge``: the released ``check(candidate)`` asserts) are
judged here, in this process, from the values the reference returned in the sandbox, and a failing pair is
reported with the assertion that failed and the first candidate value in it (or what the call raised).  Other
tests run through a small harness (our code, inside the sandbox) that catches the ``AssertionError``, finds the
``assert`` statement in the tests' own frame, re-evaluates the candidate call in it and prints a JSON line.  The
pair's code is never executed in this process.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Sequence

from benchsmith.records import Reason, Stage

from .sources import Pair

MARKER = "__BENCHSMITH_ASSERTION__"

# The harness is plain Python appended after the pair's code.  Names start with _bs_ so they cannot collide with
# the code under test.
_HARNESS = r'''
import sys as _bs_sys, json as _bs_json, ast as _bs_ast
_BS_TESTS = {tests!r}
_BS_ENTRY = {entry!r}
try:
    exec(compile(_BS_TESTS, "<tests>", "exec"), globals())
except Exception as _bs_exc:
    _bs_tb, _bs_frame, _bs_line = _bs_exc.__traceback__, None, None
    while _bs_tb is not None:
        if _bs_tb.tb_frame.f_code.co_filename == "<tests>":
            _bs_frame, _bs_line = _bs_tb.tb_frame, _bs_tb.tb_lineno
        _bs_tb = _bs_tb.tb_next
    _bs_report = {{"line": _bs_line, "assertion": None, "returned": None, "error": None}}
    if not isinstance(_bs_exc, AssertionError):
        _bs_report["error"] = type(_bs_exc).__name__ + ": " + str(_bs_exc)[:300]
    if _bs_line is not None:
        for _bs_node in _bs_ast.walk(_bs_ast.parse(_BS_TESTS)):
            if isinstance(_bs_node, _bs_ast.Assert) and _bs_node.lineno <= _bs_line <= _bs_node.end_lineno:
                _bs_report["assertion"] = _bs_ast.get_source_segment(_BS_TESTS, _bs_node)
                _bs_calls = [c for c in _bs_ast.walk(_bs_node.test) if isinstance(c, _bs_ast.Call)
                             and isinstance(c.func, _bs_ast.Name) and c.func.id in ("candidate", _BS_ENTRY)]
                if _bs_calls and isinstance(_bs_exc, AssertionError):
                    try:
                        _bs_value = eval(compile(_bs_ast.Expression(_bs_calls[0]), "<tests>", "eval"),
                                         _bs_frame.f_globals, _bs_frame.f_locals)
                        _bs_report["returned"] = repr(_bs_value)[:1000]
                    except BaseException as _bs_err:
                        _bs_report["error"] = ("re-evaluating the call raised " + type(_bs_err).__name__ + ": "
                                               + str(_bs_err)[:300])
                break
    print("\n" + {marker!r} + _bs_json.dumps(_bs_report), flush=True)
    _bs_sys.exit(1)
'''


@dataclass
class PairCheck:
    """Outcome of running one pair's reference against its tests."""

    pair_id: str
    target_name: str
    auxiliary_name: str
    passed: bool
    verdict: str
    line: int | None = None  # 1-based line within ``tests``
    assertion: str | None = None
    returned: str | None = None  # repr of what the reference returned for the failing assertion's call
    error: str | None = None  # the exception, when the failure is not a plain failed assertion
    duration: float = 0.0

    def to_dict(self) -> dict:
        return {
            "pair_id": self.pair_id,
            "target_name": self.target_name,
            "auxiliary_name": self.auxiliary_name,
            "stage": Stage.VALIDATION.value,
            "reason": Reason.REFERENCE_FAILS_TESTS.value,
            "verdict": self.verdict,
            "line": self.line,
            "assertion": self.assertion,
            "returned": self.returned,
            "error": self.error,
        }

    def failure(self) -> str:
        """One line: the failing assertion (and its line in the tests) with what the reference returned, or the
        error when the failure is not a plain failed assertion."""
        where = f" (line {self.line} of the tests)" if self.line else ""
        if self.assertion:
            if self.returned is not None:
                return f"{self.assertion}{where}: the reference returned {self.returned}"
            return f"{self.assertion}{where}" + (f": {self.error}" if self.error else "")
        return f"{self.error or self.verdict}{where}"


def diagnostic_program(pair: Pair) -> str:
    """The reference program, with the tests run through the assertion-reporting harness."""
    parts = [p for p in (pair.imports_block, pair.auxiliary.code(), pair.target.code()) if p]
    return "\n\n\n".join(parts) + "\n\n" + _HARNESS.format(tests=pair.tests, entry=pair.target.name, marker=MARKER)


def reference_source(pair: Pair) -> str:
    """The pair's code without its tests."""
    return "\n\n\n".join(p for p in (pair.imports_block, pair.auxiliary.code(), pair.target.code()) if p) + "\n"


def validate_pairs(pairs: Sequence[Pair], sandbox, progress: bool = False) -> list[PairCheck]:
    """One sandboxed run per pair; results in the pairs' order."""
    from benchsmith.evaluate.humanext.judge import harness_program, try_plan

    plans = [try_plan(p.tests, p.target.name)[0] for p in pairs]
    programs = [harness_program(reference_source(p), plan) if plan is not None else diagnostic_program(p)
                for p, plan in zip(pairs, plans)]
    results = sandbox.run_many(programs, progress=progress)
    return [_check(p, r) if plan is None else _judged(p, plan, r) for p, plan, r in zip(pairs, plans, results)]


def _judged(pair: Pair, plan, result) -> PairCheck:
    from benchsmith.evaluate.humanext.judge import judge

    j = judge(plan, result)
    return PairCheck(pair.pair_id, pair.target.name, pair.auxiliary.name, j.passed, str(j.verdict), line=j.line,
                     assertion=None if j.passed else j.assertion, returned=j.returned, error=j.error,
                     duration=result.duration)


def _check(pair: Pair, result) -> PairCheck:
    check = PairCheck(pair.pair_id, pair.target.name, pair.auxiliary.name, result.passed, str(result.verdict),
                      duration=result.duration)
    if result.passed:
        return check
    for line in reversed(result.stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                report = json.loads(line[len(MARKER):])
            except json.JSONDecodeError:
                break
            check.line = report.get("line")
            check.assertion = report.get("assertion")
            check.returned = report.get("returned")
            check.error = report.get("error")
            return check
    check.error = result.detail or _last_line(result.stderr) or f"exit status {result.returncode}"
    return check


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


# ---------------------------------------------------------------------------------------------------------------
# many small programs in one sandboxed process

_BATCH = r'''
import json as _bs_json
_BS_PROGRAMS = {programs!r}
_bs_failed = []
for _bs_i, _bs_src in enumerate(_BS_PROGRAMS):
    _bs_ns = {{"__name__": "__main__", "__builtins__": __builtins__}}
    try:
        exec(compile(_bs_src, "<program %d>" % _bs_i, "exec"), _bs_ns)
    except SystemExit as _bs_exit:
        if _bs_exit.code not in (None, 0):
            _bs_failed.append([_bs_i, "SystemExit: %r" % (_bs_exit.code,)])
    except BaseException as _bs_err:
        _bs_failed.append([_bs_i, type(_bs_err).__name__ + ": " + str(_bs_err)[:300]])
print({marker!r} + _bs_json.dumps(_bs_failed), flush=True)
'''


def run_batched(groups: Sequence[Sequence[str]], sandbox, progress: bool = False) -> list[list[str | None]]:
    """Run groups of independent programs, one sandboxed process per group (each program in a fresh namespace).

    Returns, per group and program, None when it passed or the error text.  A group whose process does not
    finish cleanly (timeout, crash, memory) is rerun one program per process, so one bad program cannot blame
    its neighbours.  Process start-up dominates tiny programs: this makes checking thousands of variants cheap.
    """
    programs = [_BATCH.format(programs=list(g), marker=MARKER) for g in groups]
    longest = max((len(g) for g in groups), default=1)
    results = sandbox.run_many(programs, timeout=sandbox.timeout * max(1, longest), progress=progress)
    out: list[list[str | None]] = []
    for group, res in zip(groups, results):
        verdicts: list[str | None] = [None] * len(group)
        report = None
        for line in reversed(res.stdout.splitlines()):
            if line.startswith(MARKER):
                report = json.loads(line[len(MARKER):])
                break
        if res.passed and report is not None:
            for i, err in report:
                verdicts[i] = err
        else:
            singles = sandbox.run_many(list(group))
            verdicts = [None if r.passed else (r.detail or str(r.verdict)) for r in singles]
        out.append(verdicts)
    return out
