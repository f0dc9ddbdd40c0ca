"""TypeScript: stub project imports with empty classes, compile both trees once with our own pinned ``tsc``.

Every file's imports of project files (``import {A} from './a'``, ``import A from``, ``import * as ns from``,
``import type``, ``import R = require(...)``, path-mapped specifiers) are replaced, in place, by module-level
empty declarations bound to the same local names (``class A {} namespace A {}``: the class answers value and
type uses, the merged namespace turns ``ns.Foo`` in a type position into TS2694 *at* ``Foo``).  Line breaks of
the replaced statement are kept, so both trees have the same lines and a diagnostic on any other line has the
same (line, column) in both.  Because each file only loses its *own* imports and every importer is stubbed too,
one stubbed tree serves all files: one ``tsc`` over the original tree, one over the stubbed tree, and the
diagnostics only the stubbed run has (keyed by file, position and code) are the cross-file references.

Toolchain isolation: ``tsc`` is the pinned copy installed by ``scripts/setup_toolchains.sh`` (never the
repository's ``node_modules``), run with ``node`` directly and an environment we write.  It reads *our* tsconfig
(``noEmit``, ``noResolve`` so nothing outside the listed files is ever read, ``types: []``, ``plugins: []``, no
``extends``).  A repository's tsconfig files are only parsed as data for ``paths``/``baseUrl``; their
``plugins`` and package ``extends`` are never looked at (``tsc`` does not load language-service plugins anyway,
but nothing of the repository's configuration reaches it except re-based path patterns).

``.d.ts`` files take part in both compiles (other files import their declarations) but are never stubbed and
yield no references: they hold no code to complete.  tsc reports no semantic diagnostic at all while any file has
a syntax error, so files tsc cannot parse are recorded (``syntax_error``) and left out of both compiles.

Attribution (the cursor sits right before the name that became unresolved): member codes (TS2339/TS2551/TS2694/
TS2353/TS2561) put it before the member, whose owner the message quotes (a stub, ``typeof`` a stub, or a class of
the file extending one; the object before the ``.`` first, never the member's own quote, so ``geo.dist`` is geo's
even beside ``import {dist}``); name codes (TS2348 not callable, TS2315 not generic, ...) before the stubbed name
itself; arity codes (TS2554/TS2558 ...) before the callee.  The defining file follows re-exports (``export *``,
``export {a as b} from``) and, for members, the ``extends`` chain across files.  TS2304/TS2305 cannot come from
these stubs (every local name stays bound; imports are removed, not rewritten).  Pass the repository's tsconfig
files (``read_configs(repo)``) as ``analyze(..., configs=...)`` for path-mapped imports.

Subclassing (the JavaScript analyzer): override the class attributes (language, extensions, grammar, resolution
extensions, ``namespace_stubs``, ``stub_require_calls``) and ``compiler_options``; the rest is shared.
"""

from __future__ import annotations

import bisect
import fnmatch
import importlib
import json
import os
import posixpath
import re
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Collection, Iterable, Mapping

from benchsmith.analyzers.base import AnalysisResult, Analyzer
from benchsmith.files import RepoSnapshot, read_data_files, write_tree
from benchsmith.records import CrossFileRef, Exclusion, Reason, Stage
from benchsmith.runner import Backend, Mount, ToolMissing, repo_root, run

TSC_ENV = "BENCHSMITH_TSC"  # path to tsc.js (or bin/tsc) to use instead of the project-local pinned copy
DEFAULT_TSC = Path(".toolchains/node/node_modules/typescript/lib/tsc.js")  # relative to repo_root()

# Diagnostics about a member of a stub (the member name sits at the position; the message quotes the owner).
MEMBER_CODES = frozenset({
    "TS2339",  # Property 'm' does not exist on type 'A' / 'typeof A'
    "TS2551",  # ... Did you mean 'n'?
    "TS2694",  # Namespace 'ns' has no exported member 'Foo'
    "TS2353",  # Object literal may only specify known properties, and 'p' does not exist in type 'A'
    "TS2561",  # ... Did you mean to write 'q'?
})
# Diagnostics whose position is the stubbed name itself.
NAME_CODES = frozenset({
    "TS2304", "TS2552",  # Cannot find name 'X' (Did you mean ...)
    "TS2348",  # Value of type 'typeof f' is not callable. Did you mean to include 'new'?
    "TS2349", "TS2351",  # This expression is not callable / constructable
    "TS2315",  # Type 'G' is not generic
    "TS2702",  # 'ns' only refers to a type, but is being used as a namespace here
    "TS2693", "TS2749", "TS2709",  # value/type/namespace confusions
    "TS2604", "TS2607", "TS2786",  # JSX element type 'X' ... / cannot be used as a JSX component
    "TS2345",  # Argument of type 'typeof A' is not assignable ... (only kept when the argument is the name)
    "TS2559", "TS2322",  # Type 'A' has no properties in common / not assignable (only when the name is there)
})
# Arity errors sit on the arguments; the reference is the callee.
CALL_CODES = frozenset({"TS2554", "TS2555", "TS2556", "TS2575", "TS2558"})  # 2558: type-argument count
# The original run could not resolve an import: the stub's refs would have no trustworthy defining file.
UNRESOLVED_CODES = frozenset({"TS2307", "TS2792", "TS2306", "TS7016"})

_TS_BREAK = re.compile(r"\r\n|[\n\r\u2028\u2029]")
_HEAD_RE = re.compile(r"\((\d+),(\d+)\): (error|warning|suggestion|message) (TS\d+): ")
_GLOBAL_RE = re.compile(r"^(error|warning|suggestion|message) (TS\d+): (.*)$")
_IDENT_RE = re.compile(r"[A-Za-z_$\u0080-\uffff][\w$\u0080-\uffff]*")
_QUOTED_RE = re.compile(r"'([^'\n]*)'")


# ----------------------------------------------------------------------------------------------------------------
# Positions: tsc counts lines TypeScript's way (\r\n, \n, \r, U+2028, U+2029) and columns in UTF-16 code units;
# refs use '\n'-separated lines and character columns (what the example builder indexes), tree-sitter uses bytes.
class Positions:
    def __init__(self, text: str) -> None:
        self.text = text
        self.ts_starts = [0] + [m.end() for m in _TS_BREAK.finditer(text)]
        self.nl_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self._ascii = text.isascii()

    def from_tsc(self, line1: int, col1: int) -> int | None:
        """Char offset of a tsc (1-based line, 1-based UTF-16 column) position, or None if out of range."""
        line = line1 - 1
        if not 0 <= line < len(self.ts_starts):
            return None
        start = self.ts_starts[line]
        end = self.ts_starts[line + 1] if line + 1 < len(self.ts_starts) else len(self.text)
        units = col1 - 1
        if units < 0:
            return None
        if self._ascii:
            off = start + units
            return off if off <= end else None
        off = start
        while units > 0 and off < end:
            units -= 2 if ord(self.text[off]) > 0xFFFF else 1
            off += 1
        return off if units == 0 else None

    def ts_line(self, offset: int) -> int:
        return bisect.bisect_right(self.ts_starts, offset) - 1

    def line_col(self, offset: int) -> tuple[int, int]:
        """0-based ('\\n'-separated) line and character column."""
        line = bisect.bisect_right(self.nl_starts, offset) - 1
        return line, offset - self.nl_starts[line]

    def _byte_lines(self) -> list[int]:
        """UTF-8 byte offset of each '\n'-line start (non-ASCII texts only; built once)."""
        if not hasattr(self, "_bstarts"):
            starts, total = [], 0
            for i, start in enumerate(self.nl_starts):
                starts.append(total)
                end = self.nl_starts[i + 1] if i + 1 < len(self.nl_starts) else len(self.text)
                total += len(self.text[start:end].encode("utf-8"))
            self._bstarts = starts
        return self._bstarts

    def to_char(self, byte: int) -> int:
        """Char offset of a UTF-8 byte offset (converting within one line, not the whole text)."""
        if self._ascii:
            return byte
        bstarts = self._byte_lines()
        line = bisect.bisect_right(bstarts, byte) - 1
        start = self.nl_starts[line]
        end = self.nl_starts[line + 1] if line + 1 < len(self.nl_starts) else len(self.text)
        chunk = self.text[start:end].encode("utf-8")[: byte - bstarts[line]]
        return start + len(chunk.decode("utf-8", errors="ignore"))

    def to_byte(self, offset: int) -> int:
        if self._ascii:
            return offset
        line = bisect.bisect_right(self.nl_starts, offset) - 1
        return self._byte_lines()[line] + len(self.text[self.nl_starts[line]: offset].encode("utf-8"))


