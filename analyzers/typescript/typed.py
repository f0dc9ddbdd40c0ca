"""Members reached through a variable whose declared type is a project type: ``deps.sourceCard`` after
``(deps: CardMod.ICardModDeps)``, ``card.scripts`` after ``const card: IAppraisedCard``.

Once the import of ``CardMod`` is stubbed, ``CardMod.ICardModDeps`` is an error type and every member of ``deps`` is
silent, so no diagnostic reveals these uses.  They are read off the tree instead: a parameter or variable annotated
with an imported type (``X``, ``ns.X``, ``X<T>``, ``X | undefined``) whose declaration the plan finds (a class,
interface or type literal, or one inside a namespace) gives a reference at each ``v.m`` whose member ``m`` that
declaration has, up its ``extends`` chain.  Scopes are honoured: each ``v`` is the innermost declaration of that name
around the use, and an untyped or differently typed one hides the annotated one.
"""

from __future__ import annotations

import re

from benchsmith.analyzers.typescript.attribution import export_origin, member_file, member_owner
from benchsmith.analyzers.typescript.kinds import SCAN_DIAGNOSTIC, classify, same_node
from benchsmith.analyzers.typescript.model import Binding, FileInfo, Plan
from benchsmith.records import CrossFileRef

_PARAMS = frozenset({"required_parameter", "optional_parameter"})
_FUNCTIONS = frozenset({"function_declaration", "generator_function_declaration", "function_expression",
                        "arrow_function", "method_definition", "function", "generator_function"})
_BLOCKS = frozenset({"statement_block", "program", "for_in_statement", "for_statement", "catch_clause",
                     "switch_body", "class_body"})
# declarations a type parameter is visible in
_GENERIC_DECLS = frozenset({"class_declaration", "abstract_class_declaration", "class", "interface_declaration",
                            "type_alias_declaration", "method_signature", "function_signature", "call_signature"})
_NULLISH = frozenset({"null", "undefined"})


def annotated_variable(type_node):
    """The parameter or variable a type (the node of its name) annotates: its identifier node, or None."""
    t = type_node
    while t.parent is not None and t.parent.type in ("nested_type_identifier", "generic_type", "union_type",
                                                     "parenthesized_type"):
        if t.parent.type == "union_type" and not _one_real_side(t.parent):
            return None
        if t.parent.type == "generic_type" and not same_node(t.parent.child_by_field_name("name"), t):
            return None  # X is a type argument (Array<X>): the variable is not an X
        t = t.parent
    ann = t.parent
    if ann is None or ann.type != "type_annotation":
        return None
    owner = ann.parent
    if owner is None or not same_node(owner.child_by_field_name("type"), ann):
        return None
    field = "pattern" if owner.type in _PARAMS else "name" if owner.type == "variable_declarator" else None
    var = owner.child_by_field_name(field) if field else None
    return var if var is not None and var.type == "identifier" else None


def _one_real_side(union) -> bool:
    sides = [c for c in union.named_children]
    return sum(not (c.type in ("literal_type", "predefined_type") and c.text.decode() in _NULLISH)
               for c in sides) == 1


def declared_type(plan: Plan, binding: Binding, type_name_node) -> tuple[str, str, str] | None:
    """(file, key in its ``members``, the import's local name) of the project type a type name names: ``X`` (an imported class, interface
    or type alias), ``ns.X`` (an export of a namespace import, or a member of an imported namespace)."""
    parent = type_name_node.parent
    qualified = parent is not None and parent.type == "nested_type_identifier" and \
        same_node(parent.child_by_field_name("module"), type_name_node)
    if qualified:
        inner = parent.child_by_field_name("name")
        if inner is None:
            return None
        return through_binding(plan, binding, inner.text.decode("utf-8", "replace"))
    return through_binding(plan, binding, None)


def through_binding(plan: Plan, binding: Binding, rest: str | None) -> tuple[str, str, str] | None:
    """``declared_type`` of the import ``binding`` (``rest`` None) or of its member ``rest`` (``ns.X``)."""
    target = binding.site.target
    if target is None:
        return None
    if rest is not None:
        if binding.imported is None:
            origin, key = export_origin(plan, target, rest)
        else:
            origin, there = export_origin(plan, target, binding.imported)
            key = f"{there}.{rest}"
    elif binding.imported is None:
        return None
    else:
        origin, key = export_origin(plan, target, binding.imported)
    if key is None or key not in plan.files[origin].members:
        return None
    return origin, key, binding.local


