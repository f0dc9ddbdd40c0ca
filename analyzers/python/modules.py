"""The repository as Python sees it: dotted module names of its files, their parsed trees, and which file
defines a name (following re-exports through package ``__init__`` files)."""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

from benchsmith.files import SourceFile

# What ast.parse raises on hostile input: besides syntax errors, a 100k-deep expression exhausts the C parser's
# recursion limit (RecursionError) or its stack (MemoryError).  Either is the file's problem, not the repository's.
UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)


class ModuleIndex:
    """Dotted module names of the repository's files (package roots found by walking up ``__init__.py``)."""

    def __init__(self, files: list[SourceFile]) -> None:
        paths = {f.path for f in files}
        self.by_module: dict[str, list[str]] = {}
        self.module_of: dict[str, str] = {}
        # PEP 420: a directory without ``__init__.py`` is a namespace package when a directory above it is on
        # sys.path, and any directory of the repository may be (its root, src/, a scripts folder).
        self.namespaces: set[str] = set()
        for path in sorted(paths):
            name = self._module_name(path, paths)
            self.module_of[path] = name
            self.by_module.setdefault(name, []).append(path)
        for path in sorted(paths):
            for alias, spaces in _namespace_names(path, self.module_of[path]):
                self.namespaces.update(spaces)
                held = self.by_module.setdefault(alias, [])
                if path not in held:
                    held.append(path)
        self.texts = {f.path: f.text for f in files}
        self._trees: dict[str, ast.AST | None] = {}
        self._definers: dict[str, list[str]] | None = None
        self._classes: dict[str, dict[str, list[ast.ClassDef]]] = {}

    def tree(self, path: str) -> ast.AST | None:
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(self.texts.get(path, ""))
            except UNPARSABLE:
                self._trees[path] = None
        return self._trees[path]

    def classes(self, path: str) -> dict[str, list[ast.ClassDef]]:
        """The classes of a file by name, at any depth; one walk per file."""
        if path not in self._classes:
            table: dict[str, list[ast.ClassDef]] = {}
            tree = self.tree(path)
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.ClassDef):
                    table.setdefault(node.name, []).append(node)
            self._classes[path] = table
        return self._classes[path]

    def definers(self, name: str) -> list[str]:
        """Files (sorted) that define ``name``; one pass over the repository, built on first use."""
        if self._definers is None:
            table: dict[str, list[str]] = {}
            for path in sorted(self.texts):
                tree = self.tree(path)
                if tree is not None:
                    for n in defined_names(tree):
                        table.setdefault(n, []).append(path)
            self._definers = table
        return self._definers.get(name, [])

    @staticmethod
    def _module_name(path: str, paths: set[str]) -> str:
        p = PurePosixPath(path)
        parts = [p.stem] if p.name != "__init__.py" else []
        parent = p.parent
        while str(parent) not in ("", ".") and (parent / "__init__.py").as_posix() in paths:
            parts.insert(0, parent.name)
            parent = parent.parent
        return ".".join(parts)

    def is_project(self, module: str) -> bool:
        return module in self.by_module or module in self.namespaces

    def is_module(self, module: str) -> bool:
        """A module or package with a file of its own (a namespace package has none)."""
        return module in self.by_module

    def file_for(self, module: str, near: str) -> str | None:
        files = self.by_module.get(module)
        if not files:
            return None
        # Several roots can define the same top-level name (scripts/, tests/): prefer the importer's directory.
        here = str(PurePosixPath(near).parent)
        for f in files:
            if str(PurePosixPath(f).parent) == here:
                return f
        return files[0]

    def package_of(self, path: str) -> str:
        mod = self.module_of[path]
        return mod if path.endswith("__init__.py") else mod.rpartition(".")[0]

    def resolve_relative(self, path: str, level: int, module: str | None) -> str | None:
        if level == 0:
            return module
        pkg = self.package_of(path).split(".") if self.package_of(path) else []
        if level - 1 > len(pkg):
            return None
        base = pkg[: len(pkg) - (level - 1)]
        if module:
            base += module.split(".")
        return ".".join(base) if base else None

    def defining_file(self, module: str, name: str | None, near: str, depth: int = 0) -> str | None:
        """The file defining ``module.name``: the submodule's file, or the module's own file, following a
        re-export (``from .core import name`` in a package ``__init__``) a few levels."""
        if name is not None and self.is_project(f"{module}.{name}"):
            return self.file_for(f"{module}.{name}", near)
        file = self.file_for(module, near)
        if file is None or name is None or depth >= 4:
            return file
        text = self.texts.get(file, "")
        if re.search(rf"^\s*(?:async\s+def|def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*[:=]", text, re.M):
            return file
        tree = self.tree(file)
        if tree is None:
            return file
        stars: list[str] = []
        for node in _module_level(tree):
            if isinstance(node, ast.ImportFrom):
                target = self.resolve_relative(file, node.level, node.module)
                if not target or not self.is_project(target):
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        stars.append(target)
                    elif (alias.asname or alias.name) == name:
                        found = self.defining_file(target, alias.name, file, depth + 1)
                        if found:
                            return found
        # ``from .x import *`` in a package's __init__: the first star module whose file names it.
        for target in stars:
            found = self.defining_file(target, name, file, depth + 1)
            if found and found != file and re.search(rf"\b{re.escape(name)}\b", self.texts.get(found, "")):
                return found
        return file


def _namespace_names(path: str, name: str) -> list[tuple[str, list[str]]]:
    """The longer dotted names of a file reached through namespace packages: for ``a/b/c.py`` with no
    ``__init__.py`` in a/ or b/, ``b.c`` (namespace ``b``) and ``a.b.c`` (namespaces ``a``, ``a.b``)."""
    parts = PurePosixPath(path).parts
    depth = len(name.split(".")) if name else 0
    # the directories above the regular package (or the file), innermost first
    outer = parts[: len(parts) - (depth if parts[-1] != "__init__.py" else depth + 1)]
    out: list[tuple[str, list[str]]] = []
    for i in range(len(outer) - 1, -1, -1):
        dirs = list(outer[i:])
        if not all(d.isidentifier() for d in dirs):
            break
        spaces = [".".join(dirs[: j + 1]) for j in range(len(dirs))]
        out.append((".".join([*dirs, name]) if name else ".".join(dirs), spaces))
    return out


def _module_level(tree: ast.AST):
    """Statements run when the module is imported: its body and the bodies of its top-level ``if``/``try``
    (``if TYPE_CHECKING:``, ``try: from .fast import x except ImportError: ...``)."""
    todo = list(getattr(tree, "body", []))
    while todo:
        node = todo.pop(0)
        yield node
        if isinstance(node, (ast.If, ast.Try)):
            todo[:0] = [*node.body, *getattr(node, "handlers", []), *node.orelse, *getattr(node, "finalbody", [])]
        elif isinstance(node, ast.ExceptHandler):
            todo[:0] = node.body


def defined_names(tree: ast.AST) -> set[str]:
    """Names a module defines at any depth: functions, classes, assigned names and attributes (``self.x =``),
    annotated fields, import aliases (re-exports) and ``__all__`` entries."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Name):
                        names.add(sub.id)
                    elif isinstance(sub, ast.Attribute):
                        names.add(sub.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)  # __all__ entries, getattr/setattr names, enum-like string tables
    return names