# ----------------------------------------------------------------------------------------------------------------
# tsc output
@dataclass(frozen=True)
class TscMessage:
    """One ``--pretty false`` diagnostic as printed: 1-based line, 1-based UTF-16 column."""

    file: str | None  # relative to tsc's working directory, '/'-separated; None for a global diagnostic
    line: int
    column: int
    category: str
    code: str
    message: str


def _norm_path(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def parse_tsc_output(output: str, known_files: Collection[str] = ()) -> list[TscMessage]:
    """Parse ``file(line,col): error TSxxxx: message`` lines (continuation lines, indented, join the message).

    A path may contain spaces, parentheses or non-ASCII characters: of all ``(l,c): category TSn: `` heads on a
    line, the first whose prefix is a known file wins (else the first one), so ``a(1,2).ts(3,4): error ...``
    parses right."""
    known = set(known_files)
    out: list[TscMessage] = []
    pending: dict[str, Any] | None = None

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            out.append(TscMessage(**pending))
            pending = None

    for raw in output.split("\n"):
        line = raw.rstrip("\r")
        if not line:
            continue
        if line.startswith(" ") and pending is not None:
            pending["message"] += "\n" + line.strip()
            continue
        g = _GLOBAL_RE.match(line)
        if g:
            flush()
            pending = dict(file=None, line=0, column=0, category=g.group(1), code=g.group(2), message=g.group(3))
            continue
        heads = list(_HEAD_RE.finditer(line))
        if not heads:
            continue  # tsc prints nothing else with --pretty false; anything else is not a diagnostic
        chosen = heads[0]
        for h in heads:
            if _norm_path(line[: h.start()]) in known:
                chosen = h
                break
        flush()
        pending = dict(file=_norm_path(line[: chosen.start()]), line=int(chosen.group(1)),
                       column=int(chosen.group(2)), category=chosen.group(3), code=chosen.group(4),
                       message=line[chosen.end():])
    flush()
    return out


# ----------------------------------------------------------------------------------------------------------------
# Repository tsconfig files: data only (paths/baseUrl), JSON with comments and trailing commas.
def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas -> JSON (string-aware)."""
    out: list[str] = []
    i, n = 0, len(text)
    in_str = False
    while i < n:
        ch = text[i]
        if in_str:
            out.append(ch)
            if ch == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if ch == '"':
                in_str = False
            i += 1
            continue
        if ch == '"':
            in_str = True
            out.append(ch)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            rest = text[j:]
            # a comma before a closing bracket (possibly after comments) is dropped
            k = 0
            while True:
                rest = rest.lstrip(" \t\r\n")
                if rest.startswith("//"):
                    nl = rest.find("\n")
                    rest = "" if nl < 0 else rest[nl:]
                elif rest.startswith("/*"):
                    end = rest.find("*/")
                    rest = "" if end < 0 else rest[end + 2:]
                else:
                    break
                k += 1
            if not rest.startswith(("}", "]")):
                out.append(ch)
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class PathConfig:
    """Path mapping merged from a repository's tsconfig files, targets relative to the tree root."""

    paths: tuple[tuple[str, tuple[str, ...]], ...] = ()  # pattern -> targets, in tsc's order
    base_url: str | None = None  # one baseUrl directory (relative to the root) when the configs agree on one
    notes: tuple[str, ...] = ()  # configs skipped and why

    def __bool__(self) -> bool:
        return bool(self.paths) or self.base_url is not None


def _config_options(configs: Mapping[str, Any], rel: str, depth: int = 0) -> dict[str, tuple[str, Any]]:
    """Effective ``baseUrl``/``paths`` of one config following *repository-local* ``extends`` only; each value is
    paired with the directory it is relative to (TypeScript resolves them against the defining config)."""
    data = configs.get(rel)
    if not isinstance(data, dict) or depth > 8:
        return {}
    found: dict[str, tuple[str, Any]] = {}
    ext = data.get("extends")
    for parent in ([ext] if isinstance(ext, str) else ext if isinstance(ext, list) else []):
        if not isinstance(parent, str) or not parent.startswith((".", "/")) or parent.startswith("/"):
            continue  # a package name (node_modules) or an absolute path: never read
        target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), parent))
        for cand in (target, target + ".json"):
            if cand in configs:
                found.update(_config_options(configs, cand, depth + 1))
                break
    opts = data.get("compilerOptions")
    here = posixpath.dirname(rel)
    if isinstance(opts, dict):
        if isinstance(opts.get("baseUrl"), str):
            found["baseUrl"] = (here, opts["baseUrl"])
        if isinstance(opts.get("paths"), dict):
            found["paths"] = (here, opts["paths"])
    return found


def _inside(rel: str) -> str | None:
    rel = posixpath.normpath(rel)
    if rel == ".":
        return ""
    if rel.startswith("../") or rel == ".." or rel.startswith("/"):
        return None
    return rel


