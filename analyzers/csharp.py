"""C#: file-local stub types, one compile of the original tree and one of the stubbed tree, diff.

C# has no per-file imports of project classes, so for each file the stubs replace the project types declared in
*other* files that it names (CrossCodeEval's dummy class in place of the real one).  As for Java, the stubs are
empty nested types appended right before the closing brace of each of the file's top-level classes and structs
(same line, so no position before them moves): a nested type shadows namespace and ``using``-imported types inside
the class body.  Parts of one ``partial`` type share their members, so their stubs are merged into one part.

Compilers:
- ``mcs`` (mono, C# up to 7.x): one ``--parse`` pass finds the files it cannot read (recorded as
  ``toolchain_cannot_parse`` -- usually newer syntax -- or ``syntax_error`` when tree-sitter agrees); the rest are
  compiled in one invocation per tree.  mcs never checks method bodies once a declaration fails to resolve (a
  NuGet type in a signature, a missing ``using`` namespace), so the original tree first gets a *shim*: empty
  namespaces and placeholder types for every name mcs reports missing at declaration level, and ``override``
  blanked where the base is a placeholder; both trees are compiled with the same shim, so the diff stays sound.
- Roslyn ``csc`` (through ``dotnet``), used when ``dotnet`` with an SDK is on PATH: it parses current C# and checks
  every body whatever fails elsewhere, so no parse pass and no shim are needed.
"""

from __future__ import annotations

import enum
import glob
import os
import re
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Iterable

from benchsmith.analyzers.base import AnalysisResult, Analyzer
from benchsmith.analyzers.java import (ByteChars, Insertions, LineIndex, Utf16Index, apply_insertions, skip_trivia,
                                       tree_has_errors, utf8_env, walk)
from benchsmith.files import RepoSnapshot, SourceFile, write_tree
from benchsmith.records import CrossFileRef, Exclusion, Reason, Stage
from benchsmith.runner import Mount, ToolMissing, run, which

KEPT_CODES = frozenset({"CS0117", "CS1061", "CS1729", "CS0246", "CS0103", "CS0426"})
MCS_OPTIONS = ("-target:library", "-unsafe", "-langversion:experimental", "-warn:0", "-debug-", "-nowarn:0,1,2,3,4")
SHIM_FILE = "__benchsmith_shim__.cs"
MAX_SHIM_ROUNDS = 4


class Compiler(str, enum.Enum):
    AUTO = "auto"
    MCS = "mcs"
    CSC = "csc"


# ----------------------------------------------------------------------------------------------------------------
# Diagnostics
# ----------------------------------------------------------------------------------------------------------------

_DIAG_RE = re.compile(r"^(?P<file>.+)\((?P<line>\d+),(?P<col>\d+)\): (?P<kind>error|warning) (?P<code>CS\d+): "
                      r"(?P<msg>.*?)(?: \[[^\]]*\])?$")
_QUOTED = re.compile(r"[`'‘]([^`'’]+)['’]")


@dataclass(frozen=True)
class CsDiagnostic:
    file: str
    line: int  # 1-based as printed
    col: int  # 1-based UTF-16 column (tabs count one)
    kind: str
    code: str
    message: str


def parse_compiler_output(text: str, known: Iterable[str] | None = None) -> list[CsDiagnostic]:
    """mcs/csc lines ``path(line,col): error CSnnnn: message`` -> diagnostics (paths '/'-separated, './' dropped).
    Paths may contain spaces, parentheses or non-ASCII characters; ``known`` disambiguates odd ones."""
    known_set = set(known) if known is not None else None
    out: list[CsDiagnostic] = []
    for raw in text.splitlines():
        m = _DIAG_RE.match(raw.strip("\r"))
        if not m:
            continue
        file = m.group("file").strip().replace("\\", "/")
        file = file[2:] if file.startswith("./") else file
        if known_set is not None and file not in known_set:
            # a message containing "(1,2): error CS" could fool the greedy file group: retry non-greedily
            m2 = re.match(r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): (?P<kind>error|warning) (?P<code>CS\d+): "
                          r"(?P<msg>.*?)(?: \[[^\]]*\])?$", raw.strip("\r"))
            f2 = m2.group("file").strip().replace("\\", "/").removeprefix("./") if m2 else None
            if m2 and f2 in known_set:
                m, file = m2, f2
        out.append(CsDiagnostic(file, int(m.group("line")), int(m.group("col")), m.group("kind"), m.group("code"),
                                m.group("msg")))
    return out


def quoted(message: str) -> list[str]:
    return _QUOTED.findall(message)


def strip_generics(name: str) -> str:
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


# ----------------------------------------------------------------------------------------------------------------
# Project index and stubs
# ----------------------------------------------------------------------------------------------------------------

TYPE_DECLS = {"class_declaration": "class", "struct_declaration": "struct", "interface_declaration": "interface",
              "enum_declaration": "enum", "record_declaration": "class", "record_struct_declaration": "struct",
              "delegate_declaration": "delegate"}
