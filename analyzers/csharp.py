"""C#: file-local stub types, one compile of the original tree and one of the stubbed tree, diff.

What both compiles see is the *analysed copy* of each file (``csharp_copy``): the C# preprocessor evaluated
(``csharp_preprocess``: inactive ``#if`` branches and directive lines blanked, every position kept, with the
symbols the project's ``*.csproj`` gives, read as data by ``csharp_project``), then, for mcs only, the down-level
pass (``csharp_downlevel``: C# 8-12 rewritten into the C# 7 mcs reads, with an exact edit map; the project's
``global using`` directives and the SDK's implicit usings placed in every file).  Every diagnostic position maps
back through the stub insertions and the edit map to the original text, where references are reported and
examples cut.  A construct the pass cannot rewrite is a recorded ``unsupported_syntax`` exclusion naming it.

C# has no per-file imports of project classes, so for each file the stubs replace the project types declared in
*other* files that it names (CrossCodeEval's dummy class in place of the real one).  As for Java, the stubs are
empty nested types appended right before the closing brace of each of the file's top-level classes and structs
(same line, so no position before them moves): a nested type shadows namespace and ``using``-imported types inside
the class body.  Parts of one ``partial`` type share their members, so their stubs are merged into one part; a
name that is also a member of the host type (``PyType PyType => ...``) gets no stub.

Compilers:
- ``mcs`` (mono, C# up to 7.x): one ``--parse`` pass finds the files it cannot read (recorded as
  ``toolchain_cannot_parse`` -- usually newer syntax -- or ``syntax_error`` when tree-sitter agrees); the rest are
  compiled in one invocation per tree.  mcs never checks method bodies once a declaration fails to resolve (a
  NuGet type in a signature, a missing ``using`` namespace), so the original tree first gets a *shim*: empty
  namespaces and placeholder types for every name mcs reports missing at declaration level, and ``override``
  blanked where the base is a placeholder; both trees are compiled with the same shim, so the diff stays sound.
  A declaration mcs rejects itself (no placeholder helps) stops it before every body of the tree: those files are
  recorded (``toolchain_cannot_parse``, "mcs rejects a declaration") and left out of both trees.
  Speed (the two whole-tree compiles are the floor; ``bench/analyzer_csharp.py`` measures against it): the parse
  pass runs while tree-sitter scans, each shim round compiles the original and the stubbed tree side by side (the
  stubbed result of the round that reaches the method bodies is the one kept), a missing qualified name gets all
  its placeholders in one round, and stubs sure to break a declaration (a nested type overriding a member of a
  stubbed class, an override whose signature names a stub the base member does not see...) are left out up
  front; stubbed recompiles without the offending files' stubs remain only for a stubbed compile that still
  stopped before the bodies.  ``parallel=1, predict=False`` is the plain step-by-step reference.
- Roslyn ``csc`` (through ``dotnet``), used when ``dotnet`` with an SDK is on PATH (the first choice): it parses
  current C# and checks every body whatever fails elsewhere, so no parse pass, no shim and no down-level pass are
  needed; it gets the preprocessed copy too, and the implicit usings as one generated file of ``global using``
  directives.
"""

from __future__ import annotations

import bisect
import enum
import glob
import os
import re
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Iterable

from benchsmith.analyzers.base import AnalysisResult, Analyzer, skip_type_args, strip_generics
from benchsmith.analyzers.base import ByteChars
from benchsmith.analyzers.common import Insertions, apply_insertions, skip_trivia, tree_has_errors, utf8_env, walk
from benchsmith.text_positions import utf16_to_char
from benchsmith.analyzers.csharp_copy import Prepared, prepare
from benchsmith.analyzers.csharp_preprocess import preprocess
from benchsmith.analyzers.csharp_project import DEFAULT_DEFINES, PROJECT_FILES, PROJECT_SUFFIX
from benchsmith.files import RepoSnapshot, SourceFile, read_data_files, write_tree
from benchsmith.records import CrossFileRef, Exclusion, Reason, Stage
from benchsmith.runner import Mount, ToolMissing, run, which

KEPT_CODES = frozenset({"CS0117", "CS1061", "CS1729", "CS0246", "CS0103", "CS0426"})
MCS_OPTIONS = ("-target:library", "-unsafe", "-langversion:experimental", "-warn:0", "-debug-", "-nowarn:0,1,2,3,4")
SHIM_FILE = "__benchsmith_shim__.cs"
MAX_SHIM_ROUNDS = 4
# .NET Standard 2.0 assemblies current code takes for granted (System.Numerics.BigInteger, dynamic) that mcs does
# not reference by default; each is referenced where this machine's mono has it (``tool_versions`` says which).
MCS_EXTRA_REFERENCES = ("System.Numerics.dll", "Microsoft.CSharp.dll")
MAX_STUBBED_RECOMPILES = 3
MAX_REJECT_ROUNDS = 2  # compiles again without the files whose declarations mcs itself rejects
UNSUPPORTED_PREFIX = "unsupported_syntax:"  # an UNSUPPORTED_SYNTAX exclusion's detail names the construct after it


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
    members: frozenset[str] = frozenset()  # names of its members: a nested stub of one of them is CS0102


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
    blocker_caps: dict | None = None  # the captures ``predict_blockers`` reads, taken by the scan's query


@lru_cache(maxsize=1)
def _cs_language():
    import tree_sitter_c_sharp
    from tree_sitter import Language

    return Language(tree_sitter_c_sharp.language())


@lru_cache(maxsize=1)
def _cs_parser():
    from tree_sitter import Parser

    return Parser(_cs_language())