def merge_path_configs(texts: Mapping[str, str]) -> PathConfig:
    """``{relative config path: text}`` -> one ``PathConfig`` (configs sorted by path; bad ones noted)."""
    configs: dict[str, Any] = {}
    notes: list[str] = []
    for rel in sorted(texts):
        try:
            configs[rel] = json.loads(strip_jsonc(texts[rel]))
        except (json.JSONDecodeError, RecursionError) as exc:
            notes.append(f"{rel}: not JSON ({exc.msg if hasattr(exc, 'msg') else exc}); ignored")
    merged: dict[str, list[str]] = {}
    base_urls: list[str] = []
    for rel in sorted(configs):
        eff = _config_options(configs, rel)
        base = None
        if "baseUrl" in eff:
            d, b = eff["baseUrl"]
            base = _inside(posixpath.join(d, b))
            if base is None:
                notes.append(f"{rel}: baseUrl outside the repository; ignored")
            elif base not in base_urls:
                base_urls.append(base)
        if "paths" in eff:
            d, paths = eff["paths"]
            root = base if base is not None else _inside(d)
            if root is None:
                continue
            for pattern, targets in paths.items():
                if not isinstance(pattern, str) or pattern.count("*") > 1 or not isinstance(targets, list):
                    continue
                for t in targets:
                    if not isinstance(t, str) or t.count("*") > 1:
                        continue
                    full = _inside(posixpath.join(root, t)) if not t.startswith("/") else None
                    if full is None:
                        continue
                    if t.endswith("/") and not full.endswith("/"):
                        full += "/"  # "rxjs": ["./"] means the directory
                    lst = merged.setdefault(pattern, [])
                    if full not in lst:
                        lst.append(full)
    base_url = base_urls[0] if len(base_urls) == 1 else None
    if len(base_urls) > 1:
        # tsc takes one baseUrl; several are approximated by a catch-all pattern over each, in config order
        lst = merged.setdefault("*", [])
        for b in base_urls:
            t = posixpath.join(b, "*") if b else "*"
            if t not in lst:
                lst.append(t)
        notes.append(f"several baseUrl directories ({', '.join(b or '.' for b in base_urls)}) merged as '*'")
    return PathConfig(tuple((p, tuple(ts)) for p, ts in merged.items()), base_url, tuple(notes))


# ----------------------------------------------------------------------------------------------------------------
# Module resolution (what tsc does for relative and path-mapped specifiers, over the files of the tree)
class ModuleResolver:
    def __init__(self, files: Iterable[str], config: PathConfig, extensions: tuple[str, ...],
                 extension_map: Mapping[str, tuple[str, ...]]) -> None:
        self.files = set(files)
        self.config = config
        self.extensions = extensions
        self.extension_map = extension_map

    def resolve(self, spec: str, importer: str) -> str | None:
        if not spec or "\\" in spec or "\x00" in spec:
            return None
        if spec in (".", "..") or spec.startswith(("./", "../")):
            base = _inside(posixpath.join(posixpath.dirname(importer), spec))
            return None if base is None else self._file_or_dir(base, spec.endswith("/"))
        if spec.startswith("/"):
            return None
        for cand in self._mapped(spec):
            found = self._file_or_dir(cand.rstrip("/"), cand.endswith("/"))
            if found:
                return found
        if self.config.base_url is not None:
            base = _inside(posixpath.join(self.config.base_url, spec))
            if base is not None:
                return self._file_or_dir(base, False)
        return None

    def _mapped(self, spec: str) -> list[str]:
        """Candidates from the best ``paths`` pattern (exact match first, then the longest prefix)."""
        best: tuple[int, tuple[str, ...], str] | None = None
        for pattern, targets in self.config.paths:
            if "*" not in pattern:
                if pattern == spec:
                    return [t.replace("*", "") for t in targets]
                continue
            pre, _, suf = pattern.partition("*")
            if spec.startswith(pre) and spec.endswith(suf) and len(spec) >= len(pre) + len(suf):
                if best is None or len(pre) > best[0]:
                    best = (len(pre), targets, spec[len(pre): len(spec) - len(suf)])
        if best is None:
            return []
        return [t.replace("*", best[2]) for t in best[1]]

    def _file_or_dir(self, base: str, dir_only: bool) -> str | None:
        if base.startswith("../"):
            return None
        if not dir_only:
            if base in self.files and base.endswith(self.extensions):
                return base  # explicit TypeScript extension (allowImportingTsExtensions)
            stem, ext = posixpath.splitext(base)
            for repl in self.extension_map.get(ext, ()):
                if stem + repl in self.files:
                    return stem + repl
            for e in self.extensions:
                if base + e in self.files:
                    return base + e
        for e in self.extensions:
            cand = posixpath.join(base, "index" + e) if base else "index" + e
            if cand in self.files:
                return cand
        return None


# ----------------------------------------------------------------------------------------------------------------
# What a file imports and declares (tree-sitter)
@dataclass
class Binding:
    local: str  # the name the import binds in the file
    imported: str | None  # the exported name it reads ('default' for a default import); None = the module itself
    site: "ImportSite"


@dataclass
class ImportSite:
    start: int  # char offsets of the whole statement in the original text
    end: int
    specifier: str
    es: bool  # an ES import (a stubbed file needs `export {}` to stay a module)
    target: str | None = None  # the project file it resolves to
    bindings: list[Binding] = field(default_factory=list)
    unresolved_by_tsc: bool = False


@dataclass
class FileInfo:
    path: str
    text: str
    positions: Positions
    declaration: bool  # a .d.ts file: compiled, never stubbed, no refs
    parse_error: str | None = None
    sites: list[ImportSite] = field(default_factory=list)
    declared: set[str] = field(default_factory=set)  # top-level names ('default' if it has a default export)
    reexports: list[tuple[str, str, str]] = field(default_factory=list)  # (specifier, imported, exported)
    star_exports: list[str] = field(default_factory=list)
    local_exports: dict[str, str] = field(default_factory=dict)  # exported name -> local name
    heritage: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)  # class -> [(base, member)]
    members: dict[str, set[str]] = field(default_factory=dict)  # class/interface/enum -> member names
    other_module_syntax: bool = False  # a top-level export or an import we keep


@dataclass
class StubbedFile:
    path: str
    text: str
    stub_ts_lines: set[int]  # tsc line indices (0-based) touched by a stub: diagnostics there are dropped
    locals: dict[str, Binding]


@dataclass
class Plan:
    """Everything decided before the toolchain runs: the files, their imports, the stubbed tree."""

    files: dict[str, FileInfo]
    stubbed: dict[str, StubbedFile]
    resolver: ModuleResolver
    path_config: PathConfig
    trees: dict[str, Any] = field(default_factory=dict)  # tree-sitter trees parsed again during attribution


@dataclass
class CompileOutcome:
    messages: list[TscMessage] | None
    reason: Reason | None = None
    detail: str = ""
    duration: float = 0.0


@lru_cache(maxsize=None)
def _parser(module: str, function: str):
    from tree_sitter import Language, Parser

    return Parser(Language(getattr(importlib.import_module(module), function)()))


def _string_value(node) -> str | None:
    """The value of a string literal node without escapes (None when it has any)."""
    if node is None or node.type != "string":
        return None
    parts = [c for c in node.named_children]
    if any(c.type != "string_fragment" for c in parts):
        return None
    return "".join(c.text.decode("utf-8", errors="replace") for c in parts)


def _name(node) -> str | None:
    return node.text.decode("utf-8", errors="replace") if node is not None else None