STUB_HOSTS = {"class", "struct"}  # C# 7 allows nested types in classes and structs only
BODY_NODES = {"block", "arrow_expression_clause", "constructor_initializer"}


@dataclass(frozen=True)
class CsType:
    namespace: str
    name: str
    kind: str
    arity: int
    file: str
    supers: tuple[str, ...] = ()  # simple names in its base list

    @property
    def fqn(self) -> str:
        return f"{self.namespace}.{self.name}" if self.namespace else self.name


@dataclass
class CsTop:
    namespace: str
    name: str
    kind: str
    partial: bool
    insert_at: int | None  # character offset of the closing brace of its body


@dataclass
class CsFileInfo:
    path: str
    namespaces: set[str] = field(default_factory=set)
    usings: set[str] = field(default_factory=set)
    tops: list[CsTop] = field(default_factory=list)
    declared: list[CsType] = field(default_factory=list)  # top-level (namespace member) types
    local_names: set[str] = field(default_factory=set)  # every type / type parameter name declared here
    used: set[str] = field(default_factory=set)
    ts_error: bool = False
    tree: object = None


@lru_cache(maxsize=1)
def _cs_parser():
    import tree_sitter_c_sharp
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_c_sharp.language()))


def _name(node) -> str:
    return re.sub(r"\s+|/\*.*?\*/|//[^\n]*", "", node.text.decode("utf-8", "replace"), flags=re.S)


def scan_csharp(src: SourceFile) -> CsFileInfo:
    info = CsFileInfo(src.path)
    tree = _cs_parser().parse(src.text.encode("utf-8"))
    info.tree = tree
    root = tree.root_node
    info.ts_error = tree_has_errors(root)
    bc = ByteChars(src.text)

    def visit(container, ns: str) -> None:
        current = ns
        for c in container.children:
            if c.type == "using_directive":
                names = [ch for ch in c.children if ch.type in ("identifier", "qualified_name")]
                is_alias = any(ch.type == "=" for ch in c.children)
                if names and not is_alias and not any(ch.type == "static" for ch in c.children):
                    info.usings.add(_name(names[-1]))
            elif c.type in ("namespace_declaration", "file_scoped_namespace_declaration"):
                n = c.child_by_field_name("name")
                sub = _name(n) if n is not None else ""
                full = f"{ns}.{sub}" if ns and sub else (sub or ns)
                info.namespaces.add(full)
                if c.type == "file_scoped_namespace_declaration":
                    current = full  # the following siblings belong to it
                    continue
                body = c.child_by_field_name("body")
                if body is not None:
                    visit(body, full)
            elif c.type in TYPE_DECLS:
                n = c.child_by_field_name("name")
                if n is None:
                    continue
                kind = TYPE_DECLS[c.type]
                tps = next((ch for ch in c.children if ch.type == "type_parameter_list"), None)
                arity = sum(1 for t in tps.children if t.type == "type_parameter") if tps is not None else 0
                name = n.text.decode("utf-8", "replace")
                bases = next((ch for ch in c.children if ch.type == "base_list"), None)
                supers = tuple(t.text.decode("utf-8", "replace") for t in walk(bases) if t.type == "identifier") \
                    if bases is not None else ()
                info.declared.append(CsType(current, name, kind, arity, src.path, supers))
                partial = any(ch.type == "modifier" and ch.text == b"partial" for ch in c.children)
                body = c.child_by_field_name("body") or next(
                    (ch for ch in c.children if ch.type == "declaration_list"), None)
                insert_at = None
                if body is not None and body.children and body.children[-1].type == "}" \
                        and not body.children[-1].is_missing:
                    insert_at = bc.char(body.children[-1].start_byte)
                info.tops.append(CsTop(current, name, kind, partial, insert_at))

    visit(root, "")
    stack = [root]
    while stack:
        n = stack.pop()
        t = n.type
        if t == "using_directive":
            continue  # namespace names, not uses
        if t in TYPE_DECLS or t == "type_parameter":
            nm = n.child_by_field_name("name") if t != "type_parameter" else next(
                (ch for ch in n.children if ch.type == "identifier"), None)
            if nm is not None:
                info.local_names.add(nm.text.decode("utf-8", "replace"))
        elif t == "identifier":
            info.used.add(n.text.decode("utf-8", "replace"))
            continue
        if t in ("namespace_declaration", "file_scoped_namespace_declaration"):
            name = n.child_by_field_name("name")
            stack.extend(ch for ch in n.children if ch != name)
        else:
            stack.extend(n.children)
    return info


def _inside(node, types: tuple[str, ...]) -> bool:
    p = node.parent
    while p is not None:
        if p.type in types:
            return p.type != "namespace_declaration" or node.parent.type in ("qualified_name", "namespace_declaration")
        p = p.parent
    return False