@lru_cache(maxsize=1)
def _names_query():
    """One query for the whole-file name sets, run in C instead of a Python walk over every node: declared type and
    type-parameter names (@local), every identifier (@id), and the spans whose identifiers are not uses (@skip:
    ``using`` directives, namespace names)."""
    from tree_sitter import Query

    lang = _cs_language()
    kinds = [k for k in TYPE_DECLS if lang.id_for_node_kind(k, True)]  # older grammars lack some kinds
    src = " ".join(f"({k} name: (_) @local)" for k in kinds)
    src += (" (type_parameter name: (_) @local) (identifier) @id (using_directive) @skip"
            " (namespace_declaration name: (_) @skip) (file_scoped_namespace_declaration name: (_) @skip) "
            + BLOCKER_PATTERNS)
    return Query(lang, src)


def _name(node) -> str:
    return re.sub(r"\s+|/\*.*?\*/|//[^\n]*", "", node.text.decode("utf-8", "replace"), flags=re.S)


def scan_csharp(src: SourceFile, tree=None) -> CsFileInfo:
    """``tree``: tree-sitter's tree of ``src.text`` when the caller has it already."""
    info = CsFileInfo(src.path)
    data = src.text.encode("utf-8")
    tree = tree if tree is not None else _cs_parser().parse(data)
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
                info.tops.append(CsTop(current, name, kind, partial, insert_at, _member_names(body)))

    visit(root, "")
    from tree_sitter import QueryCursor

    caps = QueryCursor(_names_query()).captures(root)
    info.blocker_caps = {k: caps.get(k, []) for k in ("type", "explicit", "mod", "qualifier")}
    info.local_names = {n.text.decode("utf-8", "replace") for n in caps.get("local", ())}
    skips = sorted((n.start_byte, n.end_byte) for n in caps.get("skip", ()))
    spans = [(n.start_byte, n.end_byte) for n in caps.get("id", ())]
    if skips:
        starts = [s for s, _ in skips]
        kept = []
        for s, e in spans:
            i = bisect.bisect_right(starts, s) - 1
            if i < 0 or e > skips[i][1]:
                kept.append((s, e))
        spans = kept
    info.used = {data[s:e].decode("utf-8", "replace") for s, e in spans}
    return info


MEMBER_NAMED = frozenset({"method_declaration", "property_declaration", "event_declaration", "delegate_declaration",
                          *TYPE_DECLS})


def _member_names(body) -> frozenset[str]:
    """Names declared directly in a type body (fields, properties, methods, events, nested types)."""
    if body is None:
        return frozenset()
    names: set[str] = set()
    for m in body.named_children:
        if m.type in MEMBER_NAMED:
            n = m.child_by_field_name("name")
            if n is not None:
                names.add(n.text.decode("utf-8", "replace"))
        elif m.type in ("field_declaration", "event_field_declaration"):
            for v in walk(m):
                if v.type == "variable_declarator":
                    n = v.child_by_field_name("name") or next(
                        (c for c in v.children if c.type == "identifier"), None)
                    if n is not None:
                        names.add(n.text.decode("utf-8", "replace"))
    return frozenset(names)


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
    return _ancestor(info, text, offset, BODY_NODES) is not None


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
                for tp in infos[p].tops:
                    if tp.namespace == top.namespace and tp.name == top.name:
                        local |= tp.members  # `PyType PyType => ...`: a nested type PyType would clash
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


OBJECT_VIRTUALS = frozenset({"ToString", "Equals", "GetHashCode"})  # overridable on any class, a stub's too
MEMBER_DECLS = ("method_declaration", "property_declaration", "indexer_declaration", "event_declaration")


@lru_cache(maxsize=1)
def _blocker_query():
    from tree_sitter import Query

    return Query(_cs_language(), BLOCKER_PATTERNS)


BLOCKER_PATTERNS = ("(class_declaration) @type (record_declaration) @type (explicit_interface_specifier) @explicit"
                    " (method_declaration (modifier) @mod) (property_declaration (modifier) @mod)"
                    " (indexer_declaration (modifier) @mod) (qualified_name qualifier: (identifier) @qualifier)")


SIGNATURE_SKIP = frozenset({"block", "arrow_expression_clause", "accessor_list", "attribute_list"})


def _arity_of(ident) -> int:
    """Type arguments written after an identifier (``Foo<A, B>``: 2); a stub shadows only a name of its arity."""
    p = ident.parent
    if p is not None and p.type == "generic_name" and p.children and p.children[0] == ident:
        args = next((c for c in p.children if c.type == "type_argument_list"), None)
        return len(args.named_children) if args is not None else 0
    return 0


def _signature_names(member) -> set[tuple[str, int]]:
    """(identifier, arity) of a member's declaration (return type, parameters), not of its body or attributes."""
    names: set[tuple[str, int]] = set()
    name = member.child_by_field_name("name")
    stack = [c for c in member.children if c.type not in SIGNATURE_SKIP and c != name]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            names.add((n.text.decode("utf-8", "replace"), _arity_of(n)))
        stack.extend(c for c in n.children if c.type not in SIGNATURE_SKIP)
    return names


def _generic_base(node) -> bool:
    """Whether a type declaration around ``node`` derives from a generic class (``: Visitor<TState, Value>``)."""
    p = node.parent
    while p is not None:
        if p.type in TYPE_DECLS:
            bases = next((c for c in p.children if c.type == "base_list"), None)
            first = next(iter(bases.named_children), None) if bases is not None else None
            if first is not None and first.type == "generic_name":
                return True
        p = p.parent
    return False


def _class_chain(node, types_by_name: dict[str, list[CsType]]) -> list[str]:
    """Names of the type declarations around ``node`` and of their project base classes, nearest first."""
    out: list[str] = []
    p = node.parent
    while p is not None:
        if p.type in TYPE_DECLS:
            n = p.child_by_field_name("name")
            if n is not None:
                out.append(n.text.decode("utf-8", "replace"))
            bases = next((c for c in p.children if c.type == "base_list"), None)
            first = next(iter(bases.named_children), None) if bases is not None else None
            base = _simple_type_name(first) if first is not None else None
            while base and base not in out and len(out) < 32:
                out.append(base)
                cands = types_by_name.get(base, [])
                base = next((b for b in cands[0].supers[:1]), None) if cands else None
        p = p.parent
    return out


