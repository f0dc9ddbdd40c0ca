"""What one Java file declares and uses (tree-sitter), and the project's types indexed by name and package."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from benchsmith import treesitter
from benchsmith.analyzers.common import tree_has_errors, walk
from benchsmith.analyzers.java.escapes import has_escape, tree_view
from benchsmith.files import SourceFile
from benchsmith.text_positions import TextPositions

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



def _dotted(node) -> str:
    return re.sub(r"\s+|/\*.*?\*/|//[^\n]*", "", node.text.decode("utf-8", "replace"), flags=re.S)


def scan_java(src: SourceFile) -> JavaFileInfo:
    info = JavaFileInfo(src.path)
    # tree-sitter reads no unicode escapes; their padded view keeps every offset (escapes.tree_view)
    text = tree_view(src.text) if has_escape(src.text) else src.text
    tree = treesitter.parser("tree_sitter_java").parse(text.encode("utf-8"))
    root = tree.root_node
    info.ts_error = tree_has_errors(root)
    positions = TextPositions(src.text)
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
                info.top_types.append(TopType(name, positions.to_char(body.children[-1].start_byte), kind == "enum"))
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
        return next((cur.file for cur in self.hierarchy(t) if pattern.search(texts.get(cur.file, ""))), None)

    def hierarchy(self, t: JavaType):
        """``t`` and its project supertypes, nearest first (breadth-first; at most 50, each once)."""
        queue, seen = [t], {t.fqn}
        while queue:
            cur = queue.pop(0)
            yield cur
            for s in cur.supers:
                nxt = self.resolve_simple(s, cur.file)
                if nxt is not None and nxt.fqn not in seen and len(seen) < 50:
                    seen.add(nxt.fqn)
                    queue.append(nxt)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/")):
        if x != y:
            break
        n += 1
    return n