class TypeScriptAnalyzer(Analyzer):
    language = "typescript"
    extensions = (".ts", ".tsx", ".mts", ".cts")
    grammar_module = "tree_sitter_typescript"
    grammar_function = "language_typescript"
    comment_prefix = "//"
    dockerfile = "tsc.Dockerfile"

    # -- hooks for subclasses (the JavaScript analyzer) --------------------------------------------------------
    declaration_suffixes: ClassVar[tuple[str, ...]] = (".d.ts", ".d.mts", ".d.cts")
    # extensions tried for an extensionless specifier, in tsc's order, then for `dir/index`
    resolution_extensions: ClassVar[tuple[str, ...]] = (".ts", ".tsx", ".d.ts", ".mts", ".d.mts", ".cts", ".d.cts")
    # a JavaScript extension in a specifier stands for these files (tsc maps './x.js' to x.ts)
    extension_map: ClassVar[dict[str, tuple[str, ...]]] = {
        ".js": (".ts", ".tsx", ".d.ts"), ".jsx": (".tsx", ".d.ts"),
        ".mjs": (".mts", ".d.mts"), ".cjs": (".cts", ".d.cts"),
    }
    namespace_stubs: ClassVar[bool] = True  # `namespace X {}` beside each stub class (TypeScript syntax only)
    stub_require_calls: ClassVar[bool] = False  # also stub `const x = require('./x')` declarations (JavaScript)
    config_patterns: ClassVar[tuple[str, ...]] = ("tsconfig*.json", "jsconfig*.json")
    container_tsc: ClassVar[tuple[str, ...]] = ("tsc",)  # the command inside the tsc.Dockerfile image
    node_heap_mb: ClassVar[int] = 4096
    address_space_extra: ClassVar[int] = 16 << 30  # V8 reserves its pointer cage and code space up front

    @classmethod
    def grammar_for(cls, path: str) -> str:
        """``.tsx`` files need the TSX grammar (JSX and `<T>x` casts parse differently)."""
        return "language_tsx" if path.endswith(".tsx") else cls.grammar_function

    def compiler_options(self) -> dict[str, Any]:
        """Our compiler options; nothing here comes from the analysed repository (paths are added separately)."""
        return {
            "noEmit": True,
            "noResolve": True,  # the program is exactly the listed files (+ lib): nothing else is ever read
            "allowJs": False,
            "checkJs": False,
            "target": "esnext",
            "module": "preserve",  # ES imports and `import x = require()` both allowed; bundler resolution
            "moduleResolution": "bundler",
            "lib": ["esnext", "dom", "dom.iterable"],
            "types": [],
            "typeRoots": [],
            "plugins": [],
            "skipLibCheck": True,
            "skipDefaultLibCheck": True,
            "strict": False,
            "jsx": "preserve",
            "experimentalDecorators": True,
            "esModuleInterop": True,
            "allowImportingTsExtensions": True,
            "allowArbitraryExtensions": True,
            "resolveJsonModule": False,
            "noErrorTruncation": True,
            "incremental": False,
            "composite": False,
            "declaration": False,
            "preserveSymlinks": True,
        }

    def is_declaration(self, path: str) -> bool:
        return path.endswith(self.declaration_suffixes)

    def stub_declarations(self, local: str) -> str:
        return f"class {local} {{}} namespace {local} {{}}" if self.namespace_stubs else f"class {local} {{}}"

    # -- toolchain -------------------------------------------------------------------------------------------
    def tsc_path(self) -> Path:
        env = os.environ.get(TSC_ENV)
        return Path(env).expanduser() if env else repo_root() / DEFAULT_TSC

    def toolchain_paths(self) -> list[str]:
        # the TypeScript package (tsc.js and its lib.*.d.ts), wherever it was installed; a tsc.js outside a package
        # alone
        out = []
        for tsc in (self.tsc_path(), Path(os.path.realpath(self.tsc_path()))):
            package = tsc.parent.parent
            out.append(str(package) if (package / "package.json").is_file() and tsc.parent.name in ("lib", "bin")
                       else str(tsc))
        return out

    def _local_argv(self) -> list[str]:
        tsc = self.tsc_path()
        if not tsc.is_file():
            raise ToolMissing(f"TypeScript compiler not found at {tsc}; run `bash scripts/setup_toolchains.sh "
                              f".toolchains` (or set {TSC_ENV} to a tsc.js)")
        node = shutil.which("node")
        if node is None:
            raise ToolMissing("'node' not found on PATH; install Node.js (>= 18) to analyse TypeScript")
        return [node, f"--max-old-space-size={self.node_heap_mb}", str(tsc)]

    def tool_versions(self) -> dict[str, str]:
        if self.options.backend is not Backend.LOCAL:
            # the image's tag hashes its Dockerfile, which pins the TypeScript release
            from benchsmith.containers import image_tag

            return {"tsc_image": self.options.container_image or image_tag(self.dockerfile)}
        out: dict[str, str] = {}
        tsc = self.tsc_path()
        for pkg in (tsc.parent.parent / "package.json", tsc.parent / "package.json"):
            try:
                data = json.loads(pkg.read_text(encoding="utf-8"))
                if data.get("name") == "typescript":
                    out["typescript"] = str(data.get("version"))
                    break
            except (OSError, ValueError):
                continue
        node = shutil.which("node")
        if node:
            out["node"] = _node_version(node)
        return out

    def tsconfig(self, tree: str, files: list[str], path_config: PathConfig) -> dict[str, Any]:
        opts = self.compiler_options()
        if path_config.paths:
            # absolute targets: valid whatever directory our tsconfig sits in
            opts["paths"] = {p: [_under(tree, t) for t in ts] for p, ts in path_config.paths}
        if path_config.base_url is not None:
            opts["baseUrl"] = _under(tree, path_config.base_url).rstrip("/") or "/"
        return {"compilerOptions": opts, "files": [posixpath.join(tree, f) for f in files]}

    def compile(self, tree: Path, files: list[str], workdir: Path, tag: str, path_config: PathConfig) -> CompileOutcome:
        """One tsc run over ``files`` of ``tree`` with our tsconfig (written under ``workdir``)."""
        cfg_dir = workdir / f"tsconfig-{tag}"
        cfg_dir.mkdir(parents=True, exist_ok=True)
        container = self.container([Mount(str(tree), "/work/tree"), Mount(str(cfg_dir), "/work/cfg")], "/work/tree")
        tree_ref = "/work/tree" if container else str(tree.resolve())
        cfg_ref = "/work/cfg/tsconfig.json" if container else str((cfg_dir / "tsconfig.json").resolve())
        config = self.tsconfig(tree_ref, files, path_config)
        (cfg_dir / "tsconfig.json").write_text(json.dumps(config, indent=1, sort_keys=True), encoding="utf-8")
        argv = (list(self.container_tsc) if container else self._local_argv()) + ["-p", cfg_ref, "--pretty", "false"]
        env = {"HOME": "/tmp" if container else str(workdir), "LANG": "C.UTF-8", "NODE_OPTIONS": ""}
        conf = None if container else self.confinement(read=(tree, cfg_dir), scratch=(workdir,))
        res = run(argv, cwd=None if container else tree, env=env, timeout=self.options.timeout,
                  container=container, inherit_env=False, confine=conf)
        if res.timed_out:
            return CompileOutcome(None, Reason.TOOL_TIMEOUT, f"tsc ran past its {self.options.timeout:g}s timeout",
                                  res.duration)
        if res.oom:
            return CompileOutcome(None, Reason.TOOL_MEMORY, f"tsc: {res.stderr.strip().splitlines()[-1]}",
                                  res.duration)
        if res.truncated:
            return CompileOutcome(None, Reason.TOOL_CRASH, "tsc output exceeded the output cap", res.duration)
        if container is not None and res.returncode == 125:  # the engine could not start it (e.g. no image)
            return CompileOutcome(None, Reason.TOOL_MISSING, f"{container.engine.value} could not run "
                                  f"{container.image}: {res.stderr.strip()[-300:]} (build it: `make images`)",
                                  res.duration)
        messages = parse_tsc_output(res.stdout, files)
        located = [m for m in messages if m.file is not None]
        if res.returncode not in (0, 1, 2) or (res.returncode != 0 and not located):
            # the error lines, not the stack frames under them
            lines = [ln.strip() for ln in (res.stderr.strip() or res.stdout.strip()).splitlines()
                     if ln.strip() and not ln.lstrip().startswith("at ")]
            tail = " | ".join(lines[-4:])
            return CompileOutcome(None, Reason.TOOL_CRASH, f"tsc exited {res.returncode}: {tail[:500]}", res.duration)
        return CompileOutcome(messages, duration=res.duration)

    # -- reading a repository's configuration (data only) ------------------------------------------------------
    @classmethod
    def read_configs(cls, repo: str | os.PathLike, max_bytes: int = 1_000_000, max_files: int = 200) -> dict[str, str]:
        """``{relative path: text}`` of the repository's tsconfig/jsconfig files, read without following
        symlinks; pass the result to ``analyze(..., configs=...)`` so ``paths``/``baseUrl`` are honoured."""
        return read_data_files(repo, lambda name: any(fnmatch.fnmatchcase(name, p) for p in cls.config_patterns),
                               max_bytes=max_bytes, max_files=max_files)

    # -- imports and stubs --------------------------------------------------------------------------------------
    def file_info(self, path: str, text: str) -> FileInfo:
        pos = Positions(text)
        info = FileInfo(path, text, pos, self.is_declaration(path))
        data = text.encode("utf-8")
        tree = _parser(self.grammar_module, self.grammar_for(path)).parse(data)
        root = tree.root_node
        if root.has_error:
            err = _first_error(root)
            where = f"line {err.start_point[0] + 1}" if err is not None else "somewhere"
            info.parse_error = f"tree-sitter cannot parse it ({where})"
            return info
        for node in root.named_children:
            self._top_level(node, info)
        return info

    def _top_level(self, node, info: FileInfo) -> None:
        pos = info.positions
        t = node.type
        if t == "import_statement":
            site = self._import_site(node, pos)
            if site is not None:
                info.sites.append(site)
            else:
                info.other_module_syntax = True
            return
        if t in ("lexical_declaration", "variable_declaration") and self.stub_require_calls:
            site = self._require_site(node, pos)
            if site is not None:
                info.sites.append(site)
                return
        if t == "export_statement":
            info.other_module_syntax = True
            self._export(node, info)
            return
        if t == "ambient_declaration":
            for c in node.named_children:
                self._declare(c, info)
            return
        self._declare(node, info)

    def _import_site(self, node, pos: Positions) -> ImportSite | None:
        start, end = pos.to_char(node.start_byte), pos.to_char(node.end_byte)
        spec_node = node.child_by_field_name("source")
        req = next((c for c in node.named_children if c.type == "import_require_clause"), None)
        if req is not None:  # import R = require('./r')
            spec = _string_value(req.child_by_field_name("source"))
            ident = next((c for c in req.named_children if c.type == "identifier"), None)
            if spec is None or ident is None:
                return None
            site = ImportSite(start, end, spec, es=True)
            site.bindings.append(Binding(_name(ident), None, site))
            return site
        spec = _string_value(spec_node)
        clause = next((c for c in node.named_children if c.type == "import_clause"), None)
        if spec is None or clause is None:
            return None  # a side-effect import binds nothing
        site = ImportSite(start, end, spec, es=True)
        for c in clause.named_children:
            if c.type == "identifier":
                site.bindings.append(Binding(_name(c), "default", site))
            elif c.type == "namespace_import":
                ident = next((x for x in c.named_children if x.type == "identifier"), None)
                if ident is not None:
                    site.bindings.append(Binding(_name(ident), None, site))
            elif c.type == "named_imports":
                for spec_node in c.named_children:
                    if spec_node.type != "import_specifier":
                        continue
                    name = spec_node.child_by_field_name("name")
                    alias = spec_node.child_by_field_name("alias")
                    imported = _name(name)
                    if name is not None and name.type == "string":
                        imported = _string_value(name)  # import { "a-b" as ab }
                    local = _name(alias) if alias is not None else imported
                    if imported and local and _IDENT_RE.fullmatch(local):
                        site.bindings.append(Binding(local, imported, site))
        return site if site.bindings else None

    def _require_site(self, node, pos: Positions) -> ImportSite | None:
        """``const x = require('./x')`` / ``const {a, b: c} = require('./x')`` with a single declarator."""
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(decls) != 1:
            return None
        value = decls[0].child_by_field_name("value")
        pattern = decls[0].child_by_field_name("name")
        if value is None or pattern is None or value.type != "call_expression":
            return None
        fn = value.child_by_field_name("function")
        args = value.child_by_field_name("arguments")
        if fn is None or _name(fn) != "require" or args is None or args.named_child_count != 1:
            return None
        spec = _string_value(args.named_children[0])
        if spec is None:
            return None
        site = ImportSite(pos.to_char(node.start_byte), pos.to_char(node.end_byte), spec, es=False)
        if pattern.type == "identifier":
            site.bindings.append(Binding(_name(pattern), None, site))
        elif pattern.type == "object_pattern":
            for p in pattern.named_children:
                if p.type == "shorthand_property_identifier_pattern":
                    site.bindings.append(Binding(_name(p), _name(p), site))
                elif p.type == "pair_pattern":
                    key, val = p.child_by_field_name("key"), p.child_by_field_name("value")
                    if key is not None and val is not None and val.type == "identifier":
                        site.bindings.append(Binding(_name(val), _name(key), site))
                    else:
                        return None
                else:
                    return None
        else:
            return None
        return site if site.bindings else None

    def _export(self, node, info: FileInfo) -> None:
        source = _string_value(node.child_by_field_name("source"))
        decl = node.child_by_field_name("declaration")
        if any(c.type == "default" for c in node.children):
            info.declared.add("default")
        if decl is not None:
            self._declare(decl, info)
            name = _name(decl.child_by_field_name("name"))
            if "default" in info.declared and name:  # `export default class X`: members reachable as 'default'
                if name in info.members:
                    info.members["default"] = info.members[name]
                if name in info.heritage:
                    info.heritage["default"] = info.heritage[name]
            return
        clause = next((c for c in node.named_children if c.type == "export_clause"), None)
        if clause is None:
            if source is not None and any(c.type == "*" for c in node.children):
                ns = next((c for c in node.named_children if c.type == "namespace_export"), None)
                if ns is None:
                    info.star_exports.append(source)
                else:  # export * as ns from './x'
                    ident = next((x for x in ns.named_children if x.type in ("identifier", "string")), None)
                    if ident is not None:
                        info.reexports.append((source, "*", _name(ident).strip("'\"")))
            return
        for spec in clause.named_children:
            if spec.type != "export_specifier":
                continue
            name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
            local = _name(name)
            exported = _name(alias) if alias is not None else local
            if not local or not exported:
                continue
            if source is not None:
                info.reexports.append((source, local, exported))
            else:
                info.local_exports[exported] = local

    def _declare(self, node, info: FileInfo) -> None:
        t = node.type
        if t in ("lexical_declaration", "variable_declaration"):
            for d in node.named_children:
                if d.type == "variable_declarator":
                    n = d.child_by_field_name("name")
                    if n is not None and n.type == "identifier":
                        info.declared.add(_name(n))
            return
        name = node.child_by_field_name("name")
        if name is None:
            return
        if t in ("class_declaration", "abstract_class_declaration", "class", "interface_declaration",
                 "function_declaration", "generator_function_declaration", "function_signature",
                 "type_alias_declaration", "enum_declaration", "internal_module", "module"):
            info.declared.add(_name(name).strip("'\""))
        if t in ("class_declaration", "abstract_class_declaration", "interface_declaration"):
            bases = _heritage(node)
            if bases:
                info.heritage[_name(name)] = bases
        if t in ("class_declaration", "abstract_class_declaration", "interface_declaration", "enum_declaration"):
            info.members.setdefault(_name(name), set()).update(_members(node))

    def plan(self, snapshot: RepoSnapshot, configs: Mapping[str, str] | None = None,
             exclusions: list[Exclusion] | None = None) -> Plan:
        """Parse every file, resolve its imports and build the stubbed text of each file that has project
        imports (``exclusions`` receives files that cannot be parsed)."""
        path_config = merge_path_configs(configs or {})
        files: dict[str, FileInfo] = {}
        for f in snapshot.files:
            info = self.file_info(f.path, f.text)
            files[f.path] = info
            if info.parse_error and exclusions is not None and not info.declaration:
                exclusions.append(Exclusion(f"{snapshot.name}/{f.path}", Stage.ANALYZER, Reason.SYNTAX_ERROR,
                                            info.parse_error, snapshot.name))
        resolver = ModuleResolver(files, path_config, self.resolution_extensions, self.extension_map)
        stubbed: dict[str, StubbedFile] = {}
        for path in sorted(files):
            info = files[path]
            for site in info.sites:
                site.target = resolver.resolve(site.specifier, path)
            if info.declaration or info.parse_error:
                continue
            s = self.stub_file(info)
            if s is not None:
                stubbed[path] = s
        return Plan(files, stubbed, resolver, path_config)

    def stub_file(self, info: FileInfo) -> StubbedFile | None:
        sites = [s for s in info.sites if s.target is not None and s.target != info.path]
        if not sites:
            return None
        pos = info.positions
        text = info.text
        keep_module = any(s.es for s in sites) and not info.other_module_syntax and \
            all(s.target is not None for s in info.sites if s.es)
        pieces: list[str] = []
        last = 0
        lines: set[int] = set()
        locals_: dict[str, Binding] = {}
        for i, site in enumerate(sorted(sites, key=lambda s: s.start)):
            stub = " ".join(self.stub_declarations(b.local) for b in site.bindings)
            if i == 0 and keep_module:
                stub += " export {};"  # the file must stay a module, or its stubs would become globals
            breaks = "".join(m.group(0) for m in _TS_BREAK.finditer(text, site.start, site.end))
            pieces += [text[last: site.start], stub, breaks]
            last = site.end
            lines.update(range(pos.ts_line(site.start), pos.ts_line(site.end) + 1))
            for b in site.bindings:
                locals_[b.local] = b
        pieces.append(text[last:])
        return StubbedFile(info.path, "".join(pieces), lines, locals_)

    # -- attribution ----------------------------------------------------------------------------------------
    def defining_file(self, plan: Plan, target: str, name: str | None) -> str:
        """The project file that declares ``name`` as exported by ``target``, following re-exports."""
        return self._export_origin(plan, target, name)[0]

    def _export_origin(self, plan: Plan, target: str, name: str | None, depth: int = 0) -> tuple[str, str | None]:
        """(file, name there) of the declaration ``target`` exports as ``name``."""
        info = plan.files.get(target)
        if info is None or name is None or name == "*" or depth > 6:
            return target, name
        if name in info.declared and name not in info.local_exports:
            return target, name
        for spec, imported, exported in info.reexports:
            if exported == name:
                nxt = plan.resolver.resolve(spec, target)
                if nxt:
                    return self._export_origin(plan, nxt, None if imported == "*" else imported, depth + 1)
        local = info.local_exports.get(name, name)
        if local in info.declared:
            return target, local
        for site in info.sites:
            for b in site.bindings:
                if b.local == local and site.target:
                    return self._export_origin(plan, site.target, b.imported, depth + 1)
        for spec in info.star_exports:
            nxt = plan.resolver.resolve(spec, target)
            if nxt:
                found, there = self._export_origin(plan, nxt, name, depth + 1)
                if there is not None and there in plan.files[found].declared:
                    return found, there
        return target, name

    def member_file(self, plan: Plan, file: str, cls: str | None, member: str, depth: int = 0) -> str | None:
        """The file declaring ``member`` of class/interface ``cls`` of ``file``, walking ``extends`` across files
        (``subject.subscribe`` on an AsyncSubject is declared in Observable.ts); None when not found."""
        info = plan.files.get(file)
        if info is None or cls is None or depth > 8:
            return None
        if member in info.members.get(cls, ()):
            return file
        for base, via in info.heritage.get(cls, []):
            if via is None and base in info.members:
                found = self.member_file(plan, file, base, member, depth + 1)
                if found:
                    return found
                continue
            binding = next((b for site in info.sites for b in site.bindings if b.local == base), None)
            if binding is None or binding.site.target is None:
                continue
            export = via if via is not None else binding.imported
            if export is None:
                continue
            origin, name = self._export_origin(plan, binding.site.target, export)
            found = self.member_file(plan, origin, name, member, depth + 1)
            if found:
                return found
        return None

    def _owner(self, quoted: list[str], stub: StubbedFile, info: FileInfo, member: str,
               obj: str | None = None) -> tuple[Binding, str | None] | None:
        """The stub a member diagnostic is about: a quoted type is a stub (``'A'``, ``'typeof A'``,
        ``'Readonly<A>'``) or a class of this file extending one, directly or through other classes of the file.
        Returns the binding and, for ``extends ns.Base``, the member of the stub that is the base.

        ``member`` is the name the diagnostic is about: its own mention in the message is not an owner (with
        ``import {dist}`` and ``import * as geo``, "Property 'dist' does not exist on type 'typeof geo'" is about
        geo).  ``obj`` is the identifier before the ``.`` at the diagnostic (``geo`` of ``geo.dist``), when
        there is one: it is the owner when the message names it and it is a stub."""
        rest = list(quoted)
        if member in rest:
            rest.remove(member)
        names = [_type_name(q) for q in rest]
        if obj is not None and obj in stub.locals and obj in names:
            return stub.locals[obj], None
        for name in names:
            if name in stub.locals:
                return stub.locals[name], None
        for name in names:
            seen = {name}
            frontier = [name]
            for _ in range(6):
                nxt: list[str] = []
                for cls in frontier:
                    for base, member in info.heritage.get(cls, []):
                        if base in stub.locals:
                            return stub.locals[base], member
                        if member is None and base not in seen:
                            seen.add(base)
                            nxt.append(base)
                frontier = nxt
        return None

    def _tree(self, plan: Plan, path: str):
        """The file's tree-sitter tree, parsed once per file during attribution."""
        if path not in plan.trees:
            text = plan.files[path].text
            plan.trees[path] = _parser(self.grammar_module, self.grammar_for(path)).parse(text.encode("utf-8"))
        return plan.trees[path]

    def _object_at(self, plan: Plan, path: str, offset: int) -> str | None:
        """The identifier before the ``.`` of the member access whose member starts at ``offset``
        (``geo`` for ``geo.dist`` / ``geo.Point`` in a type); None for ``this.m``, ``a.b.m``, object literals."""
        return _object_at(self._tree(plan, path), plan.files[path], offset)

    def attribute(self, plan: Plan, path: str, offset: int, code: str, message: str) -> CrossFileRef | None:
        """A new diagnostic at ``offset`` of the original text -> a reference, or None."""
        info, stub = plan.files[path], plan.stubbed[path]
        text = info.text
        if code in CALL_CODES:
            callee = _callee_at(self._tree(plan, path), info, offset)
            if callee is None:
                return None
            offset = callee
        m = _IDENT_RE.match(text, offset)
        if m is None:
            return None
        ident = m.group(0)
        quoted = _QUOTED_RE.findall(message)
        if code in MEMBER_CODES:
            if ident not in quoted:
                return None
            owner = self._owner(quoted, stub, info, ident, self._object_at(plan, path, offset))
            if owner is None:
                return None
            binding, via = owner
            # The file declaring the member: for `A.m` / `a.m` the file declaring A; for `ns.Foo` the module's
            # export Foo; for `this.m` in `class C extends ns.Base` the export Base.
            export = via if via is not None else (binding.imported if binding.imported is not None else ident)
        elif code in NAME_CODES or code in CALL_CODES:
            if ident not in stub.locals:
                return None
            binding = stub.locals[ident]
            export = binding.imported
        else:
            return None
        site = binding.site
        if site.unresolved_by_tsc or site.target is None:
            return None
        line, col = info.positions.line_col(offset)
        origin, there = self._export_origin(plan, site.target, export)
        defining = origin
        if code in MEMBER_CODES and there is not None and there != ident:
            # a member of an imported class: the file that declares it, up the class's `extends` chain
            defining = self.member_file(plan, origin, there, ident) or origin
        return CrossFileRef(path, line, col, ident, binding.local, defining, code, message)

    # -- main ------------------------------------------------------------------------------------------------
    def analyze(self, snapshot: RepoSnapshot, workdir: Path, configs: Mapping[str, str] | None = None) -> AnalysisResult:
        """``configs``: the repository's tsconfig files (``read_configs(repo)``) for ``paths``/``baseUrl``."""
        result = AnalysisResult(tool_versions=self.tool_versions())
        repo = snapshot.name
        workdir = Path(workdir)
        plan = self.plan(snapshot, snapshot.configs if configs is None else configs, result.exclusions)
        result.stats.update(self._plan_stats(plan))
        if plan.path_config.notes:
            result.stats["config_notes"] = list(plan.path_config.notes)
        if not plan.stubbed:
            return result
        try:
            before, after, files = self.compile_both(plan, snapshot.root, workdir, result.exclusions, repo)
        except ToolMissing as exc:
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), repo))
            return result
        for outcome, tag in ((before, "original"), (after, "stubbed")):
            if outcome is not None and outcome.messages is None:
                result.exclusions.append(Exclusion(repo, Stage.ANALYZER, outcome.reason or Reason.TOOL_CRASH,
                                                   f"{tag} tree: {outcome.detail}", repo))
                return result
        result.stats["compiled_files"] = len(files)
        result.refs, stats = self.diff(plan, before.messages, after.messages)
        result.stats.update(stats)
        return result

    def compile_both(self, plan: Plan, original: Path, workdir: Path, exclusions: list[Exclusion],
                     repo: str) -> tuple[CompileOutcome, CompileOutcome | None, list[str]]:
        """The original and the stubbed compile over the same files.

        tsc reports no semantic diagnostic at all once any file has a syntax error, so files tsc cannot parse are
        taken out (recorded) and the original tree compiled again; that retry only costs a parse.  A stub that
        broke a file's syntax (it should not happen) is reverted the same way."""
        files = sorted(plan.files)
        before = self.compile(original, files, workdir, "original", plan.path_config)
        broken = _syntax_only(before.messages)
        if broken:
            already = {e.item_id for e in exclusions}
            for path in sorted(broken):
                plan.stubbed.pop(path, None)
                detail = "; ".join(f"{m.line}:{m.column} {m.code} {m.message}" for m in before.messages
                                   if m.file == path)[:300]
                item = f"{repo}/{path}"
                if item not in already:
                    exclusions.append(Exclusion(item, Stage.ANALYZER, Reason.SYNTAX_ERROR, f"tsc: {detail}", repo))
            files = [f for f in files if f not in broken]
            before = self.compile(original, files, workdir, "original", plan.path_config)
        if before.messages is None or not plan.stubbed:
            return before, None if before.messages is not None else before, files
        stub_tree = workdir / "stubbed"
        for _ in range(2):
            if stub_tree.exists():
                shutil.rmtree(stub_tree)
            write_tree(stub_tree, {p: (plan.stubbed[p].text if p in plan.stubbed else plan.files[p].text)
                                   for p in files})
            after = self.compile(stub_tree, files, workdir, "stubbed", plan.path_config)
            reverted = _syntax_only(after.messages) - set(_syntax_only(before.messages))
            if not reverted:
                break
            for path in reverted:
                plan.stubbed.pop(path, None)
        return before, after, files

    def _plan_stats(self, plan: Plan) -> dict[str, Any]:
        sites = [s for i in plan.files.values() for s in i.sites]
        return {
            "files": len(plan.files),
            "declaration_files": sum(i.declaration for i in plan.files.values()),
            "unparsable_files": sum(bool(i.parse_error) for i in plan.files.values()),
            "files_with_project_imports": len(plan.stubbed),
            "project_imports": sum(1 for s in sites if s.target is not None),
            "external_imports": sum(1 for s in sites if s.target is None),
        }

    def diff(self, plan: Plan, before: list[TscMessage], after: list[TscMessage]) -> tuple[list[CrossFileRef], dict]:
        """References from the diagnostics only the stubbed run has."""
        stats: dict[str, Any] = {"global_errors": sorted({f"{m.code}: {m.message}" for m in before + after
                                                          if m.file is None})[:5]}
        seen_before: set[tuple[str, int, str]] = set()
        for m in before:
            info = plan.files.get(m.file) if m.file else None
            if info is None:
                continue
            off = info.positions.from_tsc(m.line, m.column)
            if off is None:
                continue
            seen_before.add((m.file, off, m.code))
            if m.code in UNRESOLVED_CODES:
                for site in info.sites:
                    if site.start <= off < site.end:
                        site.unresolved_by_tsc = True
        refs: dict[tuple[str, int, int], CrossFileRef] = {}
        new = unattributed = on_stub_lines = 0
        by_code: dict[str, int] = {}
        ignored: dict[str, int] = {}
        for m in after:
            stub = plan.stubbed.get(m.file) if m.file else None
            if stub is None:
                continue  # a file we did not stub: nothing of its own changed
            if m.line - 1 in stub.stub_ts_lines:
                on_stub_lines += 1
                continue
            info = plan.files[m.file]
            off = info.positions.from_tsc(m.line, m.column)
            if off is None or (m.file, off, m.code) in seen_before:
                continue
            new += 1
            by_code[m.code] = by_code.get(m.code, 0) + 1
            if m.code not in MEMBER_CODES | NAME_CODES | CALL_CODES:
                ignored[m.code] = ignored.get(m.code, 0) + 1
                continue
            ref = self.attribute(plan, m.file, off, m.code, m.message)
            if ref is None or not info.text.startswith(ref.symbol, info.positions.nl_starts[ref.line] + ref.column):
                unattributed += 1
                continue
            refs.setdefault((ref.file, ref.line, ref.column), ref)
        stats.update({
            "new_diagnostics": new,
            "new_diagnostics_by_code": dict(sorted(by_code.items())),
            "ignored_codes": dict(sorted(ignored.items())),
            "diagnostics_on_stub_lines": on_stub_lines,
            "unattributed": unattributed,
            "unresolved_project_imports": sum(s.unresolved_by_tsc and s.target is not None
                                              for i in plan.files.values() for s in i.sites),
            "refs": len(refs),
        })
        return [refs[k] for k in sorted(refs)], stats


