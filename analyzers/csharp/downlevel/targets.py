"""Rewrites that need the type an expression converts to: target-typed ``new()`` and collection expressions (the
type from the declaration, assignment target, return type ... around them), and ``with`` expressions."""

from __future__ import annotations

from benchsmith.analyzers.csharp.downlevel.edits import Construct as C
from benchsmith.analyzers.csharp.downlevel.edits import HELPER, HELPER_FILE
from benchsmith.analyzers.csharp.downlevel.core import (Ctx, Rep, ancestor, child_of_type,
                                                        children_of_type)
from benchsmith.analyzers.csharp.downlevel.rules import _rep_pieces, is_reference_nullable, type_pieces


_SCOPES = frozenset({"block", "switch_section", "method_declaration", "local_function_statement",
                     "constructor_declaration", "lambda_expression", "anonymous_method_expression",
                     "class_declaration", "struct_declaration", "record_declaration", "interface_declaration",
                     "accessor_declaration", "operator_declaration", "indexer_declaration", "for_statement",
                     "using_statement", "compilation_unit"})
_TYPE_BODIES = frozenset({"class_declaration", "struct_declaration", "record_declaration", "interface_declaration"})


def _declared_in(ctx: Ctx, scope, name: str):
    """The explicit type ``name`` is declared with directly in ``scope`` (local, parameter, field, property)."""
    kids = list(scope.children)
    body = scope.child_by_field_name("body")
    if scope.type in _TYPE_BODIES and body is not None:
        kids = list(body.children)
    plist = scope.child_by_field_name("parameters") or child_of_type(scope, "parameter_list")
    if plist is not None:
        for p in plist.named_children:
            pn = p.child_by_field_name("name")
            if p.type == "parameter" and pn is not None and ctx.src(pn) == name:
                return p.child_by_field_name("type")
    for k in kids:
        if k.type in ("local_declaration_statement", "field_declaration", "variable_declaration"):
            decl = k if k.type == "variable_declaration" else child_of_type(k, "variable_declaration")
            if decl is None:
                continue
            t = decl.child_by_field_name("type")
            for v in decl.named_children:
                vn = v.child_by_field_name("name") if v.type == "variable_declarator" else None
                if vn is not None and ctx.src(vn) == name:
                    return t if t is not None and t.type != "implicit_type" else None
        elif k.type == "property_declaration":
            pn = k.child_by_field_name("name")
            if pn is not None and ctx.src(pn) == name:
                return k.child_by_field_name("type")
    return None


def _type_of_name(ctx: Ctx, target, at):
    """The declared type of an assignment target (``x``, ``this.x``) seen from ``at``: locals and parameters of
    the enclosing scopes, then members of the enclosing types."""
    if target.type == "member_access_expression":
        obj = target.child_by_field_name("expression")
        if obj is None or obj.type != "this_expression" and ctx.src(obj) != "this":
            return None
        target = target.child_by_field_name("name")
    if target is None or target.type != "identifier":
        return None
    name = ctx.src(target)
    n = at.parent
    while n is not None:
        if n.type in _SCOPES:
            t = _declared_in(ctx, n, name)
            if t is not None:
                return t
        n = n.parent
    return None


