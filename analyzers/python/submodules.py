"""Submodules reached through their package after ``import pkg.sub``: ``pkg.`` | ``sub.Name``.

The stub of ``import pkg.sub`` is a class ``pkg`` holding a class ``sub``, so that ``pkg.sub.Name`` still
resolves one level deep and the stubbed run reports ``Name``; ``sub`` itself then raises nothing.  The name
``sub`` is a use of the module file ``pkg/sub.py`` all the same; this scan of the file's ``ast`` finds it
(no extra pylint run).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from benchsmith.analyzers.python.lines import python_lines
from benchsmith.analyzers.python.modules import ModuleIndex
from benchsmith.analyzers.python.stubs import FileStubs
from benchsmith.text_positions import byte_col_to_char


@dataclass(frozen=True)
class SubmoduleUse:
    line: int  # Python numbering, 0-based
    column: int  # characters
    name: str  # the submodule's last name
    package: str  # the local name the import binds (``pkg``)
    module: str  # the submodule's dotted name
    file: str  # its file


def _dotted(node: ast.expr) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.insert(0, node.attr)
        node = node.value
    return [node.id, *parts] if isinstance(node, ast.Name) else None


def submodule_uses(index: ModuleIndex, stubs: FileStubs) -> list[SubmoduleUse]:
    """Each ``pkg.sub`` (load) of the file whose ``pkg`` a plain ``import pkg.sub...`` binds to a project
    package and whose ``pkg.sub`` is a module of the repository with a file of its own."""
    tree = index.tree(stubs.path)
    if tree is None:
        return []
    packages = {local for local, bindings in stubs.bindings.items()
                if any(b.module == local and index.is_project(local) for b in bindings)}
    if not packages:
        return []
    lines = python_lines(index.texts.get(stubs.path, ""))
    out: list[SubmoduleUse] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or node.end_lineno is None or node.end_col_offset is None:
            continue
        dotted = _dotted(node)
        if not dotted or dotted[0] not in packages:
            continue
        module = ".".join(dotted)
        if not index.is_module(module):
            continue
        file = index.file_for(module, stubs.path)
        line = node.end_lineno - 1
        if file is None or file == stubs.path or not 0 <= line < len(lines):
            continue
        col = byte_col_to_char(lines[line], node.end_col_offset) - len(node.attr)
        if lines[line][col:col + len(node.attr)] == node.attr:
            out.append(SubmoduleUse(line, col, node.attr, dotted[0], module, file))
    return sorted(out, key=lambda u: (u.line, u.column))