# ----------------------------------------------------------------------------------------------------------------
def _is_syntactic(code: str) -> bool:
    """Parser diagnostics (TS1xxx), JavaScript-only syntax in a JS file (TS8xxx), JSX parse errors (TS17xxx)."""
    try:
        n = int(code.removeprefix("TS"))
    except ValueError:
        return False
    return 1000 <= n < 2000 or 8000 <= n < 9000 or 17000 <= n < 18000


def _syntax_only(messages: list[TscMessage] | None) -> set[str]:
    """Files with diagnostics when tsc stopped after parsing (every located diagnostic is syntactic)."""
    located = [m for m in messages or [] if m.file is not None]
    if not located or not all(_is_syntactic(m.code) for m in located):
        return set()
    return {m.file for m in located}


def _first_error(node):
    if node.type == "ERROR" or node.is_missing:
        return node
    for c in node.children:
        if c.has_error or c.is_missing or c.type == "ERROR":
            found = _first_error(c)
            if found is not None:
                return found
    return None


def _heritage(node) -> list[tuple[str, str | None]]:
    """Bases a class/interface extends: ``A`` -> (A, None); ``ns.Base`` -> (ns, 'Base')."""
    out: list[tuple[str, str | None]] = []
    clauses = [c for c in node.named_children if c.type in ("class_heritage", "extends_type_clause")]
    for clause in clauses:
        ext = [clause] if clause.type == "extends_type_clause" else \
            [c for c in clause.named_children if c.type == "extends_clause"]
        for e in ext:
            for v in e.named_children:
                if v.type in ("identifier", "type_identifier"):
                    out.append((_name(v), None))
                elif v.type in ("member_expression", "nested_type_identifier", "nested_identifier"):
                    obj = v.named_children[0] if v.named_children else None
                    prop = v.named_children[-1] if v.named_children else None
                    if obj is not None and obj.type == "identifier" and prop is not None and prop is not obj:
                        out.append((_name(obj), _name(prop)))
                elif v.type == "generic_type":
                    inner = v.named_children[0] if v.named_children else None
                    if inner is not None and inner.type in ("type_identifier", "identifier"):
                        out.append((_name(inner), None))
    return out


