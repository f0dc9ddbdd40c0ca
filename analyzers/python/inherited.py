"""Inherited members pylint cannot see: ``self.m`` in a class whose base chain reaches a class of another file of
the repository that declares ``m``, found by walking the file's ``ast`` (no extra pylint run).

pylint reports a missing member only when it knows every ancestor: a class with a base it cannot infer
(``class Panel(panels.BasePanel)`` once ``panels`` is a stub, ``class Panel(BasePanel, QWidget)`` without Qt
installed) gets no E1101 at all in the stubbed run, so its ``self.splitter`` would never be a candidate.  Here
the declaration is looked up along the repository's base chain instead; a member the class itself declares
(a method, a class attribute, any ``self.m = ...``) is its own, never inherited.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from benchsmith.analyzers.python.kinds import Declared, find_member
from benchsmith.analyzers.python.lines import python_lines
from benchsmith.analyzers.python.modules import ModuleIndex
from benchsmith.text_positions import byte_col_to_char


@dataclass(frozen=True)
class InheritedUse:
    line: int  # Python numbering, 0-based
    column: int  # characters
    member: str
    base: str  # the first name of the class's first base (what the import binds)
    declared: Declared


def _uses(method: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.Attribute]:
    """``self.m`` / ``cls.m`` / ``super().m`` loads in one method, nested functions included, nested classes
    (where ``self`` is another object) not."""
    args = [*method.args.posonlyargs, *method.args.args]
    is_static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)
    first = args[0].arg if args and not is_static else None
    todo: list[ast.AST] = [*method.body]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.ClassDef):
            continue
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            v = node.value
            if (isinstance(v, ast.Name) and v.id == first) or (
                    isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super"):
                yield node
        todo.extend(ast.iter_child_nodes(node))


def _first_base(cls: ast.ClassDef) -> str:
    for base in cls.bases:
        node = base.value if isinstance(base, ast.Subscript) else base
        while isinstance(node, ast.Attribute):
            node = node.value
        if isinstance(node, ast.Name):
            return node.id
    return ""


def inherited_uses(index: ModuleIndex, file: str) -> list[InheritedUse]:
    """Every inherited member use of ``file`` whose declaration is in another file of the repository."""
    tree = index.tree(file)
    if tree is None:
        return []
    lines = python_lines(index.texts.get(file, ""))
    out: list[InheritedUse] = []
    for classes in index.classes(file).values():
        for cls in classes:
            if not cls.bases:
                continue
            found: dict[str, Declared | None] = {}
            for method in cls.body:
                if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for use in _uses(method):
                    if use.attr not in found:
                        d = find_member(index, file, cls.name, use.attr)
                        found[use.attr] = d if d is not None and d.own and d.file != file else None
                    declared = found[use.attr]
                    if declared is None or use.end_lineno is None or use.end_col_offset is None:
                        continue
                    line = use.end_lineno - 1
                    if 0 <= line < len(lines):
                        col = byte_col_to_char(lines[line], use.end_col_offset) - len(use.attr)
                        if lines[line][col:col + len(use.attr)] == use.attr:
                            out.append(InheritedUse(line, col, use.attr, _first_base(cls), declared))
    return sorted(out, key=lambda u: (u.line, u.column))
