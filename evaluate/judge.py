"""Verdicts decided outside the program: the sandbox computes, benchsmith judges (the EvalPlus way).

``plan_tests`` parses a HumanExtension/HumanEval-style test module (``def check(candidate): assert ...`` plus
``check(name)`` or ``def test_check(): check(name)`` / ``test_check()``) into the candidate calls it makes and
the assertions over their results.  The call arguments are evaluated here, by a small evaluator that knows only
plain data and a few pure builtins (``SafeEval``), and sent to the sandbox; the sandboxed run
(``judge_harness.py``) calls the candidate on each input and sends back what it returned, as plain data
(None/bool/int/float/complex/str/bytes/list/tuple/dict/set/frozenset, checked with exact types: an ``int``
subclass with an ``__eq__`` that is always true is not plain data and fails; ``OrderedDict``/``defaultdict``,
which compare with a dict as a dict does, travel as dicts).  ``judge`` then evaluates every
assertion *here*, with each candidate call replaced by the decoded value, in the tests' order: the first
assertion that is false, or whose call raised, decides the verdict, as the original ``assert`` would.

So the expected values never enter the sandbox (a program can read its own source and memory: the tests are
not in either), and nothing the program prints, how it exits, or what runs at exit changes a verdict.
Comparison is the original assertion's: ``==`` on plain data, so ``1 == 1.0`` and ``[0.1 + 0.2] != [0.3]``, and
a NaN never equals anything (a test that expects NaN with ``==`` fails for every program, as it did before).

Tests of another shape (statements other than asserts in ``check``, helpers, names the evaluator does not know)
are not judgeable here: ``plan_tests`` says why, and the caller runs them the old way (exit status + marker),
counting them separately.
"""

from __future__ import annotations

import ast
import json
import math
import operator
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from benchsmith.evaluate.sandbox import HARNESS_MODULE, ExecResult, Verdict

CALL = "_bs_call_"
RECORD_LIMIT = 1 << 20  # bytes of one encoded return value
SEQ_LIMIT = 1 << 20  # elements/characters a parent-side operation may create
STEP_LIMIT = 2_000_000  # AST nodes one assertion may evaluate (lambdas called per element included)
_HARNESS = (Path(__file__).with_name("judge_harness.py")).read_text(encoding="utf-8")


class NotJudgeable(ValueError):
    """The tests have a shape this module does not judge; the message says what."""


class EvalError(Exception):
    """An assertion could not be evaluated on the returned values (the assertion then fails)."""


class _CallFailed(Exception):
    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


class _Missing(Exception):
    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


# ------------------------------------------------------------------------------------------------ plain data

_PLAIN_TAGS = ("tuple", "dict", "set", "frozenset", "complex", "bytes")


def is_plain(value: Any, depth: int = 0) -> bool:
    if depth > 100:
        return False
    t = type(value)
    if value is None or t in (bool, int, float, str, complex, bytes):
        return True
    if t in (list, tuple, set, frozenset):
        return all(is_plain(x, depth + 1) for x in value)
    if t is dict:
        return all(is_plain(k, depth + 1) and is_plain(v, depth + 1) for k, v in value.items())
    return False


def encode(value: Any) -> Any:
    """Tagged JSON for plain data (the harness has its own copy: it cannot import benchsmith)."""
    t = type(value)
    if value is None or t in (bool, int, float, str):
        return value
    if t is list:
        return [encode(x) for x in value]
    if t is tuple:
        return {"tuple": [encode(x) for x in value]}
    if t is dict:
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if t in (set, frozenset):
        return {t.__name__: [encode(x) for x in sorted(value, key=repr)]}
    if t is complex:
        return {"complex": [value.real, value.imag]}
    if t is bytes:
        return {"bytes": value.hex()}
    raise NotJudgeable(f"argument of type {t.__name__} is not plain data")


def decode(obj: Any, depth: int = 0) -> Any:
    """Plain data from what the sandbox sent: every JSON object must be one known tag; nothing else is made."""
    if depth > 110:
        raise EvalError("value nested too deeply")
    t = type(obj)
    if obj is None or t in (bool, int, float, str):
        return obj
    if t is list:
        return [decode(x, depth + 1) for x in obj]
    if t is dict and len(obj) == 1:
        (tag, body), = obj.items()
        try:
            if tag == "tuple" and type(body) is list:
                return tuple(decode(x, depth + 1) for x in body)
            if tag == "dict" and type(body) is list:
                out = {}
                for pair in body:
                    if type(pair) is not list or len(pair) != 2:
                        raise EvalError("malformed dict entry")
                    out[decode(pair[0], depth + 1)] = decode(pair[1], depth + 1)
                return out
            if tag in ("set", "frozenset") and type(body) is list:
                items = [decode(x, depth + 1) for x in body]
                return set(items) if tag == "set" else frozenset(items)
            if tag == "complex" and type(body) is list and len(body) == 2 and all(type(x) is float for x in body):
                return complex(body[0], body[1])
            if tag == "bytes" and type(body) is str:
                return bytes.fromhex(body)
        except (TypeError, ValueError) as exc:  # an unhashable key or element, bad hex
            raise EvalError(f"malformed {tag}: {exc}") from None
    raise EvalError("not plain data")