def in_body(info: CsFileInfo, text: str, offset: int) -> bool:
    """Whether a character offset lies inside a method/accessor body (mcs checks those only when the declarations
    resolved)."""
    b = offset if text.isascii() else len(text[:offset].encode("utf-8"))
    node = info.tree.root_node.descendant_for_byte_range(b, b)
    while node is not None:
        if node.type in BODY_NODES:
            return True
        node = node.parent
    return False


@dataclass
class CsStubs:
    path: str
    stubbed_text: str
    insertions: Insertions
    stubs: dict[str, CsType]  # simple name -> the project type it stands for (for every part of a partial type)
    stub_fqns: dict[str, str]  # name the compiler prints for a stub (Ns.Top.Stub, Top.Stub) -> simple name


def _stub_decl(t: CsType) -> str:
    tp = "<" + ",".join(f"BsT{i}" for i in range(t.arity)) + ">" if t.arity else ""
    if t.kind == "interface":
        return f"public interface {t.name}{tp} {{}}"
    if t.kind == "struct":
        return f"public struct {t.name}{tp} {{}}"
    if t.kind == "enum":
        return f"public enum {t.name} {{}}"
    return f"public class {t.name}{tp} {{}}"


def plan_all_stubs(infos: dict[str, CsFileInfo], texts: dict[str, str], compiled: set[str]) -> dict[str, CsStubs]:
    """Stubs for every compiled file; parts of a partial type get the union of their names, emitted once."""
    by_ns: dict[str, dict[str, list[CsType]]] = {}
    for path in sorted(compiled):
        for t in infos[path].declared:
            if t.kind == "delegate":
                continue  # nothing to access on a delegate; a stub would only break conversions
            by_ns.setdefault(t.namespace, {}).setdefault(t.name, []).append(t)
    wanted: dict[str, dict[str, CsType]] = {}
    for path in sorted(compiled):
        info = infos[path]
        visible: list[str] = sorted(set(info.usings) | {""})
        for ns in info.namespaces:  # a namespace sees the types of its enclosing namespaces
            parts = ns.split(".")
            visible += [".".join(parts[:i]) for i in range(1, len(parts) + 1)]
        chosen: dict[str, CsType] = {}
        ambiguous: set[str] = set()
        for ns in sorted(set(visible)):
            for name, types in by_ns.get(ns, {}).items():
                if name not in info.used or name in info.local_names:
                    continue
                others = [t for t in types if t.file != path]
                if not others or len(types) != len(others):
                    continue  # declared here too (a partial type): not cross-file
                t = others[0]
                if name in chosen and chosen[name].fqn != t.fqn:
                    ambiguous.add(name)
                chosen.setdefault(name, t)
        for name in ambiguous:
            chosen.pop(name, None)
        if chosen:
            wanted[path] = chosen
    # Partial types: one host part (the first file) carries the union; every part's file may use it.
    groups: dict[tuple[str, str], list[str]] = {}
    for path in sorted(compiled):
        for top in infos[path].tops:
            if top.partial and top.kind in STUB_HOSTS:
                groups.setdefault((top.namespace, top.name), []).append(path)
    plans: dict[str, CsStubs] = {}
    inserts: dict[str, list[tuple[int, str]]] = {}
    names_for: dict[str, dict[str, CsType]] = {}
    fqns_for: dict[str, dict[str, str]] = {}
    for path in sorted(compiled):
        info = infos[path]
        for top in info.tops:
            if top.kind not in STUB_HOSTS or top.insert_at is None:
                continue
            key = (top.namespace, top.name)
            parts = groups.get(key, [path]) if top.partial else [path]
            union: dict[str, CsType] = {}
            local: set[str] = set()
            for p in parts:
                local |= infos[p].local_names
                for n, t in wanted.get(p, {}).items():
                    union.setdefault(n, t)
            union = {n: t for n, t in union.items() if n not in local and t.file not in parts}
            if not union:
                continue
            host = sorted(p for p in parts if any(
                tp.namespace == top.namespace and tp.name == top.name and tp.insert_at is not None
                for tp in infos[p].tops))[0]
            prefix = f"{top.namespace}." if top.namespace else ""
            for p in parts:
                for n, t in union.items():
                    if n in wanted.get(p, {}):
                        names_for.setdefault(p, {})[n] = t
                        fqns_for.setdefault(p, {})[f"{prefix}{top.name}.{n}"] = n
                        fqns_for[p][f"{top.name}.{n}"] = n
            if host == path:
                body = " ".join(_stub_decl(union[n]) for n in sorted(union))
                inserts.setdefault(path, []).append((top.insert_at, " " + body + " "))
    for path in sorted(compiled):
        if path not in names_for and path not in inserts:
            continue
        stubbed, ins = apply_insertions(texts[path], inserts.get(path, []))
        plans[path] = CsStubs(path, stubbed, ins, names_for.get(path, {}), fqns_for.get(path, {}))
    return plans