def member_type(plan: Plan, file: str, cls: str, member: str) -> tuple[str, str, str] | None:
    """``declared_type`` of the declared type of ``member`` of ``cls`` (``deps.engine`` -> GameEngine.IEngine),
    read in the file declaring it: a type of that file (a sibling in its namespace first) or one it imports."""
    owner = member_owner(plan, file, cls, member)
    if owner is None:
        return None
    file, cls = owner
    return _named_type(plan, file, cls, plan.files[file].member_types.get(cls, {}).get(member))


def return_type(plan: Plan, file: str, owner: str, function: str) -> tuple[str, str, str] | None:
    """``declared_type`` of the declared return type of ``function`` of ``owner`` ('' for a top-level function,
    else a class, interface or namespace, up the ``extends`` chain)."""
    if owner:
        found = member_owner(plan, file, owner, function)
        if found is None:
            return None
        file, owner = found
    return _named_type(plan, file, owner, plan.files[file].returns.get(owner, {}).get(function))


def initialized_type(plan: Plan, binding: Binding, node) -> tuple[str, str, str] | None:
    """The project type of ``new X(...)``, ``new ns.X(...)`` or a call ``f(...)`` / ``X.f(...)`` / ``ns.f(...)``
    with a declared return type, where ``node`` is the import's name at the start of it; None otherwise."""
    target = binding.site.target
    expr, rest = node, None
    parent = node.parent
    if parent is not None and parent.type == "member_expression" and \
            same_node(parent.child_by_field_name("object"), node):
        prop = parent.child_by_field_name("property")
        expr, rest = parent, prop.text.decode("utf-8", "replace") if prop is not None else None
        if rest is None:
            return None
    outer = expr.parent
    if outer is None:
        return None
    if outer.type == "new_expression" and same_node(outer.child_by_field_name("constructor"), expr):
        return through_binding(plan, binding, rest)
    if outer.type != "call_expression" or not same_node(outer.child_by_field_name("function"), expr) or target is None:
        return None
    if rest is None:  # f(...)
        if binding.imported is None:
            return None
        origin, there = export_origin(plan, target, binding.imported)
        return return_type(plan, origin, "", there) if there else None
    if binding.imported is None:  # ns.f(...)
        origin, there = export_origin(plan, target, rest)
        return return_type(plan, origin, "", there) if there else None
    origin, there = export_origin(plan, target, binding.imported)  # X.f(...): a static method, a namespace's function
    return return_type(plan, origin, there, rest) if there else None


def initialized_variable(node):
    """The identifier of the variable declared with the expression that ``initialized_type`` read at ``node``
    (``const v = new X()``), when the declaration writes no type of its own."""
    expr = node.parent if node.parent is not None and node.parent.type == "member_expression" else node
    outer = expr.parent
    decl = outer.parent if outer is not None else None
    if decl is None or decl.type != "variable_declarator" or decl.child_by_field_name("type") is not None or \
            not same_node(decl.child_by_field_name("value"), outer):
        return None
    name = decl.child_by_field_name("name")
    return name if name is not None and name.type == "identifier" else None


def _named_type(plan: Plan, file: str, cls: str, text: str | None) -> tuple[str, str, str] | None:
    """``declared_type`` of the type named ``text`` in ``file``, inside ``cls`` (its namespace's siblings first)."""
    if text is None:
        return None
    info = plan.files[file]
    head, _, rest = text.partition(".")
    if "." in rest:
        return None
    prefix = cls.rpartition(".")[0]
    for key in ([f"{prefix}.{text}"] if prefix else []) + [text]:
        if key in info.members:
            return file, key, head
    binding = next((b for site in info.sites if site.target is not None for b in site.bindings if b.local == head),
                   None)
    return through_binding(plan, binding, rest or None) if binding is not None else None


def scope_of(decl):
    """The node a declaration's name is visible in: a parameter's function (a type parameter's declaration), else
    the innermost block; None when no such node is found (the whole file, to be safe)."""
    node, in_params = decl.parent, False
    while node is not None:
        if node.type in ("formal_parameters", "type_parameters"):
            in_params = True
        elif in_params and (node.type in _FUNCTIONS or node.type in _GENERIC_DECLS):
            return node
        elif node.type == "arrow_function" and same_node(node.child_by_field_name("parameter"), decl):
            return node
        elif not in_params and node.type in _BLOCKS:
            return node
        node = node.parent
    return None