def _simple_type_name(node) -> str | None:
    if node.type == "identifier":
        return node.text.decode("utf-8", "replace")
    if node.type == "generic_name":
        ident = next((c for c in node.children if c.type == "identifier"), None)
        return ident.text.decode("utf-8", "replace") if ident is not None else None
    return None


def _top_type(node):
    """The outermost type declaration around ``node`` (None outside any type)."""
    top = None
    p = node.parent
    while p is not None:
        if p.type in TYPE_DECLS:
            top = p
        p = p.parent
    return top


def predict_blockers(plans: dict[str, CsStubs], infos: dict[str, CsFileInfo], texts: dict[str, str]) -> set[str]:
    """Files whose stubs are sure to break a declaration, which stops mcs before any method body of the whole
    stubbed tree: a type nested in a stub host that derives from a stubbed class and overrides one of its members
    (CS0115: the empty stub has nothing to override), or an explicit implementation of a stubbed interface's member
    (CS0540/CS0539); and, for any stub host, an ``override`` whose signature names a stub visible in its class or
    inherited from a project base class (it no longer matches the base member: CS0115/CS0508), an explicit
    implementation naming a stub in its type arguments, a qualified name through a stub outside the bodies
    (CS0426).  Taking those files' stubs out up front saves the stubbed recompile that would find them; the
    recompile stays as the fallback for whatever this misses."""
    from tree_sitter import QueryCursor

    out: set[str] = set()
    hosts: dict[tuple[str, int], str] = {}  # ("Top.Stub", arity) -> the file whose text carries that stub
    for path, plan in sorted(plans.items()):
        if plan.insertions.points:
            for fqn, simple in plan.stub_fqns.items():
                if fqn.count(".") >= 1:
                    hosts.setdefault((".".join(fqn.split(".")[-2:]), plan.stubs[simple].arity), path)
    types_by_name: dict[str, list[CsType]] = {}
    for info in infos.values():
        for t in info.declared:
            types_by_name.setdefault(t.name, []).append(t)
    stub_names = {n for plan in plans.values() for n in plan.stubs}
    members_of: dict[str, set[str]] = {}  # top-level type name -> its members' names, over all its parts
    for info in infos.values():
        for top in info.tops:
            members_of.setdefault(top.name, set()).update(top.members)
    for path in sorted(infos):
        text = texts.get(path)
        if text is None or infos[path].tree is None or not any(n in text for n in stub_names):
            continue
        caps = infos[path].blocker_caps or QueryCursor(_blocker_query()).captures(infos[path].tree.root_node)
        for mod in caps.get("mod", ()):
            if mod.text != b"override":
                continue
            member = mod.parent
            sig = {(n, k) for n, k in _signature_names(member) if n in stub_names}
            if not sig:
                continue
            # The overridden member is declared in the first class up the chain that has a member of that name
            # (none: a framework class).  A stub nested in that class or above it is seen by both declarations
            # alike; one nested below it makes the override's signature differ from the base's.
            chain = _class_chain(member, types_by_name)
            mname = member.child_by_field_name("name")
            mname = mname.text.decode("utf-8", "replace") if mname is not None else ""
            declared_in = next((i for i, cls in enumerate(chain) if i > 0 and mname in members_of.get(cls, ())),
                               len(chain))
            if declared_in < len(chain) and _generic_base(member):
                # a generic base's member is declared with its type parameters, substituted from outside the
                # derived class's body: a stub nested in that base differs from them too
                declared_in += 1
            for cls in chain[:declared_in]:
                for n, k in sig:
                    host = hosts.get((f"{cls}.{n}", k))
                    if host is not None:
                        out.add(host)
        for spec in caps.get("explicit", ()):
            top = _top_type(spec)
            tn = top.child_by_field_name("name") if top is not None else None
            if tn is None:
                continue
            for ident in walk(spec):
                if ident.type == "identifier":
                    host = hosts.get((f"{tn.text.decode('utf-8', 'replace')}.{ident.text.decode('utf-8', 'replace')}",
                                      _arity_of(ident)))
                    if host is not None:
                        out.add(host)
        for q in caps.get("qualifier", ()):
            name = q.text.decode("utf-8", "replace")
            if name not in stub_names or _ancestor_node(q, BODY_NODES) is not None:
                continue
            for cls in _class_chain(q, types_by_name):
                host = hosts.get((f"{cls}.{name}", _arity_of(q)))
                if host is not None:
                    out.add(host)
    for path in sorted(plans):
        stubs, text = plans[path].stubs, texts[path]
        if not stubs or ("override" not in text and not any(
                t.kind == "interface" and f"{n}." in text for n, t in stubs.items())):
            continue  # neither an override nor a qualified name of a stubbed interface: nothing to look at
        caps = infos[path].blocker_caps or QueryCursor(_blocker_query()).captures(infos[path].tree.root_node)
        for spec in caps.get("explicit", ()):
            name = next((n for n in (_simple_type_name(c) for c in spec.children) if n), None)
            top = _top_type(spec)
            if name in stubs and stubs[name].kind == "interface" and top is not None \
                    and TYPE_DECLS[top.type] in STUB_HOSTS:
                out.add(path)
                break
        if path in out:
            continue
        for node in caps.get("type", ()):
            top = _top_type(node)
            if top is None or TYPE_DECLS[top.type] not in STUB_HOSTS:
                continue  # top-level: its base list is resolved outside its body, where the stubs are not seen
            bases = next((c for c in node.children if c.type == "base_list"), None)
            first = next((c for c in bases.named_children), None) if bases is not None else None
            base = _simple_type_name(first) if first is not None else None
            if base not in stubs or stubs[base].kind != "class":
                continue
            body = node.child_by_field_name("body")
            for member in body.named_children if body is not None else ():
                if member.type not in MEMBER_DECLS or not any(
                        c.type == "modifier" and c.text == b"override" for c in member.children):
                    continue
                mname = member.child_by_field_name("name")
                if member.type != "method_declaration" or mname is None or \
                        mname.text.decode("utf-8", "replace") not in OBJECT_VIRTUALS:
                    out.add(path)
                    break
            if path in out:
                break
    return out


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