_ERROR_DIRECTIVE = re.compile(r"^([ \t]*#[ \t]*error\b.*?)(\r?)$", re.M)


def neutralise_error_directives(text: str) -> str:
    """``#error`` lines guard build configurations (defines we do not pass); blank them, keeping every offset."""
    return _ERROR_DIRECTIVE.sub(lambda m: " " * len(m.group(1)) + m.group(2), text)


# ----------------------------------------------------------------------------------------------------------------
# Shim for mcs: placeholders for names that do not resolve at declaration level
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class Shim:
    namespaces: set[str] = field(default_factory=set)
    types: dict[tuple[str, str, int], str] = field(default_factory=dict)  # (namespace, name, arity) -> kind
    blanks: dict[str, set[int]] = field(default_factory=dict)  # file -> offsets of `override` keywords to blank

    def size(self) -> int:
        return len(self.namespaces) + len(self.types) + sum(len(v) for v in self.blanks.values())

    def text(self) -> str:
        lines = ["// benchsmith: placeholders for names the compiler could not resolve (identical in both trees)"]
        for ns in sorted(self.namespaces):
            lines.append(f"namespace {ns} {{ }}")
        for (ns, name, arity), kind in sorted(self.types.items()):
            tp = "<" + ",".join(f"BsT{i}" for i in range(arity)) + ">" if arity else ""
            if kind == "attribute":
                decl = f"public class {name}{tp} : System.Attribute {{ }}"
            elif kind == "interface":
                decl = f"public interface {name}{tp} {{ }}"
            else:
                decl = f"public class {name}{tp} {{ }}"
            lines.append(f"namespace {ns} {{ {decl} }}" if ns else decl)
        return "\n".join(lines) + "\n"

    def apply_blanks(self, path: str, text: str) -> str:
        for off in sorted(self.blanks.get(path, ()), reverse=True):
            if text.startswith("override", off):
                text = text[:off] + " " * len("override") + text[off + len("override"):]
        return text


def reached_bodies(diags: list[CsDiagnostic], infos: dict[str, CsFileInfo], texts: dict[str, str]) -> bool:
    for d in diags:
        if d.kind == "error" and d.file in texts:
            off = _offset(texts[d.file], d.line, d.col)
            if off is not None and in_body(infos[d.file], texts[d.file], off):
                return True
    return False


def _arity_at(text: str, at: int) -> int:
    at = skip_trivia(text, at)
    if not text.startswith("<", at):
        return 0
    depth, commas = 0, 0
    for i in range(at, min(len(text), at + 2000)):
        ch = text[i]
        if ch in "<[(":
            depth += 1
        elif ch in ">])":
            depth -= 1
            if depth == 0:
                return commas + 1
        elif ch == "," and depth == 1:
            commas += 1
    return 0


def _ancestor(info: CsFileInfo, text: str, offset: int, types: set[str]):
    b = len(text[:offset].encode("utf-8"))
    node = info.tree.root_node.descendant_for_byte_range(b, b)
    while node is not None:
        if node.type in types:
            return node
        node = node.parent
    return None


def shim_fixes(diags: list[CsDiagnostic], infos: dict[str, CsFileInfo], texts: dict[str, str], shim: Shim,
               project_namespaces: set[str]) -> int:
    """Add placeholders for declaration-level resolution errors; returns how many new entries were added."""
    before = shim.size()
    for d in diags:
        if d.kind != "error" or d.file not in texts:
            continue
        text = texts[d.file]
        info = infos[d.file]
        off = _offset(text, d.line, d.col)
        if off is None or in_body(info, text, off):
            continue
        q = quoted(d.message)
        if d.code == "CS0115":
            decl = _ancestor(info, text, off, {"method_declaration", "property_declaration",
                                               "indexer_declaration", "event_declaration"})
            if decl is not None:
                for ch in decl.children:
                    if ch.type == "modifier" and ch.text == b"override":
                        shim.blanks.setdefault(d.file, set()).add(ByteChars(text).char(ch.start_byte))
            continue
        if d.code not in ("CS0246", "CS0234") or not q:
            continue
        name = strip_generics(q[0])
        outer = strip_generics(q[1]) if d.code == "CS0234" and len(q) > 1 else ""
        if outer in project_namespaces and d.code == "CS0234":
            pass  # a project namespace missing a type: the type lives in a file we could not compile
        using = _ancestor(info, text, off, {"using_directive"})
        if using is not None:
            names = [ch for ch in using.children if ch.type in ("identifier", "qualified_name")]
            target = _name(names[-1]) if names else ""
            if any(ch.type == "=" for ch in using.children):
                ns, _, tname = target.rpartition(".")
                if ns:
                    shim.namespaces.add(ns)
                shim.types.setdefault((ns, tname, 0), "class")
            elif target:
                shim.namespaces.add(target)
            continue
        after = off + len(name)
        followed_by_dot = text.startswith(".", skip_trivia(text, after)) and not text.startswith(
            "..", skip_trivia(text, after))
        ns = outer
        if followed_by_dot:
            shim.namespaces.add(f"{ns}.{name}" if ns else name)
            continue
        arity = _arity_at(text, after)
        if _ancestor(info, text, off, {"attribute"}) is not None:
            kind = "attribute"
        elif re.match(r"I[A-Z]", name):
            kind = "interface"
        else:
            kind = "class"
        if ns:
            shim.namespaces.add(ns)
        shim.types.setdefault((ns, name, arity), kind)
    return shim.size() - before


