"""Declaration-level rewrites: records and primary constructors (parameters -> members + constructor), a struct's
parameterless constructor, ``init`` accessors, default interface members (bodies moved, with their exact map, into an
abstract class next to the interface: mcs cannot compile a body inside an interface)."""

from __future__ import annotations

from benchsmith.analyzers.csharp.downlevel.edits import Construct as C
from benchsmith.analyzers.csharp.downlevel.core import Ctx, Rep, child_of_type, children_of_type
from benchsmith.analyzers.csharp.downlevel.rules import _rep_pieces, type_pieces


def _params(ctx: Ctx, plist):
    return [p for p in plist.named_children if p.type == "parameter"]


def _member_names(ctx: Ctx, body) -> set[str]:
    names = set()
    if body is None:
        return names
    for m in body.named_children:
        n = m.child_by_field_name("name")
        if n is not None:
            names.add(ctx.src(n))
        for d in (m.named_children if m.type in ("field_declaration", "event_field_declaration") else ()):
            for v in (d.named_children if d.type == "variable_declaration" else ()):
                if v.type == "variable_declarator":
                    vn = v.child_by_field_name("name") or (v.named_children[0] if v.named_children else None)
                    if vn is not None:
                        names.add(ctx.src(vn))
    return names


def _param_type_rep(ctx: Ctx, rep: Rep, p) -> bool:
    t = p.child_by_field_name("type")
    if t is None:
        return False
    rep.copy_pieces(_rep_pieces(type_pieces(ctx, t)))
    return True


def _copy_param(ctx: Ctx, rep: Rep, p, keep_attr) -> None:
    """A parameter as text: attribute lists ``keep_attr`` accepts (without their target), modifiers, type, name,
    default value."""
    for a in children_of_type(p, "attribute_list"):
        target = child_of_type(a, "attribute_target_specifier")
        if not keep_attr(ctx.src(target).rstrip(":").strip() if target else ""):
            continue
        if target is not None:
            rep.lit("[")
            rep.copy(ctx.span(target)[1], ctx.span(a)[1])
            rep.lit(" ")
        else:
            rep.copy(*ctx.span(a)).lit(" ")
    t = p.child_by_field_name("type")
    for m in p.children:
        if m.type in ("modifier", "parameter_modifier", "this", "ref", "out", "in", "params", "scoped"):
            if ctx.src(m) != "scoped":
                rep.copy(*ctx.span(m)).lit(" ")
    if t is not None:
        rep.copy_pieces(_rep_pieces(type_pieces(ctx, t))).lit(" ")
    rest_start = ctx.span(t)[1] if t is not None else ctx.span(p)[0]
    rep.copy(rest_start, ctx.span(p)[1])


def _base_args(ctx: Ctx, decl):
    """(node to blank, argument_list) of a primary-constructor base call ``: Base(args)``."""
    bl = child_of_type(decl, "base_list")
    if bl is None:
        return None
    for c in bl.named_children:
        if c.type == "primary_constructor_base_type":
            args = child_of_type(c, "argument_list")
            if args is not None:
                return args
        if c.type == "argument_list":
            return c
    return None


