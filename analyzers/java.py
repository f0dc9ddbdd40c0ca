"""Java: file-local stub classes, one javac analysis of the original tree and one of the stubbed tree, diff.

Each file's top-level types get empty *nested* types named after the project types the file uses (its single-type
imports of project classes, the project types of its on-demand imports and the same-package types it mentions).
A member type shadows an imported or same-package type inside the class body, so every use of ``Foo`` in the
body now means the empty stub and ``foo.bar()``/``Foo.CONST``/``new Foo(1)`` fail to resolve.  The stubs are
appended right before each top-level type's closing brace, on the same line, so nothing before them moves and a
single stubbed tree serves every file: stubs of different files live in different classes and never collide.

javac is driven through a tiny program of our own (``BenchsmithJavac``, compiled once into a cache directory) that
uses the public ``javax.tools`` API: diagnostics come back as JSON lines carrying the diagnostic *key*
(``compiler.err.cant.resolve.location``), the file as given, and exact UTF-16 character offsets (start, preferred,
end), so nothing depends on the localised text layout, tab expansion or the exit code.  The driver parses first
and marks the phase boundary, which tells parser errors (a file javac cannot read) from attribution errors.
``-XDshould-stop.ifError=FLOW`` keeps javac attributing every class after the first error (the original tree of a
real project is full of errors from missing libraries; the diff removes them).
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Iterable

from benchsmith.analyzers.common import (Insertions, apply_insertions, cache_dir, skip_trivia, tree_has_errors,
                                       utf8_env, walk)
from benchsmith.analyzers.base import (AnalysisResult, Analyzer, ByteChars, json_lines, skip_type_args,
                                      strip_generics)
from benchsmith.files import RepoSnapshot, SourceFile, write_tree
from benchsmith.records import CrossFileRef, Exclusion, Reason, Stage
from benchsmith.runner import Mount, ToolMissing, run

# ----------------------------------------------------------------------------------------------------------------
# Text positions shared by the brace-language analyzers
# ----------------------------------------------------------------------------------------------------------------


class Utf16Index:
    """UTF-16 code unit offsets (what JVM and .NET compilers count) -> Python character offsets."""

    def __init__(self, text: str) -> None:
        # UTF-16 start offset of every astral (two-unit) character, in order.
        self.astral: list[int] = []
        if any(ord(c) > 0xFFFF for c in text):
            unit = 0
            for c in text:
                if ord(c) > 0xFFFF:
                    self.astral.append(unit)
                    unit += 2
                else:
                    unit += 1

    def to_char(self, unit: int) -> int:
        if not self.astral:
            return unit
        return unit - bisect.bisect_left(self.astral, unit)


class LineIndex:
    """(line, column) <-> character offsets with lines split on ``\\n`` only, exactly as the example builder does."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]

    def offset(self, line: int, column: int) -> int | None:
        """Offset of a 0-based (line, column); ``column`` counts characters."""
        if not (0 <= line < len(self.starts)):
            return None
        return self.starts[line] + column


# ----------------------------------------------------------------------------------------------------------------
# The javac driver (our own code; nothing from the analysed repository is ever loaded)
# ----------------------------------------------------------------------------------------------------------------

