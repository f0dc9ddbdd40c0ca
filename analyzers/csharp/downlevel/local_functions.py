"""Local functions: each becomes a delegate-typed local declared at the top of its block (so calls before the
declaration and recursion still resolve), or, where no delegate can stand for it (generic, a ``params`` array), a
private method right after its member."""

from __future__ import annotations

from benchsmith.analyzers.csharp.downlevel.core import Ctx, Rep, ancestor, child_of_type, children_of_type
from benchsmith.analyzers.csharp.downlevel.edits import Construct as C
from benchsmith.analyzers.csharp.downlevel.members import _copy_param, _params
from benchsmith.analyzers.csharp.downlevel.rules import _rep_pieces, type_pieces


_BY_REF = frozenset({"ref", "out", "in"})


def local_functions(ctx: Ctx, caps) -> None:
    # innermost first: a function moved out of its method carries the rewrites of the ones nested in it
    for f in sorted(caps.get("local_function_statement", []), key=lambda n: -n.start_byte):
        ctx.new_group()
        try:
            _local_function(ctx, f)
        except ValueError:
            ctx.edits = [e for e in ctx.edits if e[6] != ctx.group]
            try:
                _hoist_to_method(ctx, f)
            except ValueError:
                ctx.edits = [e for e in ctx.edits if e[6] != ctx.group]
                ctx.unsupported_at(ctx.span(f)[0], C.LOCAL_FUNCTION)


_MEMBER_KINDS = ("method_declaration", "constructor_declaration", "destructor_declaration", "operator_declaration",
                 "conversion_operator_declaration", "property_declaration", "indexer_declaration",
                 "event_declaration")
_TYPE_KINDS = ("class_declaration", "struct_declaration", "record_declaration")


def _hoist_to_method(ctx: Ctx, f) -> None:
    """A local function no delegate can stand for (generic, a ``params`` array) becomes a private method right
    after its member, with the member's type parameters added: calls resolve and its body is checked; what it
    captured from the member is lost (lossy unless it is ``static``)."""
    member = f.parent
    while member is not None and not (member.type in _MEMBER_KINDS and member.parent is not None
                                      and member.parent.type == "declaration_list"
                                      and member.parent.parent is not None
                                      and member.parent.parent.type in _TYPE_KINDS):
        member = member.parent
    ret = f.child_by_field_name("type") or f.child_by_field_name("returns")
    name = f.child_by_field_name("name")
    body = f.child_by_field_name("body")
    if member is None or ret is None or name is None or body is None:
        raise ValueError("no enclosing member")
    mods = [ctx.src(m) for m in children_of_type(f, "modifier")]
    static = "static" in mods or any(ctx.src(m) == "static" for m in children_of_type(member, "modifier"))
    outer = _outer_type_parameters(ctx, f)
    fs, fe = ctx.span(f)
    rs = ctx.span(ret)[0]
    rep = Rep(ctx).lit("\n private " + ("static " if static else "") +
                       "".join(m + " " for m in mods if m in ("async", "unsafe")))
    tpl = f.child_by_field_name("type_parameters") or child_of_type(f, "type_parameter_list")
    ne = ctx.span(name)[1]
    if tpl is not None:
        ts = ctx.span(tpl)[0] + 1
        rep.copy_edited(rs, ts).lit("".join(t + ", " for t in outer))
        pos = ts
    else:
        rep.copy_edited(rs, ne).lit(f"<{', '.join(outer)}>" if outer else "")
        pos = ne
    bs = ctx.span(body)[0]
    rep.copy_edited(pos, bs)
    n = f.parent
    while n is not None and n.id != member.parent.id:
        if n.type in ("method_declaration", "local_function_statement") and n.id != f.id:
            for cl in children_of_type(n, "type_parameter_constraints_clause"):
                rep.lit(" ").copy_edited(*ctx.span(cl)).lit(" ")
        n = n.parent
    rep.copy_edited(bs, fe)
    ctx.drop_inside(fs, fe)
    ctx.blank(fs, fe, C.LOCAL_FUNCTION)
    me = ctx.span(member)[1]
    ctx.edit(me, me, rep, C.LOCAL_FUNCTION)
    if not static:
        ctx.lossy_at(fs, C.LOCAL_FUNCTION)


def _outer_type_parameters(ctx: Ctx, f) -> list[str]:
    """Type parameters of the methods / local functions around ``f`` (a nested delegate type needs them)."""
    out = []
    n = f.parent
    while n is not None and n.type not in ("class_declaration", "struct_declaration", "record_declaration",
                                           "interface_declaration"):
        if n.type in ("method_declaration", "local_function_statement"):
            tps = n.child_by_field_name("type_parameters") or child_of_type(n, "type_parameter_list")
            if tps is not None:
                out = [ctx.src(tp.child_by_field_name("name") or tp) for tp in tps.named_children
                       if tp.type == "type_parameter"] + out
        n = n.parent
    return out


