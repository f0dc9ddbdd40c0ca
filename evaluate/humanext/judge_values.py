"""The judge's values: plain data as tagged JSON between the sandbox and here (``encode``/``decode``, with exact
types), and ``SafeEval``, the small evaluator of call arguments and assertions that knows only plain data and a few
pure builtins, with bounds on the sizes and steps one assertion may cost."""

from __future__ import annotations

import ast
import decimal
import fractions
import math
import operator
from collections import Counter
from typing import Any, Callable, Iterable

CALL = "_bs_call_"
RECORD_LIMIT = 1 << 20  # bytes of one encoded return value
SEQ_LIMIT = 1 << 20  # elements/characters a parent-side operation may create
STEP_LIMIT = 2_000_000  # AST nodes one assertion may evaluate (lambdas called per element included)
# elements of one set or dict that may share a hash value: honest data never has more than a handful, while
# crafted ones (multiples of 2**61 - 1 all hash to 0) make building the collection quadratic in the parent
COLLISION_LIMIT = 64
DECIMAL_CHARS = 10_000  # a Decimal's text
DECIMAL_EXPONENT = 4300  # |adjusted exponent| of a Decimal: int() of it stays within Python's own digit limit


class NotJudgeable(ValueError):
    """The tests have a shape this module does not judge; the message says what."""


class EvalError(Exception):
    """An assertion could not be evaluated on the returned values (the assertion then fails)."""


class CallFailed(Exception):
    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index


class Missing(Exception):
    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


# ------------------------------------------------------------------------------------------------ plain data


def check_collisions(items: Iterable[Any]) -> list[Any]:
    """``items`` as a list, refused (``EvalError``) when more than ``COLLISION_LIMIT`` share a hash value: building
    a set or dict of them would cost the parent quadratic time.  Unhashable items are left to the caller."""
    items = list(items)
    if len(items) > COLLISION_LIMIT:
        hashes: Counter[int] = Counter()
        for item in items:
            try:
                hashes[hash(item)] += 1
            except TypeError:
                continue
        if hashes and max(hashes.values()) > COLLISION_LIMIT:
            raise EvalError(f"a set or dict whose {max(hashes.values())} elements share one hash value")
    return items

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
                if any(type(pair) is not list or len(pair) != 2 for pair in body):
                    raise EvalError("malformed dict entry")
                keys = check_collisions(decode(pair[0], depth + 1) for pair in body)
                return dict(zip(keys, (decode(pair[1], depth + 1) for pair in body)))
            if tag in ("set", "frozenset") and type(body) is list:
                items = check_collisions(decode(x, depth + 1) for x in body)
                return set(items) if tag == "set" else frozenset(items)
            if tag == "decimal" and type(body) is str and len(body) <= DECIMAL_CHARS:
                value = decimal.Decimal(body)
                if value.is_finite() and abs(value.adjusted()) > DECIMAL_EXPONENT:
                    raise EvalError(f"decimal exponent {value.adjusted()} out of range")
                return value
            if (tag == "fraction" and type(body) is list and len(body) == 2 and all(type(x) is int for x in body)
                    and body[1] > 0):
                return fractions.Fraction(body[0], body[1])
            if tag == "complex" and type(body) is list and len(body) == 2 and all(type(x) is float for x in body):
                return complex(body[0], body[1])
            if tag == "bytes" and type(body) is str:
                return bytes.fromhex(body)
        except (TypeError, ValueError, ArithmeticError) as exc:  # an unhashable key or element, bad hex/decimal
            raise EvalError(f"malformed {tag}: {exc}") from None
    raise EvalError("not plain data")


# ------------------------------------------------------------------------------------------ safe evaluation


def _bounded_range(*args: Any) -> range:
    r = range(*args)
    if len(r) > SEQ_LIMIT:
        raise EvalError(f"range of {len(r)} elements")
    return r


def _guard_size(value: Any) -> Any:
    _fraction_size(value)
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
    # an int to a negative power is a float (cheap); a Fraction's stays exact either way
    if (type(a) in (int, bool) and type(b) in (int, bool) and b > 0
            or type(a) is fractions.Fraction and type(b) in (int, bool)):
        size = max(abs(a.numerator), a.denominator, 2).bit_length()
        if size * abs(b) > 1 << 16:
            raise EvalError("power too large")
    return a ** b


def _fraction_size(value: Any) -> None:
    if type(value) is fractions.Fraction and max(abs(value.numerator), value.denominator).bit_length() > 1 << 16:
        raise EvalError("fraction too large")


def _sum(items: Iterable[Any], start: Any = 0) -> Any:
    """``sum``; over Fractions added one at a time with a size check (1/p for 40k primes would grow a
    denominator of 200k digits, every addition a slower gcd), otherwise the builtin's own result."""
    items = list(items)
    if type(start) is not fractions.Fraction and not any(type(x) is fractions.Fraction for x in items):
        return sum(items, start)
    total = start
    for x in items:
        total = total + x
        _fraction_size(total)
    return total


def _set(items: Iterable[Any] = ()) -> set:
    return set(check_collisions(items))


def _frozenset(items: Iterable[Any] = ()) -> frozenset:
    return frozenset(check_collisions(items))


def _dict(*args: Any, **kwargs: Any) -> dict:
    if len(args) == 1 and type(args[0]) is not dict:
        pairs = list(args[0])
        check_collisions(p[0] for p in pairs if type(p) in (list, tuple) and len(p) == 2)
        args = (pairs,)
    return dict(*args, **kwargs)


_LINEAR = (list, tuple, str, bytes, range)


def _cost(value: Any, membership: bool = False) -> int:
    """Steps charged for comparing with ``value``, searching it, or passing it to a builtin: its length (elements
    visited one by one), except that a set or dict finds an element by its hash."""
    kinds = _LINEAR if membership else _LINEAR + (set, frozenset, dict)
    return len(value) if isinstance(value, kinds) else 0


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
    "abs": abs, "round": round, "len": len, "list": list, "tuple": tuple, "set": _set, "frozenset": _frozenset,
    "sorted": sorted, "sum": _sum, "min": min, "max": max, "map": map, "filter": filter, "str": str, "int": int,
    "float": float, "bool": bool, "dict": _dict, "reversed": reversed, "enumerate": enumerate, "zip": zip,
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
            return {ast.List: list, ast.Tuple: tuple, ast.Set: _set}[type(node)](items)
        if isinstance(node, ast.Dict):
            if any(k is None for k in node.keys):
                raise EvalError("dict unpacking")
            return _dict([(self.eval(k, env), self.eval(v, env)) for k, v in zip(node.keys, node.values)])
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
                if isinstance(op, (ast.In, ast.NotIn)):
                    self.steps += _cost(right, True)
                else:
                    self.steps += min(_cost(left), _cost(right))
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
            self.steps += sum(map(_cost, args))  # set(xs), sorted(xs), sum(xs): one step per element
            return _guard_size(fn(*args, **kwargs))
        raise EvalError(f"{type(node).__name__} is not evaluated here")


_ALLOWED_NODES = (ast.Constant, ast.Name, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.UnaryOp, ast.BinOp,
                  ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript, ast.Slice, ast.Lambda, ast.Attribute,
                  ast.Call, ast.Starred, ast.Load, ast.arguments, ast.arg, ast.expr_context, ast.operator,
                  ast.unaryop, ast.boolop, ast.cmpop, ast.keyword)


def check_structure(expr: ast.AST, params: set[str], math_names: frozenset[str]) -> None:
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