# ------------------------------------------------------------------------------------------ safe evaluation


def _bounded_range(*args: Any) -> range:
    r = range(*args)
    if len(r) > SEQ_LIMIT:
        raise EvalError(f"range of {len(r)} elements")
    return r


def _guard_size(value: Any) -> Any:
    if isinstance(value, (str, bytes, list, tuple, set, frozenset, dict)) and len(value) > SEQ_LIMIT:
        raise EvalError(f"intermediate value of {len(value)} elements")
    return value


def _mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, (str, bytes, list, tuple)) and type(n) in (int, bool):
            if len(seq) * max(n, 0) > SEQ_LIMIT:
                raise EvalError("sequence repetition too large")
    return a * b


def _pow(a: Any, b: Any) -> Any:
    if type(a) in (int, bool) and type(b) in (int, bool) and b > 0:
        if max(abs(a), 2).bit_length() * b > 1 << 16:
            raise EvalError("power too large")
    return a ** b


def _lshift(a: Any, b: Any) -> Any:
    if type(b) is int and b > 1 << 16:
        raise EvalError("shift too large")
    return a << b


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: _mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _pow, ast.LShift: _lshift,
    ast.RShift: operator.rshift, ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.Not: operator.not_, ast.USub: operator.neg,
                                            ast.UAdd: operator.pos, ast.Invert: operator.invert}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
    ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
# pure builtins over plain data; everything that makes a collection is size-checked after the call
_FUNCS: dict[str, Callable[..., Any]] = {
    "abs": abs, "round": round, "len": len, "list": list, "tuple": tuple, "set": set, "frozenset": frozenset,
    "sorted": sorted, "sum": sum, "min": min, "max": max, "map": map, "filter": filter, "str": str, "int": int,
    "float": float, "bool": bool, "dict": dict, "reversed": reversed, "enumerate": enumerate, "zip": zip,
    "any": any, "all": all, "range": _bounded_range, "repr": repr, "chr": chr, "ord": ord, "divmod": divmod,
}
_MATH = {name: getattr(math, name) for name in ("isclose", "isnan", "isinf", "isfinite", "sqrt", "floor", "ceil",
                                                  "fabs", "trunc", "log", "exp", "gcd")}
_MATH_CONSTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "tau": math.tau}
_SINGLETONS = (None, True, False, Ellipsis)


class SafeEval:
    """Evaluates one assertion over plain data; knows literals, operators, a few builtins and ``math``
    functions, lambdas and the placeholders of candidate calls.  Never imports, never touches attributes of
    values, never calls anything but the functions above and its own lambdas."""

    def __init__(self, fetch: Callable[[int], Any] | None = None, math_names: frozenset[str] = frozenset()):
        self.fetch = fetch
        self.math_names = math_names
        self.steps = 0

    def eval(self, node: ast.AST, env: dict[str, Any] | None = None) -> Any:
        self.steps += 1
        if self.steps > STEP_LIMIT:
            raise EvalError("assertion too expensive to evaluate")
        env = env or {}
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            if node.id.startswith(CALL) and self.fetch is not None:
                return self.fetch(int(node.id[len(CALL):]))
            if node.id in _FUNCS:
                return _FUNCS[node.id]
            raise EvalError(f"unknown name {node.id!r}")
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    items.extend(self.eval(elt.value, env))
                else:
                    items.append(self.eval(elt, env))
            _guard_size(items)
            return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise EvalError("dict unpacking")
            return {self.eval(k, env): self.eval(v, env) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.UnaryOp):
            return _UNARY[type(node.op)](self.eval(node.operand, env))
        if isinstance(node, ast.BinOp):
            return _guard_size(_BINOPS[type(node.op)](self.eval(node.left, env), self.eval(node.right, env)))
        if isinstance(node, ast.BoolOp):
            value: Any = None
            for operand in node.values:
                value = self.eval(operand, env)
                if isinstance(node.op, ast.And) and not value:
                    return value
                if isinstance(node.op, ast.Or) and value:
                    return value
            return value
        if isinstance(node, ast.Compare):
            left = self.eval(node.left, env)
            for op, comp in zip(node.ops, node.comparators):
                right = self.eval(comp, env)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self.eval(node.body if self.eval(node.test, env) else node.orelse, env)
        if isinstance(node, ast.Subscript):
            return self.eval(node.value, env)[self.eval(node.slice, env)]
        if isinstance(node, ast.Slice):
            return slice(*(None if x is None else self.eval(x, env) for x in (node.lower, node.upper, node.step)))
        if isinstance(node, ast.Lambda):
            params = [a.arg for a in node.args.args]

            def fn(*args: Any) -> Any:
                if len(args) != len(params):
                    raise EvalError("lambda called with the wrong number of arguments")
                return self.eval(node.body, {**env, **dict(zip(params, args))})

            return fn
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "math" and "math" in self.math_names:
                if node.attr in _MATH:
                    return _MATH[node.attr]
                if node.attr in _MATH_CONSTS:
                    return _MATH_CONSTS[node.attr]
            raise EvalError(f"attribute {node.attr!r}")
        if isinstance(node, ast.Call):
            fn = self.eval(node.func, env)
            args = [self.eval(a, env) for a in node.args]
            kwargs = {k.arg: self.eval(k.value, env) for k in node.keywords}
            return _guard_size(fn(*args, **kwargs))
        raise EvalError(f"{type(node).__name__} is not evaluated here")