def _local_function(ctx: Ctx, f) -> None:
    """``R f(A a) {..}`` -> ``f = (A a) => {..};`` with ``Func<A, R> f = null;`` at the top of the block (calls
    before the declaration and recursion resolve).  Parameters ``ref``/``out``/``in``/``params`` or defaults need a
    delegate type of their own: ``delegate R __dN(..)`` declared in the enclosing type."""
    if f.parent is not None and f.parent.type == "ERROR":
        return  # tree-sitter lost its way (a method read as a local function): mcs decides, nothing to rewrite
    name = f.child_by_field_name("name")
    ret = f.child_by_field_name("type") or f.child_by_field_name("returns")
    plist = f.child_by_field_name("parameters") or child_of_type(f, "parameter_list")
    body = f.child_by_field_name("body")
    if name is None or ret is None or plist is None or body is None or child_of_type(f, "type_parameter_list"):
        raise ValueError("generic or incomplete local function")
    params = _params(ctx, plist)
    if len(params) != len(plist.named_children):  # ``params T[] x`` is no parameter node in this grammar
        raise ValueError("params array")
    custom = len(params) > 16
    for p in params:
        if p.child_by_field_name("type") is None:
            raise ValueError("untyped parameter")
        words = {ctx.src(c) for c in p.children if c.type in ("modifier", "parameter_modifier")} | \
            {c.type for c in p.children if c.type in _BY_REF}
        if words & _BY_REF or any(c.type == "=" for c in p.children) or child_of_type(p, "attribute_list"):
            custom = True
        if words - _BY_REF - {"scoped"}:
            raise ValueError("parameter modifier")
    mods = [ctx.src(m) for m in children_of_type(f, "modifier")]
    if any(m not in ("static", "async", "unsafe") for m in mods):
        raise ValueError("modifier")
    holder = f.parent
    if holder is None or holder.type not in ("block", "switch_section"):
        raise ValueError("not in a block")
    void = ctx.src(ret) == "void"
    decl = Rep(ctx).lit(" ")
    if custom:
        host = ancestor(f, "class_declaration", "struct_declaration", "record_declaration")
        hbody = host.child_by_field_name("body") if host is not None else None
        if hbody is None or child_of_type(hbody, "{") is None:
            raise ValueError("no enclosing type")
        dname = ctx.fresh("d")
        tps = _outer_type_parameters(ctx, f)
        targs = f"<{', '.join(tps)}>" if tps else ""
        d = Rep(ctx).lit(" " + ("unsafe " if "unsafe" in mods else "") + "delegate ")
        d.copy_pieces(_rep_pieces(type_pieces(ctx, ret))).lit(f" {dname}{targs}(")
        for k, p in enumerate(params):
            d.lit(", " if k else "")
            _copy_param(ctx, d, p, lambda target: True)
        d.lit(");\n")
        at = ctx.span(child_of_type(hbody, "{"))[1]
        ctx.edit(at, at, d, C.LOCAL_FUNCTION)
        decl.lit(f"{dname}{targs}")
        # a lambda's parameters take neither defaults nor attributes
        for p in params:
            for a in children_of_type(p, "attribute_list"):
                ctx.blank(*ctx.span(a), C.LOCAL_FUNCTION)
            eq = child_of_type(p, "=")
            if eq is not None:
                ctx.blank(ctx.span(eq)[0], ctx.span(p)[1], C.LOCAL_FUNCTION)
    else:
        decl.lit("global::System." + ("Action" if void else "Func"))
        types = [p.child_by_field_name("type") for p in params] + ([] if void else [ret])
        if types:
            decl.lit("<")
            for k, t in enumerate(types):
                decl.lit(", " if k else "").copy_pieces(_rep_pieces(type_pieces(ctx, t)))
            decl.lit(">")
    decl.lit(" ").copy(*ctx.span(name)).lit(" = null;\n")
    if holder.type == "block":
        ob = child_of_type(holder, "{")
        at = ctx.span(ob)[1]
    else:
        first = next((c for c in holder.named_children if c.type.endswith("statement")), None)
        if first is None:
            raise ValueError("empty section")
        at = ctx.span(first)[0]
    ctx.edit(at, at, decl, C.LOCAL_FUNCTION, prio=-1)
    fs = ctx.span(f)[0]
    ns, ne = ctx.span(name)
    ctx.edit(fs, ne, Rep(ctx).copy(ns, ne).lit(" = " + ("async " if "async" in mods else "")), C.LOCAL_FUNCTION)
    if body.type == "block":
        ctx.insert(ctx.span(body)[0], "=> ", C.LOCAL_FUNCTION, prio=-1)
        ctx.insert(ctx.span(body)[1], ";", C.LOCAL_FUNCTION)