DRIVER_CLASS = "BenchsmithJavac"
DRIVER_SOURCE = r"""
import javax.tools.*;
import com.sun.source.util.JavacTask;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

/** benchsmith's javac driver: args[0] lists the files to compile (UTF-8, one per line), args[1..] are javac
 *  options.  Prints each diagnostic as a JSON object per line, a {"phase":"analyze"} line between parsing and
 *  attribution, and a final {"done":...} line.  Source and class paths are empty: nothing is looked up
 *  implicitly. */
public final class BenchsmithJavac {
    static String q(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || Character.isSurrogate(c)) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16), false, "UTF-8");
        List<String> files = new ArrayList<>(Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8));
        files.removeIf(String::isEmpty);
        List<String> options = new ArrayList<>(Arrays.asList(args).subList(1, args.length));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int[] counts = new int[2];
        DiagnosticListener<JavaFileObject> listener = d -> {
            JavaFileObject src = d.getSource();
            out.print("{\"kind\":" + q(d.getKind().name()) + ",\"code\":" + q(d.getCode())
                + ",\"file\":" + q(src == null ? null : src.getName())
                + ",\"pos\":" + d.getPosition() + ",\"start\":" + d.getStartPosition() + ",\"end\":" + d.getEndPosition()
                + ",\"line\":" + d.getLineNumber() + ",\"col\":" + d.getColumnNumber()
                + ",\"msg\":" + q(d.getMessage(Locale.ENGLISH)) + "}\n");
            counts[d.getKind() == Diagnostic.Kind.ERROR ? 0 : 1]++;
        };
        boolean ok;
        try (StandardJavaFileManager fm = javac.getStandardFileManager(listener, Locale.ENGLISH, StandardCharsets.UTF_8)) {
            fm.setLocation(StandardLocation.SOURCE_PATH, Collections.emptyList());
            fm.setLocation(StandardLocation.CLASS_PATH, Collections.emptyList());
            fm.setLocation(StandardLocation.ANNOTATION_PROCESSOR_PATH, Collections.emptyList());
            JavacTask task = (JavacTask) javac.getTask(null, fm, listener, options, null, fm.getJavaFileObjectsFromStrings(files));
            task.setLocale(Locale.ENGLISH);
            task.parse();
            out.print("{\"phase\":\"analyze\"}\n");
            task.analyze();
            ok = counts[0] == 0;
        } catch (Throwable t) {
            out.print("{\"crash\":" + q(t.toString()) + "}\n");
            out.flush();
            System.exit(3);
            return;
        }
        out.print("{\"done\":true,\"ok\":" + ok + ",\"errors\":" + counts[0] + ",\"others\":" + counts[1] + "}\n");
        out.flush();
    }
}
"""

JAVAC_OPTIONS = (
    "-proc:none",  # never run annotation processors (a repository could ship one)
    "-implicit:none",
    "-nowarn",
    "-Xlint:none",
    "-Xmaxerrs", "100000000",
    "-Xmaxwarns", "0",
    "-encoding", "UTF-8",
    "-XDshould-stop.ifError=FLOW",  # keep attributing every class after the first error
    "-XDshould-stop.ifNoError=FLOW",
)
# C1 only: javac runs are short and the C2 compiler threads cost more than they save (3x faster on 2 cores).
JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-Xss16m", "-Duser.language=en", "-Duser.country=US",
               "-Dfile.encoding=UTF-8")

# Diagnostic keys kept from the stubbed run.
CANT_RESOLVE = frozenset({"compiler.err.cant.resolve", "compiler.err.cant.resolve.args",
                          "compiler.err.cant.resolve.location", "compiler.err.cant.resolve.location.args",
                          "compiler.err.cant.resolve.location.args.params", "compiler.err.cant.resolve.args.params"})
CANT_APPLY = frozenset({"compiler.err.cant.apply.symbol", "compiler.err.cant.apply.symbols",
                        "compiler.err.cant.apply.diamond.1", "compiler.err.cant.apply.diamond"})


@dataclass(frozen=True)
class JavacDiagnostic:
    kind: str
    code: str
    file: str | None
    pos: int  # UTF-16 offsets; -1 when absent
    start: int
    end: int
    line: int
    col: int
    message: str
    parse_phase: bool


@dataclass
class JavacRun:
    diagnostics: list[JavacDiagnostic]
    done: bool
    crash: str | None = None


def parse_driver_output(stdout: str) -> JavacRun:
    """The driver's JSON lines -> diagnostics; lines that are not ours (JVM warnings) are ignored."""
    diags: list[JavacDiagnostic] = []
    done = False
    crash = None
    parse_phase = True
    for obj in json_lines(stdout):
        if "phase" in obj:
            parse_phase = False
        elif "done" in obj:
            done = True
        elif "crash" in obj:
            crash = str(obj["crash"])
        elif "code" in obj:
            file = obj.get("file")
            if file is not None:
                file = PurePosixPath(str(file).replace("\\", "/")).as_posix()
                file = file[2:] if file.startswith("./") else file
            diags.append(JavacDiagnostic(str(obj.get("kind", "")), str(obj.get("code", "")), file,
                                         int(obj.get("pos", -1)), int(obj.get("start", -1)), int(obj.get("end", -1)),
                                         int(obj.get("line", -1)), int(obj.get("col", -1)), str(obj.get("msg", "")),
                                         parse_phase))
    return JavacRun(diags, done, crash)


