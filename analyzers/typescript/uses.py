"""References the diagnostics cannot reveal, found by a cheap scan: every use of a name a project import binds.

A stub answers type positions, ``extends``, ``new``, decorators and JSX tags without any new diagnostic (an empty
class is a fine type, base, constructor or component), so those uses are read off the file's tree-sitter tree: each
occurrence of an imported local name that is a use (not a declaration) becomes a reference at that name, and each
``X.m`` / ``ns.m`` / ``ns.T`` right after such a name a reference at ``m`` when the declaration of ``m`` is found
in the project (a member of X's class, interface or namespace up its ``extends`` chain, or an export of ns).  No
compile is added: the import bindings and their resolution are the plan's own.

Only names whose declaration the plan finds inside the repository count: an import of a package, a re-export of
one, or a name the target module does not declare gives nothing.  A name declared again (a parameter, a local, a
type parameter of the same name) hides the import in that declaration's scope (its function, or its block).
"""

from __future__ import annotations

import re

from benchsmith.analyzers.typescript.attribution import export_origin, member_file
from benchsmith.analyzers.typescript.kinds import ACCESS_NODES, SCAN_DIAGNOSTIC, classify, same_node
from benchsmith.analyzers.typescript.objects import object_member_refs, typed_object
from benchsmith.analyzers.typescript.model import Binding, Plan
from benchsmith.analyzers.typescript.typed import (
    annotated_variable, declared_type, initialized_type, initialized_variable, scope_of, this_member_refs,
    typed_member_refs,
)
from benchsmith.records import CrossFileRef


_USE_TYPES = frozenset({"identifier", "type_identifier", "shorthand_property_identifier"})
# declarations whose `name` field binds a name in the file
_NAMED_DECLS = frozenset({
    "variable_declarator", "function_declaration", "generator_function_declaration", "function_expression",
    "class_declaration", "abstract_class_declaration", "class", "interface_declaration", "type_alias_declaration",
    "enum_declaration", "internal_module", "module", "function_signature", "type_parameter",
})
_PATTERNS = frozenset({"array_pattern", "object_pattern", "rest_pattern", "pair_pattern", "assignment_pattern"})
# fields of a dotted-name node: (object, member)
_ACCESS_FIELDS = {"member_expression": ("object", "property"), "nested_identifier": ("object", "property"),
                  "nested_type_identifier": ("module", "name")}


def project_bindings(plan: Plan, path: str) -> dict[str, Binding]:
    """The file's import bindings of project files that tsc resolved too."""
    out: dict[str, Binding] = {}
    for site in plan.files[path].sites:
        if site.target is None or site.target == path or site.unresolved_by_tsc:
            continue
        for b in site.bindings:
            out[b.local] = b
    return out


def _declares(node) -> bool:
    """``node`` (a leaf naming an import's local name) binds that name anew: a declaration or a pattern."""
    if node.type == "shorthand_property_identifier_pattern":
        return True
    p = node.parent
    if p is None:
        return False
    t = p.type
    if t in _NAMED_DECLS:
        return same_node(p.child_by_field_name("name"), node)
    if t in ("required_parameter", "optional_parameter"):
        return same_node(p.child_by_field_name("pattern"), node)
    if t == "arrow_function":
        return same_node(p.child_by_field_name("parameter"), node)
    if t == "catch_clause":
        return same_node(p.child_by_field_name("parameter"), node)
    if t == "for_in_statement":
        return same_node(p.child_by_field_name("left"), node)
    if t == "assignment_pattern":
        return same_node(p.child_by_field_name("left"), node)
    if t == "pair_pattern":
        return same_node(p.child_by_field_name("value"), node)
    return t in _PATTERNS


