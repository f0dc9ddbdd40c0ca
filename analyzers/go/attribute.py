"""go/types errors of the stubbed tree -> the cross-file references they reveal.

``x.Foo`` on a stubbed import fails with ``x.Foo undefined (type struct{} has no field or method Foo)`` at
``Foo``; a name of a dot-imported package with ``undefined: Foo`` at the name.  The reference's defining file is
the analysed non-test file of the imported package that declares the name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from benchsmith.analyzers.go.driver import GoMessage
from benchsmith.analyzers.go.stubs import IDENT_RE, GoStubs
from benchsmith.records import CrossFileRef

# go/types messages (Go 1.19: "undeclared name: X"; 1.20+: "undefined: X").
_MISSING_MEMBER_RE = re.compile(r"^([\w.]+)\.(\w+) undefined \(type struct\{\} has no field or method (\w+)")
_UNDEFINED_RE = re.compile(r"^(?:undeclared name|undefined): (\w+)$")
CODE_MEMBER = "MissingFieldOrMethod"
CODE_UNDEFINED = "UndeclaredName"

# directory -> package-level name -> the files declaring it
Declaring = Mapping[str, Mapping[str, list[str]]]


@dataclass(frozen=True)
class NotInRepository:
    """A use of a stubbed package's name that no other analysed file of that package declares."""

    symbol: str
    owner: str  # the import's bound name, or '.' for a dot import


def go_ref(m: GoMessage, stubs: GoStubs, line: int, col: int, original_line: str,
           declaring: Declaring) -> CrossFileRef | NotInRepository | None:
    """The reference one new error at (``line``, character ``col``) of a stubbed file marks; ``original_line`` is
    that line of the original text.  None when the error is not a use of a stubbed import at that place."""
    symbol = owner = code = None
    mm = _MISSING_MEMBER_RE.match(m.message)
    if mm and mm.group(1) in stubs.locals and mm.group(2) == mm.group(3):
        symbol, owner, code = mm.group(2), mm.group(1), CODE_MEMBER
        candidates = declaring.get(stubs.locals[owner], {}).get(symbol, [])
    else:
        mu = _UNDEFINED_RE.match(m.message)
        if mu and stubs.dots:
            symbol, owner, code = mu.group(1), ".", CODE_UNDEFINED
            candidates = next((declaring[d][symbol] for d in stubs.dots if symbol in declaring.get(d, {})), [])
        else:
            candidates = []
    at = IDENT_RE.match(original_line, col)
    if symbol is None or at is None or at.group(0) != symbol:
        return None
    defining = next((c for c in candidates if c != m.file), None)
    if defining is None:
        return NotInRepository(symbol, owner)
    return CrossFileRef(m.file, line, col, symbol, owner, defining, code, m.message)