def _offset(text: str, line: int, col: int) -> int | None:
    """1-based line and UTF-16 column -> character offset."""
    starts = _line_starts(text)
    if not (1 <= line <= len(starts)):
        return None
    start = starts[line - 1]
    end = starts[line] - 1 if line < len(starts) else len(text)
    seg = text[start:end]
    return start + Utf16Index(seg).to_char(max(0, col - 1))


_STARTS_CACHE: dict[int, tuple[str, list[int]]] = {}


def _line_starts(text: str) -> list[int]:
    key = id(text)
    hit = _STARTS_CACHE.get(key)
    if hit is not None and hit[0] is text:
        return hit[1]
    starts = LineIndex(text).starts
    if len(_STARTS_CACHE) > 4096:
        _STARTS_CACHE.clear()
    _STARTS_CACHE[key] = (text, starts)
    return starts


# ----------------------------------------------------------------------------------------------------------------
# Diagnostics -> references
# ----------------------------------------------------------------------------------------------------------------

_IDENT = re.compile(r"@?[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*")


def cs_ref(d: CsDiagnostic, plan: CsStubs, original: str) -> CrossFileRef | None:
    text = plan.stubbed_text
    pos = _offset(text, d.line, d.col)
    if pos is None:
        return None
    q = [strip_generics(x) for x in quoted(d.message)]
    stub_name = symbol = None
    name_at = None
    if d.code in ("CS0117", "CS1061"):
        # mcs: "Type `N.T.Foo' does not contain a definition for `bar'"; csc: "'T.Foo' does not contain ... 'bar'"
        owner = next((x for x in q if x in plan.stub_fqns), None)
        members = [x for x in q if x != owner]
        if owner is None or not members:
            return None
        stub_name, symbol = plan.stub_fqns[owner], members[0]
        name_at = _name_near(text, pos, symbol)
    elif d.code == "CS1729":
        owner = next((x for x in q if x in plan.stub_fqns), None)
        if owner is None:
            return None
        stub_name = symbol = plan.stub_fqns[owner]
        at = pos
        if re.match(r"new\b", text[at:at + 4]):  # mcs points at `new`, csc at the type name
            at = skip_trivia(text, at + 3)
        name_at = at if text.startswith(symbol, at) else None
    elif d.code == "CS0426":
        # "The nested type `X' does not exist in the type `N.T.Foo'"
        owner = next((x for x in q if x in plan.stub_fqns), None)
        members = [x for x in q if x != owner]
        if owner is None or not members:
            return None
        stub_name, symbol = plan.stub_fqns[owner], members[0]
        name_at = _name_near(text, pos, symbol)
    elif d.code in ("CS0246", "CS0103"):
        # A name that no longer resolves: attributed when it is (or qualifies) one of the stubs.
        if not q:
            return None
        symbol = q[0]
        if symbol in plan.stubs:
            stub_name = symbol
            name_at = _name_near(text, pos, symbol)
    if symbol is None or stub_name is None or name_at is None:
        return None
    orig = plan.insertions.to_original(name_at)
    if orig is None or not original.startswith(symbol, orig):
        return None
    line, col = _line_index(original).position(orig)
    t = plan.stubs[stub_name]
    return CrossFileRef(plan.path, line, col, symbol, stub_name, t.file, d.code, d.message)


def member_file(t: CsType, member: str, types: dict[str, list[CsType]], texts: dict[str, str]) -> str | None:
    """The project file declaring ``member`` of ``t`` (its own, else a project base type's); None when only a
    framework base type can have it (``Exception.Message``), which is not cross-file knowledge."""
    pattern = re.compile(rf"\b{re.escape(member)}\b")
    queue, seen = [t], {t.fqn}
    while queue:
        cur = queue.pop(0)
        if pattern.search(texts.get(cur.file, "")):
            return cur.file
        for name in cur.supers:
            cands = types.get(name, [])
            cands = sorted(cands, key=lambda c: (c.namespace != cur.namespace, c.file))
            if cands and cands[0].fqn not in seen and len(seen) < 50:
                seen.add(cands[0].fqn)
                queue.append(cands[0])
    return None


_LINE_INDEX: dict[int, tuple[str, LineIndex]] = {}