def scan_refs(plan: Plan, path: str, tree) -> list[CrossFileRef]:
    """The references of one file found by the binding scan, in text order."""
    info = plan.files[path]
    bindings = project_bindings(plan, path)
    if not bindings:
        return []
    text, pos = info.text, info.positions
    root = tree.root_node
    skip = sorted((s.start, s.end) for s in info.sites)
    pattern = re.compile(r"(?<![\w$.])(?:" + "|".join(re.escape(n) for n in sorted(bindings, key=len,
                                                                                       reverse=True)) + r")(?![\w$])")
    hits: list[tuple[str, object]] = []
    shadowed: dict[str, list[tuple[int, int]]] = {}  # name -> byte ranges where a declaration hides the import
    for m in pattern.finditer(text):
        if any(a <= m.start() < b for a, b in skip):
            continue
        name = m.group(0)
        b = pos.to_byte(m.start())
        node = root.descendant_for_byte_range(b, b + len(name.encode("utf-8")))
        if node is None or node.start_byte != b or node.child_count or node.text.decode("utf-8", "replace") != name:
            continue
        if _declares(node):
            scope = scope_of(node)
            shadowed.setdefault(name, []).append((scope.start_byte, scope.end_byte) if scope is not None
                                                 else (0, len(text.encode("utf-8"))))
        elif node.type in _USE_TYPES:
            hits.append((name, node))
    out: list[CrossFileRef] = []
    typed: dict[str, list] = {}
    for name, node in hits:
        if any(a <= node.start_byte < b for a, b in shadowed.get(name, ())):
            continue
        ref = _ref(plan, path, bindings[name], node)
        if ref is not None:
            out.append(ref)
        var = annotated_variable(node)
        obj = typed_object(node)
        typ = declared_type(plan, bindings[name], node) if var is not None or obj is not None else None
        if var is None and obj is None:
            var = initialized_variable(node)  # const v = new X() / X.make(): v has X's type
            typ = initialized_type(plan, bindings[name], node) if var is not None else None
        if typ is not None and var is not None:
            typed.setdefault(var.text.decode("utf-8", "replace"), []).append((var, typ))
        if typ is not None and obj is not None:
            out += object_member_refs(plan, path, obj, typ)
    return out + typed_member_refs(plan, path, tree, typed, _declares) + this_member_refs(plan, path, tree)


def _ref(plan: Plan, path: str, binding: Binding, node) -> CrossFileRef | None:
    info = plan.files[path]
    target = binding.site.target
    parent = node.parent
    fields = _ACCESS_FIELDS.get(parent.type) if parent is not None else None
    if parent is not None and parent.type in ("jsx_closing_element", "export_specifier"):
        return None  # the opening tag is the use; `export { A }` only passes the import on
    if fields is not None and same_node(parent.child_by_field_name(fields[1]), node):
        return None  # `x.Name`: a property that happens to share the import's name
    if fields is not None and same_node(parent.child_by_field_name(fields[0]), node):
        member = parent.child_by_field_name(fields[1])
        if member is None or member.type not in ("property_identifier", "type_identifier", "identifier"):
            return None
        name = member.text.decode("utf-8", "replace")
        if binding.imported is None:  # ns.m of `import * as ns` / `import ns = require()`
            origin, there = export_origin(plan, target, name)
            if there is None or there not in plan.files[origin].declared:
                return None
            defining = origin
        else:  # X.m: a member of X's class, interface or namespace
            origin, there = export_origin(plan, target, binding.imported)
            if there is None or there not in plan.files[origin].declared:
                return None
            defining = member_file(plan, origin, there, name)
            if defining is None:
                return None
        kind = classify(member, namespace_object=binding.imported is None)
        return _make(path, info, member, name, binding, defining, kind)
    if binding.imported is None:
        return None  # the namespace object itself: its members are the uses
    origin, there = export_origin(plan, target, binding.imported)
    if there is None or there not in plan.files[origin].declared:
        return None
    kind = classify(node, reexported=origin != target)
    return _make(path, info, node, node.text.decode("utf-8", "replace"), binding, origin, kind)


def _make(path, info, node, symbol, binding, defining, kind) -> CrossFileRef:
    line, col = info.positions.line_col(info.positions.to_char(node.start_byte))
    return CrossFileRef(path, line, col, symbol, binding.local, defining, SCAN_DIAGNOSTIC,
                        f"{kind.value} use of {binding.local!r}", kind=kind)


def node_at(tree, info, line: int, column: int):
    """The leaf that starts at (line, column) of the file, or None."""
    b = info.positions.to_byte(info.positions.line_start(line) + column)
    node = tree.root_node.descendant_for_byte_range(b, b)
    return node if node is not None and node.start_byte == b else None


def kind_of(plan: Plan, tree, ref: CrossFileRef):
    """The kind of a reference the diagnostics revealed, by the same rules as the scan's."""
    info = plan.files[ref.file]
    node = node_at(tree, info, ref.line, ref.column)
    if node is None:
        return None
    locals_ = plan.stubbed[ref.file].locals if ref.file in plan.stubbed else {}
    parent = node.parent
    namespace_object = False
    if parent is not None and parent.type in ACCESS_NODES:
        fields = _ACCESS_FIELDS[parent.type]
        obj = parent.child_by_field_name(fields[0])
        if same_node(parent.child_by_field_name(fields[1]), node) and obj is not None and obj.type == "identifier":
            b = locals_.get(obj.text.decode("utf-8", "replace"))
            namespace_object = b is not None and b.imported is None
    binding = locals_.get(ref.import_name)
    reexported = False
    if binding is not None and binding.imported is not None and binding.site.target is not None:
        reexported = export_origin(plan, binding.site.target, binding.imported)[0] != binding.site.target
    return classify(node, namespace_object, reexported)
