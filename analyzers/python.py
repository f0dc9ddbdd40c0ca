"""Python: stub intra-project imports with empty classes, run pylint on both trees, keep the new errors.

Each file's project imports are replaced, in place, by empty classes bound to the same local names
(``import pkg.mod`` becomes nested classes ``pkg`` > ``mod`` so ``pkg.mod.f`` still resolves one level deep;
a star import becomes ``pass`` so its names turn into undefined variables).  One pylint process lints the whole
original tree and one the whole stubbed tree, with our own rcfile and no plugins; a stubbed tree keeps a line
map back to the original so diagnostics of both runs are compared in original coordinates.
"""

from __future__ import annotations

import ast
import bisect
from concurrent.futures import ThreadPoolExecutor
import json
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from benchsmith import confine
from benchsmith.analyzers.base import AnalysisResult, Analyzer, ByteChars, Diagnostic
from benchsmith.files import RepoSnapshot, SourceFile, write_tree
from benchsmith.records import CrossFileRef, Exclusion, Reason, Stage
from benchsmith.runner import Mount, ToolMissing, run

# Messages an empty class in place of a project name produces.  E0602 comes from removed star imports.
PYLINT_MESSAGES = ("E1101", "E0602", "E1102", "E1133", "E1135", "E1136", "E1137")
PYLINT_RC = """\
[MAIN]
load-plugins=
init-hook=
persistent=no
unsafe-load-any-extension=no
extension-pkg-allow-list=
fail-under=0
recursive=yes
ignore=
ignore-patterns=
suggestion-mode=no

[MESSAGES CONTROL]
disable=all
enable={enable}

[TYPECHECK]
ignore-on-opaque-inference=yes
ignore-mixin-members=yes
generated-members=
ignored-modules=
"""

# What ast.parse raises on hostile input: besides syntax errors, a 100k-deep expression exhausts the C parser's
# recursion limit (RecursionError) or its stack (MemoryError).  Either is the file's problem, not the repository's.
_UNPARSABLE = (SyntaxError, ValueError, RecursionError, MemoryError)
# The program every pylint run is (``python -I -B -c``): pylint with the analysed tree never importable.
PYLINT_DRIVER = (Path(__file__).with_name("_pylint_driver.py")).read_text(encoding="utf-8")

_OWNER_RE = re.compile(r"^(?:Class|Instance of) '([^']+)' has no '([^']+)' member")
_QUOTED_RE = re.compile(r"'([^']+)'")
_NAME_AT_RE = re.compile(r"[A-Za-z_][\w]*")


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


class ModuleIndex:
    """Dotted module names of the repository's files (package roots found by walking up ``__init__.py``)."""

    def __init__(self, files: list[SourceFile]) -> None:
        paths = {f.path for f in files}
        self.by_module: dict[str, list[str]] = {}
        self.module_of: dict[str, str] = {}
        for path in sorted(paths):
            name = self._module_name(path, paths)
            self.module_of[path] = name
            self.by_module.setdefault(name, []).append(path)
        self.texts = {f.path: f.text for f in files}
        self._trees: dict[str, ast.AST | None] = {}
        self._definers: dict[str, list[str]] | None = None

    def tree(self, path: str) -> ast.AST | None:
        if path not in self._trees:
            try:
                self._trees[path] = ast.parse(self.texts.get(path, ""))
            except _UNPARSABLE:
                self._trees[path] = None
        return self._trees[path]

    def definers(self, name: str) -> list[str]:
        """Files (sorted) that define ``name``; one pass over the repository, built on first use."""
        if self._definers is None:
            table: dict[str, list[str]] = {}
            for path in sorted(self.texts):
                tree = self.tree(path)
                if tree is not None:
                    for n in _defined_names(tree):
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
        for node in tree.body:
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name and alias.name != "*":
                        target = self.resolve_relative(file, node.level, node.module)
                        if target and self.is_project(target):
                            found = self.defining_file(target, alias.name, file, depth + 1)
                            if found:
                                return found
        return file


def _byte_to_char(line_text: str, byte_col: int) -> int:
    return ByteChars(line_text).char(byte_col)