def _line_index(text: str) -> LineIndex:
    hit = _LINE_INDEX.get(id(text))
    if hit is not None and hit[0] is text:
        return hit[1]
    if len(_LINE_INDEX) > 4096:
        _LINE_INDEX.clear()
    idx = LineIndex(text)
    _LINE_INDEX[id(text)] = (text, idx)
    return idx


def _name_near(text: str, pos: int, name: str) -> int | None:
    if text.startswith(name, pos):
        return pos
    at = pos
    if text.startswith(".", at) or text.startswith("?.", at):
        at = skip_trivia(text, at + (2 if text.startswith("?.", at) else 1))
        if text.startswith(name, at):
            return at
    return None


# ----------------------------------------------------------------------------------------------------------------
# Roslyn through dotnet
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Roslyn:
    dotnet: str
    csc_dll: str
    references: tuple[str, ...]


def find_roslyn(dotnet: str | None = None) -> Roslyn | None:
    """csc.dll of the newest SDK and the reference assemblies of the newest shared framework next to ``dotnet``."""
    exe = dotnet or which("dotnet")
    if not exe:
        return None
    root = Path(os.path.realpath(exe)).parent

    def newest(pattern: str) -> list[str]:
        found = glob.glob(str(root / pattern))
        return sorted(found, key=lambda p: [int(x) if x.isdigit() else x for x in re.split(r"[.\-/]", p)])

    cscs = newest("sdk/*/Roslyn/bincore/csc.dll")
    refdirs = newest("packs/Microsoft.NETCore.App.Ref/*/ref/net*")
    if not cscs or not refdirs:
        return None
    refs = tuple(sorted(glob.glob(os.path.join(refdirs[-1], "*.dll"))))
    return Roslyn(exe, cscs[-1], refs)


# ----------------------------------------------------------------------------------------------------------------
# The analyzer
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class CompileOutcome:
    diagnostics: list[CsDiagnostic] | None
    error: str = ""