# ----------------------------------------------------------------------------------------------------------------
# Project index and stubs
# ----------------------------------------------------------------------------------------------------------------

TYPE_DECLS = {"class_declaration": "class", "interface_declaration": "interface", "enum_declaration": "enum",
              "record_declaration": "record", "annotation_type_declaration": "annotation"}


@dataclass(frozen=True)
class JavaType:
    fqn: str  # package.Outer.Inner
    name: str
    kind: str  # class | interface | enum | record | annotation
    arity: int
    file: str
    supers: tuple[str, ...] = ()  # simple names of its superclass and interfaces, as written


@dataclass
class TopType:
    name: str
    insert_at: int  # character offset of the closing brace of its body
    enum: bool


@dataclass
class JavaFileInfo:
    path: str
    package: str = ""
    single_imports: list[str] = field(default_factory=list)
    demand_imports: list[str] = field(default_factory=list)
    top_types: list[TopType] = field(default_factory=list)
    declared: list[JavaType] = field(default_factory=list)  # every type declared in the file (any depth)
    local_names: set[str] = field(default_factory=set)  # type and type-parameter names declared here
    used: set[str] = field(default_factory=set)  # identifiers outside package/import declarations
    ts_error: bool = False


@lru_cache(maxsize=1)
def _java_parser():
    import tree_sitter_java
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_java.language()))


def _dotted(node) -> str:
    return re.sub(r"\s+|/\*.*?\*/|//[^\n]*", "", node.text.decode("utf-8", "replace"), flags=re.S)


def scan_java(src: SourceFile) -> JavaFileInfo:
    info = JavaFileInfo(src.path)
    tree = _java_parser().parse(src.text.encode("utf-8"))
    root = tree.root_node
    info.ts_error = tree_has_errors(root)
    bc = ByteChars(src.text)
    for child in root.children:
        if child.type == "package_declaration":
            for c in child.children:
                if c.type in ("scoped_identifier", "identifier"):
                    info.package = _dotted(c)
        elif child.type == "import_declaration":
            is_static = any(c.type == "static" for c in child.children)
            name = next((_dotted(c) for c in child.children if c.type in ("scoped_identifier", "identifier")), None)
            if name is None or is_static:
                continue  # static imports name members, not types; they are left as they are
            if any(c.type == "asterisk" for c in child.children):
                info.demand_imports.append(name)
            else:
                info.single_imports.append(name)

    def visit(node, outer: str, top: bool) -> None:
        for c in node.children:
            kind = TYPE_DECLS.get(c.type)
            if kind is None:
                if c.type in ("class_body", "interface_body", "enum_body", "enum_body_declarations",
                              "annotation_type_body"):
                    visit(c, outer, False)
                continue
            name_node = c.child_by_field_name("name")
            body = c.child_by_field_name("body")
            if name_node is None:
                continue
            name = name_node.text.decode("utf-8", "replace")
            tparams = c.child_by_field_name("type_parameters")
            arity = sum(1 for t in tparams.children if t.type == "type_parameter") if tparams is not None else 0
            fqn = f"{outer}.{name}" if outer else name
            info.declared.append(JavaType(fqn, name, kind, arity, src.path, _supertypes(c)))
            info.local_names.add(name)
            if top and body is not None and body.children and body.children[-1].type == "}" \
                    and not body.children[-1].is_missing:
                info.top_types.append(TopType(name, bc.char(body.children[-1].start_byte), kind == "enum"))
            if body is not None:
                visit(body, fqn, False)

    visit(root, info.package, True)
    for n in walk(root):
        if n.type in ("package_declaration", "import_declaration"):
            continue
        if n.type == "type_parameter":
            for c in n.children:
                if c.type in ("type_identifier", "identifier"):
                    info.local_names.add(c.text.decode("utf-8", "replace"))
        elif n.type in ("identifier", "type_identifier") and not _inside(n, ("package_declaration",
                                                                              "import_declaration")):
            info.used.add(n.text.decode("utf-8", "replace"))
    return info


