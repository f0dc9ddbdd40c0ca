"""Measure retrieval on a real Python repository: probes whose groundtruth uses a name imported from another file.

``python_import_probes`` parses (never runs) a repository's Python files and, for each use of a name bound by
``from <repo module> import name``, makes a CrossCodeEval-style example whose prompt ends right before the use and
whose groundtruth is the rest of that line; it also records the line that defines the name in its module.
``DefinitionHits`` says whether a retrieved chunk shows that definition -- it is a chunk of the defining file that
covers one of the definition's first lines (decorators, signature, docstring: its first ``window`` non-empty
lines) -- the check behind "the oracle setting's top chunk holds the cross-file definition far more often than
rg1's".
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from benchsmith.files import SourceFile
from benchsmith.builders.cceval.records import CompletionExample, CrossFileContext, ExampleMetadata


@dataclass
class Probe:
    example: CompletionExample
    symbol: str
    defining_file: str
    definition_line: str  # the stripped source line that defines ``symbol``
    header_lines: frozenset[int]  # 1-based lines of the definition's head in ``defining_file``


def _module_name(path: str) -> str | None:
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts else None


def _definitions(source: SourceFile, head: int = 10) -> dict[str, tuple[str, frozenset[int]]]:
    """Top-level names a module defines -> (the stripped line that names them, the lines of the definition's
    head: its first ``head`` non-empty lines, decorators included)."""
    try:
        tree = ast.parse(source.text)
    except (SyntaxError, ValueError):
        return {}
    lines = source.text.split("\n")
    out: dict[str, tuple[str, frozenset[int]]] = {}
    for node in tree.body:
        names: list[str] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
            line = node.lineno
            # a decorated definition starts at its decorator, but the "def"/"class" line is what names it
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            line = node.lineno
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
            line = node.lineno
        if not names:
            continue
        first = min([line] + [d.lineno for d in getattr(node, "decorator_list", [])])
        last = node.end_lineno or line
        span = [n for n in range(first, last + 1) if lines[n - 1].strip()][:head]
        for name in names:
            text = lines[line - 1].strip()
            if text:
                out.setdefault(name, (text, frozenset(span)))
    return out


def _resolve(module: str | None, level: int, importer: str, packages: set[str]) -> str | None:
    if level == 0:
        return module
    base = importer.split("/")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    if not base and level:
        return module
    pkg = ".".join(base)
    return f"{pkg}.{module}" if module else pkg


def python_import_probes(files: list[SourceFile], repository: str, per_file: int | None = 20) -> list[Probe]:
    """Probes in a stable order (file path, line); at most ``per_file`` per file, one per line."""
    modules = {m: f for f in files if (m := _module_name(f.path))}
    packages = {m for m in modules}
    defs_cache: dict[str, dict[str, str]] = {}
    probes: list[Probe] = []
    for f in sorted(files, key=lambda f: f.path):
        try:
            tree = ast.parse(f.text)
        except (SyntaxError, ValueError):
            continue
        imported: dict[str, tuple[str, str, int]] = {}  # local name -> (defining file, name, import line)
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                target = _resolve(node.module, node.level, f.path, packages)
                src = modules.get(target or "")
                if src is None or src.path == f.path:
                    continue
                defs = defs_cache.setdefault(src.path, _definitions(src))
                for alias in node.names:
                    if alias.name in defs:
                        imported[alias.asname or alias.name] = (src.path, alias.name, node.end_lineno or node.lineno)
        if not imported:
            continue
        uses = sorted(
            {(n.lineno, n.col_offset, n.id) for n in ast.walk(tree)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in imported
             and n.lineno > imported[n.id][2]}
        )
        lines = f.text.split("\n")
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        seen_lines: set[int] = set()
        taken = 0
        for lineno, col, name in uses:
            if lineno in seen_lines or (per_file is not None and taken >= per_file):
                continue
            seen_lines.add(lineno)
            line = lines[lineno - 1]
            col_chars = len(line.encode("utf-8")[:col].decode("utf-8", errors="ignore"))  # ast columns are bytes
            cut = starts[lineno - 1] + col_chars
            end = starts[lineno - 1] + len(line)
            groundtruth = f.text[cut:end]
            if not groundtruth.strip():
                continue
            defining_file, symbol, _ = imported[name]
            md = ExampleMetadata(
                task_id=f"{repository}/{len(probes)}", repository=repository, file=f.path,
                context_start_lineno=0, groundtruth_start_lineno=lineno - 1, right_context_start_lineno=lineno,
                language="python", symbol=symbol, defining_file=defining_file,
            )
            ex = CompletionExample(prompt=f.text[:cut], groundtruth=groundtruth, right_context=f.text[end:], metadata=md)
            def_line, head = defs_cache[defining_file][symbol]
            probes.append(Probe(ex, symbol, defining_file, def_line, head))
            taken += 1
    return probes


class DefinitionHits:
    """Whether retrieved chunks show a probe's definition (chunks located by text in the defining file)."""

    def __init__(self, files: list[SourceFile], window: int = 10, step: int | None = None) -> None:
        self.texts = {f.path: f.text for f in files}
        self.window, self.step = window, step or window
        self._chunks: dict[str, dict[str, set[int]]] = {}

    def _file_chunks(self, path: str) -> dict[str, set[int]]:
        """chunk text -> the file lines it covers (texts repeated in a file cover the union)."""
        if path not in self._chunks:
            lines = self.texts.get(path, "").split("\n")
            nonempty = [i + 1 for i, line in enumerate(lines) if line.strip()]
            found: dict[str, set[int]] = {}
            for start in range(0, len(nonempty), self.step):
                numbers = nonempty[start : start + self.window]
                found.setdefault("\n".join(lines[n - 1] for n in numbers), set()).update(numbers)
            self._chunks[path] = found
        return self._chunks[path]

    def hit(self, ctx: CrossFileContext | None, probe: Probe, k: int = 1) -> bool:
        if ctx is None:
            return False
        for chunk in ctx.list[:k]:
            if chunk.filename == probe.defining_file:
                covered = self._file_chunks(chunk.filename).get(chunk.retrieved_chunk, set())
                if covered & probe.header_lines:
                    return True
        return False
