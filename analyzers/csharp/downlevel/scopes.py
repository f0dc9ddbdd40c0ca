"""C# 8 lets a lambda's or local function's parameters shadow a local of the enclosing member; C# 7 (and mcs)
reports CS0136 there, at declaration level of the body.  Such a parameter is renamed, together with its uses
inside the lambda, so the enclosing names stay what they were.  C# 7 code never has the clash (it would not
compile), so it is never touched."""

from __future__ import annotations

import re

from benchsmith import treesitter
from benchsmith.analyzers.csharp.downlevel.edits import Construct as C
from benchsmith.analyzers.csharp.downlevel.core import Ctx
from benchsmith.analyzers.csharp.scan import GRAMMAR

_MEMBERS = ("method_declaration", "constructor_declaration", "accessor_declaration", "operator_declaration",
            "conversion_operator_declaration", "destructor_declaration", "property_declaration",
            "field_declaration", "indexer_declaration")
_DECLS = ("(variable_declarator name: (identifier) @n)", "(declaration_expression name: (identifier) @n)",
          "(declaration_pattern name: (identifier) @n)", "(parameter name: (identifier) @n)",
          "(foreach_statement left: (identifier) @n)", "(catch_declaration name: (identifier) @n)",
          "(implicit_parameter) @n", "(local_function_statement name: (identifier) @n)")


def _decl_query():
    return treesitter.query_of_patterns(GRAMMAR, _DECLS)


_SCOPE_NODES = frozenset({"block", "lambda_expression", "anonymous_method_expression", "local_function_statement",
                          "foreach_statement", "for_statement", "catch_clause", "using_statement", "switch_section",
                          "fixed_statement"}) | frozenset(_MEMBERS)


def _scope(n):
    """The node whose extent a declared name is in scope over."""
    p = n.parent
    if n.type == "implicit_parameter":
        return p
    if p is not None and p.type == "parameter":
        p = p.parent.parent if p.parent is not None else None  # parameter -> parameter_list -> function
        return p
    while p is not None and p.type not in _SCOPE_NODES:
        p = p.parent
    return p


def _declared(ctx: Ctx, member) -> list[tuple[str, int, int, int]]:
    """(name, offset, scope start, scope end) of every name declared in ``member``."""
    from tree_sitter import QueryCursor

    cur = QueryCursor(_decl_query())
    cur.set_byte_range(member.start_byte, member.end_byte)
    out = []
    for n in cur.captures(member).get("n", []):
        sc = _scope(n) or member
        out.append((ctx.src(n), ctx.span(n)[0], sc.start_byte, sc.end_byte))
    return out


def _params(ctx: Ctx, fn) -> list:
    p = fn.child_by_field_name("parameters")
    if p is None:
        return []
    if p.type == "implicit_parameter":
        return [p]
    if p.type == "identifier":
        return [p]
    out = []
    for c in p.named_children:
        if c.type == "parameter":
            n = c.child_by_field_name("name")
            if n is not None:
                out.append(n)
    return out


def _named_outside(ctx: Ctx, member, fs: int, fe: int, names: set[str]) -> bool:
    """Whether one of ``names`` occurs as a whole identifier in ``member`` outside ``[fs, fe)``: a declaration it
    could clash with has to (a text search is much cheaper than the declaration query)."""
    ms, me = ctx.span(member)
    words = re.compile(r"(?<![A-Za-z0-9_])(?:%s)(?![A-Za-z0-9_])" % "|".join(map(re.escape, sorted(names))))
    return words.search(ctx.text, ms, fs) is not None or words.search(ctx.text, fe, me) is not None


def shadowed_parameters(ctx: Ctx, caps) -> None:
    fns = caps.get("lambda_expression", []) + caps.get("local_function_statement", [])
    if not fns:
        return
    cache: dict[int, list] = {}
    for fn in sorted(fns, key=lambda n: n.start_byte):
        member = fn.parent
        while member is not None and member.type not in _MEMBERS:
            member = member.parent
        if member is None:
            continue
        params = _params(ctx, fn)
        fs, fe = ctx.span(fn)
        if not params or not _named_outside(ctx, member, fs, fe, {ctx.src(p) for p in params}):
            continue  # no parameter's name occurs elsewhere in the member: nothing it could shadow
        decls = cache.get(member.id)
        if decls is None:
            decls = cache[member.id] = _declared(ctx, member)
        outside = {name for name, off, ss, se in decls
                   if not fs <= off < fe and ss <= fn.start_byte and fn.end_byte <= se}
        clash = [p for p in params if ctx.src(p) in outside]
        if not clash:
            continue
        ctx.new_group()
        names = {ctx.src(p): f"{ctx.src(p)}__{ctx.group}" for p in clash}
        body = fn.child_by_field_name("body")
        for p in clash:
            ctx.edit(*ctx.span(p), names[ctx.src(p)], C.LAMBDA_SHADOWING)
        if body is None:
            continue
        bs, be = ctx.span(body)
        ctx.use_region(body)
        toks = ctx.tokens()
        i = ctx.tok_index(bs)
        while i < len(toks) and toks[i].start < be:
            t = toks[i]
            if t.type == "identifier" and t.text in names:
                prev = toks[i - 1].text if i else ""
                nxt = toks[i + 1].text if i + 1 < len(toks) else ""
                named_arg = nxt == ":" and prev in ("(", ",")
                member_init = nxt == "=" and prev in ("{", ",") and t.node.parent is not None and \
                    t.node.parent.type == "assignment_expression" and t.node.parent.parent is not None and \
                    t.node.parent.parent.type == "initializer_expression"
                if prev not in (".", "::", "?.", "->") and not named_arg and not member_init:
                    ctx.edit(t.start, t.end, names[t.text], C.LAMBDA_SHADOWING)
            i += 1
