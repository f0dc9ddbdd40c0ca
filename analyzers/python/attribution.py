"""Attribution: the cross-file reference one new pylint diagnostic reveals, and the file defining its name."""

from __future__ import annotations

import re

from benchsmith.analyzers.base import Diagnostic
from benchsmith.analyzers.python.modules import ModuleIndex
from benchsmith.analyzers.python.stubs import Binding, FileStubs
from benchsmith.records import CrossFileRef

_OWNER_RE = re.compile(r"^(?:Class|Instance of) '([^']+)' has no '([^']+)' member")
_QUOTED_RE = re.compile(r"'([^']+)'")
_NAME_AT_RE = re.compile(r"[A-Za-z_][\w]*")


def to_ref(d: Diagnostic, stubs: FileStubs, index: ModuleIndex, lines: list[str]) -> CrossFileRef | str | None:
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
