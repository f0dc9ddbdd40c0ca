"""Switch expressions (-> a conditional chain over the bound value) and switch statements with pattern labels
(-> a switch on 0 whose sections test their labels' patterns), built on the pattern rewrite."""

from __future__ import annotations

from benchsmith.analyzers.csharp.downlevel.edits import Construct as C
from benchsmith.analyzers.csharp.downlevel.edits import HELPER, HELPER_FILE
from benchsmith.analyzers.csharp.downlevel.core import Ctx, child_of_type
from benchsmith.analyzers.csharp.downlevel.pattern_parser import P, Unsupportable
from benchsmith.analyzers.csharp.downlevel.patterns import (Emitter, _drop_group, _parse_at, _wrap_initializer,
                                                            expression_context)


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
        _when_guard(ctx, when, C.SWITCH_EXPRESSION)
    ctx.edit(*ctx.span(arrow), "?", C.SWITCH_EXPRESSION)


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
                _when_guard(ctx, when, C.SWITCH_PATTERN_CASE)
            ctx.edit(*ctx.span(colon), ")", C.SWITCH_PATTERN_CASE)
        end_label = ctx.span(kids[labels[-1][1]])[1]
        ctx.insert(end_label, ")) throw null;", C.SWITCH_PATTERN_CASE)
        close_at = ctx.span(last_stmt)[1] if last_stmt is not None else end_label
        ctx.insert(close_at, " }", C.SWITCH_PATTERN_CASE)


def _when_guard(ctx: Ctx, when, construct) -> None:
    """``when guard`` -> ``&& (guard)`` after the pattern's test (the parentheses outside all the guard holds)."""
    wk = child_of_type(when, "when")
    guard = when.named_children
    if wk is None or not guard:
        raise Unsupportable("when without guard")
    ctx.edit(*ctx.span(wk), "&&", construct)
    gspan = (ctx.span(guard[0])[0], ctx.span(guard[-1])[1])
    ctx.insert(gspan[0], "(", construct, prio=-2, span=gspan)
    ctx.insert(gspan[1], ")", construct, prio=1, span=gspan)
