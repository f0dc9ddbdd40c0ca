"""Reference attribution: one diagnostic new in the stubbed compile -> the cross-file reference it marks, on the
original text, and the project file that declares the member it names."""

from __future__ import annotations

import re

from benchsmith.analyzers.base import strip_generics
from benchsmith.analyzers.common import skip_trivia
from benchsmith.analyzers.csharp.diagnostics import CsDiagnostic, quoted
from benchsmith.analyzers.csharp.positions import offset as _offset, position as _position
from benchsmith.analyzers.csharp.scan import CsType
from benchsmith.analyzers.csharp.stubs import CsStubs
from benchsmith.records import CrossFileRef, ReferenceKind

_IDENT = re.compile(r"@?[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*")


def cs_ref(d: CsDiagnostic, plan: CsStubs, original: str, back=None) -> CrossFileRef | None:
    """``back``: the analysed copy's offsets -> the original's (the down-level map), when they differ."""
    text = plan.stubbed_text
    pos = _offset(text, d.line, d.col, d.compiler)
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
    # the kind the diagnostic implies; where the syntax says more (an attribute, a base list), ``kinds`` corrects it
    kind = ReferenceKind.CONSTRUCTOR if d.code == "CS1729" else \
        ReferenceKind.TYPE if symbol == stub_name else ReferenceKind.MEMBER
    return CrossFileRef(plan.path, line, col, symbol, stub_name, t.file, d.code, d.message, kind=kind)


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