def _supertypes(decl) -> tuple[str, ...]:
    out: list[str] = []
    for c in decl.children:
        if c.type in ("superclass", "super_interfaces", "extends_interfaces"):
            for t in walk(c):
                if t.type == "type_identifier":
                    out.append(t.text.decode("utf-8", "replace"))
                    # only the outermost name of each listed type (not its type arguments)
            # type arguments' identifiers are harmless extra candidates; they are only followed if they
            # name a project type that mentions the member
    return tuple(out)


def _inside(node, types: tuple[str, ...]) -> bool:
    p = node.parent
    while p is not None:
        if p.type in types:
            return True
        p = p.parent
    return False


class JavaIndex:
    """Project types by fully qualified name and by package."""

    def __init__(self, infos: Iterable[JavaFileInfo]) -> None:
        infos = list(infos)
        self.infos = {i.path: i for i in infos}
        self.by_fqn: dict[str, list[JavaType]] = {}
        self.packages: dict[str, list[JavaType]] = {}  # package -> its top-level types
        for info in infos:
            for t in info.declared:
                self.by_fqn.setdefault(t.fqn, []).append(t)
                pkg_prefix = f"{info.package}." if info.package else ""
                if t.fqn == pkg_prefix + t.name:
                    self.packages.setdefault(info.package, []).append(t)

    def lookup(self, fqn: str, near: str) -> JavaType | None:
        found = self.by_fqn.get(fqn)
        if not found:
            return None
        # The same class in several source sets (java8/ and java9/ variants): the nearest path wins.
        return max(found, key=lambda t: (_common_prefix(t.file, near), [-ord(ch) for ch in t.file]))


    def resolve_simple(self, name: str, near: str) -> JavaType | None:
        """A simple type name as the file ``near`` sees it: single imports, its package, on-demand imports."""
        info = self.infos.get(near)
        if info is None:
            return None
        for imp in info.single_imports:
            if imp.rsplit(".", 1)[-1] == name:
                return self.lookup(imp, near)
        for pkg in [info.package, *info.demand_imports]:
            t = self.lookup(f"{pkg}.{name}" if pkg else name, near)
            if t is not None:
                return t
        return None

    def member_file(self, t: JavaType, member: str, texts: dict[str, str]) -> str | None:
        """The file declaring ``member`` of ``t``: its own file, else the nearest project supertype's file that
        mentions it (an inherited method); None when no project file in the hierarchy does (a JDK or library
        supertype's member is not cross-file knowledge)."""
        pattern = re.compile(rf"\b{re.escape(member)}\b")
        queue, seen = [t], {t.fqn}
        while queue:
            cur = queue.pop(0)
            if pattern.search(texts.get(cur.file, "")):
                return cur.file
            for s in cur.supers:
                nxt = self.resolve_simple(s, cur.file)
                if nxt is not None and nxt.fqn not in seen and len(seen) < 50:
                    seen.add(nxt.fqn)
                    queue.append(nxt)
        return None


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/")):
        if x != y:
            break
        n += 1
    return n


@dataclass
class JavaStubs:
    path: str
    stubbed_text: str
    insertions: Insertions
    stubs: dict[str, JavaType]  # simple name -> the project type it stands for
    stub_fqns: dict[str, str]  # fully qualified name javac prints for a stub -> simple name


