"""javac diagnostics of the stubbed tree -> the cross-file references they reveal, in original coordinates."""

from __future__ import annotations

import re

from benchsmith.analyzers.base import skip_type_args, strip_generics
from benchsmith.analyzers.common import skip_trivia
from benchsmith.analyzers.java.driver import JavacDiagnostic
from benchsmith.analyzers.java.stubs import JavaStubs
from benchsmith.records import CrossFileRef, ReferenceKind
from benchsmith.text_positions import TextPositions

# Diagnostic keys kept from the stubbed run.
CANT_RESOLVE = frozenset({"compiler.err.cant.resolve", "compiler.err.cant.resolve.args",
                          "compiler.err.cant.resolve.location", "compiler.err.cant.resolve.location.args",
                          "compiler.err.cant.resolve.location.args.params", "compiler.err.cant.resolve.args.params"})
CANT_APPLY = frozenset({"compiler.err.cant.apply.symbol", "compiler.err.cant.apply.symbols",
                        "compiler.err.cant.apply.diamond.1", "compiler.err.cant.apply.diamond"})

SYMBOL_RE = re.compile(r"symbol:\s+(?:static\s+)?(\w+)\s+([\w$]+)")
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


def javac_ref(d: JavacDiagnostic, stubs: JavaStubs, stubbed: TextPositions,
              original: TextPositions) -> CrossFileRef | None:
    """One new javac diagnostic of a stubbed file (``stubbed``: positions in its text) -> the cross-file name it
    reveals, in ``original`` coordinates."""
    text = stubs.stubbed_text
    pos, start, end = (stubbed.utf16_to_char(x) if x >= 0 else -1 for x in (d.pos, d.start, d.end))
    if pos < 0:
        return None
    symbol = None
    name_at = None
    stub_name = None
    if d.code in CANT_RESOLVE:
        sm = SYMBOL_RE.search(d.message)
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
    if orig is None or not original.text.startswith(symbol, orig):
        return None
    line, col = original.position(orig)
    t = stubs.stubs[stub_name]
    return CrossFileRef(stubs.path, line, col, symbol, stub_name, t.file, d.code, d.message.splitlines()[0]
                        + (" | " + " | ".join(s.strip() for s in d.message.splitlines()[1:3])
                           if "\n" in d.message else ""),
                        ReferenceKind.CONSTRUCTOR if d.code in CANT_APPLY else ReferenceKind.MEMBER)


def _whole(text: str, at: int, name: str) -> bool:
    after = at + len(name)
    return not (after < len(text) and (text[after].isalnum() or text[after] in "_$"))

