"""INHERITED_MEMBER references: a member reached through ``this``/``base`` or unqualified inside a class whose
project base class, declared in another file, declares it.

The stubs cannot show these: a top-level class's base list is read outside the class, where its nested stubs do
not reach, so the real base stays and the member resolves in both compiles.  They are read off the tree instead,
with the scan's index: the class's base list resolved as the stub planning resolves names, then the bases' own
base lists, each in its own file's namespaces, and the member names each part of those types declares
(``CsTop.members``).  A name the class itself declares, or any member, local or parameter of the file has, is
left out (it may be what the name means), as are type names and names behind a qualifier other than
``this``/``base``.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.analyzers.csharp.kinds import declared_names, field_of, in_error
from benchsmith.analyzers.csharp.scan import CsFileInfo, CsType, _member_names
from benchsmith.records import CrossFileRef, Definition, ReferenceKind

_CLASSES = frozenset({"class_declaration", "record_declaration", "struct_declaration"})
# where an unqualified identifier is read as a value (a member, a local...), by parent node and field
_VALUE_PLACES = {"invocation_expression": "function", "member_access_expression": "expression",
                 "element_access_expression": "expression", "conditional_access_expression": "condition",
                 "cast_expression": "value", "foreach_statement": "right", "is_pattern_expression": "expression",
                 "as_expression": "left", "is_expression": "left"}
_ANY_CHILD = frozenset({"argument", "binary_expression", "conditional_expression", "prefix_unary_expression",
                        "postfix_unary_expression", "parenthesized_expression", "return_statement",
                        "arrow_expression_clause", "interpolation", "if_statement", "while_statement", "do_statement",
                        "await_expression", "throw_statement", "throw_expression", "yield_statement", "lock_statement",
                        "equals_value_clause", "switch_statement", "switch_expression"})
_THIS = frozenset({"this", "this_expression", "base", "base_expression"})
MAX_CHAIN = 20


def _value_place(n) -> bool:
    p = n.parent
    if p is None:
        return False
    f = field_of(n)
    if p.type == "assignment_expression":
        # `new T { X = 1 }`: X is T's member, not this class's
        return not (f == "left" and p.parent is not None and p.parent.type == "initializer_expression")
    if p.type == "variable_declarator":
        return f != "name"
    if p.type in _ANY_CHILD:
        return True
    want = _VALUE_PLACES.get(p.type)
    return want is not None and f == want


def _through_this(n) -> bool:
    p = n.parent
    if p is None or p.type != "member_access_expression" or field_of(n) != "name":
        return False
    e = p.child_by_field_name("expression")
    return e is not None and e.type in _THIS


@dataclass(frozen=True)
class Reachable:
    views: dict  # class node id -> (inherited member -> (declaring type, its file), the class's own member names)
    names: frozenset[str]  # every member name some class of the file inherits from a project base


class InheritedFinder:
    """``refs(path, root, idents)``: the inherited-member references of one compiled file."""

    def __init__(self, infos: dict[str, CsFileInfo], by_ns: dict[str, dict[str, list[CsType]]],
                 visible_of, spans_of) -> None:
        """``visible_of(path)``: the namespaces a file sees; ``spans_of(path)``: (type name, member name) ->
        (first, last) line of the member's declaration in that file."""
        self.infos, self.by_ns, self.visible_of, self.spans_of = infos, by_ns, visible_of, spans_of
        self._parts: dict[tuple[str, str], list[tuple[str, frozenset[str]]]] = {}
        self._chains: dict[tuple[str, str], dict[str, tuple[CsType, str]]] = {}

    def _lookup(self, name: str, path: str) -> CsType | None:
        found = None
        for ns in self.visible_of(path):
            types = self.by_ns.get(ns, {}).get(name)
            if types:
                if found is not None and found.fqn != types[0].fqn:
                    return None
                found = types[0]
        return found

    def _parts_of(self, t: CsType) -> list[tuple[str, frozenset[str]]]:
        key = (t.namespace, t.name)
        hit = self._parts.get(key)
        if hit is None:
            hit = self._parts[key] = [(p, top.members) for p in sorted(self.infos) for top in self.infos[p].tops
                                      if top.namespace == t.namespace and top.name == t.name]
        return hit

    def inherited(self, base: str, path: str) -> dict[str, tuple[CsType, str]]:
        """Member name -> (declaring project type, its file) along the chain of the base named ``base`` in
        ``path``, the nearest declaration first."""
        key = (base, path)
        hit = self._chains.get(key)
        if hit is not None:
            return hit
        out: dict[str, tuple[CsType, str]] = {}
        queue = [(base, path)]
        seen: set[str] = set()
        while queue and len(seen) < MAX_CHAIN:
            name, where = queue.pop(0)
            t = self._lookup(name, where)
            if t is None or t.fqn in seen:
                continue
            seen.add(t.fqn)
            for file, members in self._parts_of(t):
                for m in sorted(members):
                    out.setdefault(m, (t, file))
            queue.extend((s, t.file) for s in t.supers)
        self._chains[key] = out
        return out

    def reachable(self, path: str, classes: list) -> "Reachable":
        """The classes of a file (``kinds.classes_with_bases``) with what each inherits from project bases."""
        views = {cls.id: self._class_view(cls, path) for cls in classes}
        return Reachable(views, frozenset(m for chain, _ in views.values() for m in chain))

    def refs(self, path: str, root, by_name: dict[str, list], reach: "Reachable", to_position) -> list[CrossFileRef]:
        """``by_name``: the file's identifiers of the names in ``reach.names``, by name
        (``kinds.identifiers_named``); ``to_position(byte, name)``: the original (line, column) of a byte of the
        tree, None where the text differs there."""
        info = self.infos[path]
        out: list[CrossFileRef] = []
        class_cache = dict(reach.views)
        names = sorted(reach.names & by_name.keys())
        if not names:
            return out
        locals_ = declared_names([n for name in names for n in by_name[name]])
        for n in (n for name in names for n in by_name[name]):
            if root.has_error and in_error(n):
                continue
            unqualified = _value_place(n)
            if not unqualified and not _through_this(n):
                continue
            cls = n.parent
            while cls is not None and cls.type not in _CLASSES:
                cls = cls.parent
            if cls is None:
                continue
            got = class_cache.get(cls.id)
            if got is None:
                got = class_cache[cls.id] = self._class_view(cls, path)
            chain, own = got
            name = n.text.decode("utf-8", "replace")
            hit = chain.get(name)
            if hit is None or name in own:
                continue
            if unqualified:
                if name in locals_ or name in info.local_names or self._lookup(name, path) is not None:
                    continue
            t, file = hit
            if file == path:
                continue
            pos = to_position(n.start_byte, name)
            if pos is None:
                continue
            span = self.spans_of(file).get((t.name, name))
            definition = Definition(file, span[0], span[1], name) if span is not None else None
            out.append(CrossFileRef(path, pos[0], pos[1], name, t.name, file, "scan",
                                    f"inherited_member {t.fqn}.{name}", kind=ReferenceKind.INHERITED_MEMBER,
                                    definition=definition))
        return out

    def _class_view(self, cls, path: str) -> tuple[dict, frozenset[str]]:
        """The inherited members of one class declaration and the names it declares itself."""
        body = cls.child_by_field_name("body") or next((c for c in cls.children if c.type == "declaration_list"),
                                                       None)
        own = _member_names(body)
        bases = next((c for c in cls.children if c.type == "base_list"), None)
        chain: dict[str, tuple[CsType, str]] = {}
        if bases is not None:
            for b in bases.named_children:
                if b.type == "primary_constructor_base_type":
                    b = b.named_children[0] if b.named_children else b
                if b.type == "generic_name":
                    b = b.named_children[0] if b.named_children else b
                if b.type != "identifier":
                    continue
                for m, hit in self.inherited(b.text.decode("utf-8", "replace"), path).items():
                    chain.setdefault(m, hit)
        return chain, own
