"""Cross-file uses that no compile error marks: names of project types declared in other files, read off the
tree-sitter tree of each compiled file where the syntax says they are types.

A stub shadows a project type without an error wherever the name is only used as a type (``public Quest q;``,
``List<Quest>``, ``[QuestAttr]``, ``class A : BaseThing``), so the diff of the two compiles marks member accesses
and constructor calls only.  The other uses are found here, from what the scan already knows (each file's
namespaces and ``using`` directives, the project's top-level types), with no compile of their own:

- TYPE: field, property, local, parameter and return types, generic arguments, casts, ``typeof``/``nameof``/
  ``default``/``is``/``as``, a type qualifying a nested type, or a static member (``Kind.Value``) outside the
  method bodies (in a body the compile marks the member of a stubbed type instead);
- HERITAGE: a base list; ATTRIBUTE: an attribute's name (``Foo`` for ``FooAttribute`` too);
- CONSTRUCTOR: ``new T(...)``;
- INHERITED_MEMBER: a member reached through ``this``/``base`` or unqualified, declared by a project base class in
  another file (``refs_inherited``).

A name is a project type where the file sees exactly one project type of that name in another file (the namespaces
around it and its ``using`` directives, as the stub planning resolves names), none declared in the file itself (a
nested type, a type parameter).  A name some member or local also has is left out of expression positions (``Color
Color``: the member may be what it names).  A framework or package type is never one: only the project's
declarations are looked up.  Positions are those of the preprocessed text, which keeps every original position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from benchsmith import treesitter
from benchsmith.analyzers.csharp.positions import positions
from benchsmith.analyzers.csharp.scan import BODY_NODES, GRAMMAR, TYPE_DECLS, CsFileInfo, CsType, _ancestor_node
from benchsmith.records import CrossFileRef, Definition, ReferenceKind

# nodes a type name sits in without changing what it is used as (``Foo[]``, ``Foo?``, ``ref Foo``, ``(Foo a, B b)``)
_WRAPPERS = frozenset({"array_type", "nullable_type", "pointer_type", "ref_type", "scoped_type", "tuple_element",
                       "tuple_type"})
_TYPE_FIELDS = frozenset({"type", "returns"})
# the expression places where a type name is a type only when no member or local has the name
_EXPRESSION_USES = frozenset({"member_access_expression", "constant_pattern"})
_DECLARED_NAMES = frozenset({"variable_declarator", "parameter", "property_declaration", "method_declaration",
                             "event_declaration", "enum_member_declaration", "local_function_statement",
                             "declaration_expression", "single_variable_designation", "catch_declaration",
                             "tuple_element", "from_clause", "let_clause", "join_clause", "query_continuation"})
# those whose name is a plain child, not a ``name`` field, in some grammar versions
_NAMED_BY_CHILD = frozenset({"variable_declarator", "single_variable_designation", "catch_declaration"})


@dataclass(frozen=True)
class TypeUse:
    start_byte: int
    name: str  # as written at the position
    kind: ReferenceKind
    qualifier: bool = False  # it qualifies a static member (``Kind.Value``)


def visible_project_types(infos: dict[str, CsFileInfo], declaring: set[str], *, delegates: bool = True
                          ) -> tuple[dict[str, dict[str, list[CsType]]], dict[str, list[str]]]:
    """The top-level types the files of ``declaring`` declare, by namespace and name, and each scanned file's
    visible namespaces (its ``using`` directives, the global namespace, every namespace around its
    declarations)."""
    by_ns: dict[str, dict[str, list[CsType]]] = {}
    for path in sorted(declaring):
        for t in infos[path].declared:
            if t.kind == "delegate" and not delegates:
                continue
            by_ns.setdefault(t.namespace, {}).setdefault(t.name, []).append(t)
    visible: dict[str, list[str]] = {}
    for path in sorted(infos):
        info = infos[path]
        seen = set(info.usings) | {""}
        for ns in info.namespaces:  # a namespace sees the types of its enclosing namespaces
            parts = ns.split(".")
            seen |= {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        visible[path] = sorted(seen)
    return by_ns, visible


def resolve(name: str, path: str, info: CsFileInfo, by_ns: dict[str, dict[str, list[CsType]]],
            namespaces: list[str]) -> CsType | None:
    """The one project type ``name`` means in ``path`` when it is declared in another file; None when the file
    declares the name itself, no visible namespace has it, or two visible project types share it."""
    if name in info.local_names:
        return None
    found: CsType | None = None
    for ns in namespaces:
        types = by_ns.get(ns, {}).get(name)
        if not types:
            continue
        if any(t.file == path for t in types):
            return None  # a part of it is declared here: not cross-file
        if found is not None and found.fqn != types[0].fqn:
            return None  # ambiguous
        found = types[0]
    return found


def field_of(node) -> str | None:
    parent = node.parent
    for i, c in enumerate(parent.children):
        if c.id == node.id:
            return parent.field_name_for_child(i)
    return None


def classify(ident) -> tuple[ReferenceKind, bool] | None:
    """What the identifier node ``ident`` is used as when it names a type: (kind, whether the place is an
    expression, where a member or local of the same name would win); None where it is no type use."""
    node = ident
    parent = node.parent
    if parent is None:
        return None
    if parent.type == "qualified_name":
        if field_of(node) == "qualifier":
            return ReferenceKind.TYPE, False  # Outer.Nested
        return None  # Ns.Type: the qualifier decides; not resolved here
    if parent.type == "generic_name":
        node, parent = parent, parent.parent
        if parent is None:
            return None
    if parent.type == "attribute":
        return (ReferenceKind.ATTRIBUTE, False) if field_of(node) == "name" else None
    if parent.type == "object_creation_expression":
        return (ReferenceKind.CONSTRUCTOR, False) if field_of(node) == "type" else None
    if parent.type in ("base_list", "primary_constructor_base_type"):
        return ReferenceKind.HERITAGE, False
    if parent.type == "member_access_expression":
        return (ReferenceKind.TYPE, True) if field_of(node) == "expression" and node is ident else None
    if parent.type == "constant_pattern" and parent.parent is not None \
            and parent.parent.type == "is_pattern_expression":
        return ReferenceKind.TYPE, True
    if parent.type == "argument" and node is ident:
        call = parent.parent.parent if parent.parent is not None else None
        fn = call.child_by_field_name("function") if call is not None and call.type == "invocation_expression" \
            else None
        if fn is not None and fn.type == "identifier" and fn.text == b"nameof":
            return ReferenceKind.TYPE, True
        return None
    while parent is not None and parent.type in _WRAPPERS:
        node, parent = parent, parent.parent
    if parent is None:
        return None
    if parent.type == "type_argument_list" or parent.type in ("type_parameter_constraint", "type_constraint"):
        return ReferenceKind.TYPE, False
    field = field_of(node)
    if parent.type in ("as_expression", "is_expression"):
        return (ReferenceKind.TYPE, False) if field == "right" else None
    if field in _TYPE_FIELDS and parent.type != "object_creation_expression":
        return ReferenceKind.TYPE, False
    if parent.type == "explicit_interface_specifier":
        return ReferenceKind.TYPE, False
    return None


def in_error(node) -> bool:
    while node is not None:
        if node.type == "ERROR" or node.is_missing:
            return True
        node = node.parent
    return False


def declared_names(idents) -> set[str]:
    """Every member, local, parameter, lambda parameter, query and pattern variable name among a file's identifier
    nodes (what may shadow a type or an inherited member in an expression)."""
    names = set()
    for n in idents:
        p = n.parent
        if p is None:
            continue
        if (p.type in _DECLARED_NAMES and (p.type in _NAMED_BY_CHILD or field_of(n) == "name")) \
                or p.type == "implicit_parameter" or (p.type == "foreach_statement" and field_of(n) == "left") \
                or (p.type == "lambda_expression" and field_of(n) == "parameters"):
            names.add(n.text.decode("utf-8", "replace"))
    return names


def identifiers(root) -> list:
    from tree_sitter import QueryCursor

    return list(QueryCursor(treesitter.query(GRAMMAR, "(identifier) @id")).captures(root).get("id", ()))


_CLASS_KINDS = ("class_declaration", "record_declaration", "struct_declaration")


@lru_cache(maxsize=1)
def _classes_query():
    lang = treesitter.language(GRAMMAR)
    return treesitter.query(GRAMMAR, " ".join(f"({k} (base_list)) @c" for k in _CLASS_KINDS
                                              if lang.id_for_node_kind(k, True)))


def classes_with_bases(root) -> list:
    """A file's class, record and struct declarations with a base list."""
    from tree_sitter import QueryCursor

    return list(QueryCursor(_classes_query()).captures(root).get("c", ()))


