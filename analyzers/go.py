"""Go: file-local stubs for imports of the module's own packages, one type check of each tree, diff.

Each file's imports of project packages are blanked out in place (the characters become spaces, line breaks
stay, so every other position of the file is unchanged) and a package-level ``var x struct{}`` per bound name is
appended after the file's last line.  ``x.Foo`` then fails with ``x.Foo undefined (type struct{} has no field or
method Foo)`` at ``Foo``; a dot import is only removed, so its names fail with ``undefined: Foo`` at the name.
Go imports are per file, so removing them never touches another file, and the stub is an unused-import-free
package-level value (Go has no unused-global error).  Two files of one package stubbing the same name redeclare
it: that error sits on the appended lines, which are never compared.

The type checker is a small program of our own (``benchsmith-gotype``, go/parser + go/types from the standard
library, built once per Go release into a cache directory).  It checks every package of the tree in one process
(the library, its in-package tests and its external ``_test`` package), resolves project imports from source
with the import paths we give it (from the repository's ``go.mod`` files, read as data, or inferred from its
imports), the standard library from the toolchain's export data, and nothing else: an external module is never
looked up, downloaded or built (``GOPROXY=off``, ``GOTOOLCHAIN=local``, ``GOWORK=off``, ``GOFLAGS=-mod=mod``,
private ``GOPATH``/``GOCACHE``), it is just a failed import, which go/types turns into a fake package whose uses
are not errors.  go/types reports every error (no ``-e`` needed: the 10-error limit is the compiler's), with
raw positions (``//line`` directives ignored), as JSON lines.  Build constraints are evaluated for linux/amd64
without cgo, as ``go build`` would on such a machine; files they exclude are left out of both checks.
Directories Go itself ignores (``testdata``, ``vendor``, names starting with ``.`` or ``_``) are left out too.
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from benchsmith.analyzers.base import AnalysisResult, Analyzer, ByteChars, json_lines
from benchsmith.analyzers.common import cache_dir
from benchsmith.files import RepoSnapshot, read_data_files, write_tree
from benchsmith.records import CrossFileRef, Exclusion, Reason, Stage
from benchsmith.runner import Backend, Mount, ToolMissing, run

GOOS, GOARCH = "linux", "amd64"
DRIVER_NAME = "benchsmith-gotype"
# The driver's own go.mod: its language version only gates syntax the driver itself uses.
DRIVER_GO_MOD = "module benchsmith.invalid/gotype\n\ngo 1.18\n"
DRIVER_SOURCE = r"""// benchsmith's Go type checker: go/parser + go/types over every package of a tree, in one process.
// args[1]: a JSON file {"files": [...], "packages": {dir: import path}, "goos", "goarch"}; paths relative to the
// working directory.  Prints one JSON object per line: start, skip, parse, error, done.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

type input struct {
	Files    []string          `json:"files"`
	Packages map[string]string `json:"packages"`
	GOOS     string            `json:"goos"`
	GOARCH   string            `json:"goarch"`
}

type group struct {
	dir, name, path       string
	files, tests, xtests  []*ast.File
	names, tnames, xnames []string
}

var (
	out  = bufio.NewWriterSize(os.Stdout, 1<<16)
	fset = token.NewFileSet()
)

func emit(v map[string]interface{}) {
	b, _ := json.Marshal(v)
	out.Write(b)
	out.WriteByte('\n')
}

type loader struct {
	in       input
	libs     map[string]*group
	byPath   map[string]string
	done     map[string]*types.Package
	checking map[string]bool
	std      types.Importer
	errs     int
}

func (l *loader) Import(p string) (*types.Package, error) { return l.ImportFrom(p, "", 0) }

func (l *loader) ImportFrom(p, _ string, _ types.ImportMode) (*types.Package, error) {
	if dir, ok := l.byPath[p]; ok {
		if g := l.libs[dir]; g != nil {
			return l.check(g, g.files, g.names, "lib")
		}
		return nil, fmt.Errorf("no Go files for %s in the analysed tree", p)
	}
	if p == "C" || strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
		// never looked up anywhere: a module outside the tree is a failed import (a fake package)
		return nil, fmt.Errorf("package %s is not in the analysed tree", p)
	}
	return l.std.Import(p)
}