def plan_stubs(info: JavaFileInfo, text: str, index: JavaIndex) -> JavaStubs | None:
    """The stubbed text of one file: nested empty types shadowing the project types it uses."""
    if not info.top_types:
        return None
    chosen: dict[str, JavaType] = {}
    for name in info.single_imports:
        t = index.lookup(name, info.path)
        if t is not None and t.file != info.path:
            chosen.setdefault(t.name, t)
    on_demand: list[JavaType] = []
    for pkg in info.demand_imports:
        if pkg in index.packages:
            on_demand += index.packages[pkg]
        else:
            outer = index.lookup(pkg, info.path)  # import a.b.Outer.* (member types)
            if outer is not None:
                on_demand += [ts[0] for fqn, ts in index.by_fqn.items()
                              if fqn.startswith(outer.fqn + ".") and "." not in fqn[len(outer.fqn) + 1:]]
    same_package = index.packages.get(info.package, [])
    # Same-package types shadow on-demand imports; single-type imports shadow both.
    for t in list(same_package) + on_demand:
        if t.file == info.path or t.name in chosen or t.name not in info.used:
            continue
        chosen[t.name] = index.lookup(t.fqn, info.path) or t
    for name in list(chosen):
        if name in info.local_names:
            del chosen[name]  # a nested stub would clash with (or be shadowed by) the file's own declaration
    if not chosen:
        return None
    decls = []
    for name in sorted(chosen):
        t = chosen[name]
        tp = "<" + ",".join(f"BsT{i}" for i in range(t.arity)) + ">" if t.arity else ""
        if t.kind == "interface":
            decls.append(f"public interface {name}{tp} {{}}")
        elif t.kind == "enum":
            decls.append(f"public enum {name} {{}}")
        elif t.kind == "annotation":
            decls.append(f"public @interface {name} {{}}")
        else:
            decls.append(f"public static class {name}{tp} {{}}")
    body = " ".join(decls)
    inserts = []
    stub_fqns: dict[str, str] = {}
    prefix = f"{info.package}." if info.package else ""
    for top in info.top_types:
        # No newline: every line keeps its number; a ';' ends an enum's constant list if it has none.
        inserts.append((top.insert_at, (" ; " if top.enum else " ") + body + " "))
        for name in chosen:
            stub_fqns[f"{prefix}{top.name}.{name}"] = name
    stubbed, ins = apply_insertions(text, inserts)
    return JavaStubs(info.path, stubbed, ins, chosen, stub_fqns)


# ----------------------------------------------------------------------------------------------------------------
# Diagnostics -> references
# ----------------------------------------------------------------------------------------------------------------

_SYMBOL_RE = re.compile(r"symbol:\s+(?:static\s+)?(\w+)\s+([\w$]+)")
_LOCATION_RE = re.compile(r"location:\s+(.*)")
_CTOR_RE = re.compile(r"constructor\s+([\w$]+)\s+in\s+(?:class|enum|interface|record)\s+([\w$.]+)")
_DIAMOND_RE = re.compile(r"cannot infer type arguments for\s+([\w$.]+)\s*<")
_IDENT_RE = re.compile(r"[A-Za-z_$\u00c0-\uffff][\w$\u00c0-\uffff]*")


def location_type(message: str) -> str | None:
    """The type named by a 'location:' line: ``class a.T.Foo`` or ``variable f of type a.T.Foo<String>``."""
    m = _LOCATION_RE.search(message)
    if not m:
        return None
    loc = m.group(1).strip()
    if " of type " in loc:
        loc = loc.split(" of type ", 1)[1]
    else:
        parts = loc.split(None, 1)
        loc = parts[1] if len(parts) == 2 else parts[0]
    loc = strip_generics(loc).strip().rstrip("[]").strip()
    return loc or None


