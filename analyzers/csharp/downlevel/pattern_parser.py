"""C# 8-9 patterns read from the token stream with C#'s own precedence (tree-sitter-c-sharp 0.23.5 lets a constant
pattern swallow what follows it: ``o is not null && x`` parses as ``not (null && x)``); a pattern ends at the first
token that cannot continue it."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchsmith.analyzers.csharp.downlevel.core import Tok


PREDEFINED = frozenset({"bool", "byte", "sbyte", "char", "decimal", "double", "float", "int", "uint", "long",
                        "ulong", "short", "ushort", "object", "string", "void", "dynamic", "nint", "nuint"})
NOT_DESIGNATION = frozenset({"and", "or", "not", "when", "with", "switch", "is", "as", "in"})
RELOPS = frozenset({"<", "<=", ">", ">="})
OPERAND_START_KW = frozenset({"typeof", "nameof", "default", "sizeof", "checked", "unchecked", "true", "false",
                              "null", "this", "base"})
BINARY_ARITH = frozenset({"+", "-", "*", "/", "%", "<<"})


EQUALS = "global::System.Object.Equals"


class Unsupportable(Exception):
    pass


@dataclass
class P:
    kind: str  # const, decl, var, discard, rel, not, and, or, paren, rec, list
    start: int  # token indices [start, end)
    end: int
    op: int = -1  # token index of the keyword / operator / name
    kids: list = field(default_factory=list)
    # rec: type tokens [start, type_end), positional (open, close, items), props (open, close, items), designation
    type_end: int = -1
    positional: tuple | None = None
    props: tuple | None = None
    desig: int = -1


def _native(p: P) -> bool:
    """Patterns mcs reads: a constant or type, ``Type name``, ``var name``."""
    return p.kind in ("const", "decl", "var")


class Parser:
    def __init__(self, toks: list[Tok], limit: int) -> None:
        self.t, self.limit = toks, limit

    def text(self, i: int) -> str:
        return self.t[i].text if i < self.limit else ""

    def pattern(self, i: int) -> tuple[P, int]:
        left, i = self.conj(i)
        while self.text(i) == "or":
            op = i
            right, i = self.conj(i + 1)
            left = P("or", left.start, i, op, [left, right])
        return left, i

    def conj(self, i: int) -> tuple[P, int]:
        left, i = self.neg(i)
        while self.text(i) == "and":
            op = i
            right, i = self.neg(i + 1)
            left = P("and", left.start, i, op, [left, right])
        return left, i

    def neg(self, i: int) -> tuple[P, int]:
        if self.text(i) == "not":
            inner, j = self.neg(i + 1)
            return P("not", i, j, i, [inner]), j
        return self.primary(i)

    def primary(self, i: int) -> tuple[P, int]:
        tx = self.text(i)
        if tx == "":
            raise Unsupportable("pattern ends early")
        if tx in RELOPS:
            j = self.operand(i + 1)
            return P("rel", i, j, i), j
        if tx == "[":  # list pattern: items (``..`` slices) kept for their names, matched lossily
            items, j = [], i + 1
            while self.text(j) != "]":
                if self.text(j) == "..":
                    if self.text(j + 1) in (",", "]"):
                        items.append(P("slice", j, j + 1, j))
                        j += 1
                    else:
                        sub, k = self.pattern(j + 1)
                        items.append(P("slice", j, k, j, [sub]))
                        j = k
                else:
                    sub, j = self.pattern(j)
                    items.append(sub)
                if self.text(j) == ",":
                    j += 1
                elif self.text(j) != "]":
                    raise Unsupportable("list pattern not closed")
            p = P("list", i, j + 1, i, items)
            p.positional = (i, j, items)
            if self._is_designation(j + 1):
                p.desig = j + 1
                p.end = j + 2
            return p, p.end
        if tx == "var":
            if self.text(i + 1) == "_":
                return P("discard", i, i + 2, i), i + 2
            if self.t[i + 1].type == "identifier" if i + 1 < self.limit else False:
                return P("var", i, i + 2, i), i + 2
            raise Unsupportable("var deconstruction pattern")
        if tx == "_" and self.text(i + 1) not in (".", "(", "<", "[", "::"):
            return P("discard", i, i + 1, i), i + 1
        if tx == "(":
            inner, j = self.pattern(i + 1)
            if self.text(j) == ")":
                p = P("paren", i, j + 1, i, [inner])
                if self.text(j + 1) in ("{",) or self._is_designation(j + 1):
                    raise Unsupportable("parenthesized pattern followed by more")
                return p, j + 1
            if self.text(j) == ",":
                items, j = self._positional_rest(i, inner, j)
                return self._rec_tail(P("rec", i, j, type_end=i, positional=items), j)
            raise Unsupportable("unbalanced pattern parentheses")
        if tx == "{":
            return self._rec_tail(P("rec", i, i, type_end=i), i)
        j = self.operand(i)
        nx = self.text(j)
        if nx == "(":  # ``Type(p1, p2)``: a Deconstruct mcs cannot call; the type is tested, the items are lossy
            inner, k = self.pattern(j + 1)
            items, k = self._positional_rest(j, inner, k) if self.text(k) == "," else ((j, k, [inner]), k + 1)
            if self.text(k - 1) != ")":
                raise Unsupportable("typed positional pattern not closed")
            return self._rec_tail(P("rec", i, k, type_end=j, positional=items), k)
        if nx == "{":
            return self._rec_tail(P("rec", i, j, type_end=j), j)
        if self._is_designation(j):
            return P("decl", i, j + 1, j), j + 1
        return P("const", i, j), j

    def _is_designation(self, j: int) -> bool:
        return j < self.limit and self.t[j].type == "identifier" and self.t[j].text not in NOT_DESIGNATION

    def _positional_rest(self, open_i: int, first: P, j: int):
        items = [first]
        while self.text(j) == ",":
            if self.text(j + 2) == ":" and self.t[j + 1].type == "identifier":
                raise Unsupportable("named positional subpattern")
            p, j = self.pattern(j + 1)
            items.append(p)
        if self.text(j) != ")":
            raise Unsupportable("positional pattern not closed")
        return (open_i, j, items), j + 1

    def _rec_tail(self, p: P, j: int) -> tuple[P, int]:
        if self.text(j) == "{":
            open_i = j
            items = []
            j += 1
            while self.text(j) != "}":
                k = j
                while self.text(k) not in (":", "", "}", ",", "{", "(", ";"):
                    k += 1
                if self.text(k) != ":" or k == j:
                    raise Unsupportable("property subpattern without a name")
                sub, j2 = self.pattern(k + 1)
                items.append((j, k, sub))
                j = j2
                if self.text(j) == ",":
                    j += 1
                elif self.text(j) != "}":
                    raise Unsupportable("property pattern not closed")
            p.props = (open_i, j, items)
            j += 1
        if self._is_designation(j):
            p.desig = j
            j += 1
        p.end = j
        return p, j

    def operand(self, i: int) -> int:
        """The end of a constant expression or type starting at token ``i`` (shift-expression level)."""
        while self.text(i) in ("-", "+", "~", "!"):
            i += 1
        tok = self.t[i] if i < self.limit else None
        if tok is None:
            raise Unsupportable("missing operand")
        tx = tok.text
        if tx in ("typeof", "nameof", "default", "sizeof", "checked", "unchecked") and self.text(i + 1) == "(":
            i = self._skip_balanced(i + 1)
        elif tok.type == "identifier" or tx in PREDEFINED or tx in OPERAND_START_KW or tok.type.endswith("literal") \
                or tok.type == "interpolated_string_expression":
            i += 1
        elif tx == "(":
            i = self._skip_balanced(i)
        else:
            raise Unsupportable(f"unexpected {tx!r} in pattern")
        while True:
            tx = self.text(i)
            if tx in (".", "::", "?.") and i + 1 < self.limit and self.t[i + 1].type == "identifier":
                i += 2
            elif tx == "<" and self._generic_end(i) > 0:
                i = self._generic_end(i)
            elif tx == "[" and self.text(i + 1) in ("]", ","):
                while self.text(i) != "]" and i < self.limit:
                    i += 1
                i += 1
            elif tx in BINARY_ARITH and i + 1 < self.limit and self.text(i + 1) not in ("", ")", "}", ","):
                i = self.operand(i + 1)
            else:
                return i

    def _skip_balanced(self, i: int) -> int:
        depth = 0
        while i < self.limit:
            tx = self.text(i)
            if tx in ("(", "[", "{"):
                depth += 1
            elif tx in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise Unsupportable("unbalanced")

    def _generic_end(self, i: int) -> int:
        depth = 0
        for k in range(i, min(self.limit, i + 64)):
            tx = self.t[k].text
            if tx == "<":
                depth += 1
            elif tx == ">":
                depth -= 1
                if depth == 0:
                    return k + 1
            elif tx == ">>":
                depth -= 2
                if depth <= 0:
                    return k + 1 if depth == 0 else -1
            elif not (self.t[k].type == "identifier" or tx in PREDEFINED or tx in (".", ",", "?", "[", "]", "::")):
                return -1
        return -1