func (l *loader) check(g *group, files []*ast.File, names []string, variant string) (*types.Package, error) {
	key := g.dir + "\x00" + g.name + "\x00" + variant
	if pkg, ok := l.done[key]; ok {
		return pkg, nil
	}
	if l.checking[key] {
		return nil, fmt.Errorf("import cycle through %s", g.path)
	}
	l.checking[key] = true
	defer delete(l.checking, key)
	report := map[string]bool{}
	for _, n := range names {
		report[n] = true
	}
	if variant == "test" { // the library's own files were reported by the library check
		for _, n := range g.names {
			delete(report, n)
		}
	}
	conf := types.Config{
		Importer: l,
		Sizes:    types.SizesFor("gc", l.in.GOARCH),
		Error: func(err error) {
			var te types.Error
			if !errors.As(err, &te) {
				emit(map[string]interface{}{"kind": "error", "file": "", "line": 0, "col": 0, "msg": err.Error()})
				return
			}
			file, line, col := "", 0, 0
			if te.Pos.IsValid() {
				pos := fset.PositionFor(te.Pos, false) // raw: a //line directive must not move a diagnostic
				file, line, col = filepath.ToSlash(pos.Filename), pos.Line, pos.Column
			}
			if file != "" && !report[file] {
				return
			}
			l.errs++
			emit(map[string]interface{}{"kind": "error", "file": file, "line": line, "col": col, "msg": te.Msg,
				"soft": te.Soft})
		},
	}
	pkgPath := g.path
	if variant == "xtest" {
		pkgPath += "_test"
	}
	pkg, _ := conf.Check(pkgPath, fset, files, nil)
	l.done[key] = pkg
	return pkg, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: benchsmith-gotype input.json")
		os.Exit(2)
	}
	defer out.Flush()
	var in input
	data, err := os.ReadFile(os.Args[1])
	if err == nil {
		err = json.Unmarshal(data, &in)
	}
	if err != nil {
		emit(map[string]interface{}{"kind": "crash", "msg": err.Error()})
		out.Flush()
		os.Exit(3)
	}
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled, ctx.GOPATH = in.GOOS, in.GOARCH, false, ""
	l := &loader{in: in, libs: map[string]*group{}, byPath: map[string]string{}, done: map[string]*types.Package{},
		checking: map[string]bool{}}
	for dir, p := range in.Packages {
		l.byPath[p] = dir
	}
	// One importer for the whole standard library (two would make two distinct "fmt" packages).
	std, kind := importer.ForCompiler(fset, "gc", nil), "gc"
	if _, err := std.Import("errors"); err != nil {
		std, kind = importer.ForCompiler(fset, "source", nil), "source"
	}
	l.std = std
	emit(map[string]interface{}{"kind": "start", "importer": kind, "go": runtime.Version()})
	files := append([]string(nil), in.Files...)
	sort.Strings(files)
	type key struct{ dir, name string }
	groups := map[key]*group{}
	var order []key
	for _, f := range files {
		dir, base := path.Split(f)
		dir = strings.TrimSuffix(dir, "/")
		osdir := "."
		if dir != "" {
			osdir = filepath.FromSlash(dir)
		}
		if ok, err := ctx.MatchFile(osdir, base); err != nil || !ok {
			why := "build constraints exclude it for " + in.GOOS + "/" + in.GOARCH
			if err != nil {
				why = err.Error()
			}
			emit(map[string]interface{}{"kind": "skip", "file": f, "why": why})
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.AllErrors|parser.SkipObjectResolution)
		if err != nil {
			var list scanner.ErrorList
			line, col, msg := 0, 0, err.Error()
			if errors.As(err, &list) && len(list) > 0 {
				line, col, msg = list[0].Pos.Line, list[0].Pos.Column, list[0].Msg
			}
			emit(map[string]interface{}{"kind": "parse", "file": f, "line": line, "col": col, "msg": msg})
			continue
		}
		cgo := false
		for _, imp := range af.Imports {
			if v, _ := strconv.Unquote(imp.Path.Value); v == "C" {
				cgo = true
			}
		}
		if cgo {
			emit(map[string]interface{}{"kind": "skip", "file": f, "why": "uses cgo (import \"C\")"})
			continue
		}
		name := af.Name.Name
		test := strings.HasSuffix(base, "_test.go")
		k := key{dir, name}
		if test {
			k = key{dir, strings.TrimSuffix(name, "_test")}
		}
		g := groups[k]
		if g == nil {
			p, ok := in.Packages[dir]
			if !ok {
				p = "_/" + dir
			}
			g = &group{dir: dir, name: k.name, path: p}
			groups[k] = g
			order = append(order, k)
		}
		switch {
		case !test:
			g.files, g.names = append(g.files, af), append(g.names, f)
		case name == k.name:
			g.tests, g.tnames = append(g.tests, af), append(g.tnames, f)
		default:
			g.xtests, g.xnames = append(g.xtests, af), append(g.xnames, f)
		}
	}
	// The importable package of a directory: the name most of its non-test files declare (ties: the first).
	for _, k := range order {
		g := groups[k]
		if cur := l.libs[k.dir]; len(g.files) > 0 && (cur == nil || len(g.files) > len(cur.files)) {
			l.libs[k.dir] = g
		}
	}
	packages := 0
	for _, k := range order {
		g := groups[k]
		if len(g.files) > 0 {
			variant := "lib"
			if l.libs[k.dir] != g {
				variant = "other"
			}
			l.check(g, g.files, g.names, variant)
			packages++
		}
		if len(g.tests) > 0 {
			all := append(append([]*ast.File(nil), g.files...), g.tests...)
			l.check(g, all, append(append([]string(nil), g.names...), g.tnames...), "test")
			packages++
		}
		if len(g.xtests) > 0 {
			l.check(g, g.xtests, g.xnames, "xtest")
			packages++
		}
	}
	emit(map[string]interface{}{"kind": "done", "packages": packages, "errors": l.errs})
}
"""

# go/types messages (Go 1.19: "undeclared name: X"; 1.20+: "undefined: X").
_MISSING_MEMBER_RE = re.compile(r"^([\w.]+)\.(\w+) undefined \(type struct\{\} has no field or method (\w+)")
_UNDEFINED_RE = re.compile(r"^(?:undeclared name|undefined): (\w+)$")
CODE_MEMBER = "MissingFieldOrMethod"
CODE_UNDEFINED = "UndeclaredName"
_MODULE_RE = re.compile(r"^\s*module\s+(\"[^\"\n]+\"|`[^`\n]+`|[^\s/][^\s]*)", re.M)
_IDENT_RE = re.compile(r"[^\W\d]\w*")


def go_env(home: str, cache: str) -> dict[str, str]:
    """Environment of every go command we run: offline, no workspace, no toolchain switch, nothing of the user's
    go env file, caches we own."""
    return {"GOPROXY": "off", "GOFLAGS": "-mod=mod", "GONOSUMDB": "*", "GOSUMDB": "off", "CGO_ENABLED": "0",
            "GOTOOLCHAIN": "local", "GOWORK": "off", "GOENV": "off", "GO111MODULE": "on", "GOPATH": f"{home}/gopath",
            "GOCACHE": cache, "GOMODCACHE": f"{home}/gopath/pkg/mod", "HOME": home, "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8"}


def ignored_dir(path: str) -> bool:
    """Directories the go command never treats as packages of the module (and vendored code is not ours)."""
    return any(part in ("testdata", "vendor") or part.startswith((".", "_"))
               for part in posixpath.dirname(path).split("/") if part)


def module_path(go_mod: str) -> str | None:
    """The ``module`` directive of a go.mod text (comments stripped)."""
    text = re.sub(r"//[^\n]*", "", go_mod)
    m = _MODULE_RE.search(text)
    if not m:
        return None
    value = m.group(1)
    if value[0] in "\"`":
        value = value[1:-1]
    return value.strip() or None


# ----------------------------------------------------------------------------------------------------------------
# What a file imports and declares (tree-sitter)


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


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter_go
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_go.language()))


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
    tree = _parser().parse(text.encode("utf-8"))
    root = tree.root_node
    if root.has_error:
        info.parse_error = "tree-sitter cannot parse it"
    chars = ByteChars(text).char
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


# ----------------------------------------------------------------------------------------------------------------
# Which directory an import path names


def _nearest(dirs: Iterable[str], d: str) -> str | None:
    """The deepest of ``dirs`` that is ``d`` or one of its ancestors ('' is the root)."""
    best = None
    for r in dirs:
        if (r == "" or d == r or d.startswith(r + "/")) and (best is None or len(r) > len(best)):
            best = r
    return best


def package_paths(dirs: Iterable[str], go_mods: Mapping[str, str], imports: Iterable[str]) -> tuple[dict[str, str], str]:
    """``{directory: import path}`` for the package directories of the tree, and how it was found.

    Each directory under a ``go.mod`` gets the module path plus its path below that file.  Directories no go.mod
    covers (a GOPATH-style tree, a copy without go.mod) are matched against the import paths the tree uses: an
    import ``a/b/c`` of a directory ``x/b/c`` votes for the prefix ``a`` rooted at ``x``; the prefixes with the
    most votes win, one per root."""
    dirs = sorted(set(dirs))
    roots: dict[str, str] = {}
    for rel, text in sorted(go_mods.items()):
        if posixpath.basename(rel) != "go.mod" or ignored_dir(rel):
            continue
        mod = module_path(text)
        if mod:
            roots[posixpath.dirname(rel)] = mod
    out: dict[str, str] = {}
    uncovered: list[str] = []
    for d in dirs:
        r = _nearest(roots, d)
        if r is None:
            uncovered.append(d)
            continue
        rest = d[len(r):].lstrip("/") if r else d
        out[d] = roots[r] + ("/" + rest if rest else "")
    how = "go.mod" if roots else ""
    if not uncovered:
        return out, how
    by_last: dict[str, list[str]] = {}
    for d in uncovered:
        if d:
            by_last.setdefault(d.rsplit("/", 1)[-1], []).append(d)
    votes: Counter = Counter()
    for p in sorted(set(imports)):
        parts = p.split("/")
        for d in by_last.get(parts[-1], ()):
            dparts = d.split("/")
            k = 0
            while k < min(len(parts), len(dparts)) and parts[-1 - k] == dparts[-1 - k]:
                k += 1
            if k < len(parts):  # a non-empty prefix: the module path
                votes[("/".join(parts[:-k]), "/".join(dparts[:-k]))] += 1
    taken_prefix: set[str] = set()
    taken_root: set[str] = set()
    inferred: dict[str, str] = {}
    for (prefix, root), _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0])):
        if prefix in taken_prefix or root in taken_root:
            continue
        taken_prefix.add(prefix)
        taken_root.add(root)
        inferred[root] = prefix
    for d in uncovered:
        r = _nearest(inferred, d)
        if r is not None:
            rest = d[len(r):].lstrip("/") if r else d
            out[d] = inferred[r] + ("/" + rest if rest else "")
    if inferred:
        how = f"{how}+inferred" if how else "inferred"
    return out, how


# ----------------------------------------------------------------------------------------------------------------
# Stubs


@dataclass
class GoStubs:
    path: str
    text: str  # the stubbed text
    first_stub_line: int  # 0-based: lines from here on are ours
    locals: dict[str, str]  # bound name -> package directory
    dots: list[str]  # directories of dot imports


def _blank(text: str) -> str:
    return "".join(c if c in "\r\n" else " " for c in text)


def neutralise_line_directives(text: str) -> str:
    """``text`` with every ``//line`` and ``/*line`` directive comment blanked to spaces (line breaks kept, so every
    position is unchanged).  A directive makes go/scanner report later positions in another file and line; the
    driver asks for raw positions, and the analysed copy holds no directive either, so nothing a repository writes
    can move a diagnostic.  Comments are found by lexing (strings, runes and raw strings skipped), so a directive
    quoted in a string literal stays as it is."""
    if "//line " not in text and "/*line " not in text:
        return text
    out: list[str] = []
    i, n, last = 0, len(text), 0
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == "`":
            j = text.find("`", i + 1)
            i = n if j < 0 else j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            if text.startswith("line ", i + 2):
                out += [text[last:i], _blank(text[i:j])]
                last = j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            if text.startswith("line ", i + 2):
                out += [text[last:i], _blank(text[i:j])]
                last = j
            i = j
        else:
            i += 1
    out.append(text[last:])
    return "".join(out)


def stub_file(info: GoFile, lib_names: Mapping[str, str], paths_to_dirs: Mapping[str, str]) -> GoStubs | None:
    """The stubbed text of one file, or None when it imports no project package."""
    if info.parse_error or info.package is None:
        return None
    locals_: dict[str, str] = {}
    dots: list[str] = []
    cut: list[tuple[int, int]] = []
    for imp in info.imports:
        d = paths_to_dirs.get(imp.path)
        if d is None or d not in lib_names or imp.alias == "_":
            continue  # external, the standard library, a directory without an importable package, a blank import
        if imp.alias == ".":
            dots.append(d)
        else:
            local = imp.alias or lib_names[d]
            if not _IDENT_RE.fullmatch(local) or local in locals_:
                continue
            locals_[local] = d
        cut.append((imp.start, imp.end))
    if not cut:
        return None
    pieces, last = [], 0
    for start, end in sorted(cut):
        pieces += [info.text[last:start], _blank(info.text[start:end])]
        last = end
    pieces.append(info.text[last:])
    body = "".join(pieces)
    if body and not body.endswith("\n"):
        body += "\n"
    first = body.count("\n")
    body += "".join(f"var {name} struct{{}}\n" for name in sorted(locals_))
    return GoStubs(info.path, body, first, locals_, dots)


# ----------------------------------------------------------------------------------------------------------------
# Driver output


@dataclass(frozen=True)
class GoMessage:
    kind: str  # error | parse | skip
    file: str
    line: int  # 1-based; 0 when absent
    col: int  # 1-based byte column; 0 when absent
    message: str
    soft: bool = False


@dataclass
class GoRun:
    messages: list[GoMessage]
    done: bool
    crash: str | None = None
    importer: str = ""
    go: str = ""


def parse_driver_output(stdout: str) -> GoRun:
    """The driver's JSON lines; anything else (a runtime panic's text) is ignored here and reported by the
    missing ``done`` line."""
    run_ = GoRun([], False)
    for obj in json_lines(stdout):
        kind = obj.get("kind")
        if kind == "done":
            run_.done = True
        elif kind == "crash":
            run_.crash = str(obj.get("msg", ""))
        elif kind == "start":
            run_.importer, run_.go = str(obj.get("importer", "")), str(obj.get("go", ""))
        elif kind in ("error", "parse", "skip"):
            run_.messages.append(GoMessage(kind, str(obj.get("file") or ""), int(obj.get("line") or 0),
                                           int(obj.get("col") or 0), str(obj.get("msg") or obj.get("why") or ""),
                                           bool(obj.get("soft", False))))
    return run_


def char_column(text_line: str, byte_col1: int) -> int:
    """0-based character column of a 1-based UTF-8 byte column."""
    return len(text_line.encode("utf-8")[: max(byte_col1 - 1, 0)].decode("utf-8", errors="ignore"))


# ----------------------------------------------------------------------------------------------------------------
# The analyzer


class GoAnalyzer(Analyzer):
    language = "go"
    extensions = (".go",)
    grammar_module = "tree_sitter_go"
    grammar_function = "language"
    comment_prefix = "//"
    statement_terminators = frozenset({";", "{", "}"})
    # Go's lexer ends a line with a semicolon after an identifier, a literal, one of break/continue/fallthrough/
    # return, ++, --, ), ] or } (tree-sitter-go has no token for those semicolons).  A ':' ending a line closes a
    # `case x.A:`/label header the way '{' closes an `if` header, instead of running into the next statement.
    line_end_terminators = frozenset({
        "identifier", "field_identifier", "type_identifier", "package_identifier", "label_name", "blank_identifier",
        "int_literal", "float_literal", "imaginary_literal", "rune_literal", '"', "`", "true", "false", "nil",
        "iota", "break", "continue", "fallthrough", "return", "++", "--", ")", "]", "}", ":",
    })
    dockerfile = "go.Dockerfile"

    go = "go"
    address_space_extra = 2 << 30

    def toolchain_paths(self) -> list[str]:
        # GOROOT (the type checker reads the standard library's export data and sources there)
        exe = shutil.which(self.go)
        return [os.path.dirname(os.path.dirname(os.path.realpath(exe)))] if exe else []

    def tool_versions(self) -> dict[str, str]:
        if self.options.backend is not Backend.LOCAL:
            from benchsmith.containers import image_tag

            return {"go_image": self.options.container_image or image_tag(self.dockerfile)}
        v = _go_version(self.go, shutil.which(self.go) or "")
        return {"go": v} if v else {}

    @classmethod
    def read_configs(cls, repo: str | os.PathLike, max_bytes: int = 1_000_000, max_files: int = 200) -> dict[str, str]:
        """``{relative path: text}`` of the repository's go.mod files (data: only their ``module`` line is read),
        without following symlinks."""
        return read_data_files(repo, lambda name: name == "go.mod",
                               prune=lambda d: d in ("testdata", "vendor") or d.startswith((".", "_")),
                               max_bytes=max_bytes, max_files=max_files)

    # -- the driver ------------------------------------------------------------------------------------------
    def _driver(self, workdir: Path) -> tuple[Path | None, str]:
        """Build the driver once per Go release (and image) into the cache; ``workdir`` if the cache is not
        writable."""
        container = self.options.backend is not Backend.LOCAL
        version = self.tool_versions().get("go_image" if container else "go", "unknown")
        key = hashlib.sha256((DRIVER_SOURCE + DRIVER_GO_MOD + version).encode()).hexdigest()[:16]
        for base in (cache_dir() / "go-driver", workdir / "go-driver"):
            target = base / key
            if (target / DRIVER_NAME).is_file():
                return target, ""
            try:
                tmp = base / f"{key}.tmp{os.getpid()}"
                shutil.rmtree(tmp, ignore_errors=True)
                (tmp / "src").mkdir(parents=True)
                (tmp / "out").mkdir()
                (tmp / "src" / "main.go").write_text(DRIVER_SOURCE, encoding="utf-8")
                (tmp / "src" / "go.mod").write_text(DRIVER_GO_MOD, encoding="utf-8")
            except OSError:
                continue
            spec = self.container([Mount(str(tmp), "/bs/driver", writable=True)], "/bs/driver/src")
            root = "/bs/driver" if spec else str(tmp)
            env = go_env(f"{root}/home", f"{root}/gocache")
            res = run([self.go, "build", "-o", f"{root}/out/{DRIVER_NAME}", "."], cwd=None if spec else tmp / "src",
                      env=env, timeout=max(120.0, min(self.options.timeout, 600.0)), container=spec,
                      inherit_env=False, confine=None if spec else self.confinement(write=(tmp,)))
            if not (tmp / "out" / DRIVER_NAME).is_file():
                shutil.rmtree(tmp, ignore_errors=True)
                if spec is not None and res.returncode == 125:
                    raise ToolMissing(f"{spec.engine.value} could not run {spec.image}: "
                                      f"{res.stderr.strip()[-300:]} (build it: `make images`)")
                return None, f"could not build the Go type checker: {(res.stderr or res.stdout).strip()[-400:]}"
            try:
                os.replace(tmp / "out", target)
            except OSError:
                if not (target / DRIVER_NAME).is_file():
                    shutil.rmtree(tmp, ignore_errors=True)
                    return None, "could not install the Go type checker"
            shutil.rmtree(tmp, ignore_errors=True)
            return target, ""
        return None, "no writable directory for the Go type checker"

    def _check(self, tree: Path, files: list[str], packages: dict[str, str], driver: Path,
               workdir: Path, tag: str) -> tuple[GoRun | None, Reason | None, str]:
        request = workdir / f"gotype-{tag}.json"
        request.write_text(json.dumps({"files": files, "packages": packages, "goos": GOOS, "goarch": GOARCH},
                                      sort_keys=True), encoding="utf-8")
        home = workdir / "gohome"
        home.mkdir(exist_ok=True)
        spec = self.container([Mount(str(tree), "/src"), Mount(str(driver), "/bs/driver"),
                               Mount(str(request), "/bs/request.json")], "/src")
        if spec is not None:
            argv = [f"/bs/driver/{DRIVER_NAME}", "/bs/request.json"]
            env = go_env("/tmp", "/tmp/gocache")
        else:
            argv = [str(driver / DRIVER_NAME), str(request)]
            env = go_env(str(home), str(home / "gocache"))
        conf = None if spec else self.confinement(read=(tree, driver, request), scratch=(home,))
        res = run(argv, cwd=None if spec else tree, env=env, timeout=self.options.timeout, container=spec,
                  inherit_env=False, confine=conf)
        if res.timed_out:
            return None, Reason.TOOL_TIMEOUT, f"the Go type checker ran past its {self.options.timeout:g}s timeout"
        if res.oom:
            return None, Reason.TOOL_MEMORY, f"the Go type checker: {res.stderr.strip().splitlines()[-1]}"
        if res.truncated:
            return None, Reason.TOOL_CRASH, "the Go type checker's output exceeded the output cap"
        if spec is not None and res.returncode == 125:
            return None, Reason.TOOL_MISSING, (f"{spec.engine.value} could not run {spec.image}: "
                                               f"{res.stderr.strip()[-300:]} (build it: `make images`)")
        out = parse_driver_output(res.stdout)
        if out.crash or not out.done:
            tail = " | ".join(ln.strip() for ln in (res.stderr or "").strip().splitlines()[:4])
            return None, Reason.TOOL_CRASH, (f"the Go type checker failed (exit {res.returncode}): "
                                             f"{out.crash or tail or 'no output'}")[:500]
        return out, None, ""

    # -- main ------------------------------------------------------------------------------------------------
    def analyze(self, snapshot: RepoSnapshot, workdir: Path) -> AnalysisResult:
        result = AnalysisResult(tool_versions=self.tool_versions())
        repo = snapshot.name
        workdir = Path(workdir)
        files = [f for f in snapshot.files if not ignored_dir(f.path)]
        texts = {f.path: neutralise_line_directives(f.text) for f in files}
        infos = {path: scan_file(path, text) for path, text in texts.items()}
        # The package name each directory's non-test files declare (the name an import binds).
        names: dict[str, Counter] = {}
        for info in infos.values():
            if info.package and not info.test and not info.parse_error:
                names.setdefault(info.dir, Counter())[info.package] += 1
        lib_names = {d: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] for d, c in names.items()}
        lib_names = {d: n for d, n in lib_names.items() if n != "main"}
        dirs = sorted({info.dir for info in infos.values()})
        imports = [imp.path for info in infos.values() for imp in info.imports]
        packages, how = package_paths(dirs, snapshot.configs, imports)
        paths_to_dirs: dict[str, str] = {}
        for d in sorted(packages):
            paths_to_dirs.setdefault(packages[d], d)
        plans: dict[str, GoStubs] = {}
        for path in sorted(infos):
            s = stub_file(infos[path], lib_names, paths_to_dirs)
            if s is not None:
                plans[path] = s
        result.stats.update(files=len(files), ignored_files=len(snapshot.files) - len(files),
                            packages=len(lib_names), import_paths=how or "none", files_with_stubs=len(plans),
                            stubs=sum(len(p.locals) + len(p.dots) for p in plans.values()))
        if not plans:
            return result
        workdir.mkdir(parents=True, exist_ok=True)
        stub_tree = workdir / "stubbed"
        shutil.rmtree(stub_tree, ignore_errors=True)
        write_tree(stub_tree, {p: (plans[p].text if p in plans else t) for p, t in texts.items()})
        original_tree = snapshot.root
        if any(texts[f.path] != f.text for f in files):  # directives blanked: check that copy, not the snapshot
            original_tree = workdir / "original"
            shutil.rmtree(original_tree, ignore_errors=True)
            write_tree(original_tree, texts)
        order = sorted(texts)
        try:
            driver, err = self._driver(workdir)
            if driver is None:
                result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_CRASH, err, repo))
                return result
            before, reason, err = self._check(original_tree, order, packages, driver, workdir, "original")
            after = None
            if before is not None:
                after, reason, err = self._check(stub_tree, order, packages, driver, workdir, "stubbed")
        except ToolMissing as exc:
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), repo))
            return result
        if before is None or after is None:
            tag = "original" if before is None else "stubbed"
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, reason or Reason.TOOL_CRASH,
                                               f"{tag} tree: {err}", repo))
            return result
        result.tool_versions.setdefault("go", before.go)
        result.refs, stats = self.diff(repo, infos, plans, packages, before, after, result.exclusions)
        result.stats.update(stats)
        return result

    def diff(self, repo: str, infos: dict[str, GoFile], plans: dict[str, GoStubs], packages: dict[str, str],
             before: GoRun, after: GoRun, exclusions: list[Exclusion]) -> tuple[list[CrossFileRef], dict]:
        """References from the errors only the stubbed check reports."""
        skipped = {m.file for m in before.messages if m.kind == "skip"}
        unparsed: dict[str, GoMessage] = {}
        for m in before.messages:
            if m.kind == "parse" and m.file in infos and m.file not in unparsed:
                unparsed[m.file] = m
        for path, m in sorted(unparsed.items()):
            exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, Reason.SYNTAX_ERROR,
                                        f"go/parser line {m.line}: {m.message}", repo))
        broken = sorted({m.file for m in after.messages if m.kind == "parse" and m.file in plans
                         and m.file not in unparsed})
        for path in broken:
            exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, Reason.INTERNAL_ERROR,
                                        "the stubbed file does not parse", repo))
        # Positions (file, line, char column) where the original check already had an error: an error there in
        # the stubbed check says nothing about the stub.
        lines_of: dict[str, list[str]] = {}

        def where(m: GoMessage, text: str) -> tuple[int, int] | None:
            lines = lines_of.get(m.file)
            if lines is None:
                lines = lines_of[m.file] = text.split("\n")
            if not (1 <= m.line <= len(lines)):
                return None
            return m.line - 1, char_column(lines[m.line - 1], m.col)

        seen_before: set[tuple[str, int, int]] = set()
        for m in before.messages:
            if m.kind == "error" and m.file in infos:
                pos = where(m, infos[m.file].text)
                if pos is not None:
                    seen_before.add((m.file, *pos))
        lines_of.clear()  # the stubbed texts differ (blanked imports, appended stubs)
        # Package-level names per directory: the defining file of `x.Foo` (non-test files the check kept).
        declaring: dict[str, dict[str, list[str]]] = {}
        for path in sorted(infos):
            info = infos[path]
            if info.test or path in skipped or path in unparsed:
                continue
            for name in info.declared:
                declaring.setdefault(info.dir, {}).setdefault(name, []).append(path)
        refs: dict[tuple[str, int, int], CrossFileRef] = {}
        new = unattributed = on_stub_lines = not_in_repo = 0
        for m in after.messages:
            plan = plans.get(m.file)
            if m.kind != "error" or plan is None or m.file in unparsed or m.file in broken:
                continue
            pos = where(m, plan.text)
            if pos is None:
                continue
            line, col = pos
            if line >= plan.first_stub_line:
                on_stub_lines += 1
                continue
            if (m.file, line, col) in seen_before:
                continue
            new += 1
            original = infos[m.file].text
            orig_line = original.split("\n")[line] if line < original.count("\n") + 1 else ""
            symbol = owner = code = None
            target: str | None = None
            mm = _MISSING_MEMBER_RE.match(m.message)
            if mm and mm.group(1) in plan.locals and mm.group(2) == mm.group(3):
                symbol, owner, code = mm.group(2), mm.group(1), CODE_MEMBER
                target = plan.locals[owner]
                candidates = declaring.get(target, {}).get(symbol, [])
            else:
                mu = _UNDEFINED_RE.match(m.message)
                if mu and plan.dots:
                    symbol, owner, code = mu.group(1), ".", CODE_UNDEFINED
                    candidates = next((declaring[d][symbol] for d in plan.dots
                                       if symbol in declaring.get(d, {})), [])
                else:
                    candidates = []
            at = _IDENT_RE.match(orig_line, col)
            if symbol is None or at is None or at.group(0) != symbol:
                unattributed += 1
                continue
            defining = next((c for c in candidates if c != m.file), None)
            if defining is None:
                not_in_repo += 1
                exclusions.append(Exclusion(
                    f"{repo}/{m.file}:{line + 1}:{col + 1}", Stage.ANALYZER, Reason.SYMBOL_NOT_IN_REPOSITORY,
                    f"{symbol!r} (via {owner}) is not declared in another analysed file of its package", repo))
                continue
            refs.setdefault((m.file, line, col), CrossFileRef(m.file, line, col, symbol, owner, defining, code,
                                                              m.message))
        stats = {
            "original_errors": sum(1 for m in before.messages if m.kind == "error"),
            "stubbed_errors": sum(1 for m in after.messages if m.kind == "error"),
            "excluded_by_build_constraints": len(skipped),
            "unparsed_files": len(unparsed),
            "new_diagnostics": new,
            "diagnostics_on_stub_lines": on_stub_lines,
            "unattributed": unattributed,
            "not_in_repository": not_in_repo,
            "std_importer": after.importer,
            "refs": len(refs),
        }
        return [refs[k] for k in sorted(refs)], stats


@lru_cache(maxsize=None)
def _go_version(go: str, resolved: str) -> str:
    try:
        res = run([go, "env", "GOVERSION"], timeout=60, env={"GOTOOLCHAIN": "local", "GOENV": "off",
                                                              "GOFLAGS": "", "HOME": "/tmp"}, inherit_env=False)
    except ToolMissing:
        return ""
    v = res.stdout.strip()
    return v if v.startswith("go") else ""