# -- line numbering ----------------------------------------------------------------------------------------------
# Python's tokenizer, hence ast, astroid and pylint, ends a line at \r\n, \r or \n and nowhere else: a form feed,
# \v, \x1c-\x1e, \x85, U+2028 and U+2029 are characters of a line (str.splitlines() would break there and shift
# every later line number).  The rest of benchsmith (the cutter, task ids) counts lines by \n alone, so each ref
# is converted from Python's numbering to that one before it leaves the analyzer.
_PY_EOL = re.compile(r"\r\n|\r|\n")


def python_lines(text: str, keepends: bool = False) -> list[str]:
    """``text`` split into lines the way Python's tokenizer numbers them (index i = line i + 1)."""
    out: list[str] = []
    start = 0
    for m in _PY_EOL.finditer(text):
        out.append(text[start : m.end() if keepends else m.start()])
        start = m.end()
    if start < len(text) or not out:
        out.append(text[start:])
    return out


class LineNumbering:
    """(Python line, char column) -> (\n-line, char column) for one text; the identity unless the text has a
    lone \r (a CRLF file numbers its lines the same both ways)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lone_cr = bool(re.search(r"\r(?!\n)", text))
        if self.lone_cr:
            self.py_starts = [0] + [m.end() for m in _PY_EOL.finditer(text)]
            self.lf_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def to_lf(self, line: int, column: int) -> tuple[int, int]:
        if not self.lone_cr or not (0 <= line < len(self.py_starts)):
            return line, column
        offset = self.py_starts[line] + column
        lf_line = bisect.bisect_right(self.lf_starts, offset) - 1
        return lf_line, offset - self.lf_starts[lf_line]


def _alone_on_lines(lines: list[str], node: ast.stmt) -> bool:
    """The import occupies whole lines (no other statement shares them), so its lines can be swapped out."""
    start, end = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    before = lines[start][: _byte_to_char(lines[start], node.col_offset)]
    after = lines[end][_byte_to_char(lines[end], node.end_col_offset or 0):]
    return before.strip() == "" and (after.strip() == "" or after.strip().startswith("#"))


def _class_tree(name: str, children: dict, indent: str) -> list[str]:
    out = [f"{indent}class {name}:"]
    if not children:
        out.append(f"{indent}    pass")
    for child in sorted(children):
        out += _class_tree(child, children[child], indent + "    ")
    return out


def stub_file(src: SourceFile, index: ModuleIndex) -> FileStubs | None:
    """The stubbed text of one file, or None when it has no project imports (or does not parse)."""
    try:
        tree = ast.parse(src.text)
    except _UNPARSABLE:
        return None
    lines = python_lines(src.text, keepends=True)
    if not src.text:
        return None
    stubs = FileStubs(src.path, src.text, list(range(len(lines))))
    # Plain `import a.b` statements bind the top name; collect every dotted path per top name so that each
    # stub of `a` carries all of the file's submodules.
    dotted: dict[str, dict] = {}
    replacements: list[tuple[ast.stmt, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is None and (index.is_project(alias.name.split(".")[0]) or index.is_project(alias.name)):
                    cur = dotted.setdefault(alias.name.split(".")[0], {})
                    for part in alias.name.split(".")[1:]:
                        cur = cur.setdefault(part, {})
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        names: list[str] = []  # stub class lines to emit, in order
        has_star = False
        if isinstance(node, ast.Import):
            if not all(index.is_project(a.name) or index.is_project(a.name.split(".")[0]) for a in node.names):
                continue  # a statement mixing project and external modules is left as is (rare)
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
        else:
            module = index.resolve_relative(src.path, node.level, node.module)
            if module is None or not (index.is_project(module) or index.is_project(module.split(".")[0])):
                continue
            for alias in node.names:
                if alias.name == "*":
                    stubs.star_modules.append(module)
                    has_star = True
                    continue
                local = alias.asname or alias.name
                names.append(local)
                file = index.defining_file(module, alias.name, src.path)
                stubs.bindings.setdefault(local, []).append(Binding(local, f"{module}.{alias.name}", file))
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


class PythonAnalyzer(Analyzer):
    language = "python"
    extensions = (".py",)
    grammar_module = "tree_sitter_python"
    comment_prefix = "#"
    statement_terminators = None  # logical lines
    dockerfile = "pylint.Dockerfile"

    def tool_versions(self) -> dict[str, str]:
        try:
            from importlib.metadata import version

            return {"pylint": version("pylint"), "astroid": version("astroid")}
        except Exception:  # pragma: no cover
            return {}

    def toolchain_paths(self) -> list[str]:
        return confine.python_paths()

    # -- toolchain -------------------------------------------------------------------------------------------
    def _pylint(self, tree: Path, rcfile: Path, home: Path) -> tuple[list[dict] | None, str]:
        """Run pylint once over ``tree``; returns (messages, error text)."""
        env = {"PYLINTRC": str(rcfile), "PYLINTHOME": str(home), "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": "", "HOME": str(home)}
        container = self.container([Mount(str(tree), "/src"), Mount(str(rcfile), "/rc/pylintrc")], "/src")
        # -I: no working directory (the analysed tree), PYTHONPATH or user site on sys.path at start-up; -B
        # instead of PYTHONDONTWRITEBYTECODE, which -I ignores; -c PYLINT_DRIVER: pylint with the tree never
        # importable, whatever its modules are named (pylint adds it to sys.path itself).
        if container is not None:
            argv = ["python", "-I", "-B", "-c", PYLINT_DRIVER, "--rcfile", "/rc/pylintrc"]
            env = {"PYLINTHOME": "/tmp", "HOME": "/tmp"}
        else:
            argv = [sys.executable, "-I", "-B", "-c", PYLINT_DRIVER, "--rcfile", str(rcfile)]
        argv += ["--output-format=json2", "--recursive=y", "--jobs=1", "--score=n", "."]
        conf = None if container else self.confinement(read=(tree, rcfile), scratch=(home,))
        res = run(argv, cwd=None if container else tree, env=env, timeout=self.options.timeout,
                  container=container, confine=conf)
        if res.timed_out:
            return None, f"pylint ran past its {self.options.timeout:.0f}s timeout"
        if res.oom:
            return None, f"pylint: {confine.oom_message(conf.limits) if conf else 'out of memory'}"
        data = _json2_report(res.stdout)
        if data is not None:
            return list(data.get("messages", [])), ""
        else:
            tail = (res.stderr or res.stdout).strip().splitlines()[-5:]
            return None, f"pylint exited {res.returncode} without a report: {' | '.join(tail)}"

    @staticmethod
    def _diagnostics(messages: list[dict], texts: dict[str, str], line_maps: dict[str, list[int | None]]):
        out: list[Diagnostic] = []
        split: dict[str, list[str]] = {}  # each file is split into lines once, not once per message
        for m in messages:
            path = PurePosixPath(m.get("path", "")).as_posix().removeprefix("./")
            text = texts.get(path)
            if text is None:
                continue
            lines = split.get(path)
            if lines is None:
                lines = split[path] = python_lines(text)
            line = int(m.get("line") or 1) - 1
            end_line = m.get("endLine")
            end_line = int(end_line) - 1 if end_line is not None else None
            col = int(m.get("column") or 0)
            end_col = m.get("endColumn")
            if 0 <= line < len(lines):
                col = _byte_to_char(lines[line], col)
            if end_line is not None and end_col is not None and 0 <= end_line < len(lines):
                end_col = _byte_to_char(lines[end_line], int(end_col))
            lmap = line_maps.get(path)
            if lmap is not None:
                if not (0 <= line < len(lmap)) or lmap[line] is None:
                    continue  # a message about the stub itself
                line = lmap[line]
                if end_line is not None:
                    end_line = lmap[end_line] if 0 <= end_line < len(lmap) else None
            out.append(Diagnostic(path, line, col, m.get("messageId", ""), m.get("message", ""), end_line,
                                  end_col if end_line is not None else None))
        return out

    # -- main ------------------------------------------------------------------------------------------------
    def analyze(self, snapshot: RepoSnapshot, workdir: Path) -> AnalysisResult:
        result = AnalysisResult(tool_versions=self.tool_versions())
        repo = snapshot.name
        index = ModuleIndex(snapshot.files)
        texts = snapshot.by_path()
        stubbed: dict[str, FileStubs] = {}
        for f in snapshot.files:
            try:
                ast.parse(f.text)
            except _UNPARSABLE as exc:
                result.exclusions.append(Exclusion(f"{repo}/{f.path}", Stage.ANALYZER, Reason.SYNTAX_ERROR,
                                                   f"line {getattr(exc, 'lineno', '?')}: "
                                                   f"{getattr(exc, 'msg', None) or f'{type(exc).__name__}: nested too deeply to parse'}",
                                                   repo))
                continue
            s = stub_file(f, index)
            if s is not None:
                stubbed[f.path] = s
        result.stats["files"] = len(snapshot.files)
        result.stats["files_with_project_imports"] = len(stubbed)
        if not stubbed:
            return result

        rcfile = workdir / "pylintrc"
        rcfile.write_text(PYLINT_RC.format(enable=",".join(PYLINT_MESSAGES)), encoding="utf-8")
        home = workdir / "home"
        (home / "stubbed").mkdir(parents=True, exist_ok=True)
        stub_tree = workdir / "stubbed"
        if stub_tree.exists():
            shutil.rmtree(stub_tree)
        write_tree(stub_tree, {f.path: (stubbed[f.path].stubbed_text if f.path in stubbed else f.text)
                               for f in snapshot.files})
        try:
            # The two runs are independent: run them side by side (each is one single-threaded pylint).
            with ThreadPoolExecutor(max_workers=2) as pool:
                fut_o = pool.submit(self._pylint, snapshot.root, rcfile, home)
                fut_s = pool.submit(self._pylint, stub_tree, rcfile, home / "stubbed")
                (original_msgs, err_o), (stubbed_msgs, err_s) = fut_o.result(), fut_s.result()
        except ToolMissing as exc:
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), repo))
            return result
        if original_msgs is None or stubbed_msgs is None:
            err = err_o or err_s
            reason = (Reason.TOOL_TIMEOUT if "timeout" in err else
                      Reason.TOOL_MEMORY if "memory limit" in err else Reason.TOOL_CRASH)
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, reason, err, repo))
            return result
        plain = {p: f.text for p, f in texts.items()}
        stub_texts = {p: s.stubbed_text for p, s in stubbed.items()}
        before = {d.key() for d in self._diagnostics(original_msgs, plain, {})}
        after = self._diagnostics(stubbed_msgs, {**plain, **stub_texts}, {p: s.line_map for p, s in stubbed.items()})
        # Files pylint could not process at all are recorded, not silently empty.
        for m in original_msgs + stubbed_msgs:
            if str(m.get("messageId", "")).startswith("F"):
                path = PurePosixPath(m.get("path", "")).as_posix()
                result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, Reason.TOOL_CRASH,
                                                   f"{m.get('messageId')}: {m.get('message', '')[:200]}", repo))
        seen: set[tuple] = set()
        unattributed = 0
        plain_lines: dict[str, list[str]] = {}
        numbering: dict[str, LineNumbering] = {}
        for d in sorted(after, key=lambda d: (d.file, d.line, d.column, d.code)):
            if d.key() in before or d.file not in stubbed or d.code not in PYLINT_MESSAGES:
                continue
            if d.file not in plain_lines:
                plain_lines[d.file] = python_lines(plain[d.file])
                numbering[d.file] = LineNumbering(plain[d.file])
            ref = self._to_ref(d, stubbed[d.file], index, plain_lines[d.file])
            if isinstance(ref, str):  # a use of a stub whose position does not hold its name: a lost example
                line, col = numbering[d.file].to_lf(d.line, d.column)
                result.exclusions.append(Exclusion(f"{repo}/{d.file}:{line + 1}:{col + 1}", Stage.ANALYZER,
                                                   Reason.CURSOR_NOT_FOUND, ref, repo))
                continue
            if ref is None:
                unattributed += 1
                continue
            ref.line, ref.column = numbering[d.file].to_lf(ref.line, ref.column)
            located = _locate_definition(ref, index)
            if located is None:
                # e.g. ``urlparse(x).scheme`` where the project re-exports a stdlib name: not a project API.
                result.exclusions.append(Exclusion(
                    f"{repo}/{ref.file}:{ref.line + 1}:{ref.column + 1}", Stage.ANALYZER,
                    Reason.SYMBOL_NOT_IN_REPOSITORY, f"{ref.symbol!r} (via {ref.import_name}) is not defined "
                    "in another file of the repository", repo))
                continue
            ref.defining_file = located
            k = (ref.file, ref.line, ref.column)
            if k not in seen:
                seen.add(k)
                result.refs.append(ref)
        result.stats["new_diagnostics"] = len(after) - sum(1 for d in after if d.key() in before)
        result.stats["unattributed"] = unattributed
        result.stats["refs"] = len(result.refs)
        return result

    @staticmethod
    def _to_ref(d: Diagnostic, stubs: FileStubs, index: ModuleIndex, lines: list[str]) -> CrossFileRef | str | None:
        """The reference a new diagnostic reveals; None when it is no use of a project name; a reason (str) when
        it is one but pylint's position does not hold the name (recorded, never silently dropped)."""
        if d.code == "E1101":
            m = _OWNER_RE.match(d.message)
            if not m or d.end_line is None or d.end_column is None:
                return None
            owner, member = m.group(1), m.group(2)
            candidates = stubs.bindings.get(owner)
            if not candidates:
                return None
            line, col = d.end_line, d.end_column - len(member)
            if not (0 <= line < len(lines)) or lines[line][col : col + len(member)] != member:
                return f"pylint places {owner}.{member} at {line + 1}:{col + 1}, which does not hold {member!r}"
            binding = _pick(candidates, member, index)
            return CrossFileRef(d.file, line, col, member, owner, binding.defining_file, d.code, d.message)
        if d.code == "E0602":
            m = _QUOTED_RE.search(d.message)
            if not m:
                return None
            name = m.group(1)
            for module in stubs.star_modules:
                file = index.defining_file(module, name, d.file)
                if file and re.search(rf"\b{re.escape(name)}\b", index.texts.get(file, "")):
                    return CrossFileRef(d.file, d.line, d.column, name, "*", file, d.code, d.message)
            return None
        # E1102/E1133/E1135/E1136/E1137: the stub class itself is used; the name sits at the column.
        if not (0 <= d.line < len(lines)):
            return None
        m = _NAME_AT_RE.match(lines[d.line], d.column)
        if not m or m.group(0) not in stubs.bindings:
            return None
        name = m.group(0)
        binding = stubs.bindings[name][0]
        return CrossFileRef(d.file, d.line, d.column, name, name, binding.defining_file, d.code, d.message)