def _ancestor_node(node, types: set[str] | frozenset[str]):
    while node is not None:
        if node.type in types:
            return node
        node = node.parent
    return None


def _ancestor(info: CsFileInfo, text: str, offset: int, types: set[str] | frozenset[str]):
    """The innermost tree-sitter node of one of ``types`` around a character offset, or None."""
    b = offset if text.isascii() else len(text[:offset].encode("utf-8"))
    node = info.tree.root_node.descendant_for_byte_range(b, b)
    while node is not None:
        if node.type in types:
            return node
        node = node.parent
    return None


def shim_fixes(diags: list[CsDiagnostic], infos: dict[str, CsFileInfo], texts: dict[str, str], shim: Shim,
               project_namespaces: set[str], predict: bool = False) -> int:
    """Add placeholders for declaration-level resolution errors; returns how many new entries were added.

    mcs reports one segment of a qualified name per compile (``Py`` missing; then, once ``namespace Py`` exists,
    ``GILState`` missing in ``Py``).  With ``predict`` the whole qualified name is placed at once -- the segments
    before the last as namespaces, the last as a type, exactly what the following rounds would add -- which saves
    a compile per segment."""
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
            if predict and _ancestor(info, text, off, {"attribute"}) is None:
                _place_qualified(shim, text, after, f"{ns}.{name}" if ns else name)
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


_SEGMENT = re.compile(r"@?[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*")


def _place_qualified(shim: Shim, text: str, at: int, prefix: str) -> None:
    """``prefix`` is followed by ``.Seg1.Seg2...`` at ``at``: namespaces for all segments but the last, a placeholder
    type for the last.  Nothing when a middle segment has type arguments (then it is a type, not a namespace)."""
    segments: list[tuple[str, int]] = []
    while True:
        dot = skip_trivia(text, at)
        if not text.startswith(".", dot) or text.startswith("..", dot):
            break
        m = _SEGMENT.match(text, skip_trivia(text, dot + 1))
        if m is None:
            return
        segments.append((m.group().lstrip("@"), m.end()))
        at = m.end()
        if text.startswith("<", skip_trivia(text, at)):
            if text.startswith(".", skip_trivia(text, skip_type_args(text, skip_trivia(text, at)))):
                return
            break
    if not segments:
        return
    ns = prefix
    for seg, _ in segments[:-1]:
        ns = f"{ns}.{seg}"
        shim.namespaces.add(ns)
    last, end = segments[-1]
    shim.types.setdefault((ns, last, _arity_at(text, end)), "interface" if re.match(r"I[A-Z]", last) else "class")


_ASTRAL = re.compile("[\U00010000-\U0010FFFF]")


def _offset(text: str, line: int, col: int) -> int | None:
    """1-based line and UTF-16 column -> character offset."""
    starts = _line_starts(text)
    if not (1 <= line <= len(starts)):
        return None
    start = starts[line - 1]
    if _ASTRAL.search(text, start, starts[line] - 1 if line < len(starts) else len(text)) is None:
        return start + max(0, col - 1)  # no two-unit characters on the line: UTF-16 units are characters
    end = starts[line] - 1 if line < len(starts) else len(text)
    return start + utf16_to_char(text[start:end], max(0, col - 1))


_STARTS_CACHE: dict[int, tuple[str, list[int]]] = {}


def _line_starts(text: str) -> list[int]:
    """Offsets of the line starts (split on ``\\n`` only, as ``LineIndex``), cached per text object."""
    key = id(text)
    hit = _STARTS_CACHE.get(key)
    if hit is not None and hit[0] is text:
        return hit[1]
    starts = [0]
    find, at = text.find, text.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = find("\n", at + 1)
    if len(_STARTS_CACHE) > 4096:
        _STARTS_CACHE.clear()
    _STARTS_CACHE[key] = (text, starts)
    return starts


def _position(text: str, offset: int) -> tuple[int, int]:
    """Character offset -> 0-based (line, column), lines split on ``\\n`` only."""
    starts = _line_starts(text)
    line = bisect.bisect_right(starts, offset) - 1
    return line, offset - starts[line]


# ----------------------------------------------------------------------------------------------------------------
# Diagnostics -> references
# ----------------------------------------------------------------------------------------------------------------

_IDENT = re.compile(r"@?[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*")


def cs_ref(d: CsDiagnostic, plan: CsStubs, original: str, back=None) -> CrossFileRef | None:
    """``back``: the analysed copy's offsets -> the original's (the down-level map), when they differ."""
    text = plan.stubbed_text
    pos = _offset(text, d.line, d.col)
    if pos is None:
        return None
    q = [strip_generics(x) for x in quoted(d.message)]
    stub_name = symbol = None
    name_at = None
    if d.code in ("CS0117", "CS1061", "CS0426"):
        # mcs: "Type `N.T.Foo' does not contain a definition for `bar'"; csc: "'T.Foo' does not contain ... 'bar'";
        # CS0426: "The nested type `X' does not exist in the type `N.T.Foo'"
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
    if back is not None:
        orig = back(orig)
    if orig is None or not original.startswith(symbol, orig):
        return None
    line, col = _position(original, orig)
    t = plan.stubs[stub_name]
    return CrossFileRef(plan.path, line, col, symbol, stub_name, t.file, d.code, d.message)


_WORD = re.compile(r"\w+")