def _ctor_and_members(ctx: Ctx, decl, params, is_struct: bool, properties: bool, construct) -> Rep:
    body = decl.child_by_field_name("body") or child_of_type(decl, "declaration_list")
    declared = _member_names(ctx, body)
    name = decl.child_by_field_name("name")
    rep = Rep(ctx).lit(" ")
    for p in params:
        pn = p.child_by_field_name("name")
        if pn is None or ctx.src(pn) in declared:
            continue
        if properties:
            for a in children_of_type(p, "attribute_list"):
                target = child_of_type(a, "attribute_target_specifier")
                if target is not None and ctx.src(target).rstrip(":").strip() == "property":
                    rep.lit("[").copy(ctx.span(target)[1], ctx.span(a)[1]).lit(" ")
            rep.lit("public ")
        else:
            # static: member initializers may read primary-constructor parameters (C# 12); an instance field there
            # would be CS0236, and nothing ever runs, so the constructor need not assign them
            rep.lit("private static ")
        _param_type_rep(ctx, rep, p)
        readonly = any(ctx.src(m) == "readonly" for m in children_of_type(decl, "modifier"))
        rep.lit(" ").copy(*ctx.span(pn)).lit((" { get; }\n" if readonly else " { get; set; }\n") if properties else ";\n")
    rep.lit("public ").copy(*ctx.span(name)).lit("(")
    for k, p in enumerate(params):
        if k:
            rep.lit(", ")
        _copy_param(ctx, rep, p, lambda target: target not in ("property", "field"))
    rep.lit(")")
    args = _base_args(ctx, decl)
    if args is not None:
        rep.lit(" : base").copy(*ctx.span(args))
    elif is_struct:
        rep.lit(" : this()")
    rep.lit(" {")
    for p in params if properties else ():
        pn = p.child_by_field_name("name")
        if pn is not None and ctx.src(pn) not in declared:
            n = ctx.src(pn)
            rep.lit(f" this.{n} = {n};")
    rep.lit(" }\n")
    if properties and params:
        rep.lit("public void Deconstruct(")
        for k, p in enumerate(params):
            pn = p.child_by_field_name("name")
            rep.lit(", " if k else "").lit("out ")
            _param_type_rep(ctx, rep, p)
            rep.lit(f" {ctx.src(pn)}")
        rep.lit(") {")
        for p in params:
            n = ctx.src(p.child_by_field_name("name"))
            rep.lit(f" {n} = this.{n};")
        rep.lit(" }\n")
    return rep


def _place_members(ctx: Ctx, decl, rep: Rep, construct) -> None:
    body = decl.child_by_field_name("body") or child_of_type(decl, "declaration_list")
    if body is not None:
        ob = child_of_type(body, "{")
        ctx.edit(ctx.span(ob)[1], ctx.span(ob)[1], rep, construct)
        return
    semi = [c for c in decl.children if c.type == ";"]
    if not semi:
        raise ValueError("declaration without body")
    s, e = ctx.span(semi[-1])
    ctx.edit(s, e, Rep(ctx).lit("{").copy_pieces(_rep_pieces(rep)).lit("}"), construct)


def records(ctx: Ctx, caps) -> None:
    for d in caps.get("record_declaration", []) + caps.get("record_struct_declaration", []):
        kw = child_of_type(d, "record")
        if kw is None:
            continue
        ctx.new_group()
        is_struct = child_of_type(d, "struct") is not None
        explicit = child_of_type(d, "struct") or child_of_type(d, "class")
        ks, ke = ctx.span(kw)
        ctx.edit(ks, ke, "      " if explicit is not None else "class ", C.RECORD)
        plist = child_of_type(d, "parameter_list")
        params = _params(ctx, plist) if plist is not None else []
        args = _base_args(ctx, d)
        if args is not None:
            ctx.blank(*ctx.span(args), C.RECORD)
        if plist is None:
            if not children_of_type(d, "declaration_list"):
                semi = [c for c in d.children if c.type == ";"]
                if semi:
                    ctx.edit(*ctx.span(semi[-1]), "{}", C.RECORD)
            continue
        ctx.blank(*ctx.span(plist), C.RECORD)
        try:
            _place_members(ctx, d, _ctor_and_members(ctx, d, params, is_struct, True, C.RECORD), C.RECORD)
        except ValueError:
            ctx.edits = [e for e in ctx.edits if e[6] != ctx.group]
            ctx.unsupported_at(ks, C.RECORD)


def primary_constructors(ctx: Ctx, caps) -> None:
    for kind in ("class_declaration", "struct_declaration"):
        for d in caps.get(kind, []):
            plist = child_of_type(d, "parameter_list")
            if plist is None:
                continue
            ctx.new_group()
            params = _params(ctx, plist)
            ctx.blank(*ctx.span(plist), C.PRIMARY_CONSTRUCTOR)
            args = _base_args(ctx, d)
            if args is not None:
                ctx.blank(*ctx.span(args), C.PRIMARY_CONSTRUCTOR)
            try:
                _place_members(ctx, d, _ctor_and_members(ctx, d, params, kind == "struct_declaration", False,
                                                         C.PRIMARY_CONSTRUCTOR), C.PRIMARY_CONSTRUCTOR)
            except ValueError:
                ctx.edits = [e for e in ctx.edits if e[6] != ctx.group]
                ctx.unsupported_at(ctx.span(d)[0], C.PRIMARY_CONSTRUCTOR)