def identifiers_named(text: str, root, names: set[str]) -> dict[str, list]:
    """The identifier nodes of ``root`` (the tree of ``text``) whose text is one of ``names``, by name, each list
    in document order: the names are found in the text and each occurrence looked up in the tree (one in a comment
    or a string is no identifier), which costs by the occurrences instead of by every identifier of the file."""
    out: dict[str, list] = {}
    if not names:
        return out
    chars = positions(text)
    pattern = re.compile(r"(?<![\w@])(?:" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
                         + r")(?!\w)")
    for m in pattern.finditer(text):
        start, end = chars.to_byte(m.start()), chars.to_byte(m.end())
        n = root.descendant_for_byte_range(start, end)
        if n is not None and n.type == "identifier" and n.start_byte == start and n.end_byte == end:
            out.setdefault(m.group(0), []).append(n)
    return out


def type_uses(by_name: dict[str, list], candidates: set[str], errors: bool = True) -> list[tuple[object, TypeUse]]:
    """(identifier node, use) for every identifier (``identifiers_named``) whose text is in ``candidates`` and
    whose place is a type use; ``errors``: whether the tree has error nodes (none to look for otherwise)."""
    found = []
    for name in sorted(candidates & by_name.keys()):
        for n in by_name[name]:
            got = classify(n)
            if got is None or (errors and in_error(n)):
                continue
            found.append((n, name, *got))
    # a name read as a type in an expression is left out where a member, local or parameter has it
    asked = {name for _, name, _, expression in found if expression}
    shadowing = declared_names([n for name in sorted(asked) for n in by_name[name]])
    return [(n, TypeUse(n.start_byte, name, kind, n.parent.type == "member_access_expression"))
            for n, name, kind, expression in found if not (expression and name in shadowing)]


