"""Stub planning: each file's project imports replaced, in place, by empty classes bound to the same local names.

``import pkg.mod`` becomes nested classes ``pkg`` > ``mod`` so ``pkg.mod.f`` still resolves one level deep; a star
import becomes ``pass`` so its names turn into undefined variables.  A stubbed file keeps a line map back to the
original so diagnostics of both pylint runs are compared in original coordinates.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from benchsmith.analyzers.python.lines import python_lines
from benchsmith.analyzers.python.modules import UNPARSABLE, ModuleIndex
from benchsmith.files import SourceFile
from benchsmith.text_positions import byte_col_to_char


@dataclass
class Binding:
    """A local name bound by a project import and the file that defines what it names."""

    local: str
    module: str  # dotted project module the name comes from
    defining_file: str | None


@dataclass
class FileStubs:
    path: str
    stubbed_text: str
    line_map: list[int | None]  # stubbed line index -> original line index (None for stub lines)
    bindings: dict[str, list[Binding]] = field(default_factory=dict)  # class name as pylint reports it
    star_modules: list[str] = field(default_factory=list)


def _alone_on_lines(lines: list[str], node: ast.stmt) -> bool:
    """The import occupies whole lines (no other statement shares them), so its lines can be swapped out."""
    start, end = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    before = lines[start][: byte_col_to_char(lines[start], node.col_offset)]
    after = lines[end][byte_col_to_char(lines[end], node.end_col_offset or 0):]
    return before.strip() == "" and (after.strip() == "" or after.strip().startswith("#"))


def _class_tree(name: str, children: dict, indent: str) -> list[str]:
    out = [f"{indent}class {name}:"]
    if not children:
        out.append(f"{indent}    pass")
    for child in sorted(children):
        out += _class_tree(child, children[child], indent + "    ")
    return out


def _dotted_imports(tree: ast.AST, index: ModuleIndex) -> dict[str, dict]:
    """Plain ``import a.b`` statements bind the top name: every dotted path of the file per top name, so that
    each stub of ``a`` carries all of the file's submodules."""
    dotted: dict[str, dict] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if alias.asname is None and (index.is_project(top) or index.is_project(alias.name)):
                    cur = dotted.setdefault(top, {})
                    for part in alias.name.split(".")[1:]:
                        cur = cur.setdefault(part, {})
    return dotted


def _import_names(node: ast.Import, index: ModuleIndex, src: SourceFile, stubs: FileStubs) -> list[str] | None:
    """Stub class names for one ``import`` statement (its bindings recorded on ``stubs``); None when it is left
    as is."""
    if not all(index.is_project(a.name) or index.is_project(a.name.split(".")[0]) for a in node.names):
        return None  # a statement mixing project and external modules is left as is (rare)
    names: list[str] = []
    for alias in node.names:
        if alias.asname:
            names.append(alias.asname)
            file = index.defining_file(alias.name, None, src.path)
            stubs.bindings.setdefault(alias.asname, []).append(Binding(alias.asname, alias.name, file))
        else:
            top = alias.name.split(".")[0]
            if top not in names:
                names.append(top)
            parts = alias.name.split(".")
            for i in range(1, len(parts) + 1):
                mod = ".".join(parts[:i])
                if index.is_project(mod):
                    b = Binding(parts[i - 1], mod, index.defining_file(mod, None, src.path))
                    stubs.bindings.setdefault(parts[i - 1], []).append(b)
    return names


def _from_names(node: ast.ImportFrom, index: ModuleIndex, src: SourceFile,
                stubs: FileStubs) -> tuple[list[str], bool] | None:
    """Stub class names for one ``from ... import`` statement and whether it has a star (bindings and star
    modules recorded on ``stubs``); None when it imports no project module."""
    module = index.resolve_relative(src.path, node.level, node.module)
    if module is None or not (index.is_project(module) or index.is_project(module.split(".")[0])):
        return None
    names: list[str] = []
    has_star = False
    for alias in node.names:
        if alias.name == "*":
            stubs.star_modules.append(module)
            has_star = True
            continue
        local = alias.asname or alias.name
        names.append(local)
        file = index.defining_file(module, alias.name, src.path)
        stubs.bindings.setdefault(local, []).append(Binding(local, f"{module}.{alias.name}", file))
    return names, has_star


def stub_file(src: SourceFile, index: ModuleIndex) -> FileStubs | None:
    """The stubbed text of one file, or None when it has no project imports (or does not parse)."""
    try:
        tree = ast.parse(src.text)
    except UNPARSABLE:
        return None
    lines = python_lines(src.text, keepends=True)
    if not src.text:
        return None
    stubs = FileStubs(src.path, src.text, list(range(len(lines))))
    dotted = _dotted_imports(tree, index)
    replacements: list[tuple[ast.stmt, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = _import_names(node, index, src, stubs)
            if names is None:
                continue
            has_star = False
        elif isinstance(node, ast.ImportFrom):
            found = _from_names(node, index, src, stubs)
            if found is None:
                continue
            names, has_star = found
        else:
            continue
        if (names or has_star) and _alone_on_lines(lines, node):
            replacements.append((node, names))
    if not replacements:
        return None
    # Rewrite bottom-up so earlier line numbers stay valid.
    new_lines = list(lines)
    line_map: list[int | None] = list(range(len(lines)))
    for node, names in sorted(replacements, key=lambda r: -r[0].lineno):
        start, end = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        indent = re.match(r"[ \t]*", lines[start]).group(0)
        body: list[str] = []
        for name in names:
            body += _class_tree(name, dotted.get(name, {}) if isinstance(node, ast.Import) else {}, indent)
        if not body:
            body = [f"{indent}pass"]
        eol = next((e for e in ("\r\n", "\r", "\n") if lines[end].endswith(e)), "\n")
        new_lines[start : end + 1] = [b + eol for b in body]
        line_map[start : end + 1] = [None] * len(body)
    stubs.stubbed_text = "".join(new_lines)
    stubs.line_map = line_map
    return stubs