def struct_parameterless_ctors(ctx: Ctx, caps) -> None:
    """``struct S { public S() { ... } }`` (C# 10) -> ``public S(bool __bsdl_ctor) { ... }``: mcs rejects an
    explicit parameterless constructor of a struct (CS0568, which loses the file); with a parameter the body is
    still compiled, and ``new S()`` reads the same (a struct's default value, as C# 7 has it)."""
    for d in caps.get("struct_declaration", []):
        body = d.child_by_field_name("body") or child_of_type(d, "declaration_list")
        for m in body.named_children if body is not None else ():
            plist = m.child_by_field_name("parameters") if m.type == "constructor_declaration" else None
            if plist is None or plist.named_children or \
                    any(c.type == "modifier" and ctx.src(c) == "static" for c in m.children):
                continue
            ctx.new_group()
            ctx.insert(ctx.span(plist)[0] + 1, "bool __bsdl_ctor", C.STRUCT_PARAMETERLESS_CTOR)
            ctx.lossy_at(ctx.span(m)[0], C.STRUCT_PARAMETERLESS_CTOR)


def accessors(ctx: Ctx, caps) -> None:
    for a in caps.get("accessor_declaration", []):
        kw = child_of_type(a, "init")
        if kw is not None:
            ctx.new_group()
            ctx.edit(*ctx.span(kw), "set ", C.INIT_ACCESSOR)


_INTERFACE_MODIFIERS = frozenset({"public", "private", "protected", "internal", "virtual", "abstract", "sealed",
                                  "extern", "partial"})


def default_interface_members(ctx: Ctx, caps) -> None:
    """An interface member with a body (C# 8), a static member or an access modifier: mcs rejects them all.  The
    members with bodies and the static ones leave the interface (a declaration left there would make every
    implementer relying on the default fail with CS0535, at declaration level) for an abstract class next to it,
    with abstract copies of the other members so the bodies resolve what they call.  An instance method also gets
    an extension method of the same signature on the interface (top-level interfaces), so calls through the
    interface still resolve -- and fail against a stub of it, as a cross-file use should."""
    for i in caps.get("interface_declaration", []):
        body = i.child_by_field_name("body") or child_of_type(i, "declaration_list")
        if body is None:
            continue
        moved = []
        for m in body.named_children:
            has_body = m.child_by_field_name("body") is not None or child_of_type(m, "arrow_expression_clause") \
                or any(child_of_type(a, "block", "arrow_expression_clause") is not None
                       for a in children_of_type(child_of_type(m, "accessor_list") or m, "accessor_declaration"))
            static = any(ctx.src(x) == "static" for x in children_of_type(m, "modifier"))
            if has_body or static or m.type in ("field_declaration", "operator_declaration",
                                                "conversion_operator_declaration", "constructor_declaration"):
                moved.append(m)
        moved_ids = {m.id for m in moved}
        extra = [x for m in body.named_children if m.id not in moved_ids
                 for x in children_of_type(m, "modifier") if ctx.src(x) in _INTERFACE_MODIFIERS]
        if not moved and not extra:
            continue
        ctx.new_group()
        for x in extra:
            ctx.blank(*ctx.span(x), C.DEFAULT_INTERFACE_MEMBER)
        if not moved:
            continue
        tps = child_of_type(i, "type_parameter_list")
        clauses = children_of_type(i, "type_parameter_constraints_clause")
        helper = Rep(ctx).lit(f" internal abstract class {ctx.fresh('dim')}")
        if tps is not None:
            _copy_invariant(ctx, helper, tps)
        for cl in clauses:
            helper.lit(" ").copy(*ctx.span(cl))
        helper.lit(" {")
        ext = Rep(ctx)
        for m in moved:
            ms, me = ctx.span(m)
            mods = children_of_type(m, "modifier")
            start = max([ctx.span(x)[1] for x in mods + children_of_type(m, "attribute_list")], default=ms)
            static = any(ctx.src(x) == "static" for x in mods)
            if not any(ctx.src(x) == "abstract" for x in mods):
                helper.lit("\n public " + ("static " if static else ""))
                helper.copy_edited(start, me)
                if m.type == "method_declaration" and not static:
                    _extension(ctx, ext, i, m, tps, clauses)
            ctx.drop_inside(ms, me)
            ctx.blank(ms, me, C.DEFAULT_INTERFACE_MEMBER)
        for m in body.named_children:
            if m.id in moved_ids or m.type not in ("method_declaration", "property_declaration",
                                                   "indexer_declaration", "event_declaration",
                                                   "event_field_declaration"):
                continue
            ms, me = ctx.span(m)
            mods = children_of_type(m, "modifier") + children_of_type(m, "attribute_list")
            start = max([ctx.span(x)[1] for x in mods], default=ms)
            helper.lit("\n public abstract ").copy_edited(start, me)
        helper.lit(" }")
        top_level = i.parent is not None and (i.parent.type == "compilation_unit" or (
            i.parent.type == "declaration_list" and i.parent.parent is not None
            and i.parent.parent.type == "namespace_declaration")) or (
            i.parent is not None and i.parent.type == "compilation_unit")
        if ext.parts and top_level:
            helper.lit(f"\n internal static class {ctx.fresh('ext')} {{").copy_pieces(_rep_pieces(ext)).lit(" }")
        ctx.edit(ctx.span(i)[1], ctx.span(i)[1], helper, C.DEFAULT_INTERFACE_MEMBER)