class CSharpAnalyzer(Analyzer):
    language = "csharp"
    extensions = (".cs",)
    grammar_module = "tree_sitter_c_sharp"
    grammar_function = "language"
    comment_prefix = "//"
    statement_terminators = frozenset({";", "{", "}"})
    dockerfile = "csharp.Dockerfile"

    mcs = "mcs"
    compiler: Compiler = Compiler.AUTO

    def _backend(self) -> tuple[Compiler, Roslyn | None]:
        if self.compiler in (Compiler.AUTO, Compiler.CSC) and self.options.backend.value == "local":
            r = find_roslyn()
            if r is not None:
                return Compiler.CSC, r
        return Compiler.MCS, None

    def tool_versions(self) -> dict[str, str]:
        kind, roslyn = self._backend()
        if kind is Compiler.CSC and roslyn is not None:
            return {"csc": PurePosixPath(roslyn.csc_dll).parent.parent.parent.name}
        v = _mcs_version(self.mcs, which(self.mcs) or "")
        return {"mcs": v} if v else {}

    # -- compiler calls --------------------------------------------------------------------------------------
    def _rsp(self, path: Path, args: Iterable[str], files: Iterable[str]) -> None:
        lines = list(args) + [f'"{f}"' if '"' not in f else f"'{f}'" for f in files]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def _mcs(self, tree: Path, files: list[str], rsp: Path, extra: tuple[str, ...], known: set[str],
             out_dll: str) -> CompileOutcome:
        self._rsp(rsp, [*extra, f"-out:{out_dll}"] if out_dll else list(extra), files)
        container = self.container([Mount(str(tree), "/src"), Mount(str(rsp), "/bs/args.rsp")], "/src")
        argv = [self.mcs, "@/bs/args.rsp" if container else f"@{rsp}"]
        res = run(argv, cwd=None if container else tree, env=utf8_env(), timeout=self.options.timeout,
                  container=container)
        return self._outcome(res, known)

    def _csc(self, roslyn: Roslyn, tree: Path, files: list[str], rsp: Path, known: set[str],
             out_dll: Path) -> CompileOutcome:
        args = ["-nologo", "-noconfig", "-nostdlib+", "-target:library", "-unsafe+", "-langversion:latest",
                "-nullable:enable", "-warn:0", "-deterministic+", f"-out:{out_dll}"]
        args += [f'-r:"{r}"' for r in roslyn.references]
        self._rsp(rsp, args, files)
        res = run([roslyn.dotnet, roslyn.csc_dll, f"@{rsp}"], cwd=tree, env={**utf8_env(),
                  "DOTNET_CLI_TELEMETRY_OPTOUT": "1", "DOTNET_NOLOGO": "1"}, timeout=self.options.timeout)
        return self._outcome(res, known)

    def _outcome(self, res, known: set[str]) -> CompileOutcome:
        if res.timed_out:
            return CompileOutcome(None, f"timeout: the C# compiler ran past its {self.options.timeout:g}s timeout")
        text = res.stdout + "\n" + res.stderr
        diags = parse_compiler_output(text, known)
        # An internal error inside one expression (CS0584) is reported like any diagnostic and the run goes on;
        # a crash is an exit status other than 0/1, or a failure without the compiler's closing summary.
        crashed = res.returncode not in (0, 1) or (res.returncode == 1 and not diags and "rror" not in text)
        if crashed:
            tail = " | ".join(text.strip().splitlines()[-3:])
            return CompileOutcome(None, f"the C# compiler crashed (exit {res.returncode}): {tail}"[:500])
        return CompileOutcome(diags)

    # -- main ------------------------------------------------------------------------------------------------
    def analyze(self, snapshot: RepoSnapshot, workdir: Path) -> AnalysisResult:
        result = AnalysisResult(tool_versions=self.tool_versions())
        repo = snapshot.name
        workdir.mkdir(parents=True, exist_ok=True)
        kind, roslyn = self._backend()
        result.stats["compiler"] = kind.value
        usable: dict[str, str] = {}
        for f in snapshot.files:
            if '"' in f.path and "'" in f.path:
                result.exclusions.append(Exclusion(f"{repo}/{f.path}", Stage.ANALYZER, Reason.UNSAFE_PATH,
                                                   "a path with both quote characters cannot go in a response file",
                                                   repo))
            elif f.path == SHIM_FILE:
                result.exclusions.append(Exclusion(f"{repo}/{f.path}", Stage.ANALYZER, Reason.UNSAFE_PATH,
                                                   "name reserved for benchsmith's placeholder file", repo))
            else:
                usable[f.path] = f.text
        texts = {p: neutralise_error_directives(t) for p, t in usable.items()} if kind is Compiler.MCS else usable
        infos = {p: scan_csharp(SourceFile(p, t)) for p, t in usable.items()}
        known = set(texts) | {SHIM_FILE}
        try:
            compiled = set(texts)
            if kind is Compiler.MCS:
                compiled = self._parse_check(repo, texts, infos, workdir, known, result)
                if compiled is None:
                    return result
            plans = plan_all_stubs(infos, texts, compiled)
            result.stats.update(files=len(usable), compiled_files=len(compiled), files_with_stubs=len(plans),
                                stubs=sum(len(p.stubs) for p in plans.values()))
            if not plans:
                return result
            order = sorted(compiled)
            project_ns = {ns for i in infos.values() for ns in i.namespaces}
            orig_tree = workdir / "original"
            stub_tree = workdir / "stubbed"
            # Every namespace a file imports gets an empty declaration up front: harmless where the framework has
            # it, and it saves a compile round where a library is missing.
            shim = Shim(namespaces={u for p in order for u in infos[p].usings} - project_ns)
            rounds = 0
            while True:
                shutil.rmtree(orig_tree, ignore_errors=True)
                files = {p: shim.apply_blanks(p, texts[p]) for p in order}
                if kind is Compiler.MCS:
                    files[SHIM_FILE] = shim.text()
                write_tree(orig_tree, files)
                before = self._compile(kind, roslyn, orig_tree, sorted(files), workdir / "original.rsp", known,
                                       workdir)
                if before.diagnostics is None:
                    return self._fail(result, repo, before.error)
                rounds += 1
                if kind is not Compiler.MCS or rounds > MAX_SHIM_ROUNDS:
                    break
                # Once mcs reports anything inside a method body it got past the declarations: more placeholders
                # (attributes it checks late) would only cost another round.
                if reached_bodies(before.diagnostics, infos, texts):
                    break
                if not shim_fixes(before.diagnostics, infos, texts, shim, project_ns):
                    break
            result.stats["shim_rounds"] = rounds - 1
            result.stats["shim_entries"] = shim.size()
            dropped: set[str] = set()
            for attempt in range(2):
                shutil.rmtree(stub_tree, ignore_errors=True)
                files = {p: shim.apply_blanks(p, plans[p].stubbed_text if p in plans and p not in dropped
                                              else texts[p]) for p in order}
                if kind is Compiler.MCS:
                    files[SHIM_FILE] = shim.text()
                write_tree(stub_tree, files)
                after = self._compile(kind, roslyn, stub_tree, sorted(files), workdir / "stubbed.rsp", known, workdir)
                if after.diagnostics is None:
                    return self._fail(result, repo, after.error)
                if kind is not Compiler.MCS or attempt:
                    break
                # Stubs that break a declaration (an override of a stubbed base...) stop mcs before any body:
                # take those files' stubs out and compile once more.
                blockers = self._new_declaration_errors(before.diagnostics, after.diagnostics, plans, infos, texts,
                                                        dropped)
                if not blockers:
                    break
                dropped |= blockers
            result.stats["files_stubs_dropped"] = len(dropped)
        except ToolMissing as exc:
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), repo))
            return result
        active = {p: pl for p, pl in plans.items() if p not in dropped}
        seen_before = set()
        for d in before.diagnostics:
            if d.file in texts:
                off = _offset(texts[d.file], d.line, d.col)
                seen_before.add((d.file, off, d.code))
        refs: dict[tuple, CrossFileRef] = {}
        new = unattributed = external = 0
        types_by_name: dict[str, list[CsType]] = {}
        for p in sorted(compiled):
            for t in infos[p].declared:
                types_by_name.setdefault(t.name, []).append(t)
        for d in after.diagnostics:
            if d.kind != "error" or d.file not in active:
                continue
            plan = active[d.file]
            spos = _offset(plan.stubbed_text, d.line, d.col)
            opos = plan.insertions.to_original(spos) if spos is not None else None
            if opos is None or (d.file, opos, d.code) in seen_before:
                continue
            new += 1
            if d.code not in KEPT_CODES:
                unattributed += 1
                continue
            ref = cs_ref(d, plan, usable[d.file])
            if ref is None or ref.defining_file == ref.file:
                unattributed += 1
                continue
            if ref.symbol != ref.import_name:
                ref.defining_file = member_file(plan.stubs[ref.import_name], ref.symbol, types_by_name, usable)
                if ref.defining_file is None or ref.defining_file == ref.file:
                    external += 1
                    continue
            refs.setdefault((ref.file, ref.line, ref.column), ref)
        result.refs = [refs[k] for k in sorted(refs)]
        result.stats.update(original_errors=sum(1 for d in before.diagnostics if d.kind == "error"),
                            stubbed_errors=sum(1 for d in after.diagnostics if d.kind == "error"),
                            new_diagnostics=new, unattributed=unattributed, external_members=external,
                            refs=len(result.refs))
        return result

    def _compile(self, kind: Compiler, roslyn: Roslyn | None, tree: Path, files: list[str], rsp: Path,
                 known: set[str], workdir: Path) -> CompileOutcome:
        if kind is Compiler.CSC and roslyn is not None:
            return self._csc(roslyn, tree, files, rsp, known, workdir / "out.dll")
        container = self.options.backend.value != "local"
        return self._mcs(tree, files, rsp, MCS_OPTIONS, known, "/tmp/benchsmith-out.dll" if container
                         else str(workdir / "out.dll"))

    def _parse_check(self, repo: str, texts: dict[str, str], infos: dict[str, CsFileInfo], workdir: Path,
                     known: set[str], result: AnalysisResult) -> set[str] | None:
        """One ``mcs --parse`` over every file: those it cannot read are recorded and left out of both compiles."""
        tree = workdir / "parse"
        shutil.rmtree(tree, ignore_errors=True)
        write_tree(tree, texts)
        out = self._mcs(tree, sorted(texts), workdir / "parse.rsp", ("--parse", "-unsafe", "-langversion:experimental"),
                        known, "")
        if out.diagnostics is None and not out.error.startswith("timeout"):
            # A parser crash (CS0589 is reported per file, but an unhandled exception aborts the run): fall back to
            # tree-sitter's verdict so one odd file does not cost the repository.
            out = CompileOutcome([])
        if out.diagnostics is None:
            self._fail(result, repo, out.error)
            return None
        bad: dict[str, CsDiagnostic] = {}
        for d in out.diagnostics:
            if d.kind == "error" and d.file in texts and d.file not in bad:
                bad[d.file] = d
        for path, d in sorted(bad.items()):
            reason = Reason.SYNTAX_ERROR if infos[path].ts_error else Reason.TOOLCHAIN_CANNOT_PARSE
            result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, reason,
                                               f"mcs line {d.line}: {d.code} {d.message[:200]}", repo))
        result.stats["unparsed_files"] = len(bad)
        return set(texts) - set(bad)

    def _new_declaration_errors(self, before, after, plans, infos, texts, dropped) -> set[str]:
        seen = {(d.file, d.line, d.col, d.code) for d in before}
        files: set[str] = set()
        for d in after:
            if d.kind != "error" or d.file not in plans or d.file in dropped or (d.file, d.line, d.col, d.code) in seen:
                continue
            plan = plans[d.file]
            spos = _offset(plan.stubbed_text, d.line, d.col)
            opos = plan.insertions.to_original(spos) if spos is not None else None
            if opos is None or not in_body(infos[d.file], texts[d.file], opos):
                files.add(d.file)
        return files

    @staticmethod
    def _fail(result: AnalysisResult, repo: str, error: str) -> AnalysisResult:
        reason = Reason.TOOL_TIMEOUT if error.startswith("timeout") else Reason.TOOL_CRASH
        result.exclusions.append(Exclusion(repo, Stage.ANALYZER, reason, error, repo))
        return result


@lru_cache(maxsize=None)
def _mcs_version(mcs: str, resolved: str) -> str:
    try:
        res = run([mcs, "--version"], timeout=60, env=utf8_env())
    except ToolMissing:
        return ""
    m = re.search(r"version\s+(\S+)", res.stdout + res.stderr)
    return m.group(1) if m else ""