def typed_member_refs(plan: Plan, path: str, tree, typed: dict[str, list[tuple[object, tuple[str, str, str]]]],
                      declares) -> list[CrossFileRef]:
    """``typed``: variable name -> [(its declaring identifier node, ``declared_type``)]; ``declares(node)`` says
    whether a leaf binds its name.  The references at members of those variables."""
    if not typed:
        return []
    info: FileInfo = plan.files[path]
    root = tree.root_node
    pos = info.positions
    pattern = re.compile(r"(?<![\w$.])(?:" + "|".join(re.escape(n) for n in sorted(typed, key=len, reverse=True))
                         + r")(?![\w$])")
    decls: dict[str, list[tuple[int, int, tuple[str, str, str] | None]]] = {}
    uses: list[tuple[str, object]] = []
    known = {(n.start_byte, n.end_byte): t for name in typed for n, t in typed[name]}
    for m in pattern.finditer(info.text):
        name = m.group(0)
        b = pos.to_byte(m.start())
        node = root.descendant_for_byte_range(b, b + len(name.encode("utf-8")))
        if node is None or node.start_byte != b or node.child_count:
            continue
        if declares(node):
            scope = scope_of(node)
            if scope is not None:
                decls.setdefault(name, []).append((scope.start_byte, scope.end_byte,
                                                   known.get((node.start_byte, node.end_byte))))
            continue
        parent = node.parent
        if node.type == "identifier" and parent is not None and parent.type == "member_expression" and \
                same_node(parent.child_by_field_name("object"), node):
            uses.append((name, node))
    out: list[CrossFileRef] = []
    for name, node in uses:
        around = [d for d in decls.get(name, []) if d[0] <= node.start_byte < d[1]]
        if not around:
            continue
        typ = min(around, key=lambda d: d[1] - d[0])[2]  # the innermost declaration of the name
        if typ is not None:
            out += member_chain(plan, path, node.parent, typ)
    return out


def member_ref(plan: Plan, path: str, typ: tuple[str, str, str], name_node, detail: str, kind) -> CrossFileRef | None:
    """The reference a member name of the project type ``typ`` makes, at the name; None when the project declares
    no such member in another file."""
    symbol = name_node.text.decode("utf-8", "replace")
    defining = member_file(plan, typ[0], typ[1], symbol)
    if defining is None or defining == path:
        return None
    line, col = plan.files[path].positions.line_col(plan.files[path].positions.to_char(name_node.start_byte))
    return CrossFileRef(path, line, col, symbol, typ[2], defining, SCAN_DIAGNOSTIC, detail, kind=kind)


def member_chain(plan: Plan, path: str, access, typ: tuple[str, str, str], depth: int = 4) -> list[CrossFileRef]:
    """References along ``v.a.b.c`` from the member access ``v.a`` whose object has the project type ``typ``:
    ``a`` when the type declares it, then ``b`` when ``a``'s declared type is a project type that declares it..."""
    out: list[CrossFileRef] = []
    while typ is not None and access is not None and access.type == "member_expression" and depth > 0:
        member = access.child_by_field_name("property")
        if member is None or member.type != "property_identifier":
            break
        ref = member_ref(plan, path, typ, member, f"member of {typ[1]}", classify(member))
        if ref is None:
            break
        out.append(ref)
        outer = access.parent
        if outer is None or outer.type != "member_expression" or \
                not same_node(outer.child_by_field_name("object"), access):
            break
        typ, access, depth = member_type(plan, typ[0], typ[1], ref.symbol), outer, depth - 1
    return out


_THIS_RE = re.compile(r"(?<![\w$.])this\s*\.\s*[\w$]+\s*\??\.")
_CLASSES = frozenset({"class_declaration", "abstract_class_declaration"})


def this_member_refs(plan: Plan, path: str, tree) -> list[CrossFileRef]:
    """``this.x.y``: references along the chain after a field ``x`` of the enclosing class (or of its bases) whose
    declared type is a project type (``private engine: GameEngine.IEngine`` -> ``this.engine.broadcast``)."""
    info = plan.files[path]
    pos = info.positions
    out: list[CrossFileRef] = []
    for m in _THIS_RE.finditer(info.text):
        b = pos.to_byte(m.start())
        node = tree.root_node.descendant_for_byte_range(b, b + 4)
        inner = node.parent if node is not None and node.type == "this" else None
        outer = inner.parent if inner is not None and inner.type == "member_expression" else None
        if outer is None or outer.type != "member_expression" or \
                not same_node(outer.child_by_field_name("object"), inner):
            continue
        cls = inner
        while cls is not None and cls.type not in _CLASSES:
            if cls.type in ("function_declaration", "function_expression", "function"):
                cls = None  # `this` of a plain function is not the instance
                break
            cls = cls.parent
        name = cls.child_by_field_name("name") if cls is not None else None
        field = inner.child_by_field_name("property")
        if name is None or field is None:
            continue
        typ = member_type(plan, path, name.text.decode("utf-8", "replace"), field.text.decode("utf-8", "replace"))
        if typ is not None:
            out += member_chain(plan, path, outer, typ)
    return out
