"""The names javac resolved in the original tree to a declaration in another file of the project -> references.

The driver (``-Dbenchsmith.refs``, original run only) prints every type, method and field name of a file whose
declaration javac attributed to another file of the list, with the kind its place in the tree gives it (a type in
``new``, ``@``, ``extends``/``implements`` or elsewhere; a member selected from a value or type, or reached
unqualified or through ``this``/``super`` from a subclass).  A JDK or library symbol has no source in the list
and is never printed, so nothing here can name a type defined outside the repository.  The declaration's lines
come with it: the reference's ``definition`` is exact."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchsmith.analyzers.base import AnalysisResult
from benchsmith.analyzers.java.driver import JavacResolved
from benchsmith.analyzers.java.escapes import EscapedText, decode, has_escape, name_span
from benchsmith.records import CrossFileRef, Definition, Exclusion, ReferenceKind, Reason, Stage
from benchsmith.text_positions import TextPositions

RESOLVED = "javac.resolved"  # the ``diagnostic`` of a reference the original run's attribution revealed


@dataclass
class ResolvedTally:
    refs: int = 0
    misplaced: int = 0  # the name javac reports is not written at its offsets (a tree javac made itself)
    escaped: int = 0  # names written with unicode escapes, kept with their written spelling
    lombok: int = 0  # Lombok accessors, from the original run's errors (lombok.py)


@dataclass
class ResolvedFiles:
    """Per file, what mapping javac's offsets onto the written text needs, built on first use."""

    texts: dict[str, str]
    positions: dict[str, TextPositions]
    views: dict[str, EscapedText | None] = field(default_factory=dict)

    def view(self, path: str) -> EscapedText | None:
        if path not in self.views:
            text = self.texts[path]
            self.views[path] = decode(text) if has_escape(text) else None
        return self.views[path]

    def position(self, path: str) -> TextPositions:
        if path not in self.positions:
            self.positions[path] = TextPositions(self.texts[path])
        return self.positions[path]


def resolved_refs(repo: str, found: list[JavacResolved], files: ResolvedFiles, skip: set[str],
                  result: AnalysisResult, tally: ResolvedTally) -> list[CrossFileRef]:
    """``found`` -> references on the written text, in files not in ``skip`` (files javac could not parse).  A name
    written with escapes keeps its written spelling as ``symbol`` (the cursor goes before what is written) and its
    read name in ``definition.symbol``; one that cannot be placed exactly is recorded, not dropped silently."""
    refs: list[CrossFileRef] = []
    places: set[tuple[str, int, int]] = set()
    for r in found:
        if r.file == r.defining_file or r.file in skip or r.file not in files.texts \
                or r.defining_file not in files.texts:
            continue
        text = files.texts[r.file]
        pos = files.position(r.file)
        start = pos.utf16_to_char(r.start) if r.start >= 0 else -1
        end = pos.utf16_to_char(r.end)
        view = files.view(r.file)
        span = name_span(text, start, end, r.name, view)
        if span is None:
            at = start if start >= 0 else end  # the offset javac gave
            if view is not None and "\\u" in text[max(0, at - len(r.name) - 12):at + len(r.name) + 12]:
                line, col = pos.position(at)
                result.exclusions.append(Exclusion(f"{repo}/{r.file}:{line + 1}:{col + 1}", Stage.ANALYZER,
                                                   Reason.UNSUPPORTED_SYNTAX,
                                                   f"{r.name!r} is written with unicode escapes javac reads around "
                                                   "it; the name cannot be placed on the written text", repo))
            tally.misplaced += 1
            continue
        written = text[span[0]:span[1]]
        if written != r.name:
            tally.escaped += 1
        line, col = pos.position(span[0])
        if (r.file, line, col) in places:
            continue  # one reference per place: the first name javac printed there
        places.add((r.file, line, col))
        kind = ReferenceKind(r.kind)
        refs.append(CrossFileRef(r.file, line, col, written, r.owner, r.defining_file, RESOLVED,
                                 f"{kind.value} {r.owner}{'' if r.name == r.owner else '.' + r.name} "
                                 f"declared in {r.defining_file}",
                                 kind, Definition(r.defining_file, r.def_line - 1, r.def_end - 1, r.name)))
    tally.refs += len(refs)
    return refs