_MEMBER_NODES = frozenset({"public_field_definition", "method_definition", "method_signature", "property_signature",
                           "abstract_method_signature", "enum_assignment"})


def _members(node) -> set[str]:
    """Member names of a class/interface/enum declaration (constructor parameter properties included)."""
    body = node.child_by_field_name("body")
    out: set[str] = set()
    if body is None:
        return out
    for c in body.named_children:
        if c.type == "property_identifier" or c.type == "string":  # enum members
            out.add(_name(c).strip("'\""))
        elif c.type in _MEMBER_NODES:
            name = c.child_by_field_name("name")
            if name is None:
                continue
            text = _name(name).strip("'\"")
            out.add(text)
            if c.type == "method_definition" and text == "constructor":
                params = c.child_by_field_name("parameters")
                for p in params.named_children if params is not None else []:
                    if any(x.type in ("accessibility_modifier", "readonly", "override_modifier") for x in p.children):
                        pat = p.child_by_field_name("pattern")
                        if pat is not None and pat.type == "identifier":
                            out.add(_name(pat))
    return out


def _callee_at(tree, info: FileInfo, offset: int) -> int | None:
    """For an arity error at ``offset`` (an argument, or the call itself), the char offset of the callee's name:
    ``f(x)`` -> f, ``new A(x)`` -> A, ``ns.f(x)`` -> f."""
    pos = info.positions
    b = pos.to_byte(offset)
    node = tree.root_node.descendant_for_byte_range(b, b)
    while node is not None and node.type not in ("call_expression", "new_expression"):
        node = node.parent
    if node is None:
        return None
    callee = node.child_by_field_name("function") or node.child_by_field_name("constructor")
    if callee is None:
        return None
    if callee.type == "member_expression":
        callee = callee.child_by_field_name("property")
    if callee is None or callee.type not in ("identifier", "property_identifier", "type_identifier"):
        return None
    return pos.to_char(callee.start_byte)