def javac_ref(d: JavacDiagnostic, stubs: JavaStubs, original: str, u16: Utf16Index,
              lines: LineIndex) -> CrossFileRef | None:
    """One new javac diagnostic of a stubbed file -> the cross-file name it reveals, in original coordinates."""
    text = stubs.stubbed_text
    pos, start, end = (u16.to_char(x) if x >= 0 else -1 for x in (d.pos, d.start, d.end))
    if pos < 0:
        return None
    symbol = None
    name_at = None
    stub_name = None
    if d.code in CANT_RESOLVE:
        sm = _SYMBOL_RE.search(d.message)
        owner = location_type(d.message)
        if not sm or owner is None or owner not in stubs.stub_fqns:
            return None
        symbol, stub_name = sm.group(2), stubs.stub_fqns[owner]
        if text.startswith(symbol, pos) and _whole(text, pos, symbol):
            name_at = pos
        elif text.startswith(".", pos):
            # `expr.name`: javac points at the dot; the name follows, maybe after comments or type arguments.
            at = skip_trivia(text, pos + 1)
            if text.startswith("<", at):
                at = skip_trivia(text, skip_type_args(text, at))
            if text.startswith(symbol, at) and _whole(text, at, symbol):
                name_at = at
        if name_at is None and end > 0 and text[max(0, end - len(symbol)):end] == symbol:
            name_at = end - len(symbol)
    elif d.code in CANT_APPLY:
        m = _CTOR_RE.search(d.message) or _DIAMOND_RE.search(d.message)
        if not m:
            return None
        owner = strip_generics(m.group(m.lastindex))
        if owner not in stubs.stub_fqns:
            return None
        stub_name = stubs.stub_fqns[owner]
        # `new Foo(...)`: the cursor goes before the class name, the constructor's arguments are the target.
        if not text.startswith("new", pos):
            return None
        at = skip_trivia(text, pos + 3)
        while text.startswith("@", at):  # type annotations: new @A Foo()
            m2 = _IDENT_RE.match(text, at + 1)
            if not m2:
                return None
            at = skip_trivia(text, m2.end())
        if text.startswith(stub_name, at) and _whole(text, at, stub_name):
            symbol, name_at = stub_name, at
    if symbol is None or name_at is None:
        return None
    orig = stubs.insertions.to_original(name_at)
    if orig is None or not original.startswith(symbol, orig):
        return None
    line, col = lines.position(orig)
    t = stubs.stubs[stub_name]
    return CrossFileRef(stubs.path, line, col, symbol, stub_name, t.file, d.code, d.message.splitlines()[0]
                        + (" | " + " | ".join(s.strip() for s in d.message.splitlines()[1:3])
                           if "\n" in d.message else ""))


def _whole(text: str, at: int, name: str) -> bool:
    after = at + len(name)
    return not (after < len(text) and (text[after].isalnum() or text[after] in "_$"))


# ----------------------------------------------------------------------------------------------------------------
# The analyzer
# ----------------------------------------------------------------------------------------------------------------


