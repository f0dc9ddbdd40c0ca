"""C# 8-9 patterns (``not``/``and``/``or``, relational, property, positional), switch expressions and switch
statements with pattern labels, rewritten into C# 7 boolean expressions over ``is var`` bound variables.

tree-sitter-c-sharp 0.23.5 lets a constant pattern swallow what follows it (``o is not null && x`` parses as the
pattern ``not (null && x)``), so patterns are re-read here from the token stream with C#'s own precedence: a
pattern ends at the first token that cannot continue it.  Every constant, type, member name and guard of the
original stays in place; only keywords and punctuation are replaced, so positions inside map exactly."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchsmith.analyzers.csharp_downlevel import Construct as C
from benchsmith.analyzers.csharp_downlevel_core import HELPER, HELPER_FILE, Ctx, Tok, child_of_type, expression_root

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


# ------------------------------------------------------------------------------------------------------------
class Emitter:
    def __init__(self, ctx: Ctx, toks: list[Tok], construct, query: bool = False) -> None:
        # query: inside a query clause, where mcs allows no out variable even in a lambda: values are bound as
        # lambda parameters, and pattern variables are dropped (lossy)
        self.ctx, self.t, self.construct, self.query = ctx, toks, construct, query

    def bind_head(self, v: str, desig: str | None) -> str:
        """``(v is object`` plus, for a designation, its binding (none possible in a query clause)."""
        if desig and not self.query:
            return f"({v} is object && {HELPER}.Bind({v}, out var {desig})"
        return f"({v} is object"

    def bind_object(self, item: P) -> None:
        """``var x`` of an item whose type is unknown here: an object x (in a query clause: dropped)."""
        if self.query:
            self.rep(item.start, "true")
            self.drop_designation(item.start + 1)
            return
        self.ins(self.s(item.start), f"{HELPER}.Bind<object>(null, out ", prio=-1)
        self.ins(self.e(item.end), ")")

    def drop_designation(self, i: int) -> None:
        self.ctx.blank(self.t[i].start, self.t[i].end, self.construct)
        self.ctx.lossy_at(self.t[i].start, self.construct)

    def s(self, i: int) -> int:
        return self.t[i].start

    def e(self, i: int) -> int:
        return self.t[i - 1].end  # end of the token before index i

    def ins(self, at: int, text: str, prio: int = 0, p: P | None = None) -> None:
        """Insert at ``at``; ``p``: the pattern the text opens or closes (orders nested insertions)."""
        span = (self.s(p.start), self.e(p.end)) if p is not None else None
        self.ctx.insert(at, text, self.construct, prio, span)

    def rep(self, i: int, text: str) -> None:
        self.ctx.edit(self.t[i].start, self.t[i].end, text, self.construct)

    def type_like(self, p: P) -> bool:
        """A constant pattern that can only be a type: names, dots and type arguments, no literal."""
        if p.kind != "const":
            return False
        toks = self.t[p.start:p.end]
        return bool(toks) and all(t.type == "identifier" or t.text in PREDEFINED or t.text in (".", "<", ">", ",", "?", "[", "]", "::")
                                  for t in toks) and (toks[0].text in PREDEFINED or len(toks) == 1 or "<" in {t.text for t in toks})

    def simple(self, p: P) -> bool:
        """A constant mcs reads after ``is``: one literal or name token."""
        if p.end - p.start != 1:
            return False
        t = self.t[p.start]
        return t.type == "identifier" or t.type.endswith("literal") or t.text in PREDEFINED

    def test(self, p: P, v: str) -> None:
        """Rewrite pattern ``p`` in place into a boolean expression about the variable ``v``."""
        k = p.kind
        if k == "const" and self.simple(p):
            self.ins(self.s(p.start), f"{v} is ")
        elif k == "const":  # mcs reads ``is`` with a literal or a name only (nameof, Enum.Member... are not)
            self.ins(self.s(p.start), f"{EQUALS}({v}, ")
            self.ins(self.e(p.end), ")", p=p)
        elif k == "decl" and self.query:
            self.ins(self.s(p.start), f"{v} is ")
            self.drop_designation(p.op)
        elif k == "var" and self.query:
            self.rep(p.start, "true")
            self.drop_designation(p.start + 1)
        elif k == "decl":  # ``v is T x`` on a value-type ``v`` is an internal error in mcs: Is(v, out T x)
            self.ctx.helpers.add(HELPER_FILE)
            self.ins(self.s(p.start), f"{HELPER}.Is({v}, out ")
            self.ins(self.e(p.end), ")", p=p)
        elif k == "var":  # ``is var`` makes mcs fail on value types: Bind(v, out var x)
            self.ins(self.s(p.start), f"{HELPER}.Bind({v}, out ")
            self.ins(self.e(p.end), ")", p=p)
        elif k == "discard":
            self.rep(p.start, "true")
            if p.end - p.start == 2:
                self.ctx.blank(self.t[p.start + 1].start, self.t[p.start + 1].end, self.construct)
        elif k == "rel":
            self.ins(self.s(p.start), f"{v} ")
        elif k == "not":
            self.rep(p.op, "!(")
            self.test(p.kids[0], v)
            self.ins(self.e(p.end), ")", p=p)
        elif k == "and" and self.type_like(p.kids[0]) and not self.query:
            # ``T and P``: P sees the value as a T (``int and > 0``)
            n = self.ctx.fresh("n")
            left = p.kids[0]
            self.ctx.helpers.add(HELPER_FILE)
            self.ins(self.s(left.start), f"({HELPER}.Is({v}, out ", prio=-1, p=p)
            self.ins(self.e(left.end), f" {n})")
            self.rep(p.op, "&&")
            self.test(p.kids[1], n)
            self.ins(self.e(p.end), ")", p=p)
        elif k in ("and", "or"):
            self.ins(self.s(p.start), "(", prio=-1, p=p)
            self.test(p.kids[0], v)
            self.rep(p.op, "&&" if k == "and" else "||")
            self.test(p.kids[1], v)
            self.ins(self.e(p.end), ")", p=p)
        elif k == "paren":
            self.test(p.kids[0], v)
        elif k == "rec":
            self.rec(p, v)
        elif k == "list":
            self.list_pattern(p, v)
        else:
            raise Unsupportable(k)

    def list_pattern(self, p: P, v: str) -> None:
        """``[p1, .., var last]``: mcs has no indexer patterns; ``v`` is tested for null and each item against an
        unknown value (its variables become object, its constants and types stay visible).  Lossy."""
        open_i, close_i, items = p.positional
        desig = self.t[p.desig].text if p.desig >= 0 else None
        if p.desig >= 0:
            self.ctx.blank(self.t[p.desig].start, self.t[p.desig].end, self.construct)
        self.ctx.helpers.add(HELPER_FILE)
        head = self.bind_head(v, desig)
        self.rep(open_i, head + (" && (" if items else " && (true"))
        for item in items:
            if item.kind == "slice":
                inner = item.kids[0] if item.kids else None
                if inner is None:
                    self.rep(item.start, "true")
                    continue
                self.ctx.blank(self.t[item.start].start, self.t[item.start].end, self.construct)
                item = inner
            if item.kind == "var":
                self.bind_object(item)
            elif item.kind == "discard":
                self.test(item, "null")
            else:
                self.applied(item, self.s(item.start), None, "(object)null")
        for i in range(open_i + 1, close_i):
            if self.t[i].text == "," and self._depth_zero(open_i, i):
                self.rep(i, "&&")
        self.rep(close_i, "))")
        self.ctx.lossy_at(self.s(p.start), C.LIST_PATTERN)

    def rec(self, p: P, v: str) -> None:
        typed = p.type_end > p.start
        if p.positional and p.props:
            raise Unsupportable("positional pattern with properties")
        desig = self.ctx.renames.get(self.t[p.desig].start, self.t[p.desig].text) if p.desig >= 0 else None
        if p.desig >= 0:
            self.ctx.blank(self.t[p.desig].start, self.t[p.desig].end, self.construct)
        if p.positional and typed:
            # mcs cannot call a user Deconstruct: the type is tested, each item is matched against a dynamic value
            # (its variables become dynamic; its constants and types stay visible)
            open_i, close_i, items = p.positional
            base = desig or self.ctx.fresh("p")
            self.ctx.helpers.add(HELPER_FILE)
            if self.query:
                self.ins(self.s(p.start), f"({v} is ", prio=-1, p=p)
                self.rep(open_i, " && (")
            else:
                self.ins(self.s(p.start), f"({HELPER}.Is({v}, out ", prio=-1, p=p)
                self.rep(open_i, f" {base}) && (")
            for item in items:
                if item.kind == "var":  # ``var x`` -> an object x (its type is the Deconstruct's, unknown here)
                    self.bind_object(item)
                elif item.kind == "discard":
                    self.test(item, "null")
                else:
                    self.applied(item, self.s(item.start), None, "(object)null")
            for i in range(open_i + 1, close_i):
                if self.t[i].text == "," and self._depth_zero(open_i, i):
                    self.rep(i, "&&")
            self.rep(close_i, "))")
            self.ctx.lossy_at(self.s(p.start), C.PATTERN)
            return
        if p.positional:
            open_i, close_i, items = p.positional
            self.rep(open_i, self.bind_head(v, desig) + " && (")
            for n, item in enumerate(items, 1):
                self.applied(item, self.s(item.start), None, f"{v}.Item{n}")
            for i in range(open_i + 1, close_i):
                if self.t[i].text == "," and self._depth_zero(open_i, i):
                    self.rep(i, "&&")
            self.rep(close_i, "))")
            return
        open_i, close_i, items = p.props
        if typed and self.query:
            base = desig or self.ctx.fresh("p")
            self.ctx.helpers.add(HELPER_FILE)
            self.ins(self.s(p.start), f"({HELPER}.TestAs<", prio=-1, p=p)
            self.rep(open_i, f">({v}, {base} => (" + ("" if items else "true"))
        elif typed:
            base = desig or self.ctx.fresh("p")
            # ``Is(v, out Type base) && (...)``, the type in place
            self.ctx.helpers.add(HELPER_FILE)
            self.ins(self.s(p.start), f"({HELPER}.Is({v}, out ", prio=-1, p=p)
            self.rep(open_i, f" {base}) && (" + ("" if items else "true"))
        else:
            base = v
            self.rep(open_i, self.bind_head(v, desig) + (" && (" if items else " && (true"))
        for name_i, colon_i, sub in items:
            self.applied(sub, self.s(name_i), colon_i, f"{base}.")
        for i in range(open_i + 1, close_i):
            if self.t[i].text == "," and self._depth_zero(open_i, i):
                self.rep(i, "&&")
        self.rep(close_i, ")))" if typed and self.query else "))")

    def _depth_zero(self, open_i: int, i: int) -> bool:
        depth = 0
        for k in range(open_i + 1, i):
            tx = self.t[k].text
            if tx in ("(", "[", "{"):
                depth += 1
            elif tx in (")", "]", "}"):
                depth -= 1
        return depth == 0

    def applied(self, p: P, subject_at: int, join_i: int | None, subject_prefix: str) -> None:
        """``p`` applied to an expression in place: ``subject_prefix`` is inserted at ``subject_at`` (the start of
        the in-place part: a property name, or nothing for a tuple item), ``join_i`` is the token between subject
        and pattern (``is``, ``:``; None: an insertion right before the pattern)."""
        k = p.kind
        inner = p.kids[0] if k == "not" else None
        if k == "const" and self.simple(p):
            prefix, joiner, suffix = "", " is ", ""
        elif k == "const":
            prefix, joiner, suffix = f"{EQUALS}(", ", ", ")"
        elif k == "decl" and self.query:
            prefix, joiner, suffix = "", " is ", ""
            self.drop_designation(p.op)
        elif k == "decl":
            prefix, joiner, suffix = f"{HELPER}.Is(", ", out ", ")"
            self.ctx.helpers.add(HELPER_FILE)
        elif k == "rel":
            prefix, joiner, suffix = "", " ", ""
        elif k == "discard":
            prefix, joiner, suffix = "", " is object || true ", ""
            self.ctx.blank(self.t[p.start].start, self.t[p.end - 1].end, self.construct)
        elif inner is not None and inner.kind in ("const", "decl", "var"):
            prefix, joiner, suffix = "!(", " is ", ")"
            self.ctx.blank(self.t[p.op].start, self.t[p.op].end, self.construct)
        else:
            v = self.ctx.fresh("v")
            if self.query:
                prefix, joiner, suffix = f"({HELPER}.Test(", f", {v} => (", ")))"
            else:
                prefix, joiner, suffix = f"({HELPER}.Bind(", f", out var {v}) && (", "))"
            self.ctx.helpers.add(HELPER_FILE)
            self.test(p, v)
        whole = (subject_at, self.e(p.end))
        self.ctx.insert(subject_at, prefix + subject_prefix, self.construct, -1, whole)
        if join_i is None:
            self.ins(self.s(p.start), joiner, prio=-1)
        else:
            self.rep(join_i, joiner)
        if suffix:
            self.ctx.insert(whole[1], suffix, self.construct, 0, whole)


# ------------------------------------------------------------------------------------------------------------
def _parse_at(ctx: Ctx, start_offset: int, stop_offset: int | None) -> tuple[P, int, list[Tok]]:
    toks = ctx.tokens()
    i = ctx.tok_index(start_offset)
    limit = len(toks) if stop_offset is None else ctx.tok_index(stop_offset)
    p, j = Parser(toks, limit).pattern(i)
    return p, j, toks


def _contains_advanced(p: P) -> bool:
    return not _native(p)


def is_patterns(ctx: Ctx, caps) -> None:
    for n in caps.get("is_pattern_expression", []):
        subject = n.child_by_field_name("expression")
        kw = child_of_type(n, "is")
        if subject is None or kw is None:
            continue
        ks, ke = ctx.span(kw)
        ctx.use_region(expression_root(n))
        try:
            p, j, toks = _parse_at(ctx, ke, None)
        except Unsupportable:
            ctx.unsupported_at(ks, C.PATTERN)
            continue
        if _native(p):
            continue
        ctx.new_group()
        where = expression_context(n)
        em = Emitter(ctx, toks, C.PATTERN, query=where == "query")
        kw_i = ctx.tok_index(ks)
        try:
            em.applied(p, ctx.span(subject)[0], kw_i, "")
        except Unsupportable:
            _drop_group(ctx)
            ctx.unsupported_at(ks, C.PATTERN)
            continue
        if where == "initializer" and any("out " in e[2] for e in ctx.edits if e[6] == ctx.group):
            _wrap_initializer(ctx, ctx.span(subject)[0], em.e(p.end), C.PATTERN)


_BODIES = frozenset({"block", "arrow_expression_clause", "lambda_expression", "anonymous_method_expression",
                     "accessor_list", "local_function_statement"})


_STOP = frozenset({"class_declaration", "struct_declaration", "interface_declaration", "record_declaration",
                   "enum_declaration", "namespace_declaration", "method_declaration", "constructor_declaration",
                   "destructor_declaration", "operator_declaration", "conversion_operator_declaration",
                   "indexer_declaration", "delegate_declaration", "attribute_list", "parameter_list"})


def expression_context(node) -> str | None:
    """Where C# 7 forbids expression variables (``out var``, pattern variables) around ``node``: ``"initializer"``
    (field, property or constructor initializer), ``"query"`` (a query clause), or None."""
    n = node.parent
    while n is not None:
        if n.type in ("query_expression", "from_clause", "where_clause", "let_clause", "select_clause",
                      "orderby_clause", "join_clause", "group_clause"):
            return "query"
        if n.type in _BODIES:
            return None
        if n.type in ("constructor_initializer", "field_declaration", "event_field_declaration",
                      "property_declaration"):
            return "initializer"
        if n.type in _STOP or n.type == "compilation_unit":
            return None
        n = n.parent
    return None


def _wrap_initializer(ctx: Ctx, start: int, end: int, construct) -> None:
    """Field / property / constructor initializers take no expression variables in C# 7: the rewritten
    expression runs inside ``Run(() => ...)``, a lambda, where they are allowed."""
    ctx.helpers.add(HELPER_FILE)
    ctx.insert(start, f"{HELPER}.Run(() => ", construct, -3, (start, end))
    ctx.insert(end, ")", construct, 2, (start, end))


def _drop_group(ctx: Ctx) -> None:
    g = ctx.group
    ctx.edits = [e for e in ctx.edits if e[6] != g]


def switch_expressions(ctx: Ctx, caps) -> None:
    for n in caps.get("switch_expression", []):
        kw = child_of_type(n, "switch")
        ob, cb = child_of_type(n, "{"), None
        for c in n.children:
            if c.type == "}":
                cb = c
        subject = n.named_children[0] if n.named_children else None
        if kw is None or ob is None or cb is None or subject is None or subject.type == "switch_expression_arm":
            ctx.unsupported_at(ctx.span(n)[0], C.SWITCH_EXPRESSION)
            continue
        ctx.new_group()
        where = expression_context(n)
        try:
            _switch_expression(ctx, n, subject, kw, ob, cb, query=where == "query")
        except Unsupportable:
            _drop_group(ctx)
            ctx.unsupported_at(ctx.span(n)[0], C.SWITCH_EXPRESSION)
            continue
        if where == "initializer":
            _wrap_initializer(ctx, *ctx.span(n), C.SWITCH_EXPRESSION)


def _switch_expression(ctx: Ctx, n, subject, kw, ob, cb, query: bool = False) -> None:
    v = ctx.fresh("s")
    ctx.use_region(n)
    toks = ctx.tokens()
    em = Emitter(ctx, toks, C.SWITCH_EXPRESSION, query=query)
    ctx.helpers.add(HELPER_FILE)
    if query:  # no out variables in a query clause: the value reaches the arms as a lambda parameter
        ctx.insert(ctx.span(subject)[0], f"{HELPER}.Switch(", C.SWITCH_EXPRESSION, prio=-1, span=ctx.span(n))
        ctx.edit(*ctx.span(kw), f", {v} =>", C.SWITCH_EXPRESSION)
    else:
        ctx.insert(ctx.span(subject)[0], f"({HELPER}.Bind(", C.SWITCH_EXPRESSION, prio=-1, span=ctx.span(n))
        ctx.edit(*ctx.span(kw), f", out var {v}) ?", C.SWITCH_EXPRESSION)
    ctx.edit(*ctx.span(ob), "(", C.SWITCH_EXPRESSION)
    trailing = False
    seen: set[str] = set()
    for c in n.children:
        if c.type == "switch_expression_arm":
            trailing = False
            _arm(ctx, em, c, v, seen)
        elif c.type == ",":
            trailing = True
            ctx.edit(*ctx.span(c), ":", C.SWITCH_EXPRESSION)
    ctx.edit(*ctx.span(cb), ("" if trailing else ":") + (" throw null))" if query else " throw null) : throw null)"),
             C.SWITCH_EXPRESSION)


def _designations(p: P) -> list[int]:
    out = []
    if p.kind in ("decl", "var"):
        out.append(p.op if p.kind == "decl" else p.start + 1)
    if p.kind == "rec" and p.desig >= 0:
        out.append(p.desig)
    for k in p.kids:
        out.extend(_designations(k))
    for group in (p.positional, p.props):
        if group:
            for item in group[2]:
                out.extend(_designations(item[-1] if isinstance(item, tuple) else item))
    return out


def _rename_duplicates(ctx: Ctx, toks, p: P, arm, seen: set[str]) -> None:
    """Pattern variables are scoped to their arm; in one conditional expression they share a scope, so a name an
    earlier arm declared is renamed (declaration and uses) in this arm."""
    names = {toks[i].text for i in _designations(p)}
    clash = names & seen
    seen |= names
    if not clash:
        return
    rec_desigs = set()
    stack = [p]
    while stack:
        q = stack.pop()
        if q.kind == "rec" and q.desig >= 0:
            rec_desigs.add(q.desig)
        stack.extend(q.kids)
        for group in (q.positional, q.props):
            if group:
                stack.extend(item[-1] if isinstance(item, tuple) else item for item in group[2])
    a0, a1 = ctx.span(arm)
    i = ctx.tok_index(a0)
    while i < len(toks) and toks[i].start < a1:
        t = toks[i]
        if t.type == "identifier" and t.text in clash and (i == 0 or toks[i - 1].text not in (".", "::", "->")):
            if i + 1 < len(toks) and toks[i + 1].text == ":" and toks[i - 1].text in ("{", ","):
                i += 1
                continue  # a property name in a property pattern
            if i in rec_desigs:
                ctx.renames[t.start] = f"{t.text}__bs{ctx.group}"
            else:
                ctx.edit(t.start, t.end, f"{t.text}__bs{ctx.group}", C.SWITCH_EXPRESSION)
        i += 1


def _arm(ctx: Ctx, em: Emitter, arm, v: str, seen: set[str] | None = None) -> None:
    arrow = child_of_type(arm, "=>")
    when = child_of_type(arm, "when_clause")
    if arrow is None:
        raise Unsupportable("arm without =>")
    s0 = ctx.span(arm)[0]
    stop = ctx.span(when)[0] if when is not None else ctx.span(arrow)[0]
    p, j, toks = _parse_at(ctx, s0, stop)
    if j != ctx.tok_index(stop):
        raise Unsupportable("arm pattern not understood")
    if seen is not None:
        _rename_duplicates(ctx, toks, p, arm, seen)
    em.ins(em.s(p.start), "(", prio=-1, p=p)
    em.test(p, v)
    em.ins(em.e(p.end), ")", p=p)
    if when is not None:
        wk = child_of_type(when, "when")
        guard = [c for c in when.named_children]
        if wk is None or not guard:
            raise Unsupportable("when without guard")
        ctx.edit(*ctx.span(wk), "&&", C.SWITCH_EXPRESSION)
        gspan = (ctx.span(guard[0])[0], ctx.span(guard[-1])[1])
        ctx.insert(gspan[0], "(", C.SWITCH_EXPRESSION, prio=-2, span=gspan)  # outside all the guard holds
        ctx.insert(gspan[1], ")", C.SWITCH_EXPRESSION, prio=1, span=gspan)
    ctx.edit(*ctx.span(arrow), "?", C.SWITCH_EXPRESSION)


# ------------------------------------------------------------------------------------------------------------
def switch_statements(ctx: Ctx, caps) -> None:
    """A switch statement with any label mcs cannot read (a type/declaration/relational/combined/property pattern,
    a ``when`` guard) becomes a switch on 0 over the value bound by ``Zero(value, out var v)``: each section gets one
    ``case K:`` and a braced body starting with ``if (!(<its labels' patterns over v>)) throw null;``, so pattern
    variables are declared for the statements that use them."""
    for n in caps.get("switch_statement", []):
        body = n.child_by_field_name("body") or child_of_type(n, "switch_body")
        if body is None:
            continue
        sections = [c for c in body.children if c.type == "switch_section"]
        if not any(_needs_rewrite(ctx, s) for s in sections):
            continue
        ctx.new_group()
        try:
            _switch_statement(ctx, n, sections)
        except Unsupportable:
            _drop_group(ctx)
            ctx.unsupported_at(ctx.span(n)[0], C.SWITCH_PATTERN_CASE)


_LABEL_PATTERN_OK = frozenset({"constant_pattern"})


def _needs_rewrite(ctx: Ctx, section) -> bool:
    for c in section.children:
        if c.type == "when_clause":
            return True
        if c.type.endswith("_pattern") and c.type not in _LABEL_PATTERN_OK:
            return True
        if c.type == "constant_pattern" and c.named_children and c.named_children[0].type in (
                "binary_expression", "identifier", "qualified_name", "generic_name", "predefined_type"):
            # ``case Foo:`` may be a C# 9 type pattern; an identifier constant is fine only if it is a constant:
            # tree-sitter cannot tell, and mcs reads both the same way, so only binary_expression (a misparse of
            # ``case > 1 and < 3`` and friends) forces the rewrite
            if c.named_children[0].type == "binary_expression":
                return True
    return False


def _switch_statement(ctx: Ctx, n, sections) -> None:
    ctx.helpers.add(HELPER_FILE)
    value = n.child_by_field_name("value")
    parens = [c for c in n.children if c.type in ("(", ")")]
    v = ctx.fresh("sw")
    ctx.use_region(n)
    toks = ctx.tokens()
    em = Emitter(ctx, toks, C.SWITCH_PATTERN_CASE)
    if value is not None and value.type == "tuple_expression" and len(parens) < 2:
        vs, ve = ctx.span(value)
        ctx.insert(vs, f"({HELPER}.Zero(", C.SWITCH_PATTERN_CASE, prio=-1)
        ctx.insert(ve, f", out var {v}))", C.SWITCH_PATTERN_CASE)
    elif len(parens) >= 2 and value is not None:
        ctx.insert(ctx.span(parens[0])[1], f"{HELPER}.Zero(", C.SWITCH_PATTERN_CASE, prio=-1)
        ctx.insert(ctx.span(parens[-1])[0], f", out var {v})", C.SWITCH_PATTERN_CASE)
    else:
        raise Unsupportable("switch value")
    for k, section in enumerate(sections, 1):
        kids = section.children
        labels: list[tuple] = []  # (first token node, last token node ':'), kind
        stmts_start = None
        i = 0
        while i < len(kids):
            c = kids[i]
            if c.type in ("case", "default"):
                j = i
                while j < len(kids) and kids[j].type != ":":
                    j += 1
                if j >= len(kids):
                    raise Unsupportable("label without colon")
                labels.append((i, j))
                i = j + 1
                continue
            if c.type != "comment":
                stmts_start = i
                break
            i += 1
        if not labels:
            raise Unsupportable("section without label")
        last_stmt = None
        for c in kids[stmts_start or len(kids):]:
            if c.type != "comment":
                last_stmt = c
        has_default = any(kids[a].type == "default" for a, _ in labels)
        first = True
        for a, b in labels:
            kw, colon = kids[a], kids[b]
            head = ("default: {" if has_default else f"case {k}: {{") + " if (!(" if first else " || "
            if kw.type == "default":
                ctx.edit(*ctx.span(kw), head + "(true", C.SWITCH_PATTERN_CASE)
                ctx.edit(*ctx.span(colon), ")", C.SWITCH_PATTERN_CASE)
                first = False
                continue
            ctx.edit(*ctx.span(kw), head + "(", C.SWITCH_PATTERN_CASE)
            first = False
            when = next((kids[x] for x in range(a, b) if kids[x].type == "when_clause"), None)
            stop = ctx.span(when)[0] if when is not None else ctx.span(colon)[0]
            p, j, _ = _parse_at(ctx, ctx.span(kw)[1], stop)
            if j != ctx.tok_index(stop):
                raise Unsupportable("label pattern not understood")
            em.test(p, v)
            if when is not None:
                wk = child_of_type(when, "when")
                guard = when.named_children
                if wk is None or not guard:
                    raise Unsupportable("when without guard")
                ctx.edit(*ctx.span(wk), "&&", C.SWITCH_PATTERN_CASE)
                gspan = (ctx.span(guard[0])[0], ctx.span(guard[-1])[1])
                ctx.insert(gspan[0], "(", C.SWITCH_PATTERN_CASE, prio=-2, span=gspan)  # outside all the guard holds
                ctx.insert(gspan[1], ")", C.SWITCH_PATTERN_CASE, prio=1, span=gspan)
            ctx.edit(*ctx.span(colon), ")", C.SWITCH_PATTERN_CASE)
        end_label = ctx.span(kids[labels[-1][1]])[1]
        ctx.insert(end_label, ")) throw null;", C.SWITCH_PATTERN_CASE)
        close_at = ctx.span(last_stmt)[1] if last_stmt is not None else end_label
        ctx.insert(close_at, " }", C.SWITCH_PATTERN_CASE)