def _json2_report(stdout: str) -> dict | None:
    """pylint's json2 report: the whole of stdout, or (when something printed before it) the last object that
    starts a line and runs to the end."""
    try:
        data = json.loads(stdout)
        return data if isinstance(data, dict) else None
    except json.JSONDecodeError:
        pass
    at = stdout.rfind("\n{\n")
    if at < 0:
        return None
    try:
        data = json.loads(stdout[at + 1:])
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) and "messages" in data else None


def _defined_names(tree: ast.AST) -> set[str]:
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


def _locate_definition(ref: CrossFileRef, index: ModuleIndex) -> str | None:
    """The file (other than the ref's own) that defines ``ref.symbol``: the import's file when it does, else the
    first project file that does (a base class, a mixin); None when no project file defines it."""
    files = index.definers(ref.symbol)
    if ref.defining_file and ref.defining_file != ref.file and ref.defining_file in files:
        return ref.defining_file
    for path in files:
        if path != ref.file:
            return path
    return None


def _pick(candidates: list[Binding], member: str, index: ModuleIndex) -> Binding:
    """Among bindings of the same class name, the one whose defining file mentions the member."""
    for b in candidates:
        if index.is_project(b.module):
            # A module stub: the member may be re-exported from another file (``flask.Blueprint``).
            refined = index.defining_file(b.module, member, b.defining_file or "")
            if refined and re.search(rf"\b{re.escape(member)}\b", index.texts.get(refined, "")):
                return Binding(b.local, b.module, refined)
        if b.defining_file and re.search(rf"\b{re.escape(member)}\b", index.texts.get(b.defining_file, "")):
            return b
    return candidates[0]