class JavaAnalyzer(Analyzer):
    language = "java"
    extensions = (".java",)
    grammar_module = "tree_sitter_java"
    grammar_function = "language"
    comment_prefix = "//"
    statement_terminators = frozenset({";", "{", "}"})
    dockerfile = "javac.Dockerfile"

    java = "java"
    javac = "javac"
    address_space_extra = 4 << 30  # code cache, class space, thread stacks: reserved, mostly never touched

    def tool_versions(self) -> dict[str, str]:
        v = _javac_version(self.javac, shutil.which(self.javac) or "")
        return {"javac": v} if v else {}

    # -- driver ----------------------------------------------------------------------------------------------
    def _driver_dir(self, workdir: Path) -> tuple[Path | None, str]:
        """Compile the driver once per JDK into the cache (falls back to ``workdir`` if the cache is read-only)."""
        version = self.tool_versions().get("javac", "unknown")
        key = hashlib.sha256((DRIVER_SOURCE + version).encode()).hexdigest()[:16]
        for base in (cache_dir() / "javac-driver", workdir / "javac-driver"):
            target = base / key
            if (target / f"{DRIVER_CLASS}.class").is_file():
                return target, ""
            try:
                tmp = base / f"{key}.tmp{os.getpid()}"
                shutil.rmtree(tmp, ignore_errors=True)
                (tmp / "src").mkdir(parents=True)
                (tmp / "src" / f"{DRIVER_CLASS}.java").write_text(DRIVER_SOURCE, encoding="utf-8")
            except OSError:
                continue
            container = self.container([Mount(str(tmp), "/bs/driver", writable=True)], "/bs/driver")
            root = "/bs/driver" if container else str(tmp)
            res = run([self.javac, "-nowarn", "-d", f"{root}/out", f"{root}/src/{DRIVER_CLASS}.java"],
                      env=utf8_env(), timeout=max(60.0, min(self.options.timeout, 300.0)), container=container,
                      confine=None if container else self.confinement(write=(tmp,)))
            if not (tmp / "out" / f"{DRIVER_CLASS}.class").is_file():
                shutil.rmtree(tmp, ignore_errors=True)
                return None, f"could not compile the javac driver: {(res.stderr or res.stdout).strip()[-300:]}"
            try:
                os.replace(tmp / "out", target)
            except OSError:
                if not (target / f"{DRIVER_CLASS}.class").is_file():
                    return None, "could not install the javac driver"
            shutil.rmtree(tmp, ignore_errors=True)
            return target, ""
        return None, "no writable directory for the javac driver"

    def _javac(self, tree: Path, files: list[str], driver: Path, listfile: Path) -> tuple[JavacRun | None, str]:
        listfile.write_text("".join(f + "\n" for f in files), encoding="utf-8")
        container = self.container([Mount(str(tree), "/src"), Mount(str(driver), "/bs/driver"),
                                    Mount(str(listfile), "/bs/files.txt")], "/src")
        conf = None if container else self.confinement(read=(tree, driver, listfile))
        # the JVM sizes its heap from the machine's memory, which the confined run cannot see: from its limit, with
        # room for the JVM's own memory, and an initial heap large enough not to collect all the time while growing
        memory = ([f"-XX:MaxRAM={conf.limits.memory_bytes}", "-XX:MaxRAMPercentage=75", "-XX:InitialRAMPercentage=12"]
                  if conf else [])
        argv = [self.java, *JVM_OPTIONS, *memory, "-cp", "/bs/driver" if container else str(driver), DRIVER_CLASS,
                "/bs/files.txt" if container else str(listfile), *JAVAC_OPTIONS]
        res = run(argv, cwd=None if container else tree, env=utf8_env(), timeout=self.options.timeout,
                  container=container, confine=conf)
        if res.timed_out:
            return None, f"timeout: javac ran past its {self.options.timeout:g}s timeout"
        if res.oom:
            return None, f"javac: {res.stderr.strip().splitlines()[-1]}"
        out = parse_driver_output(res.stdout)
        if out.crash or not out.done:
            tail = " | ".join((res.stderr or "").strip().splitlines()[-4:])
            return None, f"javac crashed (exit {res.returncode}): {out.crash or tail or 'no output'}"[:500]
        return out, ""

    # -- main ------------------------------------------------------------------------------------------------
    def analyze(self, snapshot: RepoSnapshot, workdir: Path) -> AnalysisResult:
        result = AnalysisResult(tool_versions=self.tool_versions())
        repo = snapshot.name
        # module-info.java would switch javac to module mode and reject every other file of a plain source list.
        files = [f for f in snapshot.files if PurePosixPath(f.path).name != "module-info.java"]
        texts = {f.path: f.text for f in files}
        infos = {f.path: scan_java(f) for f in files}
        index = JavaIndex(infos.values())
        plans: dict[str, JavaStubs] = {}
        for f in files:
            p = plan_stubs(infos[f.path], f.text, index)
            if p is not None:
                plans[f.path] = p
        result.stats.update(files=len(files), files_with_stubs=len(plans),
                            stubs=sum(len(p.stubs) for p in plans.values()))
        if not plans:
            return result
        workdir.mkdir(parents=True, exist_ok=True)
        stub_tree = workdir / "stubbed"
        shutil.rmtree(stub_tree, ignore_errors=True)
        write_tree(stub_tree, {p: (plans[p].stubbed_text if p in plans else t) for p, t in texts.items()})
        order = sorted(texts)
        try:
            driver, err = self._driver_dir(workdir)
            if driver is None:
                result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_CRASH, err, repo))
                return result
            before, err_o = self._javac(snapshot.root, order, driver, workdir / "files-original.txt")
            after, err_s = (None, "") if before is None else self._javac(stub_tree, order, driver,
                                                                        workdir / "files-stubbed.txt")
        except ToolMissing as exc:
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, Reason.TOOL_MISSING, str(exc), repo))
            return result
        if before is None or after is None:
            err = err_o or err_s
            reason = (Reason.TOOL_TIMEOUT if err.startswith("timeout") else
                      Reason.TOOL_MEMORY if "memory limit" in err else Reason.TOOL_CRASH)
            result.exclusions.append(Exclusion(repo, Stage.ANALYZER, reason, err, repo))
            return result
        # Files javac cannot parse: a real syntax error (tree-sitter agrees) or syntax newer than this javac.
        unparsed: dict[str, JavacDiagnostic] = {}
        for d in before.diagnostics:
            if d.parse_phase and d.kind == "ERROR" and d.file in texts and d.file not in unparsed:
                unparsed[d.file] = d
        for path, d in sorted(unparsed.items()):
            reason = Reason.SYNTAX_ERROR if infos[path].ts_error else Reason.TOOLCHAIN_CANNOT_PARSE
            first = d.message.splitlines()[0] if d.message else d.code
            result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, reason,
                                               f"javac line {d.line}: {first}", repo))
        broken_stubs = {d.file for d in after.diagnostics if d.parse_phase and d.kind == "ERROR"
                        and d.file in plans and d.file not in unparsed}
        for path in sorted(broken_stubs):
            result.exclusions.append(Exclusion(f"{repo}/{path}", Stage.ANALYZER, Reason.INTERNAL_ERROR,
                                               "the stubbed file does not parse", repo))
        u16 = {p: Utf16Index(t) for p, t in texts.items()}
        seen_before: set[tuple] = set()
        for d in before.diagnostics:
            if d.file in texts and d.pos >= 0:
                seen_before.add((d.file, u16[d.file].to_char(d.pos), d.code))
        refs: dict[tuple, CrossFileRef] = {}
        new = unattributed = external = 0
        line_idx: dict[str, LineIndex] = {}
        stub_u16: dict[str, Utf16Index] = {}
        for d in after.diagnostics:
            if d.kind != "ERROR" or d.file not in plans or d.file in unparsed or d.file in broken_stubs:
                continue
            plan = plans[d.file]
            if d.file not in stub_u16:
                stub_u16[d.file] = Utf16Index(plan.stubbed_text) if u16[d.file].astral else u16[d.file]
            su16 = stub_u16[d.file]
            spos = su16.to_char(d.pos) if d.pos >= 0 else -1
            opos = plan.insertions.to_original(spos) if spos >= 0 else None
            if opos is None or (d.file, opos, d.code) in seen_before:
                continue
            new += 1
            lines = line_idx.setdefault(d.file, LineIndex(texts[d.file]))
            ref = javac_ref(d, plan, texts[d.file], su16, lines)
            if ref is None:
                unattributed += 1
                continue
            if ref.symbol != ref.import_name:
                # an inherited member is defined in a supertype's file
                ref.defining_file = index.member_file(plan.stubs[ref.import_name], ref.symbol, texts)
                if ref.defining_file is None:
                    external += 1
                    continue
            refs.setdefault((ref.file, ref.line, ref.column), ref)
        result.refs = [refs[k] for k in sorted(refs)]
        result.stats.update(original_errors=sum(1 for d in before.diagnostics if d.kind == "ERROR"),
                            stubbed_errors=sum(1 for d in after.diagnostics if d.kind == "ERROR"),
                            new_diagnostics=new, unattributed=unattributed, external_members=external,
                            refs=len(result.refs), unparsed_files=len(unparsed))
        return result


@lru_cache(maxsize=None)
def _javac_version(javac: str, resolved: str) -> str:
    try:
        res = run([javac, "-version"], timeout=60, env=utf8_env())
    except ToolMissing:
        return ""
    text = (res.stdout + res.stderr).strip()
    m = re.search(r"javac\s+(\S+)", text)
    return m.group(1) if m else text[:50]
