"""Predictability from the file alone, as classes of pattern rather than examples (issue 25), for ``screens.py``:

- ``analogy``: the groundtruth repeats an earlier statement of the file (the same token before it, then token
  for token) up to a consistent substitution, and every new name or literal it needs is explained by the file:
  it occurs before the cursor, or it is the earlier one with some of its sub-words (camelCase, snake_case,
  ``$Zod`` parts, words inside strings) replaced by sub-words that the cursor's neighbourhood names (its line, the
  lines it is nested in, the lines just above: ``case``/``if`` labels, the enclosing method's name, a comment)
  or by the next step of an obvious sequence (``start`` -> ``end``, ``lhs`` -> ``rhs``, ``seconds`` ->
  ``millis``, 502 -> 503).  This covers the same call with the same arguments earlier, sibling checks and switch
  arms of one pattern, and overloads that mirror the one above.
- ``unknown_tokens``: what in a groundtruth the file before the cursor does not know, roles counted (a member of
  another receiver, a keyword argument, type arguments: ``screens.KnownVocabulary``).
- ``surprisal``: how many bits per token the groundtruth costs under a token n-gram/copy model built from the
  prompt alone (interpolated orders 0..4 of the prompt's code tokens, an escape for tokens never seen).  Cheap,
  deterministic, and a score a user can cut on knowingly.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass
from typing import Iterable

from benchsmith.builders.cceval.screen_text import (FileKnowledge, Tok, Token, groundtruth_tokens,
                                                    is_foreign_member, keyword_positions)
from benchsmith.records import Language

# ------------------------------------------------------------------------------------------- what is new

_SMALL_INT = re.compile(r"\d")
# Keywords every file of its language can write without having written them before (``new X<>(this)``): like
# single digits they never make a groundtruth new.  Only those of the supported languages' grammar.
_KEYWORDS = {
    "python": frozenset({"self", "cls", "None", "True", "False", "not", "and", "or", "in", "is", "await", "return",
                         "lambda"}),
    "c": frozenset({"this", "super", "true", "false", "null", "new", "return", "typeof", "await"}),
    Language.CSHARP.value: frozenset({"this", "base", "true", "false", "null", "new", "return", "typeof", "await",
                                      "var"}),
    Language.TYPESCRIPT.value: frozenset({"this", "super", "true", "false", "null", "undefined", "new", "return",
                                          "typeof", "await"}),
}
_KEYWORDS[Language.JAVASCRIPT.value] = _KEYWORDS[Language.TYPESCRIPT.value]


def unknown_tokens(tokens: list[Token], known: FileKnowledge, with_imports: bool = False, start: int = 0) -> list[str]:
    """Tokens of the groundtruth (``tokens``, from ``start`` on; those before it are context) the file before the
    cursor does not contain.  A member of another receiver (``typeFactory.populateMethod``, ``renderer.render``)
    counts as known only where the file reached a member of that name through a receiver or named it in prose: a
    local variable or a declaration in this class of the same name says nothing about another type's API.  Type
    arguments (``Subject<any>``) are known only as the whole instantiation: each name on its own does not say
    which the file wants."""
    texts = known.lead() + [t.text for t in tokens]
    off = len(texts) - len(tokens)
    missing = [tokens[i].text for i in keyword_positions(tokens) if i >= start
               and not known.knows_keyword(tokens[i].text)]
    lang = known.language
    keywords = _KEYWORDS.get(lang) or _KEYWORDS["python" if lang == Language.PYTHON.value else "c"]
    for i in range(start, len(tokens)):
        t = tokens[i]
        if t.kind is Tok.IDENT and t.text not in keywords and not known.knows_word(t.text, with_imports):
            missing.append(t.text)
        elif t.kind is Tok.IDENT and is_foreign_member(texts, off + i) and not known.knows_member(t.text):
            missing.append(t.text)
        elif t.kind is Tok.STRING and not known.knows_literal(t.text):
            missing.append(t.text)
        elif t.kind is Tok.NUMBER and not known.knows_literal(t.text) and not _SMALL_INT.fullmatch(t.text):
            missing.append(t.text)
    if lang != Language.PYTHON.value:
        missing += [" ".join(t.text for t in tokens[i:j]) for i, j in type_arguments(tokens) if i >= start
                    and not known.knows_sequence(tokens[i:j])]
    return missing


def type_arguments(tokens: list[Token]) -> Iterable[tuple[int, int]]:
    """Spans ``[i, j)`` of generic instantiations ``Name<...>`` closed within ``tokens`` (an unclosed ``<`` is a
    comparison or a type the groundtruth leaves open; Java's diamond ``<>`` leaves the choice to the compiler)."""
    for i in range(len(tokens) - 2):
        if tokens[i].kind is not Tok.IDENT or tokens[i + 1].text != "<" or tokens[i + 2].text == ">":
            continue
        depth = 0
        for j in range(i + 1, len(tokens)):
            text = tokens[j].text
            if text in (";", "{", "}") or (text == ">" and tokens[j - 1].text == "="):
                break
            depth += (text == "<") - (text == ">")
            if depth == 0:
                yield i, j + 1
                break


# ------------------------------------------------------------------------------------------------ sub-words

_SUBWORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def subwords(text: str) -> list[str]:
    """``setMaxZoomLevel`` -> set max zoom level; ``"/post/"`` -> post; ``$ZodULID`` -> zod ulid; ``HTTP_2`` ->
    http 2 (lower-cased: an analogy does not care about case conventions)."""
    return [w.lower() for w in _SUBWORD.findall(text)]


# Steps of sequences every developer completes without reading another file: the second half of a pair, the next
# unit of time.  General vocabulary of code, not names from any repository; both directions count.
_SEQUENCES: tuple[tuple[str, ...], ...] = (
    ("start", "end"), ("start", "stop"), ("begin", "end"), ("first", "last"), ("min", "max"), ("minimum", "maximum"),
    ("lhs", "rhs"), ("left", "right"), ("top", "bottom"), ("x", "y", "z"), ("width", "height"), ("open", "close"),
    ("get", "set"), ("push", "pop"), ("head", "tail"), ("key", "value"), ("keys", "values"), ("in", "out"),
    ("input", "output"), ("read", "write"), ("reader", "writer"), ("prev", "next"), ("previous", "next"),
    ("before", "after"), ("upper", "lower"), ("old", "new"), ("src", "dst"), ("source", "target"), ("from", "to"),
    ("row", "col"), ("row", "column"), ("rows", "cols"), ("horizontal", "vertical"), ("true", "false"),
    ("enable", "disable"), ("enabled", "disabled"), ("show", "hide"), ("major", "minor"), ("inc", "dec"),
    ("increment", "decrement"), ("up", "down"), ("north", "south", "east", "west"), ("lat", "lng"), ("lat", "lon"),
    ("latitude", "longitude"), ("encode", "decode"), ("serialize", "deserialize"), ("lock", "unlock"),
    ("load", "save"), ("load", "store"), ("request", "response"), ("req", "res"), ("send", "receive"),
    ("on", "off"), ("yes", "no"), ("success", "failure"), ("pre", "post"), ("add", "sub"), ("inner", "outer"),
    ("years", "months", "days", "hours", "minutes", "seconds", "millis", "micros", "nanos"),
    ("year", "month", "day", "hour", "minute", "second", "milli", "micro", "nano"),
    ("int", "long", "float", "double"), ("byte", "short", "int", "long"),
)
_NEXT: dict[str, frozenset[str]] = {}
for _seq in _SEQUENCES:
    for _a, _b in zip(_seq, _seq[1:]):  # neighbours only: seconds -> millis is a step, seconds -> nanos is not
        _NEXT[_a] = _NEXT.get(_a, frozenset()) | {_b}
        _NEXT[_b] = _NEXT.get(_b, frozenset()) | {_a}


def _named(word: str, near: set[str]) -> bool:
    """``word`` or its singular/plural is among ``near`` (``fields`` after a loop over ``field``)."""
    return word in near or word.removesuffix("s") in near or word + "s" in near


def _kept_most(old: str, new: str) -> bool:
    """A substituted token keeps at least as many of its sub-words as it changes (testMethodInt -> testMethodObject,
    not add -> remove)."""
    a, b = subwords(old), subwords(new)
    same = sum(1 for x, y in zip(a, b) if x == y)
    return len(a) == len(b) and same >= len(a) - same


def _sequence_step(old: str, new: str) -> bool:
    if new in _NEXT.get(old, ()):
        return True
    return old.isdigit() and new.isdigit() and len(old) < 10 and abs(int(new) - int(old)) == 1


# --------------------------------------------------------------------------------------------------- analogy

_KINDS = (Tok.IDENT, Tok.STRING, Tok.NUMBER)


@dataclass(frozen=True)
class Analogy:
    """An earlier occurrence that, with ``substitutions``, gives the groundtruth."""

    line: int  # 0-based line of the earlier occurrence
    substitutions: tuple[tuple[str, str], ...]

    def describe(self) -> str:
        if not self.substitutions:
            return f"the groundtruth occurs verbatim at line {self.line + 1} after the same token"
        subs = ", ".join(f"{a} -> {b}" for a, b in self.substitutions)
        return f"line {self.line + 1} gives the groundtruth with {subs}"


class AnalogyFinder:
    """Searches the prompt's code tokens, most recent first, for an earlier statement that the groundtruth repeats
    with a consistent, explained substitution."""

    window = 4000  # prompt tokens searched back from the cursor: analogies are local, and the cost stays bounded
    max_tokens = 48  # longer groundtruths are not one repeated pattern
    max_substitutions = 2  # distinct token substitutions
    neighbourhood_lines = 3  # non-empty lines above the cursor that may name a substituted sub-word

    def __init__(self, known: FileKnowledge) -> None:
        self.known = known
        self._near: set[str] | None = None
        self._explained: dict[tuple[str, str], bool] = {}  # the same pair recurs in many earlier windows

    def near_subwords(self) -> set[str]:
        """Sub-words of the cursor's line, the lines it is nested in and the last few non-empty lines (comments
        and strings included: ``// XID`` above a type alias names the next case)."""
        if self._near is None:
            idx = self.known.index
            lines = list(self.known.outline())
            text = idx.text[: self.known.cursor]
            above = [ln for ln in text.split("\n")[-1 - 4 * self.neighbourhood_lines:-1] if ln.strip()]
            lines += above[-self.neighbourhood_lines:]
            self._near = {w for ln in lines for w in subwords(ln)}
        return self._near

    def cursor_line_subwords(self) -> set[str]:
        return set(subwords(self.known.outline()[0]))

    def explained(self, old: Token, new: Token, foreign: bool = False) -> bool:
        """Whether the file explains writing ``new`` where the earlier statement had ``old``: a name the file
        knows, or the old token with sub-words replaced in place (the rest of it kept) by ones the neighbourhood
        names or by the next step of a sequence.  A new string literal is data, not a pattern, unless the
        statement being written names its new words (``get = r.Rule("/get/"``).  ``foreign``: ``new`` is a member
        of another receiver (``hostReferences.remove``), whose name is that type's API: known only where the file
        reached it through a receiver or named it in prose (``FileKnowledge.knows_member``), not where it only
        wrote the word in another role (its own ``remove(250)``)."""
        if foreign:
            if self.known.knows_member(new.text):
                return True
        elif new.kind is Tok.IDENT and self.known.knows_word(new.text):
            return True
        if new.kind is Tok.NUMBER and self.known.knows_literal(new.text):
            return True
        a, b = subwords(old.text), subwords(new.text)
        if not b or len(a) != len(b):
            return False
        changed = [(x, y) for x, y in zip(a, b) if x != y]
        if not changed or len(changed) > 2:
            return False
        near = self.near_subwords() if new.kind is Tok.IDENT else self.cursor_line_subwords()
        return all(_named(y, near) or _sequence_step(x, y) for x, y in changed)

    def find(self, tokens: list[Token]) -> Analogy | None:
        idx, known = self.known.index, self.known
        n = len(tokens)
        if not n or n > self.max_tokens or idx.overflow:
            return None
        code = idx.code_tokens
        end = _tokens_before(idx.code_ends, known.cursor)
        if end == 0:
            return None
        anchor = code[end - 1].text
        gt = [t.text for t in tokens]
        texts = known.lead() + gt
        off = len(texts) - n
        foreign = {i for i in range(n) if tokens[i].kind is Tok.IDENT and is_foreign_member(texts, off + i)}
        # the earlier occurrences of the anchor, most recent first, whose statement fits before the cursor
        where = idx.positions(anchor)
        lo, hi = bisect.bisect_left(where, max(1, end - self.window) - 1), bisect.bisect_right(where, end - n - 1)
        for j in (p + 1 for p in reversed(where[lo:hi])):
            if code[j].kind is not tokens[0].kind:
                continue
            subs: dict[str, str] = {}
            ok = True
            for i in range(n):
                old, new = code[j + i], tokens[i]
                if old.text == gt[i]:
                    continue
                if old.kind is not new.kind or old.kind not in _KINDS:
                    ok = False
                    break
                prev = subs.get(old.text)
                if prev is None:
                    key = (old.text, new.text, i in foreign)
                    if key not in self._explained:
                        self._explained[key] = self.explained(old, new, i in foreign)
                    if len(subs) >= self.max_substitutions or not self._explained[key]:
                        ok = False
                        break
                    subs[old.text] = new.text
                elif prev != new.text:
                    ok = False
                    break
            # A substitution must leave most of the statement, or of each token it changes, as it was: a one-token
            # groundtruth that only shares its anchor with an earlier one is no pattern.
            if ok and (len(subs) * 2 <= sum(1 for t in tokens if t.kind in _KINDS)
                       or all(_kept_most(a, b) for a, b in subs.items())):
                line = _line_of(idx.line_starts, code[j].start)
                return Analogy(line, tuple(subs.items()))
        return None


def _tokens_before(ends: list[int], cursor: int) -> int:
    return bisect.bisect_right(ends, cursor)


def _line_of(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset) - 1


# ------------------------------------------------------------------------------------------------ surprisal

_MAX_ORDER = 4
_MAX_SCORED = 256  # groundtruth tokens scored: a hostile split's megabyte groundtruth costs no more than a line
_ESCAPE_BITS = 16.0  # a token the prompt never contains: about one choice among the 65k a model might write
_LAMBDA = 0.5  # weight of a longer context against the shorter ones (Jelinek-Mercer, fixed: deterministic)


def surprisal(tokens: list[Token], known: FileKnowledge) -> float | None:
    """Bits per token of the groundtruth under an interpolated n-gram model of the prompt's code tokens (orders
    0..4; each order's estimate is what followed the earlier occurrences of the last k tokens).  The groundtruth's
    own tokens join the history as they are read, which is what makes it a copy model too."""
    idx = known.index
    if not tokens or idx.overflow:
        return None
    history = known.code_prefix()
    if not history:
        return None
    total = 0.0
    tokens = tokens[:_MAX_SCORED]
    # The prompt's own vocabulary, not the shared index's: that one grows with whatever groundtruth tokens earlier
    # examples encoded, which would make a score depend on the order examples come in.
    vocabulary = len(set(history))
    for tok in tokens:
        c = idx.encode(tok.text)
        p = 0.0
        # order 0: the token's frequency in the prompt, add-one smoothed over the prompt's vocabulary
        seen = history.count(c)
        if seen:
            p = seen / (len(history) + vocabulary)
        for k in range(1, min(_MAX_ORDER, len(history)) + 1):
            ctx = history[-k:]
            occurrences = history.count(ctx, 0, len(history) - 1)
            if not occurrences:
                break
            p = _LAMBDA * history.count(ctx + c) / occurrences + (1 - _LAMBDA) * p
        total += -math.log2(p) if p > 0 else _ESCAPE_BITS
        history += c
    return total / len(tokens)


def code_tokens(groundtruth: str, language: str) -> list[Token]:
    return groundtruth_tokens(groundtruth, language)