def member_file(t: CsType, member: str, types: dict[str, list[CsType]], texts: dict[str, str],
                cache: dict | None = None) -> str | None:
    """The project file declaring ``member`` of ``t`` (its own, else a project base type's); None when only a
    framework base type can have it (``Exception.Message``), which is not cross-file knowledge.  ``cache`` keeps
    the (file, member) searches of one analysis (the same member is looked up from many files)."""
    cache = {} if cache is None else cache

    def mentions(file: str) -> bool:
        key = (file, member)
        hit = cache.get(key)
        if hit is None:
            # a whole-word occurrence, as `\bmember\b`: one set of the file's words instead of a regex per member
            words = cache.get((file, None))
            if words is None:
                words = cache[(file, None)] = frozenset(_WORD.findall(texts.get(file, "")))
            hit = cache[key] = member.lstrip("@") in words
        return hit

    queue, seen = [t], {t.fqn}
    while queue:
        cur = queue.pop(0)
        if mentions(cur.file):
            return cur.file
        for name in cur.supers:
            cands = types.get(name, [])
            cands = sorted(cands, key=lambda c: (c.namespace != cur.namespace, c.file))
            if cands and cands[0].fqn not in seen and len(seen) < 50:
                seen.add(cands[0].fqn)
                queue.append(cands[0])
    return None


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
    # Compiler processes at once (the parse pass runs beside the tree-sitter scan, the original- and stubbed-tree
    # compiles of a round side by side); 1 runs every step in turn.
    parallel: int = 2
    # Place whole qualified names in the shim and take out stubs sure to break a declaration up front, instead of
    # learning both from extra compiles.  False is the plain round-by-round reference (the bench compares them).
    predict: bool = True
    # The down-level pass (C# 8-12 -> C# 7 for mcs); False compiles the preprocessed text as it is.  Never with
    # Roslyn, which reads current C# itself.
    downlevel: bool = True

    def _define_args(self) -> tuple[str, ...]:
        """The preprocessor symbols of the build (the preprocessor evaluated them already; a file it left to the
        compiler gets the same)."""
        defines = sorted(getattr(self, "_defines", ()) or DEFAULT_DEFINES)
        return (f"-define:{';'.join(defines)}",) if defines else ()

    def uses_downlevel(self) -> bool:
        """Whether ``analyze`` runs the down-level pass: only for mcs (Roslyn, the first choice where ``dotnet``
        exists, parses current C#)."""
        return self.downlevel and self._backend()[0] is Compiler.MCS

    @classmethod
    def read_configs(cls, repo, max_bytes: int = 1_000_000, max_files: int = 200) -> dict[str, str]:
        """``{relative path: text}`` of the repository's ``*.csproj`` and ``Directory.Build.props`` (data: their
        unconditional defines, target frameworks and implicit usings; msbuild never runs), without following
        symlinks."""
        return read_data_files(repo, lambda name: name.lower().endswith(PROJECT_SUFFIX) or name in PROJECT_FILES,
                               prune=lambda d: d.startswith(".") or d in ("bin", "obj"),
                               max_bytes=max_bytes, max_files=max_files)

    def tree_source(self, path: str, text: str) -> bytes:
        """The bytes tree-sitter should parse for ``text``: the preprocessed file (inactive ``#if`` branches and
        directive lines blanked), whose byte offsets are the original's, with the symbols of this analyzer's
        last analysis (the defaults for a file it did not see)."""
        pre = getattr(self, "_tree_sources", {}).get(path)
        if pre is None or pre.original != text:
            pre = preprocess(text, DEFAULT_DEFINES)
        return pre.tree_bytes()

    def toolchain_paths(self) -> list[str]:
        # a dotnet install usually lives outside /usr (~/.dotnet, /opt/dotnet, /usr/local/share/dotnet): its host,
        # SDK (csc.dll) and reference packs must be in the confined view; mono's mcs lives under /usr
        kind, roslyn = self._backend()
        if kind is Compiler.CSC and roslyn is not None:
            return [str(Path(os.path.realpath(roslyn.dotnet)).parent)]
        return []

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
        out = {"mcs": v} if v else {}
        refs = self._references()
        if refs:
            out["mcs_references"] = ",".join(refs)  # what this machine's mono has: part of the toolchain
        return out

    def _references(self) -> tuple[str, ...]:
        if self.options.backend.value != "local":
            return ()
        return _mcs_references(self.mcs, which(self.mcs) or "")

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
                  container=container, confine=None if container else self.confinement(read=(tree, rsp), scratch=(os.path.dirname(out_dll),) if out_dll else ()))
        return self._outcome(res, known)

    def _csc(self, roslyn: Roslyn, tree: Path, files: list[str], rsp: Path, known: set[str],
             out_dll: Path) -> CompileOutcome:
        args = ["-nologo", "-noconfig", "-nostdlib+", "-target:library", "-unsafe+", "-langversion:latest",
                "-nullable:enable", "-warn:0", "-deterministic+", f"-out:{out_dll}", *self._define_args()]
        args += [f'-r:"{r}"' for r in roslyn.references]
        self._rsp(rsp, args, files)
        res = run([roslyn.dotnet, roslyn.csc_dll, f"@{rsp}"], cwd=tree, env={**utf8_env(),
                  "DOTNET_CLI_TELEMETRY_OPTOUT": "1", "DOTNET_NOLOGO": "1"}, timeout=self.options.timeout, confine=self.confinement(read=(tree, rsp), scratch=(os.path.dirname(out_dll),)))
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
            elif f.path == SHIM_FILE or (f.path.startswith("__benchsmith_") and "/" not in f.path):
                result.exclusions.append(Exclusion(f"{repo}/{f.path}", Stage.ANALYZER, Reason.UNSAFE_PATH,
                                                   "name reserved for benchsmith's generated files", repo))
            else:
                usable[f.path] = f.text
        prepared = prepare(usable, snapshot.configs, downlevel=self.downlevel and kind is Compiler.MCS,
                           roslyn=kind is Compiler.CSC)
        result.stats.update(prepared.stats)
        self._tree_sources = {p: c.pre for p, c in prepared.copies.items()}
        texts = prepared.texts()
        # The compiles are separate processes: with ``parallel`` > 1 the parse pass runs while tree-sitter scans,
        # and the original- and stubbed-tree compiles of a round run side by side.
        pool = ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="csharp-compile") \
            if self.parallel > 1 else None
        try:
            return self._analyze(result, repo, kind, roslyn, usable, prepared, workdir, pool)
        except ToolMissing as exc:
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), repo))
            return result
        finally:
            if pool is not None:
                pool.shutdown(wait=True)  # never leave a compiler running into the next repository

    def _analyze(self, result: AnalysisResult, repo: str, kind: Compiler, roslyn: Roslyn | None,
                 usable: dict[str, str], prepared: Prepared, workdir: Path,
                 pool: ThreadPoolExecutor | None) -> AnalysisResult:
        texts = prepared.texts()
        self._defines = prepared.defines
        def submit(fn, *args) -> Future:
            if pool is not None:
                return pool.submit(fn, *args)
            done: Future = Future()
            try:
                done.set_result(fn(*args))
            except BaseException as exc:  # re-raised by .result(), as from a pool
                done.set_exception(exc)
            return done

        known = set(texts) | {SHIM_FILE} | set(prepared.helpers)
        orig_tree, stub_tree = workdir / "original", workdir / "stubbed"
        for tree in (orig_tree, stub_tree):
            shutil.rmtree(tree, ignore_errors=True)
        # The parse pass reads the original tree itself (the files as they are, before any placeholder); a
        # compile lists its files, so those it leaves out later may stay on disk.
        write_tree(orig_tree, texts)
        written: dict[Path, dict[str, str]] = {orig_tree: dict(texts), stub_tree: {}}
        parsed = submit(self._parse_run, orig_tree, sorted(texts), workdir, known) if kind is Compiler.MCS else None
        infos = {p: scan_csharp(SourceFile(p, t), prepared.copies[p].tree) for p, t in texts.items()}
        compiled = set(texts)
        if parsed is not None:
            compiled = self._parse_verdict(repo, parsed.result(), texts, infos, result, prepared)
            if compiled is None:
                return result
        plans = plan_all_stubs(infos, texts, compiled)
        result.stats.update(files=len(usable), compiled_files=len(compiled), files_with_stubs=len(plans),
                            stubs=sum(len(p.stubs) for p in plans.values()))
        if not plans:
            return result
        order = sorted(compiled)
        project_ns = {ns for i in infos.values() for ns in i.namespaces}

        def put(tree: Path, files: dict[str, str]) -> list[str]:
            # rounds only add placeholders and blank keywords: rewrite just the files that changed
            changed = {p: t for p, t in files.items() if written[tree].get(p) != t}
            write_tree(tree, changed)
            written[tree].update(changed)
            return sorted(files)

        def tree_files(source: dict[str, str]) -> dict[str, str]:
            files = {p: shim.apply_blanks(p, source[p]) for p in order}
            if kind is Compiler.MCS:
                files[SHIM_FILE] = shim.text()
            files.update(prepared.helpers)  # generated C#: down-level helpers, Roslyn's implicit usings
            return files

        dropped: set[str] | None = None
        # Every namespace a file imports gets an empty declaration up front: harmless where the framework has it,
        # and it saves a compile round where a library is missing.
        shim = Shim(namespaces={u for p in order for u in infos[p].usings} - project_ns)
        likely_final = all(ns == "System" or ns.startswith(("System.", "Microsoft.")) for ns in shim.namespaces)
        rounds = rejects = 0
        while True:
            b_files = put(orig_tree, tree_files(texts))
            # the original tree compiles while the stubbed one is prepared
            early = submit(self._compile, kind, roslyn, orig_tree, b_files, workdir / "original.rsp", known,
                           workdir)
            if dropped is None:
                # Stubs known to break a declaration are left out up front (the recompile below stays as the
                # fallback).
                dropped = predict_blockers(plans, infos, texts) if self.predict and kind is Compiler.MCS else set()
                result.stats["files_stubs_dropped_predicted"] = len(dropped)
            stubbed = {p: plans[p].stubbed_text if p in plans and p not in dropped else texts[p] for p in order}
            a_files = put(stub_tree, tree_files(stubbed))
            # The stubbed tree is compiled with this round's placeholders at the same time as the original: when
            # the original reached the method bodies, this is the round whose shim both trees keep.  A first round
            # that will hardly be the last (the files import namespaces no framework assembly has) is not
            # doubled: on a busy machine the wasted compile would slow the one that counts.
            speculate = pool is not None and (rounds > 0 or kind is not Compiler.MCS or likely_final)
            later = submit(self._compile, kind, roslyn, stub_tree, a_files, workdir / "stubbed.rsp", known,
                           workdir) if speculate else None
            before = early.result()
            rounds += 1
            # Once mcs reports anything inside a method body it got past the declarations: more placeholders
            # (attributes it checks late) would only cost another round.
            final = (before.diagnostics is None or kind is not Compiler.MCS or rounds > MAX_SHIM_ROUNDS + rejects
                     or reached_bodies(before.diagnostics, infos, texts))
            fixed = 0 if final else shim_fixes(before.diagnostics, infos, texts, shim, project_ns, self.predict)
            # (in a round that is not the last, the stubbed tree's files are rewritten next: wait for its compile)
            after = later.result() if later is not None else None
            if before.diagnostics is None:
                return self._fail(result, repo, before.error)
            if not final and not fixed and rejects < MAX_REJECT_ROUNDS:
                # No placeholder helps: mcs rejects a declaration itself (a construct it does not know that the
                # down-level pass left, a C# 7.3 constraint...), which stops it before every body of the tree.
                # Those files are recorded and left out of both trees, and the round is compiled again.
                rejected = self._reject_declarations(repo, before.diagnostics, infos, texts, set(order), result,
                                                     prepared)
                if rejected:
                    rejects += 1
                    compiled -= rejected
                    order = sorted(compiled)
                    plans = plan_all_stubs(infos, texts, compiled)
                    dropped = None
                    continue
            if final or not fixed:
                if after is None:
                    after = self._compile(kind, roslyn, stub_tree, a_files, workdir / "stubbed.rsp", known, workdir)
                break
        result.stats["shim_rounds"] = rounds - 1 - rejects
        result.stats["shim_entries"] = shim.size()
        result.stats["rejected_files"] = len(set(texts)) - len(compiled) - result.stats.get("unparsed_files", 0) \
            - result.stats.get("unsupported_files", 0) if kind is Compiler.MCS else 0
        result.stats.update(compiled_files=len(compiled), files_with_stubs=len(plans),
                            stubs=sum(len(p.stubs) for p in plans.values()))
        if after.diagnostics is None:
            return self._fail(result, repo, after.error)
        result.stats["stubbed_recompiles"] = 0
        while kind is Compiler.MCS and result.stats["stubbed_recompiles"] < MAX_STUBBED_RECOMPILES and \
                not self._stubbed_reached_bodies(after.diagnostics, plans, dropped, infos, texts):
            # Stubs that break a declaration (an override of a stubbed base...) stop mcs before any body: take
            # those files' stubs out and compile once more (mcs reports some only once others are gone).  (Once
            # mcs got to the bodies, declaration-level errors of stubs did not stop it, and they are references
            # like any other.)
            blockers = self._new_declaration_errors(before.diagnostics, after.diagnostics, plans, infos, texts,
                                                    dropped)
            if not blockers:
                break
            result.stats["stubbed_recompiles"] += 1
            dropped |= blockers
            stubbed = {p: plans[p].stubbed_text if p in plans and p not in dropped else texts[p] for p in order}
            after = self._compile(kind, roslyn, stub_tree, put(stub_tree, tree_files(stubbed)),
                                  workdir / "stubbed.rsp", known, workdir)
            if after.diagnostics is None:
                return self._fail(result, repo, after.error)
        result.stats["files_stubs_dropped"] = len(dropped)
        self._collect_refs(result, before.diagnostics, after.diagnostics, plans, dropped, infos, texts, usable,
                           compiled, prepared)
        return result

    def _collect_refs(self, result: AnalysisResult, before: list[CsDiagnostic], after: list[CsDiagnostic],
                      plans: dict[str, CsStubs], dropped: set[str], infos: dict[str, CsFileInfo],
                      texts: dict[str, str], usable: dict[str, str], compiled: set[str],
                      prepared: Prepared | None = None) -> None:
        active = {p: pl for p, pl in plans.items() if p not in dropped}
        seen_before = set()
        for d in before:
            if d.file in texts:
                off = _offset(texts[d.file], d.line, d.col)
                seen_before.add((d.file, off, d.code))
        refs: dict[tuple, CrossFileRef] = {}
        new = unattributed = external = 0
        types_by_name: dict[str, list[CsType]] = {}
        for p in sorted(compiled):
            for t in infos[p].declared:
                types_by_name.setdefault(t.name, []).append(t)
        mentions: dict[tuple[str, str], bool] = {}
        for d in after:
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
            copy = prepared.copies.get(d.file) if prepared is not None else None
            ref = cs_ref(d, plan, usable[d.file], copy.to_original if copy is not None and copy.downlevel else None)
            if ref is None or ref.defining_file == ref.file:
                unattributed += 1
                continue
            if ref.symbol != ref.import_name:
                ref.defining_file = member_file(plan.stubs[ref.import_name], ref.symbol, types_by_name, usable,
                                                mentions)
                if ref.defining_file is None or ref.defining_file == ref.file:
                    external += 1
                    continue
            refs.setdefault((ref.file, ref.line, ref.column), ref)
        result.refs = [refs[k] for k in sorted(refs)]
        result.stats.update(original_errors=sum(1 for d in before if d.kind == "error"),
                            stubbed_errors=sum(1 for d in after if d.kind == "error"),
                            new_diagnostics=new, unattributed=unattributed, external_members=external,
                            refs=len(result.refs))

    def _compile(self, kind: Compiler, roslyn: Roslyn | None, tree: Path, files: list[str], rsp: Path,
                 known: set[str], workdir: Path) -> CompileOutcome:
        out = workdir / f"{tree.name}.dll"  # one per tree: the two compiles of a round may run at once
        if kind is Compiler.CSC and roslyn is not None:
            return self._csc(roslyn, tree, files, rsp, known, out)
        container = self.options.backend.value != "local"
        return self._mcs(tree, files, rsp, (*MCS_OPTIONS, *self._define_args(),
                                            *(f"-r:{r}" for r in self._references())), known,
                         f"/tmp/benchsmith-{tree.name}.dll" if container else str(out))

    def _parse_run(self, tree: Path, files: list[str], workdir: Path, known: set[str]) -> CompileOutcome:
        """One ``mcs --parse`` over every file (needs no scan, so it runs while tree-sitter scans)."""
        return self._mcs(tree, files, workdir / "parse.rsp", ("--parse", "-unsafe", "-langversion:experimental",
                                                               *self._define_args()), known, "")

    def _parse_verdict(self, repo: str, out: CompileOutcome, texts: dict[str, str], infos: dict[str, CsFileInfo],
                       result: AnalysisResult, prepared: Prepared | None = None) -> set[str] | None:
        """The files the parse pass could not read, and those with a construct the down-level pass could not
        rewrite, are recorded and left out of both compiles."""
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
        unsupported = prepared.unsupported if prepared is not None else {}
        for path in sorted(set(bad) | set(unsupported)):
            if path in unsupported:
                first = unsupported[path][0]
                others = sorted({u.construct for u in unsupported[path][1:]} - {first.construct})
                detail = f"{UNSUPPORTED_PREFIX}{first.construct} line {first.line + 1}" + (
                    f" (also {', '.join(others)})" if others else "")
                result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, Reason.UNSUPPORTED_SYNTAX,
                                                   detail, repo))
                continue
            d = bad[path]
            copy = prepared.copies.get(path) if prepared is not None else None
            ts_error = copy.pre_ts_error if copy is not None and copy.pre_ts_error is not None \
                else infos[path].ts_error
            reason = Reason.SYNTAX_ERROR if ts_error else Reason.TOOLCHAIN_CANNOT_PARSE
            line = _original_line(prepared, path, texts, d)
            why = f"; preprocessor: {copy.pre.error}" if copy is not None and copy.pre.error else ""
            result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, reason,
                                               f"mcs line {line}: {d.code} {d.message[:200]}{why}", repo))
        result.stats["unparsed_files"] = len(bad)
        result.stats["unsupported_files"] = len(set(unsupported) - set(bad))
        return set(texts) - set(bad) - set(unsupported)

    @staticmethod
    def _reject_declarations(repo: str, diags: list[CsDiagnostic], infos: dict[str, CsFileInfo],
                             texts: dict[str, str], compiled: set[str], result: AnalysisResult,
                             prepared: Prepared) -> set[str]:
        """The files with an error outside every method body, each recorded with mcs's first such message; none
        when that would leave nothing to compile."""
        first: dict[str, CsDiagnostic] = {}
        for d in diags:
            if d.kind != "error" or d.file not in compiled or d.file in first:
                continue
            off = _offset(texts[d.file], d.line, d.col)
            if off is not None and not in_body(infos[d.file], texts[d.file], off):
                first[d.file] = d
        if not first or len(first) >= len(compiled):
            return set()
        for path, d in sorted(first.items()):
            result.exclusions.append(Exclusion(
                f"{repo}/{path}", Stage.ANALYZER, Reason.TOOLCHAIN_CANNOT_PARSE,
                f"mcs rejects a declaration, line {_original_line(prepared, path, texts, d)}: {d.code} "
                f"{d.message[:200]}", repo))
        return set(first)

    @staticmethod
    def _stubbed_reached_bodies(diags: list[CsDiagnostic], plans: dict[str, CsStubs], dropped: set[str],
                                infos: dict[str, CsFileInfo], texts: dict[str, str]) -> bool:
        for d in diags:
            if d.kind != "error" or d.file not in texts:
                continue
            if d.file in plans and d.file not in dropped:
                spos = _offset(plans[d.file].stubbed_text, d.line, d.col)
                off = plans[d.file].insertions.to_original(spos) if spos is not None else None
            else:
                off = _offset(texts[d.file], d.line, d.col)
            if off is not None and in_body(infos[d.file], texts[d.file], off):
                return True
        return False

    def _new_declaration_errors(self, before, after, plans, infos, texts, dropped) -> set[str]:
        """Files whose stubs break a declaration: the file of a new error outside every body, and the file whose
        stub the message names (a stub nested in a base class is inherited: ``Equals(Base.PyObject)`` in a
        derived class no longer overrides ``Equals(PyObject)``)."""
        seen = {(d.file, d.line, d.col, d.code) for d in before}
        hosts: dict[str, str] = {}
        for path, plan in sorted(plans.items()):
            if plan.insertions.points:
                for fqn in plan.stub_fqns:
                    hosts.setdefault(fqn, path)
        files: set[str] = set()
        for d in after:
            if d.kind != "error" or d.file not in texts or (d.file, d.line, d.col, d.code) in seen:
                continue
            plan = plans.get(d.file) if d.file not in dropped else None
            if plan is not None:
                spos = _offset(plan.stubbed_text, d.line, d.col)
                opos = plan.insertions.to_original(spos) if spos is not None else None
            else:
                opos = _offset(texts[d.file], d.line, d.col)
            if opos is not None and in_body(infos[d.file], texts[d.file], opos):
                continue
            if plan is not None:
                files.add(d.file)
            for name in quoted(d.message):
                # `Ns.T.M(Ns.Base<A,B>.Stub)`: every dotted name in it, type arguments left out
                for part in re.findall(r"[\w.]+", strip_generics(name)):
                    host = hosts.get(part)
                    if host is not None and host not in dropped:
                        files.add(host)
        return files

    @staticmethod
    def _fail(result: AnalysisResult, repo: str, error: str) -> AnalysisResult:
        reason = Reason.TOOL_TIMEOUT if error.startswith("timeout") else Reason.TOOL_CRASH
        result.exclusions.append(Exclusion(repo, Stage.ANALYZER, reason, error, repo))
        return result


