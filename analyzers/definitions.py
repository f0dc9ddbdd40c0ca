"""Where the API a cross-file reference needs is defined: ``CrossFileRef.definition`` for the references an analyzer
left without one, read off the defining file's tree-sitter tree.

Every grammar names a declaration's name in a ``name`` field (classes, functions, methods, fields through their
declarator, enum members, Go's type and value specs); what declares is told by the node type's ending
(``DECLARING``), parameters never count; an object literal's member declares its key.  Python assignments declare their target (``X = ...``, ``self.x = ...``).
Where several declarations of the name exist, the one inside the class the reference goes through
(``import_name``) wins, then one outside any function body, then (for a name imported by itself) one outside any
class, then the first in the file.  The range covers the
whole declaration (a field's type with its declarator, an exported ``const`` with its ``export``).
"""

from __future__ import annotations

import itertools
import re
from typing import Iterable, Iterator

from benchsmith.analyzers.common import walk
from benchsmith.files import SourceFile
from benchsmith.records import CrossFileRef, Definition, ReferenceKind

DECLARING = re.compile(r"(declaration|definition|declarator|signature|_spec|enum_constant|enum_member)$")
_FUNCTIONS = re.compile(r"(function|method|constructor|lambda|arrow_function|accessor)")
_WRAPPERS = {"field_declaration", "lexical_declaration", "variable_declaration", "export_statement",
             "local_declaration_statement", "event_field_declaration", "public_field_definition",
             "expression_statement", "decorated_definition"}
_CLASSES = re.compile(r"(class|interface|struct|record|enum|trait|object)_(declaration|definition)$|^type_spec$")
_PYTHON_TARGETS = {"assignment", "augmented_assignment"}
_MAX_NODES = 2_000_000  # a defining file is at most a vetted source file; the walk stops well past any real one


def _text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def _declared_names(node) -> Iterator[str]:
    """The names ``node`` declares (usually one)."""
    if node.type in _PYTHON_TARGETS:
        left = node.child_by_field_name("left")
        for target in ([left] if left is None or left.type != "pattern_list" else left.named_children):
            if target is None:
                continue
            if target.type == "identifier":
                yield _text(target)
            elif target.type == "attribute":
                yield _text(target.child_by_field_name("attribute"))
        return
    if node.type == "pair":  # an object literal's member (``export const Content = { cardMods: {...} }``)
        key = node.child_by_field_name("key")
        if key is not None and key.type in ("property_identifier", "identifier"):
            yield _text(key)
        return
    if node.type == "enum_assignment" or (node.type == "property_identifier" and node.parent is not None
                                          and node.parent.type == "enum_body"):
        # a TypeScript enum member, with or without its value (``ok = 200``, ``bad``)
        yield _text(node if node.type == "property_identifier" else node.named_children[0])
        return
    if node.type == "internal_module":  # a TypeScript namespace (``namespace CardMod { ... }``)
        yield _text(node.child_by_field_name("name"))
        return
    if "parameter" in node.type or not DECLARING.search(node.type):
        return
    name = node.child_by_field_name("name")
    if name is not None:
        yield _text(name)


def _outer(node):
    """The whole declaration ``node`` names: its wrapper statements included."""
    while node.parent is not None and node.parent.type in _WRAPPERS:
        node = node.parent
    return node


def _context(node) -> tuple[str | None, bool]:
    """The innermost class around ``node`` (its name) and whether a function encloses it."""
    cls, in_body = None, False
    parent = node.parent
    while parent is not None:
        in_body = in_body or bool(_FUNCTIONS.search(parent.type))
        if cls is None and _CLASSES.search(parent.type):
            cls = _text(parent.child_by_field_name("name"))
        parent = parent.parent
    return cls, in_body


def find_definition(tree, names: Iterable[str], owner: str = "", top_level: bool = False) -> tuple[int, int, str] | None:
    """(start line, end line, name) of the best declaration of one of ``names`` in ``tree``; None when none.
    ``top_level``: only declarations outside any function (what another module can import)."""
    wanted = set(names)
    best = None
    for node in itertools.islice(walk(tree.root_node), _MAX_NODES):
        for name in _declared_names(node):
            if name in wanted:
                cls, in_body = _context(node)
                if top_level and in_body:
                    continue
                rank = (0 if owner and cls == owner else 1, 1 if in_body else 0, 0 if owner or cls is None else 1,
                        node.start_byte)
                if best is None or rank < best[0]:
                    outer = _outer(node)
                    best = (rank, outer.start_point[0], outer.end_point[0], name)
    return None if best is None else best[1:]


def _names(ref: CrossFileRef) -> tuple[str, ...]:
    # C# attributes are declared with their Attribute suffix and used without it
    if ref.kind is ReferenceKind.ATTRIBUTE and not ref.symbol.endswith("Attribute"):
        return (ref.symbol, ref.symbol + "Attribute")
    return (ref.symbol,)


def resolve_definitions(analyzer, files: dict[str, SourceFile], refs: list[CrossFileRef]) -> int:
    """Fill ``definition`` on the references that have a defining file of the snapshot but no definition yet;
    returns how many were found.  One parse per file read.

    Where the defining file does not declare the name (a package re-exporting it, a submodule reached through its
    package), the module itself is the definition when it is named after the symbol; otherwise the one other file
    of the repository that declares the name outside any function, if exactly one does."""
    trees: dict[str, object] = {}

    def tree(path: str):
        if path not in trees:
            trees[path] = analyzer.parser_for(path).parse(files[path].text.encode("utf-8"))
        return trees[path]

    index: dict[str, set[str]] | None = None  # name -> files declaring it outside any function, built when needed
    found = 0
    for ref in refs:
        if ref.definition is not None or not ref.defining_file or ref.defining_file not in files:
            continue
        path = ref.defining_file
        owner = ref.import_name if ref.import_name not in ("", "*", ref.symbol) else ""
        hit = find_definition(tree(path), _names(ref), owner)
        if hit is None and _module_name(path) == ref.symbol:
            hit = (0, max(0, files[path].text.count("\n") - 1), ref.symbol)
        if hit is None:
            if index is None:
                index = _declarations(files, tree)
            elsewhere = sorted({f for name in _names(ref) for f in index.get(name, ())} - {path, ref.file})
            if len(elsewhere) == 1:
                path, hit = elsewhere[0], find_definition(tree(elsewhere[0]), _names(ref), owner, top_level=True)
        if hit is not None:
            ref.definition = Definition(path, hit[0], hit[1], hit[2])
            found += 1
    return found


def _declarations(files: dict[str, SourceFile], tree) -> dict[str, set[str]]:
    """Name -> the files that declare it outside any function: one walk per file."""
    out: dict[str, set[str]] = {}
    for path in sorted(files):
        stack = [tree(path).root_node]
        seen = 0
        while stack and seen < _MAX_NODES:
            node = stack.pop()
            seen += 1
            if _FUNCTIONS.search(node.type) and node.parent is not None:
                names = list(_declared_names(node))  # the function itself is declared; its body is not walked
                for name in names:
                    out.setdefault(name, set()).add(path)
                continue
            for name in _declared_names(node):
                out.setdefault(name, set()).add(path)
            stack.extend(node.children)
    return out


def _module_name(path: str) -> str:
    """``pkg/sub/__init__.py`` -> ``sub``, ``pkg/mod.py`` -> ``mod``, ``src/Hct.java`` -> ``Hct``."""
    parts = path.split("/")
    stem = parts[-1].rsplit(".", 1)[0]
    return parts[-2] if stem in ("__init__", "index") and len(parts) > 1 else stem