Span = tuple[int, int]


def declaration_spans(root) -> tuple[dict[str, Span], dict[tuple[str, str], Span]]:
    """(first, last) 0-based lines of each top-level type declaration (the first of a name), and of each member
    declared directly in one, by (type name, member name)."""
    types: dict[str, Span] = {}
    members: dict[tuple[str, str], Span] = {}

    def visit(container) -> None:
        for c in container.children:
            if c.type in ("namespace_declaration", "file_scoped_namespace_declaration"):
                body = c.child_by_field_name("body")
                visit(body if body is not None else c)
            elif c.type in TYPE_DECLS:
                n = c.child_by_field_name("name")
                if n is None:
                    continue
                name = n.text.decode("utf-8", "replace")
                types.setdefault(name, (c.start_point[0], c.end_point[0]))
                body = c.child_by_field_name("body")
                for m in body.named_children if body is not None else ():
                    for mn in _member_names(m):
                        members.setdefault((name, mn), (m.start_point[0], m.end_point[0]))

    visit(root)
    return types, members


def _member_names(m) -> list[str]:
    n = m.child_by_field_name("name")
    if n is not None and n.type == "identifier":
        return [n.text.decode("utf-8", "replace")]
    if m.type in ("field_declaration", "event_field_declaration"):
        decl = next((c for c in m.named_children if c.type == "variable_declaration"), None)
        out = []
        for v in decl.named_children if decl is not None else ():
            if v.type == "variable_declarator":
                n = v.child_by_field_name("name") or next((c for c in v.children if c.type == "identifier"), None)
                if n is not None:
                    out.append(n.text.decode("utf-8", "replace"))
        return out
    return []


