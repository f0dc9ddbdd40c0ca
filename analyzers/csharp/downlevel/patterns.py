
"""C# 8-9 patterns (``not``/``and``/``or``, relational, property, positional), switch expressions and switch
statements with pattern labels, rewritten into C# 7 boolean expressions over ``is var`` bound variables.

tree-sitter-c-sharp 0.23.5 lets a constant pattern swallow what follows it (``o is not null && x`` parses as the
pattern ``not (null && x)``), so patterns are re-read here from the token stream with C#'s own precedence: a
pattern ends at the first token that cannot continue it.  Every constant, type, member name and guard of the
original stays in place; only keywords and punctuation are replaced, so positions inside map exactly."""

from __future__ import annotations

import re

from benchsmith.analyzers.csharp.downlevel.edits import Construct as C
from benchsmith.analyzers.csharp.downlevel.edits import HELPER, HELPER_FILE
from benchsmith.analyzers.csharp.downlevel.core import Ctx, Tok, child_of_type, expression_root
from benchsmith.analyzers.csharp.downlevel.pattern_parser import (EQUALS, PREDEFINED, P, Parser, Unsupportable,
                                                                  _native)

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
            self._untyped_item(item)
        self._and_items(open_i, close_i)
        self.ctx.lossy_at(self.s(p.start), C.LIST_PATTERN)

    def _untyped_item(self, item: P) -> None:
        """One item matched against a value of unknown type: ``var x`` binds an object x (its type is unknown
        here), a discard tests nothing, anything else is applied to ``(object)null``."""
        if item.kind == "var":
            self.bind_object(item)
        elif item.kind == "discard":
            self.test(item, "null")
        else:
            self.applied(item, self.s(item.start), None, "(object)null")

    def _and_items(self, open_i: int, close_i: int) -> None:
        """The items' top-level commas become ``&&`` and the closing token closes both groups opened."""
        for i in range(open_i + 1, close_i):
            if self.t[i].text == "," and self._depth_zero(open_i, i):
                self.rep(i, "&&")
        self.rep(close_i, "))")

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
                self._untyped_item(item)
            self._and_items(open_i, close_i)
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


# C# 7 patterns (``x is null``, ``x is Foo``, ``x is Foo f``) in their plainest spellings, which the pattern parser
# would read as native too: most ``is`` expressions are these, and telling them apart needs no token walk
_PLAIN_TYPE = r"[A-Za-z_][\w.]*(?:<[\w.]+(?:,\s*[\w.]+)*>)?(?:\[\])?"
_PLAIN_PATTERN = re.compile(rf"(?:{_PLAIN_TYPE}|[0-9]+|\"[^\"\\]*\")(?:\s+[A-Za-z_]\w*)?")
_PATTERN_WORDS = frozenset({"not", "and", "or", "var"})


def _plainly_native(ctx: Ctx, n) -> bool:
    pat = n.child_by_field_name("pattern")
    if pat is None or pat.type not in ("constant_pattern", "declaration_pattern"):
        return False
    src = ctx.src(pat)
    return _PLAIN_PATTERN.fullmatch(src) is not None and src.split()[0] not in _PATTERN_WORDS


def is_patterns(ctx: Ctx, caps) -> None:
    for n in caps.get("is_pattern_expression", []):
        subject = n.child_by_field_name("expression")
        kw = child_of_type(n, "is")
        if subject is None or kw is None or _plainly_native(ctx, n):
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


# ------------------------------------------------------------------------------------------------------------