"""What kind of use a reference is, read off the file's own syntax tree, and where an inherited member is
declared: the base-class chain of a class, followed through the repository's imports.

Positions here are Python's (``ast``/pylint line numbering, character columns), as the diagnostics are before
``LineNumbering`` turns them into benchsmith's.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from benchsmith.analyzers.python.lines import python_lines
from benchsmith.analyzers.python.modules import ModuleIndex, _module_level
from benchsmith.records import Definition, ReferenceKind
from benchsmith.text_positions import byte_col_to_char

Position = tuple[int, int]  # (0-based Python line, character column) of a name


def _name_at(node: ast.expr, lines: list[str]) -> Position | None:
    """Where the name a Name/Attribute node ends in starts (an Attribute's ``attr``, after the dot)."""
    if isinstance(node, ast.Name):
        line = node.lineno - 1
        return (line, byte_col_to_char(lines[line], node.col_offset)) if 0 <= line < len(lines) else None
    if isinstance(node, ast.Attribute) and node.end_lineno is not None and node.end_col_offset is not None:
        line = node.end_lineno - 1
        if not 0 <= line < len(lines):
            return None
        return line, byte_col_to_char(lines[line], node.end_col_offset) - len(node.attr)
    return None


def _named(node: ast.expr) -> ast.expr | None:
    """The Name/Attribute a decorator, base or callee names (``Base[T]`` -> ``Base``, ``deco(...)`` -> ``deco``)."""
    while isinstance(node, (ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node if isinstance(node, (ast.Name, ast.Attribute)) else None


def _annotations(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
        return [a.annotation for a in every if a is not None and a.annotation is not None] + \
            ([node.returns] if node.returns is not None else [])
    if isinstance(node, ast.AnnAssign):
        return [node.annotation]
    return []


@dataclass
class UseContexts:
    """The syntactic kind of every name position of one file that can be a decorator, base, annotation or
    callee; anything else is a plain member use."""

    kinds: dict[Position, ReferenceKind]
    callees: set[Position]

    @classmethod
    def of(cls, tree: ast.AST, text: str) -> UseContexts:
        lines = python_lines(text)
        kinds: dict[Position, ReferenceKind] = {}
        callees: set[Position] = set()

        def mark(expr: ast.expr | None, kind: ReferenceKind) -> None:
            at = _name_at(expr, lines) if expr is not None else None
            if at is not None:
                kinds.setdefault(at, kind)

        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for deco in node.decorator_list:
                    mark(_named(deco), ReferenceKind.ATTRIBUTE)
            if isinstance(node, ast.ClassDef):
                for base in node.bases:
                    mark(_named(base), ReferenceKind.HERITAGE)
            for annotation in _annotations(node):
                for sub in ast.walk(annotation):  # every name of ``Optional[mod.Foo]``, ``"Foo"`` excepted
                    if isinstance(sub, (ast.Name, ast.Attribute)):
                        mark(sub, ReferenceKind.TYPE)
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
                at = _name_at(node.func, lines)
                if at is not None:
                    callees.add(at)
        return cls(kinds, callees)

    def kind(self, at: Position, is_class: bool) -> ReferenceKind:
        if at in self.kinds:
            return self.kinds[at]
        if is_class and at in self.callees:
            return ReferenceKind.CONSTRUCTOR
        return ReferenceKind.MEMBER


@dataclass(frozen=True)
class Declared:
    """Where a member of a class chain is declared: the file and the node (the member's, or, for a member
    only an external base declares, the repository class it is reached through)."""

    file: str
    node: ast.stmt
    symbol: str
    own: bool  # the member itself (False: the repository class whose external base declares it)

    def definition(self) -> Definition:
        end = self.node.end_lineno or self.node.lineno
        # decorators belong to the declaration
        first = min([self.node.lineno, *(d.lineno for d in getattr(self.node, "decorator_list", []))])
        return Definition(self.file, first - 1, end - 1, self.symbol)




def _member_in(cls: ast.ClassDef, member: str) -> ast.stmt | None:
    """The statement of ``cls`` declaring ``member``: a method, a class-level assignment or annotation, or an
    assignment to ``self.member`` in one of its methods."""
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == member:
            return stmt
        targets = stmt.targets if isinstance(stmt, ast.Assign) else \
            [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            if any(isinstance(s, ast.Name) and s.id == member for s in ast.walk(t)):
                return stmt
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(stmt):
                targets = sub.targets if isinstance(sub, ast.Assign) else \
                    [sub.target] if isinstance(sub, (ast.AnnAssign, ast.AugAssign)) else []
                for t in targets:
                    if (isinstance(t, ast.Attribute) and t.attr == member and isinstance(t.value, ast.Name)
                            and t.value.id == "self"):
                        return sub
    return None


def _imported(index: ModuleIndex, file: str, tree: ast.AST, local: str) -> tuple[str, str | None] | None:
    """(module, name) a module-level import of ``file`` binds ``local`` to (name None: a module itself)."""
    for node in _module_level(tree):
        if isinstance(node, ast.ImportFrom):
            module = index.resolve_relative(file, node.level, node.module)
            for alias in node.names:
                if module and (alias.asname or alias.name) == local:
                    return module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname == local:
                    return alias.name, None
                if alias.asname is None and alias.name.split(".")[0] == local:
                    return local, None
    return None


def _resolve_base(index: ModuleIndex, file: str, tree: ast.AST, base: ast.expr) -> tuple[str, str] | None:
    """(file, class name) of a base expression naming a repository class, through the file's imports."""
    named = _named(base)
    dotted: list[str] = []
    while isinstance(named, ast.Attribute):
        dotted.insert(0, named.attr)
        named = named.value
    if not isinstance(named, ast.Name):
        return None
    if not dotted and index.classes(file).get(named.id):
        return file, named.id
    bound = _imported(index, file, tree, named.id)
    if bound is None:
        return None
    module, name = bound
    path = [*([name] if name else []), *dotted]
    # ``pkg.sub.Base``: the longest project module the dotted path names, then the class in it
    while len(path) > 1 and index.is_project(f"{module}.{path[0]}"):
        module, path = f"{module}.{path[0]}", path[1:]
    if len(path) != 1 or not index.is_project(module):
        return None
    found = index.defining_file(module, path[0], file)
    return (found, path[0]) if found else None


def find_member(index: ModuleIndex, file: str, cls_name: str, member: str, depth: int = 0,
                seen: set[tuple[str, str]] | None = None) -> Declared | None:
    """The declaration of ``member`` in class ``cls_name`` of ``file`` or along its repository base chain;
    where no repository class declares it but the chain leaves the repository, the last repository class on
    that path (``own`` False).  None when ``cls_name`` is no class of ``file``, or its chain stays in the
    repository without declaring ``member``."""
    seen = set() if seen is None else seen
    if (file, cls_name) in seen or depth > 8:
        return None
    seen.add((file, cls_name))
    tree = index.tree(file)
    if tree is None:
        return None
    classes = index.classes(file).get(cls_name, [])
    for cls in classes:
        stmt = _member_in(cls, member)
        if stmt is not None:
            return Declared(file, stmt, member, True)
    fallback: Declared | None = None
    for cls in classes:
        for base in cls.bases:
            target = _resolve_base(index, file, tree, base)
            found = find_member(index, target[0], target[1], member, depth + 1, seen) if target else None
            if found is not None and found.own:
                return found
            if fallback is None:
                # an external base may declare it: the class itself is what the repository holds (a chain
                # that stays in the repository and declares nothing gives nothing)
                fallback = found if target else Declared(file, cls, cls_name, False)
    return fallback


def stubbed_base(index: ModuleIndex, file: str, cls_name: str, stubbed: set[str],
                 seen: set[str] | None = None) -> str | None:
    """The stubbed import (local name) a class of ``file`` inherits from, directly or through other classes of
    the same file (each visited once: a hostile file's cycles and fan-outs cost one walk); None when its chain
    has none."""
    seen = set() if seen is None else seen
    if cls_name in seen:
        return None
    seen.add(cls_name)
    for cls in index.classes(file).get(cls_name, []):
        for base in cls.bases:
            named = _named(base)
            while isinstance(named, ast.Attribute):
                named = named.value
            if not isinstance(named, ast.Name):
                continue
            if named.id in stubbed:
                return named.id
            if named.id != cls_name:
                inner = stubbed_base(index, file, named.id, stubbed, seen)
                if inner is not None:
                    return inner
    return None