class TypeRefFinder:
    """The scan-found references of one analysis (``finder.refs(path)`` per compiled file)."""

    def __init__(self, infos: dict[str, CsFileInfo], compiled: set[str], originals: dict[str, str],
                 pre_texts: dict[str, str], pre_trees: dict[str, object]) -> None:
        from benchsmith.analyzers.csharp.inherited import InheritedFinder

        self.infos, self.compiled, self.originals = infos, compiled, originals
        self.pre_texts, self.pre_trees = pre_texts, pre_trees
        # every scanned file declares its types, the compiler's verdict on it aside
        self.by_ns, self.visible = visible_project_types(infos, set(infos))
        # the types the stub planning stands in for (compiled files' types, no delegates): a member of one is the
        # compile's to find, and ``Widget.Max`` is then that MEMBER reference, not a type use at ``Widget``
        self.stubbable = visible_project_types(infos, compiled, delegates=False)[0]
        self._spans: dict[str, tuple[dict[str, Span], dict[tuple[str, str], Span]]] = {}
        self.inherited = InheritedFinder(infos, self.by_ns, lambda p: self.visible.get(p, [""]),
                                         lambda p: self.spans(p)[1])

    def tree(self, path: str):
        t = self.pre_trees.get(path)
        if t is None:
            t = self.pre_trees[path] = treesitter.parser(GRAMMAR).parse(self.pre_texts[path].encode("utf-8"))
        return t

    def spans(self, path: str) -> tuple[dict[str, Span], dict[tuple[str, str], Span]]:
        hit = self._spans.get(path)
        if hit is None:
            hit = self._spans[path] = declaration_spans(self.tree(path).root_node) \
                if path in self.pre_texts else ({}, {})
        return hit

    def nested_path(self, t: CsType, ident) -> list[tuple[object, CsType]]:
        """(name node, nested type) for each type nested in ``t`` that the qualified name ``ident`` starts names
        (``Outer.Inner.Deep``: Inner, Deep), over every part of ``t``."""
        out: list[tuple[object, CsType]] = []
        nested = [n for part in self.by_ns.get(t.namespace, {}).get(t.name, ()) for n in part.nested]
        node = ident.parent
        while node is not None and node.type == "qualified_name" and nested:
            name = node.child_by_field_name("name")
            ident = name if name is None or name.type == "identifier" else \
                next((c for c in name.children if c.type == "identifier"), None)
            found = next((n for n in nested if ident is not None and n.name == ident.text.decode("utf-8", "replace")),
                         None)
            if found is None:
                break
            out.append((ident, found))
            nested, node = list(found.nested), node.parent
        return out

    def definition(self, t: CsType) -> Definition | None:
        span = self.spans(t.file)[0].get(t.name)
        return Definition(t.file, span[0], span[1], t.name) if span is not None else None

    def refs(self, path: str) -> list[CrossFileRef]:
        info, original, text = self.infos[path], self.originals.get(path), self.pre_texts.get(path)
        if original is None or text is None or len(text) != len(original):
            return []  # positions would not be the original's
        namespaces = self.visible[path]
        names = {n for ns in namespaces for n in self.by_ns.get(ns, {})}
        # `[Foo]` names FooAttribute too
        candidates = names | {n[:-len("Attribute")] for n in names if n.endswith("Attribute") and len(n) > 9}
        root = self.tree(path).root_node
        classes = classes_with_bases(root)
        inherited = self.inherited.reachable(path, classes)
        by_name = identifiers_named(text, root, (candidates | set(inherited.names)) & info.used)
        chars = positions(text)
        orig_pos = positions(original)

        def to_position(byte: int, name: str) -> tuple[int, int] | None:
            off = chars.to_char(byte)
            return orig_pos.position(off) if original.startswith(name, off) else None

        out = []
        memo: dict[tuple[str, bool], CsType | None] = {}

        def find(name: str, stubbable: bool = False) -> CsType | None:
            key = (name, stubbable)
            if key not in memo:
                memo[key] = resolve(name, path, info, self.stubbable if stubbable else self.by_ns, namespaces)
            return memo[key]

        for node, use in type_uses(by_name, candidates & info.used, root.has_error):
            t = find(use.name)
            if use.kind is ReferenceKind.ATTRIBUTE:
                t = find(use.name + "Attribute") or t
            if use.qualifier and find(use.name, stubbable=True) is not None \
                    and _ancestor_node(node, BODY_NODES) is not None:
                # in a body the compile marks the member; outside one (a parameter's default, an initializer, an
                # attribute's argument: ``= Mode.Fast``) the qualifying type is a use of its own, as released
                # CrossCodeEval has it
                continue
            pos = to_position(use.start_byte, use.name) if t is not None and t.file != path else None
            if pos is None:
                continue
            out.append(CrossFileRef(path, pos[0], pos[1], use.name, t.name, t.file, "scan",
                                    f"{use.kind.value} {t.fqn}", kind=use.kind, definition=self.definition(t)))
            for name_node, nested in self.nested_path(t, node):
                pos = to_position(name_node.start_byte, nested.name)
                span = self.spans(nested.file)[0].get(t.name)
                if pos is not None and nested.file != path:
                    out.append(CrossFileRef(path, pos[0], pos[1], nested.name, t.name, nested.file, "scan",
                                            f"{use.kind.value} {nested.namespace}.{nested.name}", kind=use.kind,
                                            definition=Definition(nested.file, *span, t.name) if span else None))
        out += self.inherited.refs(path, root, by_name, inherited, to_position)
        return out


Place = tuple[str, int, int]


def scan_refs(plan) -> dict[Place, CrossFileRef]:
    """The scan-found references of a ``CsPlan``'s compiled files, by (file, line, column)."""
    pre_texts, pre_trees = plan.prepared.position_keeping()
    finder = TypeRefFinder(plan.infos, plan.compiled, plan.usable, pre_texts, pre_trees)
    out: dict[tuple[str, int, int], CrossFileRef] = {}
    for path in sorted(plan.compiled):
        for ref in finder.refs(path):
            out.setdefault((ref.file, ref.line, ref.column), ref)
    return out