def target_type(ctx: Ctx, node):
    """The declared type an expression converts to: initializers, defaults, returns, arrow bodies, assignments,
    ``??`` right operands, conditional branches, array initializer elements; None when not visible here."""
    p = node.parent
    if p is None:
        return None
    if p.type == "parenthesized_expression":
        return target_type(ctx, p)
    if p.type == "variable_declarator":
        decl = p.parent
        t = decl.child_by_field_name("type") if decl is not None else None
        if t is not None and t.type != "implicit_type":
            return t
        return None
    if p.type in ("property_declaration", "parameter"):
        return p.child_by_field_name("type")
    if p.type == "assignment_expression" and p.child_by_field_name("right") == node:
        return _type_of_name(ctx, p.child_by_field_name("left"), p)
    if p.type == "binary_expression" and p.child_by_field_name("right") == node and \
            p.child_by_field_name("operator") is not None and p.child_by_field_name("operator").type == "??":
        return target_type(ctx, p) or _type_of_name(ctx, p.child_by_field_name("left"), p)
    if p.type == "conditional_expression" and node != p.child_by_field_name("condition"):
        return target_type(ctx, p)
    if p.type == "initializer_expression":
        owner = p.parent
        t = None
        if owner is not None and owner.type == "array_creation_expression":
            t = owner.child_by_field_name("type")
        elif owner is not None and owner.type == "variable_declarator":
            decl = owner.parent
            t = decl.child_by_field_name("type") if decl is not None else None
        if t is not None and t.type == "array_type":
            return t.child_by_field_name("type")
        return None
    if p.type == "arrow_expression_clause":
        owner = p.parent
    elif p.type == "return_statement":
        owner = ancestor(p, "method_declaration", "local_function_statement", "lambda_expression",
                         "anonymous_method_expression", "accessor_declaration", "property_declaration",
                         "constructor_declaration", "operator_declaration", "conversion_operator_declaration")
    else:
        return None
    if owner is None:
        return None
    if owner.type == "accessor_declaration":
        if ctx.src(owner).lstrip().split("{")[0].strip().split()[-1:] != ["get"] and \
                not ctx.src(owner).lstrip().startswith("get"):
            return None
        owner = ancestor(owner, "property_declaration", "indexer_declaration")
        if owner is None:
            return None
    if owner.type in ("method_declaration", "local_function_statement"):
        t = owner.child_by_field_name("returns") or owner.child_by_field_name("type")
        if t is not None and ctx.src(t) != "void" and not any(ctx.src(m) == "async" for m in
                                                                children_of_type(owner, "modifier")):
            return t
        return None
    if owner.type in ("property_declaration", "indexer_declaration", "operator_declaration",
                      "conversion_operator_declaration"):
        return owner.child_by_field_name("type")
    return None


def target_typed_new(ctx: Ctx, caps) -> None:
    for n in caps.get("implicit_object_creation_expression", []):
        kw = child_of_type(n, "new")
        if kw is None:
            continue
        t = target_type(ctx, n)
        if t is not None and t.type == "nullable_type" and not is_reference_nullable(ctx, t):
            t = None  # ``Point? p = new()`` is a new Point; rare enough to take the fallback below
        ctx.new_group()
        s, e = ctx.span(kw)
        if t is None or t.type in ("array_type", "tuple_type", "pointer_type", "function_pointer_type"):
            # the type is not visible in this file: ``Any(args)`` (dynamic) keeps the arguments' names visible and
            # converts to whatever the target is; an object initializer's member names cannot follow
            ctx.helpers.add(HELPER_FILE)
            ctx.edit(s, e, HELPER + ".Any", C.TARGET_TYPED_NEW)
            init = child_of_type(n, "initializer_expression")
            if child_of_type(n, "argument_list") is None:
                ctx.insert(e, "()", C.TARGET_TYPED_NEW)
            if init is not None:
                ctx.blank(*ctx.span(init), C.TARGET_TYPED_NEW)
                ctx.lossy_at(ctx.span(init)[0], C.TARGET_TYPED_NEW)
            continue
        ctx.edit(s, e, Rep(ctx).copy(s, e).lit(" ").copy_pieces(_rep_pieces(type_pieces(ctx, t))),
                 C.TARGET_TYPED_NEW)


