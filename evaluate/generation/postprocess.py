"""Named post-processing rules for completions, applied after any backend (hf, vllm, openai) the same way.

A fill-in-the-middle completion does not end where a left-to-right one does: the model emits its end-of-middle
token (which a backend may return as text or drop), a line-completion model keeps writing the next statements,
and a model that has "filled" the hole often goes on to rewrite the suffix it was shown.  Each rule below cuts one
of those and is recorded per prediction (``applied``: the rules that changed the text), so a score traces back
to the exact text the model produced and the rules that shortened it.

* ``end_of_middle``: cut at the first of the template's end strings (end-of-middle token, EOS, sentinels).
* ``statement_end``: for line completion, cut after the first non-blank line at which the brackets opened in
  the completion are closed again (a call spread over lines stays whole).
* ``suffix_repeat``: cut at the first line start from which the completion repeats the suffix's first non-blank
  line (at least ``MIN_ANCHOR`` characters, so a lone ``}`` never cuts).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Sequence

MIN_ANCHOR = 6  # characters of the suffix's first line needed before suffix_repeat may cut
_OPEN, _CLOSE = "([{", ")]}"


class Rule(str, enum.Enum):
    END_OF_MIDDLE = "end_of_middle"
    STATEMENT_END = "statement_end"
    SUFFIX_REPEAT = "suffix_repeat"


ORDER = (Rule.END_OF_MIDDLE, Rule.SUFFIX_REPEAT, Rule.STATEMENT_END)  # the order rules run in


def parse_rules(spec: str) -> tuple[Rule, ...]:
    """``a,b`` -> rules in ``ORDER`` (``none`` or empty -> no rule); unknown names are a ValueError."""
    names = [n.strip() for n in spec.split(",") if n.strip() and n.strip() != "none"]
    try:
        chosen = {Rule(n) for n in names}
    except ValueError:
        raise ValueError(f"unknown post-processing rule in {spec!r}; choose from "
                         f"{', '.join(r.value for r in Rule)} or none") from None
    return tuple(r for r in ORDER if r in chosen)


@dataclass(frozen=True)
class Processed:
    text: str
    applied: tuple[Rule, ...] = field(default=())  # the rules that changed the text


def end_of_middle(text: str, end_tokens: Sequence[str]) -> str:
    cut = len(text)
    for tok in end_tokens:
        i = text.find(tok) if tok else -1
        if i != -1:
            cut = min(cut, i)
    return text[:cut]


def statement_end(text: str) -> str:
    depth, start = 0, 0
    while start < len(text):
        nl = text.find("\n", start)
        line = text[start:] if nl == -1 else text[start:nl]
        for ch in line:
            if ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                depth -= 1
        if line.strip() and depth <= 0:
            return text if nl == -1 else text[:nl]
        if nl == -1:
            break
        start = nl + 1
    return text


def suffix_repeat(text: str, suffix: str) -> str:
    anchor = next((ln.strip() for ln in suffix.splitlines() if ln.strip()), "")
    if len(anchor) < MIN_ANCHOR:
        return text
    start = 0
    while start <= len(text):
        if text[start:].lstrip(" \t").startswith(anchor):
            return text[:start]
        nl = text.find("\n", start)
        if nl == -1:
            break
        start = nl + 1
    return text


def apply(text: str, rules: Sequence[Rule], end_tokens: Sequence[str] = (), suffix: str = "") -> Processed:
    applied: list[Rule] = []
    for rule in rules:
        if rule is Rule.END_OF_MIDDLE:
            new = end_of_middle(text, end_tokens)
        elif rule is Rule.SUFFIX_REPEAT:
            new = suffix_repeat(text, suffix)
        else:
            new = statement_end(text)
        if new != text:
            applied.append(rule)
        text = new
    return Processed(text, tuple(applied))