def _original_line(prepared: Prepared | None, path: str, texts: dict[str, str], d: CsDiagnostic) -> int:
    """The 1-based line of the original file where a diagnostic of the analysed copy points."""
    copy = prepared.copies.get(path) if prepared is not None else None
    if copy is None or copy.downlevel is None:
        return d.line
    off = copy.to_original(_offset(texts[path], d.line, d.col) or 0)
    return _position(copy.original, off)[0] + 1


@lru_cache(maxsize=None)
def _mcs_references(mcs: str, resolved: str) -> tuple[str, ...]:
    """``MCS_EXTRA_REFERENCES`` this mcs finds (mono packages each assembly apart; a missing one would fail every
    compile), probed once per process with an empty program."""
    import tempfile

    found: list[str] = []
    with tempfile.TemporaryDirectory(prefix="benchsmith-mcs-") as d:
        src = Path(d) / "probe.cs"
        src.write_text("class BenchsmithProbe { }\n", encoding="utf-8")
        for ref in MCS_EXTRA_REFERENCES:
            try:
                res = run([mcs, "-target:library", "-nowarn:0", f"-r:{ref}", f"-out:{d}/probe.dll", str(src)],
                          timeout=60, env=utf8_env())
            except ToolMissing:
                return ()
            if res.returncode == 0 and not res.timed_out:
                found.append(ref)
    return tuple(found)


@lru_cache(maxsize=None)
def _mcs_version(mcs: str, resolved: str) -> str:
    try:
        res = run([mcs, "--version"], timeout=60, env=utf8_env())
    except ToolMissing:
        return ""
    m = re.search(r"version\s+(\S+)", res.stdout + res.stderr)
    return m.group(1) if m else ""
