"""Attribution: the cross-file reference one new pylint diagnostic reveals, and the file defining its name."""

from __future__ import annotations

import re
from dataclasses import dataclass

from benchsmith.analyzers.base import Diagnostic
from benchsmith.analyzers.python.kinds import Declared, UseContexts, find_member, stubbed_base
from benchsmith.analyzers.python.lines import python_lines
from benchsmith.analyzers.python.modules import ModuleIndex
from benchsmith.analyzers.python.stubs import Binding, FileStubs
from benchsmith.records import CrossFileRef, Definition, ReferenceKind

_OWNER_RE = re.compile(r"^(?:Class|Instance of|Super of) '([^']+)' has no '([^']+)' member")
_QUOTED_RE = re.compile(r"'([^']+)'")
_NAME_AT_RE = re.compile(r"[A-Za-z_][\w]*")


@dataclass(frozen=True)
class NotInRepository:
    """A use of a stubbed name whose member no repository class declares (``anim.setEndValue`` on a subclass of
    a Qt class): the API is the external base's, so it is not cross-file (recorded, never a candidate)."""

    line: int
    column: int
    detail: str


def to_ref(d: Diagnostic, stubs: FileStubs, index: ModuleIndex,
           lines: list[str]) -> CrossFileRef | NotInRepository | str | None:
    """The reference a new diagnostic reveals; None when it is no use of a project name; a reason (str) when
    it is one but pylint's position does not hold the name, ``NotInRepository`` when only an external base
    declares the member (both recorded, never silently dropped).  Its kind is
    MODULE_MEMBER for a submodule or re-exported name reached through a module, INHERITED_MEMBER for a member
    of a class of this file whose base is a stubbed import, MEMBER otherwise (``refine`` reads the rest)."""
    if d.code == "E1101":
        m = _OWNER_RE.match(d.message)
        if not m or d.end_line is None or d.end_column is None:
            return None
        owner, member = m.group(1), m.group(2)
        candidates = stubs.bindings.get(owner)
        kind = ReferenceKind.MEMBER
        if not candidates:
            # ``self.splitter`` in a class of this file whose base class is a stubbed import
            base = stubbed_base(index, d.file, owner, set(stubs.bindings))
            if base is None:
                return None
            candidates, owner, kind = stubs.bindings[base], base, ReferenceKind.INHERITED_MEMBER
        line, col = d.end_line, d.end_column - len(member)
        if not (0 <= line < len(lines)) or lines[line][col : col + len(member)] != member:
            return f"pylint places {owner}.{member} at {line + 1}:{col + 1}, which does not hold {member!r}"
        binding = _pick(candidates, member, index)
        file = binding.defining_file
        if kind is ReferenceKind.INHERITED_MEMBER:
            # the chain from the class of this file, whatever form its base takes (``panels.BasePanel``)
            declared = find_member(index, d.file, m.group(1), member)
            if declared is not None and not declared.own:
                return NotInRepository(line, col, f"{member!r} (via {owner}) is declared by no class of the "
                                                  "repository, only by a base outside it")
            if declared is not None and declared.file != d.file:
                return CrossFileRef(d.file, line, col, member, owner, declared.file, d.code, d.message, kind,
                                    declared.definition())
        if kind is ReferenceKind.MEMBER and index.is_project(binding.module):
            submodule = f"{binding.module}.{member}"
            if index.is_module(submodule):  # ``pkg.`` | ``submodule.Name``
                kind, file = ReferenceKind.MODULE_MEMBER, index.file_for(submodule, d.file)
            elif file and file != index.file_for(binding.module, d.file):  # a name the module re-exports
                kind = ReferenceKind.MODULE_MEMBER
        return CrossFileRef(d.file, line, col, member, owner, file, d.code, d.message, kind)
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


def refine(ref: CrossFileRef, stubs: FileStubs, index: ModuleIndex, contexts: UseContexts) -> CrossFileRef | None:
    """``ref`` with its defining file, definition and kind settled; None when no other project file defines
    what it names.  A member of a repository class is looked up along the class's base chain (declared in a
    base: INHERITED_MEMBER); one declared by no repository class, only by a base outside the repository
    (``anim.setEndValue`` on a subclass of a Qt class), is the external API, not a cross-file one: None, as the
    annotation protocol reads it (the released benchmark kept such uses)."""
    if ref.kind is ReferenceKind.MODULE_MEMBER and index.is_module(_submodule(ref, stubs)):
        n = len(python_lines(index.texts.get(ref.defining_file or "", ""))) if ref.defining_file else 0
        if ref.defining_file and ref.defining_file != ref.file:
            ref.definition = Definition(ref.defining_file, 0, max(0, n - 1), ref.symbol)
            return ref
    if ref.definition is None:  # (an inherited member of a class of this file has its declaration already)
        declared = _through_class(ref, stubs, index)
        if declared is None:
            located = locate_definition(ref, index)
            if located is None:
                return None
            ref.defining_file = located
        elif not declared.own:
            return None
        else:
            if ref.kind is ReferenceKind.MEMBER and declared.file != ref.defining_file:
                ref.kind = ReferenceKind.INHERITED_MEMBER
            ref.defining_file, ref.definition = declared.file, declared.definition()
    if ref.kind is ReferenceKind.MEMBER:
        is_class = bool(ref.defining_file and index.classes(ref.defining_file).get(ref.symbol))
        ref.kind = contexts.kind((ref.line, ref.column), is_class)
    return ref


def _submodule(ref: CrossFileRef, stubs: FileStubs) -> str:
    return next((f"{b.module}.{ref.symbol}" for b in stubs.bindings.get(ref.import_name, [])), "")


def _through_class(ref: CrossFileRef, stubs: FileStubs, index: ModuleIndex) -> Declared | None:
    """Where the member is declared when the import names a repository class (an E1101 on it or on a class of
    this file inheriting it); None for anything else (a module, a function, an external class)."""
    if ref.diagnostic != "E1101" or not ref.defining_file:
        return None
    for b in stubs.bindings.get(ref.import_name, []):
        if b.defining_file != ref.defining_file or index.is_project(b.module):
            continue
        declared = find_member(index, b.defining_file, b.module.rpartition(".")[2], ref.symbol)
        if declared is not None and declared.file != ref.file:
            return declared
    return None


def locate_definition(ref: CrossFileRef, index: ModuleIndex) -> str | None:
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
