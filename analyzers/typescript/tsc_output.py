"""What ``tsc --pretty false`` prints: diagnostic lines parsed into ``TscMessage``s, and the diagnostic codes the
analyzer counts (member, name and arity codes) or reads as "the original run could not resolve an import"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Collection

# Diagnostics about a member of a stub (the member name sits at the position; the message quotes the owner).
MEMBER_CODES = frozenset({
    "TS2339",  # Property 'm' does not exist on type 'A' / 'typeof A'
    "TS2551",  # ... Did you mean 'n'?
    "TS2694",  # Namespace 'ns' has no exported member 'Foo'
    "TS2353",  # Object literal may only specify known properties, and 'p' does not exist in type 'A'
    "TS2561",  # ... Did you mean to write 'q'?
})
# Diagnostics whose position is the stubbed name itself.
NAME_CODES = frozenset({
    "TS2304", "TS2552",  # Cannot find name 'X' (Did you mean ...)
    "TS2348",  # Value of type 'typeof f' is not callable. Did you mean to include 'new'?
    "TS2349", "TS2351",  # This expression is not callable / constructable
    "TS2315",  # Type 'G' is not generic
    "TS2702",  # 'ns' only refers to a type, but is being used as a namespace here
    "TS2693", "TS2749", "TS2709",  # value/type/namespace confusions
    "TS2604", "TS2607", "TS2786",  # JSX element type 'X' ... / cannot be used as a JSX component
    "TS2345",  # Argument of type 'typeof A' is not assignable ... (only kept when the argument is the name)
    "TS2559", "TS2322",  # Type 'A' has no properties in common / not assignable (only when the name is there)
})
# Arity errors sit on the arguments; the reference is the callee.
CALL_CODES = frozenset({"TS2554", "TS2555", "TS2556", "TS2575", "TS2558"})  # 2558: type-argument count
COUNTED_CODES = MEMBER_CODES | NAME_CODES | CALL_CODES
# The original run could not resolve an import: the stub's refs would have no trustworthy defining file.
UNRESOLVED_CODES = frozenset({"TS2307", "TS2792", "TS2306", "TS7016"})

_HEAD_RE = re.compile(r"\((\d+),(\d+)\): (error|warning|suggestion|message) (TS\d+): ")
_GLOBAL_RE = re.compile(r"^(error|warning|suggestion|message) (TS\d+): (.*)$")


@dataclass(frozen=True)
class TscMessage:
    """One ``--pretty false`` diagnostic as printed: 1-based line, 1-based UTF-16 column."""

    file: str | None  # relative to tsc's working directory, '/'-separated; None for a global diagnostic
    line: int
    column: int
    category: str
    code: str
    message: str


def _norm_path(path: str) -> str:
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path


def parse_tsc_output(output: str, known_files: Collection[str] = ()) -> list[TscMessage]:
    """Parse ``file(line,col): error TSxxxx: message`` lines (continuation lines, indented, join the message).

    A path may contain spaces, parentheses or non-ASCII characters: of all ``(l,c): category TSn: `` heads on a
    line, the first whose prefix is a known file wins (else the first one), so ``a(1,2).ts(3,4): error ...``
    parses right."""
    known = set(known_files)
    out: list[TscMessage] = []
    pending: dict[str, Any] | None = None

    def flush() -> None:
        nonlocal pending
        if pending is not None:
            out.append(TscMessage(**pending))
            pending = None

    for raw in output.split("\n"):
        line = raw.rstrip("\r")
        if not line:
            continue
        if line.startswith(" ") and pending is not None:
            pending["message"] += "\n" + line.strip()
            continue
        g = _GLOBAL_RE.match(line)
        if g:
            flush()
            pending = dict(file=None, line=0, column=0, category=g.group(1), code=g.group(2), message=g.group(3))
            continue
        heads = list(_HEAD_RE.finditer(line))
        if not heads:
            continue  # tsc prints nothing else with --pretty false; anything else is not a diagnostic
        chosen = heads[0]
        for h in heads:
            if _norm_path(line[: h.start()]) in known:
                chosen = h
                break
        flush()
        pending = dict(file=_norm_path(line[: chosen.start()]), line=int(chosen.group(1)),
                       column=int(chosen.group(2)), category=chosen.group(3), code=chosen.group(4),
                       message=line[chosen.end():])
    flush()
    return out


def is_syntactic(code: str) -> bool:
    """Parser diagnostics (TS1xxx), JavaScript-only syntax in a JS file (TS8xxx), JSX parse errors (TS17xxx)."""
    try:
        n = int(code.removeprefix("TS"))
    except ValueError:
        return False
    return 1000 <= n < 2000 or 8000 <= n < 9000 or 17000 <= n < 18000


def syntax_only(messages: list[TscMessage] | None) -> set[str]:
    """Files with diagnostics when tsc stopped after parsing (every located diagnostic is syntactic)."""
    located = [m for m in messages or [] if m.file is not None]
    if not located or not all(is_syntactic(m.code) for m in located):
        return set()
    return {m.file for m in located}
