"""What a Go file imports and declares (tree-sitter)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from benchsmith import treesitter
from benchsmith.text_positions import TextPositions


@dataclass
class GoImport:
    path: str
    alias: str | None  # the name written before the path: an identifier, '.' or '_'
    start: int  # char range to blank out (the spec, or the whole declaration when it holds only this spec)
    end: int


@dataclass
class GoFile:
    path: str
    text: str
    package: str | None = None
    imports: list[GoImport] = field(default_factory=list)
    declared: set[str] = field(default_factory=set)  # package-level names (methods excluded)
    parse_error: str | None = None

    @property
    def dir(self) -> str:
        return posixpath.dirname(self.path)

    @property
    def test(self) -> bool:
        return self.path.endswith("_test.go")


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


def _string_value(node) -> str | None:
    if node is None:
        return None
    raw = _text(node)
    if node.type == "raw_string_literal":
        return raw[1:-1]
    if node.type == "interpreted_string_literal" and "\\" not in raw:
        return raw[1:-1]
    return None  # an escaped import path: never a project path we could match


def scan_file(path: str, text: str) -> GoFile:
    info = GoFile(path, text)
    tree = treesitter.parser("tree_sitter_go").parse(text.encode("utf-8"))
    root = tree.root_node
    if root.has_error:
        info.parse_error = "tree-sitter cannot parse it"
    chars = TextPositions(text).to_char
    for node in root.named_children:
        t = node.type
        if t == "package_clause":
            ident = next((c for c in node.named_children if c.type == "package_identifier"), None)
            info.package = _text(ident) if ident is not None else None
        elif t == "import_declaration":
            specs: list[tuple[Any, Any]] = []  # (spec, node to blank)
            for c in node.named_children:
                if c.type == "import_spec":
                    specs.append((c, node))
                elif c.type == "import_spec_list":
                    kids = c.children
                    for i, s in enumerate(kids):
                        if s.type != "import_spec":
                            continue
                        nxt = kids[i + 1] if i + 1 < len(kids) else None
                        # `import ("a"; "b")`: the spec's own ';' goes with it, or a lone ';' would remain
                        specs.append((s, nxt if nxt is not None and nxt.type == ";" else s))
            for spec, blank in specs:
                path_value = _string_value(spec.child_by_field_name("path"))
                name = spec.child_by_field_name("name")
                if path_value is None:
                    continue
                start = spec.start_byte if blank is not node else node.start_byte
                end = blank.end_byte
                info.imports.append(GoImport(path_value, _text(name) if name is not None else None,
                                             chars(start), chars(end)))
        elif t == "function_declaration":
            name = node.child_by_field_name("name")
            if name is not None:
                info.declared.add(_text(name))
        elif t in ("type_declaration", "var_declaration", "const_declaration"):
            stack = list(node.named_children)
            while stack:
                c = stack.pop()
                if c.type in ("var_spec_list", "const_spec_list"):
                    stack.extend(c.named_children)
                elif c.type in ("type_spec", "type_alias", "var_spec", "const_spec"):
                    for n in c.children_by_field_name("name"):
                        info.declared.add(_text(n))
    return info