_ALLOWED_NODES = (ast.Constant, ast.Name, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.UnaryOp, ast.BinOp,
                  ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript, ast.Slice, ast.Lambda, ast.Attribute,
                  ast.Call, ast.Starred, ast.Load, ast.arguments, ast.arg, ast.expr_context, ast.operator,
                  ast.unaryop, ast.boolop, ast.cmpop, ast.keyword)


def _check_structure(expr: ast.AST, params: set[str], math_names: frozenset[str]) -> None:
    """Reject, before anything runs, what SafeEval would not evaluate (so those tests take the other path)."""
    for node in ast.walk(expr):
        if not isinstance(node, _ALLOWED_NODES):
            raise NotJudgeable(f"{type(node).__name__} in an assertion")
        if isinstance(node, ast.Lambda):
            a = node.args
            if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults:
                raise NotJudgeable("a lambda with more than plain parameters")
            params |= {x.arg for x in a.args}
        if isinstance(node, ast.Call) and any(k.arg is None for k in node.keywords):
            raise NotJudgeable("**kwargs in an assertion")
        if isinstance(node, ast.Attribute) and not (
                isinstance(node.value, ast.Name) and node.value.id in math_names
                and (node.attr in _MATH or node.attr in _MATH_CONSTS)):
            raise NotJudgeable(f"attribute .{node.attr} in an assertion")
        if isinstance(node, ast.Compare):
            for op, comp in zip(node.ops, node.comparators):
                if isinstance(op, (ast.Is, ast.IsNot)):
                    sides = [node.left, comp]
                    if not any(isinstance(s, ast.Constant) and any(s.value is x for x in _SINGLETONS)
                               for s in sides):
                        raise NotJudgeable("`is` with something other than None/True/False")
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and not (node.id in _FUNCS or node.id in params or node.id.startswith(CALL)
                                               or node.id in math_names):
            raise NotJudgeable(f"name {node.id!r} in an assertion")


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
            _check_structure(expr, set(), frozen_math)
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
                    _check_structure(sub, set(), math_names)
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


def _records(stdout: str, calls: int) -> tuple[dict[int, dict], dict[str, Any], str | None]:
    """(call records by index, trailer fields, protocol violation)."""
    records: dict[int, dict] = {}
    trailer: dict[str, Any] = {}
    for n, line in enumerate(stdout.splitlines()):
        try:
            rec = json.loads(line)
        except ValueError:
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
    """The verdict of one sandboxed run of ``harness_program``."""
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
            raise _Missing(k)
        if "error" in rec:
            raise _CallFailed(k, f"raised {rec['error']}")
        if "not_plain" in rec:
            raise _CallFailed(k, f"returned a {rec['not_plain']}, not plain data")
        if "too_large" in rec:
            raise _CallFailed(k, f"returned a value of {rec['too_large']} bytes (limit {RECORD_LIMIT})")
        try:
            cache[k] = decode(rec["v"])
        except EvalError as exc:
            raise _CallFailed(k, f"sent {exc}") from None
        return cache[k]

    for check in plan.checks:
        evaluator = SafeEval(fetch, plan.math_names)
        try:
            ok = bool(evaluator.eval(check.expr))
        except _Missing as missing:
            return _incomplete(check, missing.index, result, trailer)
        except _CallFailed as failed:
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


__all__ = ["TestPlan", "Check", "CandidateCall", "Judgment", "NotJudgeable", "plan_tests", "try_plan",
           "harness_program", "judge", "SafeEval", "decode", "encode", "is_plain"]