def collection_expressions(ctx: Ctx, caps) -> None:
    """``[a, b]`` -> ``new T[] {a, b}`` / ``new List<T> {a, b}`` from the target type; with spreads
    ``Keep(new T[0], a, xs, b)`` (the value keeps the target's type, every element stays visible); with no
    visible target ``Any(a, b)`` (dynamic)."""
    for n in caps.get("collection_expression", []):
        t = target_type(ctx, n)
        s, e = ctx.span(n)
        if t is not None and t.type == "nullable_type":
            t = t.child_by_field_name("type") or t.named_children[0]
        spreads = [c for c in n.named_children if c.type == "spread_element"] + [
            c for el in n.named_children if el.type == "collection_element" for c in el.named_children
            if c.type == "spread_element"]
        ctx.new_group()
        if t is None or t.type in ("tuple_type", "pointer_type", "function_pointer_type"):
            ctx.helpers.add(HELPER_FILE)
            ctx.edit(s, s + 1, HELPER + ".Any(", C.COLLECTION_EXPRESSION)
            ctx.edit(e - 1, e, ")", C.COLLECTION_EXPRESSION)
            for sp in spreads:
                ctx.blank(*ctx.span(sp.children[0]), C.COLLECTION_EXPRESSION)
            continue
        elem = None if t.type == "array_type" else _element_type(ctx, t)
        rep = Rep(ctx)
        if spreads:
            ctx.helpers.add(HELPER_FILE)
            rep.lit(HELPER + ".Keep(")
        rep.lit("new ")
        if t.type == "array_type":
            inner = t.child_by_field_name("type") or t.named_children[0]
            rep.copy_pieces(_rep_pieces(type_pieces(ctx, inner)))
            rep.lit("[0], " if spreads else "[] {")
        elif elem is not None:
            rep.copy_pieces(_rep_pieces(type_pieces(ctx, elem))).lit("[0], " if spreads else "[] {")
        else:
            rep.copy_pieces(_rep_pieces(type_pieces(ctx, t))).lit("(), " if spreads else " {")
        ctx.edit(s, s + 1, rep, C.COLLECTION_EXPRESSION)
        ctx.edit(e - 1, e, ")" if spreads else "}", C.COLLECTION_EXPRESSION)
        for sp in spreads:
            ctx.blank(*ctx.span(sp.children[0]), C.COLLECTION_EXPRESSION)


_ARRAY_LIKE = frozenset({"IEnumerable", "IReadOnlyList", "IReadOnlyCollection", "IList", "ICollection", "Span",
                         "ReadOnlySpan", "Memory", "ReadOnlyMemory"})


def _element_type(ctx: Ctx, t):
    g = t
    if g.type == "qualified_name":
        g = g.child_by_field_name("name") or g
    if g.type != "generic_name":
        return None
    ident = g.named_children[0]
    args = child_of_type(g, "type_argument_list")
    if ctx.src(ident) not in _ARRAY_LIKE or args is None or len(args.named_children) != 1:
        return None
    return args.named_children[0]


def with_expressions(ctx: Ctx, caps) -> None:
    for n in caps.get("with_expression", []):
        kw = child_of_type(n, "with")
        init = child_of_type(n, "with_initializer_expression", "initializer_expression")
        subject = n.named_children[0] if n.named_children else None
        if kw is None or subject is None:
            ctx.unsupported_at(ctx.span(n)[0], C.WITH_EXPRESSION)
            continue
        ctx.new_group()
        ctx.helpers.add(HELPER_FILE)
        v = ctx.fresh("w")
        s, e = ctx.span(n)
        ctx.insert(s, HELPER + ".With(", C.WITH_EXPRESSION, -1, (s, e))
        ks, ke = ctx.span(kw)
        braces = [c for c in n.children if c.type in ("{", "}")]
        if init is not None:
            braces = [c for c in init.children if c.type in ("{", "}")]
        inits = [c for c in (init.named_children if init is not None else n.named_children[1:])
                 if c.type not in ("comment",)]
        if len(braces) != 2:
            ctx.unsupported_at(s, C.WITH_EXPRESSION)
            ctx.edits = [x for x in ctx.edits if x[6] != ctx.group]
            continue
        ob, cb = ctx.span(braces[0]), ctx.span(braces[1])
        ctx.edit(ks, ke, ",", C.WITH_EXPRESSION)
        ctx.edit(ob[0], ob[1], f"{v} => {{", C.WITH_EXPRESSION)
        for a in inits:
            ctx.insert(ctx.span(a)[0], f"{v}.", C.WITH_EXPRESSION)
        for c in (init.children if init is not None else n.children):
            if c.type == ",":
                ctx.edit(*ctx.span(c), ";", C.WITH_EXPRESSION)
        ctx.edit(cb[0], cb[1], "; })" if inits and not _trailing_comma(init or n) else " })", C.WITH_EXPRESSION)


def _trailing_comma(node) -> bool:
    kids = [c for c in node.children if c.type != "comment"]
    return len(kids) >= 2 and kids[-2].type == ","
