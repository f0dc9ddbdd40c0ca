"""Verdicts decided outside the program: the sandbox computes, benchsmith judges (the EvalPlus way).

``plan_tests`` parses a HumanExtension/HumanEval-style test module (``def check(candidate): assert ...`` plus
``check(name)`` or ``def test_check(): check(name)`` / ``test_check()``) into the candidate calls it makes and
the assertions over their results.  The call arguments are evaluated here, by a small evaluator that knows only
plain data and a few pure builtins (``SafeEval``), and sent to the sandbox; the sandboxed run
(``judge_harness.py``) calls the candidate on each input and sends back what it returned, as plain data
(None/bool/int/float/complex/str/bytes/list/tuple/dict/set/frozenset, checked with exact types: an ``int``
subclass with an ``__eq__`` that is always true is not plain data and fails).  Values of well-known types travel as
the plain data the tests' ``==`` compares them as, taken apart by structure in the harness: ``OrderedDict``,
``defaultdict`` and ``Counter`` as dicts, namedtuples (no class of theirs defining a comparison or hash) as tuples,
numpy scalars and 0-d arrays as their ``item()``, ``Decimal``/``Fraction`` exactly (tagged, rebuilt here); a type
whose equality or hashing the candidate defines is still not plain data.  ``judge`` then evaluates every
assertion *here*, with each candidate call replaced by the decoded value, in the tests' order: the first
assertion that is false, or whose call raised, decides the verdict, as the original ``assert`` would.

So the expected values never enter the sandbox (a program can read its own source and memory: the tests are
not in either), and nothing the program prints, how it exits, or what runs at exit changes a verdict.
Comparison is the original assertion's: ``==`` on plain data, so ``1 == 1.0`` and ``[0.1 + 0.2] != [0.3]``, and
a NaN never equals anything (a test that expects NaN with ``==`` fails for every program, as it did before).

Everything here is bounded (record sizes and nesting, hash collisions in sets and dicts, steps charged per
element visited, sizes of numbers), and a run whose results still break judging gets the ``judge_error`` verdict,
recorded with what broke, never an exception that would lose the report.

Tests of another shape (statements other than asserts in ``check``, helpers, names the evaluator does not know)
are not judgeable here: ``plan_tests`` says why, and the caller runs them the old way (exit status + marker),
counting them separately.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.evaluate.humanext.judge_values import (CALL, RECORD_LIMIT, CallFailed, EvalError, Missing,
                                                       NotJudgeable, SafeEval, check_structure, decode, encode,
                                                       is_plain)
from benchsmith.evaluate.sandbox import HARNESS_MODULE, ExecResult, Verdict

_HARNESS = (Path(__file__).with_name("judge_harness.py")).read_text(encoding="utf-8")
# ----------------------------------------------------------------------------------------------- test plans


@dataclass(frozen=True)
class CandidateCall:
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Check:
    line: int  # 1-based, within the tests
    source: str  # the assert statement
    expr: ast.expr  # the asserted expression, candidate calls replaced by placeholders
    calls: tuple[int, ...]  # indices into TestPlan.calls, in evaluation order


@dataclass(frozen=True)
class TestPlan:
    entry: str  # the function the tests pass as the candidate
    calls: tuple[CandidateCall, ...]
    checks: tuple[Check, ...]
    math_names: frozenset[str] = frozenset()


def _checker_param(fn: ast.FunctionDef) -> str | None:
    a = fn.args
    if fn.decorator_list or a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or len(a.args) != 1:
        return None
    return a.args[0].arg


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def plan_tests(tests: str, entry_point: str | None = None) -> TestPlan:
    """The candidate calls and assertions of ``tests``; ``NotJudgeable`` (with the reason) for other shapes."""
    try:
        tree = ast.parse(tests)
    except SyntaxError as exc:
        raise NotJudgeable(f"tests do not parse: {exc.msg}") from None
    checkers: dict[str, ast.FunctionDef] = {}
    runners: dict[str, list[tuple[str, str]]] = {}
    invocations: list[tuple[str, str]] = []
    math_names: set[str] = set()

    def invocation(call: ast.AST) -> list[tuple[str, str]]:
        """``check(name)`` -> [(check, name)]; ``test_check()`` -> its checks."""
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and not call.keywords):
            raise NotJudgeable(f"statement {ast.unparse(call)[:80]!r}")
        name = call.func.id
        if name in checkers and len(call.args) == 1 and isinstance(call.args[0], ast.Name):
            return [(name, call.args[0].id)]
        if name in runners and not call.args:
            return runners[name]
        raise NotJudgeable(f"call {ast.unparse(call)[:80]!r} is not a check")

    for stmt in tree.body:
        if _is_docstring(stmt) or isinstance(stmt, ast.Pass):
            continue
        if isinstance(stmt, ast.Import) and all(a.name == "math" for a in stmt.names):
            math_names |= {a.asname or a.name for a in stmt.names}
            continue
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id.isupper()):
            continue  # METADATA = {...}: data about the tests, used by no assertion (names are checked below)
        if isinstance(stmt, ast.FunctionDef):
            if _checker_param(stmt) is not None:
                checkers[stmt.name] = stmt
                continue
            a = stmt.args
            if not (a.args or a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or stmt.decorator_list):
                body = [s for s in stmt.body if not _is_docstring(s)]
                if body and all(isinstance(s, ast.Expr) for s in body):
                    runners[stmt.name] = [x for s in body for x in invocation(s.value)]
                    continue
            raise NotJudgeable(f"function {stmt.name!r} is neither a check nor a runner of checks")
        if isinstance(stmt, ast.Expr):
            invocations.extend(invocation(stmt.value))
            continue
        raise NotJudgeable(f"{type(stmt).__name__} statement at line {stmt.lineno}")
    if not invocations:
        raise NotJudgeable("the tests never call a check")
    entries = {name for _, name in invocations}
    if len(entries) != 1:
        raise NotJudgeable(f"the checks are called with {len(entries)} different candidates")
    entry = entries.pop()
    calls: list[CandidateCall] = []
    checks: list[Check] = []
    frozen_math = frozenset(math_names)
    lines = [ln.encode("utf-8") for ln in re.split(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)", tests)]
    for checker_name, _ in invocations:
        fn = checkers[checker_name]
        param = _checker_param(fn)
        for stmt in fn.body:
            if _is_docstring(stmt) or isinstance(stmt, ast.Pass):
                continue
            if not isinstance(stmt, ast.Assert):
                raise NotJudgeable(f"{type(stmt).__name__} statement in {checker_name}() at line {stmt.lineno}")
            expr, used = _replace_calls(stmt.test, param, calls, frozen_math)
            check_structure(expr, set(), frozen_math)
            if not used:
                raise NotJudgeable(f"assertion at line {stmt.lineno} does not call the candidate")
            checks.append(Check(stmt.lineno, _segment(lines, stmt) or ast.unparse(stmt), expr, tuple(used)))
    if not checks:
        raise NotJudgeable("no assertions")
    return TestPlan(entry, tuple(calls), tuple(checks), frozen_math)


def _segment(lines: list[bytes], node: ast.stmt) -> str | None:
    """``ast.get_source_segment`` with the lines split once (it splits the whole source per call); the
    offsets are UTF-8 byte offsets, as the parser gives them."""
    if node.end_lineno is None or node.end_col_offset is None:
        return None
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first][node.col_offset:node.end_col_offset].decode("utf-8")
    parts = [lines[first][node.col_offset:]] + lines[first + 1:last] + [lines[last][:node.end_col_offset]]
    return b"".join(parts).decode("utf-8")


def _replace_calls(test: ast.expr, param: str, calls: list[CandidateCall],
                   math_names: frozenset[str]) -> tuple[ast.expr, list[int]]:
    """Copy of ``test`` with each ``param(...)`` replaced by a placeholder; the arguments are evaluated now."""
    used: list[int] = []
    evaluator = SafeEval(math_names=math_names)

    class Replace(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            if isinstance(node.func, ast.Name) and node.func.id == param:
                for sub in node.args + [k.value for k in node.keywords]:
                    if any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(sub)):
                        raise NotJudgeable("a candidate call inside another's arguments")
                    check_structure(sub, set(), math_names)
                if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                    raise NotJudgeable("*args/**kwargs in a candidate call")
                try:
                    args = tuple(evaluator.eval(a) for a in node.args)
                    kwargs = tuple((k.arg, evaluator.eval(k.value)) for k in node.keywords)
                except Exception as exc:  # noqa: BLE001 - any failure means: not ours to judge
                    raise NotJudgeable(f"argument not evaluable here: {exc}") from None
                if not all(is_plain(v) for v in args + tuple(v for _, v in kwargs)):
                    raise NotJudgeable("an argument is not plain data")
                used.append(len(calls))
                calls.append(CandidateCall(args, kwargs))
                return ast.copy_location(ast.Name(id=f"{CALL}{used[-1]}", ctx=ast.Load()), node)
            return self.generic_visit(node)

    expr = Replace().visit(ast.parse(ast.unparse(test), mode="eval").body)
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id == param:
            raise NotJudgeable("the candidate is used other than by calling it")
    return expr, used


def harness_program(source: str, plan: TestPlan, record_limit: int = RECORD_LIMIT) -> str:
    """The program to run in the sandbox: the trusted harness, the untrusted source as data, the inputs."""
    cfg = {
        "source": source,
        "entry": plan.entry,
        # kwargs travel as a tagged dict: the harness decodes it into a real one
        "calls": [[[encode(a) for a in c.args], {"dict": [[k, encode(v)] for k, v in c.kwargs]}]
                  for c in plan.calls],
        "record_limit": record_limit,
    }
    # the fork server has the harness compiled already; elsewhere (exec modes, containers) it comes along
    return (f"try:\n    from {HARNESS_MODULE} import main\nexcept ImportError:\n"
            f"    exec(compile({_HARNESS!r}, 'judge_harness', 'exec'))\n"
            f"main({json.dumps(cfg)!r})\n")


# --------------------------------------------------------------------------------------------------- judging


@dataclass(frozen=True)
class Judgment:
    verdict: Verdict
    detail: str = ""
    line: int | None = None  # of the deciding assertion, within the tests
    assertion: str | None = None
    returned: str | None = None  # repr of the first candidate value of the failing assertion
    error: str | None = None  # what the call raised, or why the run produced no value

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASSED

    def cleaned(self) -> "Judgment":
        """Every text bounded and encodable as UTF-8 (a candidate's ``ValueError('\\udc80')`` reaches ``detail``;
        the report must still be written)."""
        return dataclasses.replace(self, detail=bounded_text(self.detail, 500),
                                   assertion=bounded_text(self.assertion, 1000),
                                   returned=bounded_text(self.returned, 1000), error=bounded_text(self.error, 300))


def bounded_text(value, limit: int):
    """``value`` cut to ``limit`` characters, lone surrogates escaped (the report is written as UTF-8)."""
    if value is None:
        return None
    return str(value)[:limit].encode("utf-8", "backslashreplace").decode("utf-8")


def _records(stdout: str, calls: int) -> tuple[dict[int, dict], dict[str, Any], str | None]:
    """(call records by index, trailer fields, protocol violation)."""
    records: dict[int, dict] = {}
    trailer: dict[str, Any] = {}
    for n, line in enumerate(stdout.splitlines()):
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):  # nesting deeper than this process's stack, digits over the limit
            return records, trailer, f"unreadable line {n + 1} on the results channel"
        if type(rec) is not dict:
            return records, trailer, f"line {n + 1} on the results channel is not a record"
        if "i" in rec:
            if "done" in trailer or rec["i"] != len(records) or len(records) >= calls:
                return records, trailer, f"record for call {rec['i']!r} out of order"
            records[rec["i"]] = rec
        else:
            trailer.update(rec)
    if "done" in trailer and trailer["done"] != len(records):
        return records, trailer, "record count does not match"
    return records, trailer, None


def judge(plan: TestPlan, result: ExecResult) -> Judgment:
    """The verdict of one sandboxed run of ``harness_program``; a run whose results break judging itself gets
    ``judge_error`` (recorded with what broke), never an exception."""
    try:
        judgment = _judge(plan, result)
    except Exception as exc:  # noqa: BLE001 - one sample must never lose the report
        judgment = Judgment(Verdict.JUDGE_ERROR, f"judging failed: {type(exc).__name__}: {exc}",
                            error=f"{type(exc).__name__}: {exc}")
    return judgment.cleaned()


def _judge(plan: TestPlan, result: ExecResult) -> Judgment:
    if result.verdict is Verdict.ERROR:
        return Judgment(Verdict.ERROR, result.detail, error=result.detail)
    records, trailer, violation = _records(result.stdout, len(plan.calls))
    if violation:
        return Judgment(Verdict.FAILED, f"results channel: {violation}", error=violation)
    if "harness_error" in trailer:
        return Judgment(Verdict.ERROR, f"harness: {trailer['harness_error']}", error=str(trailer["harness_error"]))
    cache: dict[int, Any] = {}

    def fetch(k: int) -> Any:
        if k in cache:
            return cache[k]
        rec = records.get(k)
        if rec is None:
            raise Missing(k)
        if "error" in rec:
            raise CallFailed(k, f"raised {rec['error']}")
        if "not_plain" in rec:
            raise CallFailed(k, f"returned a {rec['not_plain']}, not plain data")
        if "too_large" in rec:
            raise CallFailed(k, f"returned a value of {rec['too_large']} bytes (limit {RECORD_LIMIT})")
        try:
            cache[k] = decode(rec["v"])
        except EvalError as exc:
            raise CallFailed(k, f"sent {exc}") from None
        return cache[k]

    for check in plan.checks:
        evaluator = SafeEval(fetch, plan.math_names)
        try:
            ok = bool(evaluator.eval(check.expr))
        except Missing as missing:
            return _incomplete(check, missing.index, result, trailer)
        except CallFailed as failed:
            return Judgment(Verdict.FAILED, f"{check.source}: the candidate {failed}", check.line, check.source,
                            error=str(failed).removeprefix("raised "))
        except Exception as exc:  # noqa: BLE001 - what the original assert would have raised, on plain data
            return Judgment(Verdict.FAILED, f"{check.source}: {type(exc).__name__}: {str(exc)[:200]}", check.line,
                            check.source, _returned(check, cache), error=f"{type(exc).__name__}: {exc}"[:300])
        if not ok:
            returned = _returned(check, cache)
            return Judgment(Verdict.FAILED, f"{check.source}: returned {returned}"[:500], check.line, check.source,
                            returned)
    if "done" not in trailer:
        return Judgment(Verdict.FAILED, "results channel: no end record", error="no end record")
    return Judgment(Verdict.PASSED)


def _returned(check: Check, cache: dict[int, Any]) -> str | None:
    for k in check.calls:
        if k in cache:
            return repr(cache[k])[:1000]
    return None


def _incomplete(check: Check, index: int, result: ExecResult, trailer: dict[str, Any]) -> Judgment:
    """No value for a call the assertion needs: the run's own verdict says why (timeout, memory, output)."""
    if "fatal" in trailer:
        why = f"the program failed before the tests ran: {trailer['fatal']}"
        return Judgment(Verdict.FAILED, why, check.line, check.source, error=str(trailer["fatal"]))
    if result.verdict in (Verdict.TIMEOUT, Verdict.MEMORY, Verdict.OUTPUT_LIMIT):
        return Judgment(result.verdict, result.detail, check.line, check.source, error=result.detail)
    if "violation" in trailer:
        return Judgment(Verdict.FAILED, f"results channel: {trailer['violation']}", check.line, check.source,
                        error=str(trailer["violation"]))
    how = trailer.get("end") or result.detail or f"exit status {result.returncode}"
    return Judgment(Verdict.FAILED, f"{check.source}: the program ended ({how}) before call {index} returned",
                    check.line, check.source, error=f"the program ended ({how})")


def try_plan(tests: str, entry_point: str | None = None) -> tuple[TestPlan | None, str | None]:
    """(plan, None) or (None, why the tests take the exit-status path)."""
    try:
        return plan_tests(tests, entry_point), None
    except NotJudgeable as exc:
        return None, str(exc)
    except (ValueError, RecursionError, MemoryError) as exc:  # tests nested past the parser's stack
        return None, f"tests not parsed here: {type(exc).__name__}"


__all__ = ["TestPlan", "Check", "CandidateCall", "Judgment", "NotJudgeable", "plan_tests", "try_plan",
           "harness_program", "judge", "SafeEval", "decode", "encode", "is_plain"]