def _copy_invariant(ctx: Ctx, rep: Rep, tps) -> None:
    """An interface's type parameter list for a class: ``<out T, in U>`` -> ``<T, U>`` (variance is for interfaces
    and delegates only: CS1960)."""
    start, end = ctx.span(tps)
    for tp in tps.named_children:
        for v in tp.children:
            if v.type in ("in", "out"):
                vs, ve = ctx.span(v)
                rep.copy(start, vs)
                start = ctx.span(v.next_sibling)[0] if v.next_sibling is not None else ve
    rep.copy(start, end)


def _extension(ctx: Ctx, rep: Rep, iface, m, tps, clauses) -> None:
    """``R M<U>(P p)`` of interface ``I<T>`` -> ``public static R M<T, U>(this I<T> __self, P p) { throw null; }``."""
    ret = m.child_by_field_name("returns") or m.child_by_field_name("type")
    name = m.child_by_field_name("name")
    plist = m.child_by_field_name("parameters") or child_of_type(m, "parameter_list")
    if ret is None or name is None or plist is None:
        return
    mtps = m.child_by_field_name("type_parameters") or child_of_type(m, "type_parameter_list")
    itp = [ctx.src(t.child_by_field_name("name") or t) for t in tps.named_children
           if t.type == "type_parameter"] if tps is not None else []
    mtp = [ctx.src(t.child_by_field_name("name") or t) for t in mtps.named_children
           if t.type == "type_parameter"] if mtps is not None else []
    rep.lit("\n public static ").copy_pieces(_rep_pieces(type_pieces(ctx, ret))).lit(" ").copy(*ctx.span(name))
    if itp or mtp:
        rep.lit("<" + ", ".join(itp + mtp) + ">")
    rep.lit("(this ").copy(*ctx.span(iface.child_by_field_name("name")))
    if itp:
        rep.lit("<" + ", ".join(itp) + ">")
    rep.lit(" __self")
    inner = ctx.text[ctx.span(plist)[0] + 1:ctx.span(plist)[1] - 1]
    if inner.strip():
        rep.lit(", ").copy_edited(ctx.span(plist)[0] + 1, ctx.span(plist)[1] - 1)
    rep.lit(")")
    for cl in clauses + children_of_type(m, "type_parameter_constraints_clause"):
        rep.lit(" ").copy(*ctx.span(cl))
    rep.lit(" { throw null; }")