# member access node -> (field of the object, field of the member); the same in the TypeScript/TSX/JavaScript grammars
_ACCESS_FIELDS = {
    "member_expression": ("object", "property"),  # geo.dist, typeof geo.X, <geo.Comp/> (TSX/JSX)
    "nested_identifier": ("object", "property"),  # geo.a in geo.a.B
    "nested_type_identifier": ("module", "name"),  # geo.Point in a type position
}


def _object_at(tree, info: FileInfo, offset: int) -> str | None:
    """The plain identifier that is the object of the member access whose member name starts at ``offset``."""
    b = info.positions.to_byte(offset)
    node = tree.root_node.descendant_for_byte_range(b, b)
    if node is None or node.start_byte != b:
        return None
    parent = node.parent
    fields = _ACCESS_FIELDS.get(parent.type) if parent is not None else None
    if fields is None:
        return None
    member = parent.child_by_field_name(fields[1])
    obj = parent.child_by_field_name(fields[0])
    if member is None or member.start_byte != node.start_byte or obj is None or obj.type != "identifier":
        return None
    return _name(obj)


_WRAPPER_RE = re.compile(r"^(?:Readonly|Partial|Required|NonNullable)<(.*)>$")


def _type_name(quoted: str) -> str:
    """``'typeof A'`` / ``'A<T>'`` / ``'Readonly<A<T>>'`` -> ``A``."""
    name = quoted.strip().removeprefix("typeof ").strip()
    for _ in range(4):
        m = _WRAPPER_RE.match(name)
        if not m:
            break
        name = m.group(1).strip()
    return re.sub(r"<.*>$", "", name)


def _under(tree: str, rel: str) -> str:
    """``rel`` (relative to the tree root, '' or '/' for the root itself) as a path under ``tree``."""
    rel = rel.lstrip("/")
    return f"{tree}/{rel}" if rel else f"{tree}/"


@lru_cache(maxsize=None)
def _node_version(node: str) -> str:
    try:
        res = run([node, "--version"], timeout=30, inherit_env=False)
        return res.stdout.strip().lstrip("v") or "unknown"
    except ToolMissing:
        return "missing"
