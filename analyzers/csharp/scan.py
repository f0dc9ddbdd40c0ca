"""The tree-sitter scan of one C# file: the namespaces it declares and imports, its types (where a stub can go,
what they derive from, their members), the names it uses, and where method bodies are."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import lru_cache

from benchsmith import treesitter
from benchsmith.analyzers.common import tree_has_errors, walk
from benchsmith.analyzers.csharp.positions import positions
from benchsmith.files import SourceFile

GRAMMAR = "tree_sitter_c_sharp"
TYPE_DECLS = {"class_declaration": "class", "struct_declaration": "struct", "interface_declaration": "interface",
              "enum_declaration": "enum", "record_declaration": "class", "record_struct_declaration": "struct",
              "delegate_declaration": "delegate"}
STUB_HOSTS = {"class", "struct"}  # C# 7 allows nested types in classes and structs only
BODY_NODES = {"block", "arrow_expression_clause", "constructor_initializer"}
# the members whose declaration the blocker prediction and the shim look at around a diagnostic
MEMBER_DECLS = frozenset({"method_declaration", "property_declaration", "indexer_declaration", "event_declaration"})
# What ``predict_blockers`` reads, captured by the scan's one query.
BLOCKER_PATTERNS = ("(class_declaration) @type (record_declaration) @type (explicit_interface_specifier) @explicit"
                    " (method_declaration (modifier) @mod) (property_declaration (modifier) @mod)"
                    " (indexer_declaration (modifier) @mod) (qualified_name qualifier: (identifier) @qualifier)"
                    " (method_declaration (type_parameter_constraints_clause) @constraint)")


@dataclass(frozen=True)
class CsType:
    namespace: str
    name: str
    kind: str
    arity: int
    file: str
    supers: tuple[str, ...] = ()  # simple names in its base list
    # the types declared in its body, to any depth (``namespace`` of each: the fqn of the type around it); the stub
    # of a type declares them, so that ``Outer.Inner`` in a signature still resolves (CS0426 there stops mcs)
    nested: tuple["CsType", ...] = ()

    @property
    def fqn(self) -> str:
        return f"{self.namespace}.{self.name}" if self.namespace else self.name


@dataclass
class CsTop:
    namespace: str
    name: str
    kind: str
    partial: bool
    insert_at: int | None  # character offset of the closing brace of its body
    members: frozenset[str] = frozenset()  # names of its members: a nested stub of one of them is CS0102


@dataclass
class CsFileInfo:
    path: str
    namespaces: set[str] = field(default_factory=set)
    usings: set[str] = field(default_factory=set)
    tops: list[CsTop] = field(default_factory=list)
    declared: list[CsType] = field(default_factory=list)  # top-level (namespace member) types
    local_names: set[str] = field(default_factory=set)  # every type / type parameter name declared here
    used: set[str] = field(default_factory=set)
    ts_error: bool = False
    tree: object = None
    blocker_caps: dict | None = None  # the captures ``predict_blockers`` reads, taken by the scan's query
    # (start byte, end byte, names) where ``tree`` keeps an original type the text replaced (``scan_csharp``'s
    # ``masks``): the names of the text there, read in place of the identifiers the tree holds
    masks: tuple[tuple[int, int, tuple[str, ...]], ...] = ()  # sorted, disjoint
    _mask_starts: list[int] | None = field(default=None, repr=False, compare=False)

    def masked(self, node) -> tuple[str, ...] | None:
        """The names the text has where ``node`` lies inside a mask, None outside every mask."""
        if not self.masks:
            return None
        if self._mask_starts is None:
            self._mask_starts = [s for s, _, _ in self.masks]
        i = bisect.bisect_right(self._mask_starts, node.start_byte) - 1
        if i >= 0 and node.end_byte <= self.masks[i][1]:
            return self.masks[i][2]
        return None


@lru_cache(maxsize=1)
def _names_query():
    """One query for the whole-file name sets, run in C instead of a Python walk over every node: declared type and
    type-parameter names (@local), every identifier (@id), and the spans whose identifiers are not uses (@skip:
    ``using`` directives, namespace names)."""
    lang = treesitter.language(GRAMMAR)
    kinds = [k for k in TYPE_DECLS if lang.id_for_node_kind(k, True)]  # older grammars lack some kinds
    src = " ".join(f"({k} name: (_) @local)" for k in kinds)
    src += (" (type_parameter name: (_) @local) (identifier) @id (using_directive) @skip"
            " (namespace_declaration name: (_) @skip) (file_scoped_namespace_declaration name: (_) @skip) "
            + BLOCKER_PATTERNS)
    return treesitter.query(GRAMMAR, src)


def _name(node) -> str:
    return re.sub(r"\s+|/\*.*?\*/|//[^\n]*", "", node.text.decode("utf-8", "replace"), flags=re.S)


@lru_cache(maxsize=64)
def type_names(type_text: str) -> tuple[str, ...] | None:
    """The identifiers the scan reads in a type written as ``type_text`` (``global::System.IntPtr``: global, System,
    IntPtr); None where the type is not all it reads (it does not parse as a field's type, or holds a qualifier
    the blocker prediction would capture)."""
    from tree_sitter import QueryCursor

    if "<" in type_text:
        return None  # the masks read every name as of arity 0
    head = b"class __T { "
    data = head + type_text.encode("utf-8") + b" __f; }"
    root = treesitter.parser(GRAMMAR).parse(data).root_node
    caps = QueryCursor(_names_query()).captures(root)
    if root.has_error or any(caps.get(k) for k in ("qualifier", "explicit", "mod")):
        return None
    end = len(data) - len(b" __f; }")
    return tuple(sorted({n.text.decode("utf-8") for n in caps.get("id", ())
                         if len(head) <= n.start_byte and n.end_byte <= end}))


def scan_csharp(src: SourceFile, tree=None, masks=()) -> CsFileInfo:
    """``tree``: tree-sitter's tree of ``src.text`` when the caller has it already.  ``masks``: (start, end,
    type text) in characters, where ``tree`` holds another type than ``src.text`` (``DownlevelResult.scan_masks``):
    the names of the type text are read there instead of the identifiers of the tree."""
    info = CsFileInfo(src.path)
    data = src.text.encode("utf-8")
    tree = tree if tree is not None else treesitter.parser(GRAMMAR).parse(data)
    info.tree = tree
    root = tree.root_node
    info.ts_error = tree_has_errors(root)
    chars = positions(src.text)
    if masks:
        info.masks = tuple((chars.to_byte(s), chars.to_byte(e), type_names(t)) for s, e, t in masks)
        if any(names is None for _, _, names in info.masks):
            # a replacement the masks cannot stand for: the text's own tree then
            info.masks, tree = (), treesitter.parser(GRAMMAR).parse(data)
            info.tree, root = tree, tree.root_node
            info.ts_error = tree_has_errors(root)

    def visit(container, ns: str) -> None:
        current = ns
        for c in container.children:
            if c.type == "using_directive":
                names = [ch for ch in c.children if ch.type in ("identifier", "qualified_name")]
                is_alias = any(ch.type == "=" for ch in c.children)
                if names and not is_alias and not any(ch.type == "static" for ch in c.children):
                    info.usings.add(_name(names[-1]))
            elif c.type in ("namespace_declaration", "file_scoped_namespace_declaration"):
                n = c.child_by_field_name("name")
                sub = _name(n) if n is not None else ""
                full = f"{ns}.{sub}" if ns and sub else (sub or ns)
                info.namespaces.add(full)
                if c.type == "file_scoped_namespace_declaration":
                    current = full  # the following siblings belong to it
                    continue
                body = c.child_by_field_name("body")
                if body is not None:
                    visit(body, full)
            elif c.type in TYPE_DECLS:
                n = c.child_by_field_name("name")
                if n is None:
                    continue
                kind = TYPE_DECLS[c.type]
                arity = _arity(c)
                name = n.text.decode("utf-8", "replace")
                bases = next((ch for ch in c.children if ch.type == "base_list"), None)
                supers = tuple(t.text.decode("utf-8", "replace") for t in walk(bases) if t.type == "identifier") \
                    if bases is not None else ()
                body = _type_body(c)
                info.declared.append(CsType(current, name, kind, arity, src.path, supers,
                                            _nested_types(body, f"{current}.{name}" if current else name, src.path)))
                partial = any(ch.type == "modifier" and ch.text == b"partial" for ch in c.children)
                insert_at = None
                if body is not None and body.children and body.children[-1].type == "}" \
                        and not body.children[-1].is_missing:
                    insert_at = chars.to_char(body.children[-1].start_byte)
                info.tops.append(CsTop(current, name, kind, partial, insert_at, _member_names(body)))

    visit(root, "")
    from tree_sitter import QueryCursor

    caps = QueryCursor(_names_query()).captures(root)
    if info.masks:
        caps["id"] = [n for n in caps.get("id", ()) if info.masked(n) is None]
        caps["qualifier"] = [n for n in caps.get("qualifier", ()) if info.masked(n) is None]
    info.blocker_caps = {k: caps.get(k, []) for k in ("type", "explicit", "mod", "qualifier", "constraint")}
    info.local_names = {n.text.decode("utf-8", "replace") for n in caps.get("local", ())}
    skips = sorted((n.start_byte, n.end_byte) for n in caps.get("skip", ()))
    spans = [(n.start_byte, n.end_byte) for n in caps.get("id", ())]
    if skips:
        starts = [s for s, _ in skips]
        kept = []
        for s, e in spans:
            i = bisect.bisect_right(starts, s) - 1
            if i < 0 or e > skips[i][1]:
                kept.append((s, e))
        spans = kept
    info.used = {data[s:e].decode("utf-8", "replace") for s, e in spans}
    for _, _, names in info.masks:
        info.used.update(names)
    return info


def _type_body(decl):
    return decl.child_by_field_name("body") or next((ch for ch in decl.children if ch.type == "declaration_list"),
                                                    None)


def _arity(decl) -> int:
    tps = next((ch for ch in decl.children if ch.type == "type_parameter_list"), None)
    return sum(1 for t in tps.children if t.type == "type_parameter") if tps is not None else 0


def _nested_types(body, outer: str, path: str, depth: int = 0) -> tuple[CsType, ...]:
    """The types declared in a type's body, each with its own nested ones (to a depth no real code reaches)."""
    if body is None or depth > 16:
        return ()
    out = []
    for c in body.named_children:
        n = c.child_by_field_name("name") if c.type in TYPE_DECLS else None
        if n is None:
            continue
        name = n.text.decode("utf-8", "replace")
        out.append(CsType(outer, name, TYPE_DECLS[c.type], _arity(c), path, (),
                          _nested_types(_type_body(c), f"{outer}.{name}", path, depth + 1)))
    return tuple(out)


