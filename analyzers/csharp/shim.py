"""The shim for mcs: empty namespaces and placeholder types for every name mcs reports missing at declaration
level (a NuGet type in a signature, a missing ``using`` namespace, a type nested in a placeholder -- ``Port.Capacity``
--, a type of another arity than the framework's), and ``override`` blanked where the base is a placeholder, so
that mcs gets past the declarations to the method bodies.  Both trees get the same shim, and its probe (a body
error of its own) tells whether mcs got there.  A member of a placeholder (``Port.Capacity.Single`` as a default
value, a named argument of a placeholder attribute) needs no placeholder: mcs reports it and goes on."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchsmith.analyzers.base import skip_type_args, strip_generics
from benchsmith.analyzers.common import Insertions, skip_trivia
from benchsmith.analyzers.csharp.diagnostics import CsDiagnostic, quoted
from benchsmith.analyzers.csharp.placeholders import PlaceholderKey, PlaceholderKind, render, type_names
from benchsmith.analyzers.csharp.positions import offset as _offset, positions
from benchsmith.analyzers.csharp.scan import MEMBER_DECLS, CsFileInfo, _ancestor, _name, in_body

SHIM_FILE = "__benchsmith_shim__.cs"
# A method body of the shim's own with an error, in both trees: mcs reports it exactly when it got past every
# declaration to the bodies.  Without it a tree whose bodies have no error of their own (every error a placeholder's
# member in a signature, which stops nothing) would read as stopped, and its files as rejected.
PROBE = "__benchsmith_probe"
_PROBE_DECL = f"static class __BenchsmithProbe {{ static void M() {{ {PROBE}(); }} }}"


def is_probe(d: CsDiagnostic) -> bool:
    return d.file == SHIM_FILE and PROBE in d.message


@dataclass
class Shim:
    namespaces: set[str] = field(default_factory=set)
    # (container: a namespace, or a placeholder type for a nested one, name, arity) -> kind
    types: dict[PlaceholderKey, PlaceholderKind] = field(default_factory=dict)
    # file -> {offset: text} to blank in it (same length, so no position moves): ``override`` where the base is a
    # placeholder, ``IFoo.`` of an explicit implementation of a placeholder interface (which has no members)
    blanks: dict[str, dict[int, str]] = field(default_factory=dict)

    @classmethod
    def for_imports(cls, infos: dict[str, CsFileInfo], compiled: set[str], project_ns: set[str]) -> "Shim":
        """The first round's shim: an empty declaration of every namespace a compiled file imports and the project
        does not declare (harmless where the framework has it; it saves a compile round where a library is
        missing)."""
        return cls(namespaces={u for p in sorted(compiled) for u in infos[p].usings} - project_ns)

    def size(self) -> int:
        return len(self.namespaces) + len(self.types) + sum(len(v) for v in self.blanks.values())

    def text(self) -> str:
        lines = ["// benchsmith: placeholders for names the compiler could not resolve (identical in both trees)"]
        return "\n".join(lines + render(self.namespaces, self.types) + [_PROBE_DECL]) + "\n"

    def blank(self, path: str, offset: int, text: str) -> None:
        self.blanks.setdefault(path, {})[offset] = text

    def apply_blanks(self, path: str, text: str, insertions: Insertions | None = None) -> str:
        """``text`` (the analysed copy of ``path``, or its stubbed version with the stubs' ``insertions``) with the
        blanks made; a blank whose text is not where it was found is left alone."""
        for off, old in sorted(self.blanks.get(path, {}).items(), reverse=True):
            at = insertions.to_stubbed(off) if insertions is not None else off
            if text.startswith(old, at):
                text = text[:at] + " " * len(old) + text[at + len(old):]
        return text


def reached_bodies(diags: list[CsDiagnostic], infos: dict[str, CsFileInfo], texts: dict[str, str]) -> bool:
    if any(is_probe(d) for d in diags):
        return True
    for d in diags:
        if d.kind == "error" and d.file in texts:
            off = _offset(texts[d.file], d.line, d.col, d.compiler)
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


def shim_fixes(diags: list[CsDiagnostic], infos: dict[str, CsFileInfo], texts: dict[str, str], shim: Shim,
               project_namespaces: set[str], predict: bool = False) -> int:
    """Add placeholders for declaration-level resolution errors (a type missing, in a namespace or nested in a
    placeholder type, or missing in the arity written); returns how many new entries were added.

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
        off = _offset(text, d.line, d.col, d.compiler)
        if off is None or in_body(info, text, off):
            continue
        q = quoted(d.message)
        if d.code == "CS0115":
            decl = _ancestor(info, text, off, MEMBER_DECLS)
            if decl is not None:
                for ch in decl.children:
                    if ch.type == "modifier" and ch.text == b"override":
                        shim.blank(d.file, positions(text).to_char(ch.start_byte), "override")
            continue
        if d.code == "CS0539":
            # an explicit implementation of a member of a placeholder interface: a plain member then
            _blank_explicit_specifier(shim, d.file, info, text, off)
            continue
        if d.code in ("CS0305", "CS0308") and q:
            _place_other_arity(shim, info, text, off, strip_generics(q[0]).rpartition(".")[2], predict)
            continue
        if d.code == "CS0426" and len(q) > 1:
            _place_nested(shim, info, text, off, strip_generics(q[0]), strip_generics(q[1]), predict)
            continue
        if d.code not in ("CS0246", "CS0234") or not q:
            continue
        name = strip_generics(q[0])
        outer = strip_generics(q[1]) if d.code == "CS0234" and len(q) > 1 else ""
        if outer in project_namespaces and d.code == "CS0234":
            pass  # a project namespace missing a type: the type lives in a file we could not compile
        using = _ancestor(info, text, off, {"using_directive"})
        if using is not None:
            names = [ch for ch in using.children if ch.type in ("identifier", "qualified_name", "generic_name")]
            target = _name(names[-1]) if names else ""
            # an alias names a type (or a namespace: mcs accepts a class in its place), ``using static`` a type:
            # a namespace placeholder there would be CS7007 and stop mcs before every body
            if any(ch.type in ("=", "static") for ch in using.children):
                ns, _, tname = strip_generics(target).rpartition(".")
                if ns:
                    shim.namespaces.add(ns)
                shim.types.setdefault((ns, tname, _last_arity(names[-1])), PlaceholderKind.CLASS)
            elif target:
                shim.namespaces.add(target)
            continue
        after = off + len(name)
        if _ancestor(info, text, off, {"explicit_interface_specifier"}) is not None:
            # ``void IFoo.Bar()``: the name before the dot is an interface, never a namespace
            if outer:
                shim.namespaces.add(outer)
            shim.types.setdefault((outer, name, _arity_at(text, after)), PlaceholderKind.INTERFACE)
            continue
        followed_by_dot = text.startswith(".", skip_trivia(text, after)) and not text.startswith(
            "..", skip_trivia(text, after))
        ns = outer
        if followed_by_dot:
            shim.namespaces.add(f"{ns}.{name}" if ns else name)
            if predict and _ancestor(info, text, off, {"attribute"}) is None:
                _place_qualified(shim, text, after, f"{ns}.{name}" if ns else name)
            continue
        if ns:
            shim.namespaces.add(ns)
        shim.types.setdefault((ns, name, _arity_at(text, after)), _kind_at(info, text, off, name))
    return shim.size() - before


def _kind_at(info: CsFileInfo, text: str, off: int, name: str) -> PlaceholderKind:
    """What a missing type named at ``off`` is, by its place: an attribute, an interface (``IFoo``), a class."""
    if _ancestor(info, text, off, {"attribute"}) is not None:
        return PlaceholderKind.ATTRIBUTE
    return PlaceholderKind.INTERFACE if re.match(r"I[A-Z]", name) else PlaceholderKind.CLASS


def _place_nested(shim: Shim, info: CsFileInfo, text: str, off: int, name: str, container: str,
                  predict: bool) -> None:
    """CS0426, ``name`` missing in the type ``container``: where that type is a placeholder, a nested placeholder
    (``Port.Capacity`` in a signature stops mcs before every body as surely as a missing ``Port``); with
    ``predict`` the segments after it too (``Outer.Mid.Leaf``: ``Mid`` and ``Leaf`` in one round)."""
    if container not in type_names(shim.types):
        return  # a type the compiler knows lacks it: no placeholder can add a member to that
    at = off if text.startswith(name, off) else None  # (the message's position, where it is the name)
    after = at + len(name) if at is not None else off
    explicit = _ancestor(info, text, off, {"explicit_interface_specifier"}) is not None
    kind = PlaceholderKind.INTERFACE if explicit else _kind_at(info, text, off, name)
    shim.types.setdefault((container, name, _arity_at(text, after) if at is not None else 0), kind)
    dot = skip_trivia(text, after)
    if predict and at is not None and text.startswith(".", dot) and not text.startswith("..", dot):
        _place_qualified(shim, text, after, f"{container}.{name}")


def _place_other_arity(shim: Shim, info: CsFileInfo, text: str, off: int, name: str, predict: bool) -> None:
    """CS0305/CS0308: the only type of that name in scope has another arity (``Span`` of a missing Visual Studio
    SDK beside the framework's ``System.Span<T>``): a placeholder of the arity written, in the global namespace,
    which every file sees and where no using-imported type of another arity competes with it; with ``predict``
    the types nested after it too (``Converter.Callback``: the next round's CS0426)."""
    if not name or not text.startswith(name, off) or text.startswith(".", max(0, off - 1)):
        return  # (a qualified name's last segment: the namespace it is looked up in is not known)
    after = off + len(name)
    shim.types.setdefault(("", name, _arity_at(text, after)), _kind_at(info, text, off, name))
    if predict:
        _place_qualified(shim, text, after, name)


def _last_arity(name) -> int:
    """Type arguments of the last segment of a (qualified) name node, read off the tree (``A.B<C, D<E>>``: 2)."""
    last = name.child_by_field_name("name") if name.type == "qualified_name" else name
    args = next((c for c in last.children if c.type == "type_argument_list"), None) if last is not None else None
    return len(args.named_children) if args is not None else 0


def _blank_explicit_specifier(shim: Shim, path: str, info: CsFileInfo, text: str, off: int) -> None:
    decl = _ancestor(info, text, off, MEMBER_DECLS)
    spec = next((c for c in decl.children if c.type == "explicit_interface_specifier"), None) \
        if decl is not None else None
    if spec is None:
        return
    name = strip_generics(_name(spec).rstrip(".")).rsplit(".", 1)[-1]
    if any(t == name for _, t, _ in shim.types):
        chars = positions(text)
        start, end = chars.to_char(spec.start_byte), chars.to_char(spec.end_byte)
        shim.blank(path, start, text[start:end])


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
    shim.types.setdefault((ns, last, _arity_at(text, end)),
                          PlaceholderKind.INTERFACE if re.match(r"I[A-Z]", last) else PlaceholderKind.CLASS)