MEMBER_NAMED = frozenset({"method_declaration", "property_declaration", "event_declaration", "delegate_declaration",
                          *TYPE_DECLS})


def _member_names(body) -> frozenset[str]:
    """Names declared directly in a type body (fields, properties, methods, events, nested types)."""
    if body is None:
        return frozenset()
    names: set[str] = set()
    for m in body.named_children:
        if m.type in MEMBER_NAMED:
            n = m.child_by_field_name("name")
            if n is not None:
                names.add(n.text.decode("utf-8", "replace"))
        elif m.type in ("field_declaration", "event_field_declaration"):
            for v in walk(m):
                if v.type == "variable_declarator":
                    n = v.child_by_field_name("name") or next(
                        (c for c in v.children if c.type == "identifier"), None)
                    if n is not None:
                        names.add(n.text.decode("utf-8", "replace"))
    return frozenset(names)


def in_body(info: CsFileInfo, text: str, offset: int) -> bool:
    """Whether a character offset lies inside a method/accessor body (mcs checks those only when the declarations
    resolved)."""
    return _ancestor(info, text, offset, BODY_NODES) is not None


def _ancestor_node(node, types: set[str] | frozenset[str]):
    while node is not None:
        if node.type in types:
            return node
        node = node.parent
    return None


def _ancestor(info: CsFileInfo, text: str, offset: int, types: set[str] | frozenset[str]):
    """The innermost tree-sitter node of one of ``types`` around a character offset, or None."""
    b = positions(text).to_byte(offset)
    node = info.tree.root_node.descendant_for_byte_range(b, b)
    while node is not None:
        if node.type in types:
            return node
        node = node.parent
    return None
