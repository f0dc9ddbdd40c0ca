"""Predictability screens that need no model: drop examples whose groundtruth the current file already gives away.

CrossCodeEval keeps an example only if cross-file context is needed to complete it; the paper screens with a 1B
code model.  These screens are deterministic, cheap proxies for "a competent developer could write the exact
groundtruth from the current file alone", each a small class with its own ``Reason``:

- ``InFileCopy``: an in-file copy predictor over tokens.  Before each groundtruth token, continue the token
  stream with what followed the most recent earlier occurrence of its longest repeated suffix (LZ77-style);
  predictable when that reproduces the groundtruth, whitespace and comments aside, except for at most a third of
  its tokens, which must occur before the cursor anyway (a repeated pattern with a known substitution).
- ``KnownVocabulary``: every identifier of the groundtruth already occurs in the file before the cursor (code,
  comments or strings; import statements aside), and every string or number literal occurs there as a literal
  (single-digit integers always count as known).  Nothing in the groundtruth is new, so the file, not another
  file, supplies it: this is what "the same call with the same arguments earlier, an obvious repeated pattern"
  looks like token by token.
- ``EnclosingEcho``: the groundtruth's first name echoes the name of an enclosing definition or of a line the
  cursor is nested in (``def test_http_date(value, expect): assert http.`` -> ``http_date(value) == expect``;
  ``if (isCallerSensitive(m)) modifiers |= ModifierCode.`` -> ``CALLER_SENSITIVE.value;``), compared
  case-insensitively without underscores, and the rest of the groundtruth is known vocabulary.
- ``ImportedVocabulary`` (strict): ``KnownVocabulary`` counting names that only occur in import statements.
- ``FirstNameSeen`` (strict): the groundtruth's first name (the cross-file API) already occurs before the cursor,
  imports aside.  Broad: an API the file already uses is rarely what makes an example hard.

Every screen reads only the prompt (the left context a model sees in the in-file setting) and the groundtruth;
none reads another file, and the right context only lets the examples of one file share one index
(``FileIndex``: where each word first occurs), which keeps a file's cost linear in its size.  Profiles (``ScreenProfile``) name the sets a build applies; the
figures that chose them are in ``bench/annotations.py``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from benchsmith.enums import StrEnum
from benchsmith.pipeline import Filter
from benchsmith.records import CompletionExample, Language, Reason, Stage

# ------------------------------------------------------------------------------------------------ a small lexer


class Tok(StrEnum):
    IDENT = "ident"
    STRING = "string"
    NUMBER = "number"
    COMMENT = "comment"
    PUNCT = "punct"


@dataclass(frozen=True)
class Token:
    kind: Tok
    text: str
    start: int = 0  # character offset in the lexed text

    @property
    def end(self) -> int:
        return self.start + len(self.text)


# One lexer for every language: screens compare token texts, so a shared approximation is enough and keeps new
# languages working without code here.  Strings are one token (prefixes, verbatim and template strings included),
# comments are kept apart so that they count as vocabulary but never as code.
_STRING_C = r'@?"(?:\\.|[^"\\\n])*"?|\'(?:\\.|[^\'\\\n])*\'?|`(?:\\.|[^`\\])*`?'
_STRING_PY = r'[rbuRBUfF]{0,2}(?:"""(?:\\.|[^\\])*?(?:"""|\Z)|\'\'\'(?:\\.|[^\\])*?(?:\'\'\'|\Z)|' \
             r'"(?:\\.|[^"\\\n])*"?|\'(?:\\.|[^\'\\\n])*\'?)'
_IDENT = r"[^\W\d][\w$]*|\$[\w$]*"
_NUMBER = r"\d[\w.]*"
_LEXERS = {
    "python": re.compile(rf"(?P<string>{_STRING_PY})|(?P<comment>#[^\n]*)|(?P<ident>{_IDENT})|(?P<number>{_NUMBER})"
                         r"|(?P<punct>\S)", re.S),
    "c": re.compile(rf"(?P<string>{_STRING_C})|(?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))|(?P<ident>{_IDENT})"
                    rf"|(?P<number>{_NUMBER})|(?P<punct>\S)", re.S),
}
_WORD = re.compile(_IDENT)


def lex(text: str, language: str) -> list[Token]:
    rx = _LEXERS["python" if language == Language.PYTHON.value else "c"]
    return [Token(Tok(m.lastgroup), m.group(), m.start()) for m in rx.finditer(text)]


# Where an import statement starts; it runs on while the brackets it opened stay open (``from m import (``,
# ``import {`` ... ``} from``, Go's ``import (``).
_IMPORT_START = {
    Language.PYTHON.value: re.compile(r"\s*(?:from\s+[\w.]+\s+)?import\b"),
    Language.JAVA.value: re.compile(r"\s*import\b"),
    Language.TYPESCRIPT.value: re.compile(r"\s*(?:import\b|export\s*(?:\*|\{|type\s*\{)[^;]*?\bfrom\b|export\s*\{\s*$)"),
    Language.JAVASCRIPT.value: re.compile(r"\s*(?:import\b|export\s*(?:\*|\{)[^;]*?\bfrom\b|export\s*\{\s*$)"),
    Language.CSHARP.value: re.compile(r"\s*(?:global\s+)?using\s+(?:static\s+)?(?:\w+\s*=\s*)?[\w.<>, ]+;"),
    Language.GO.value: re.compile(r"\s*import\b"),
}


def import_lines(text: str, language: str) -> set[int]:
    """0-based numbers of the lines that belong to import statements."""
    start = _IMPORT_START.get(language)
    if start is None:
        return set()
    out = set()
    depth = 0
    for i, line in enumerate(text.split("\n")):
        if depth > 0 or start.match(line):
            depth = max(0, depth + sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}"))
            out.add(i)
    return out


def strip_imports(prompt: str, language: str) -> str:
    """The prompt without its import statements (their lines become empty, so line numbers stay)."""
    skip = import_lines(prompt, language)
    return "\n".join("" if i in skip else line for i, line in enumerate(prompt.split("\n")))


# ------------------------------------------------------------------------------------------ what the file knows

_NEVER = float("inf")
_MAX_IDS = 0x10FFFF - 0x100


class FileIndex:
    """Where each word, literal and keyword argument of a file first occurs (its end offset), with and without
    import statements, and the file's code tokens, so that what the text before any cursor contains is a lookup.
    Built once per file and shared by its examples and the screens: lexing each prompt again would make a file
    with many examples cost its size times their number."""

    def __init__(self, text: str, language: str) -> None:
        self.text = text
        self.language = language
        self.line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        skip = import_lines(text, language)
        in_imports = (lambda off: bisect.bisect_right(self.line_starts, off) - 1 in skip) if skip else (lambda off: False)
        self.word_end: dict[str, int] = {}
        self.word_end_with_imports: dict[str, int] = {}
        for m in _WORD.finditer(text):
            self.word_end_with_imports.setdefault(m.group(), m.end())
            if not in_imports(m.start()):
                self.word_end.setdefault(m.group(), m.end())
        tokens = lex(text, language)
        self.literal_end: dict[str, int] = {}
        for t in tokens:
            if t.kind in (Tok.STRING, Tok.NUMBER) and not in_imports(t.start):
                self.literal_end.setdefault(t.text, t.end)
        self.code_tokens = [t for t in tokens if t.kind is not Tok.COMMENT]
        self.code_ends = [t.end for t in self.code_tokens]
        self.keyword_end: dict[str, int] = {}
        for i in keyword_positions(self.code_tokens):
            self.keyword_end.setdefault(self.code_tokens[i].text, self.code_tokens[i].end)
        self.ids: dict[str, int] = {}
        self.overflow = False
        # One character per distinct token, so that str.rfind searches token sequences in C.
        self.encoded = "".join(self.encode(t.text) for t in self.code_tokens)

    def encode(self, token: str) -> str:
        i = self.ids.get(token)
        if i is None:
            if len(self.ids) >= _MAX_IDS:
                self.overflow = True  # more distinct tokens than characters: the copy screen abstains
                return "\x00"
            i = self.ids[token] = len(self.ids)
        return chr(0x100 + i)


@lru_cache(maxsize=4)
def _index(text: str, language: str) -> FileIndex:
    return FileIndex(text, language)


class FileKnowledge:
    """What the file's text before the cursor contains: words (identifiers, also inside comments and strings),
    literal tokens and keyword arguments, with and without import statements."""

    def __init__(self, index: FileIndex, cursor: int) -> None:
        self.index = index
        self.cursor = cursor
        self.language = index.language

    @classmethod
    def of(cls, prompt: str, language: str, rest: str = "") -> "FileKnowledge":
        """``rest`` (the groundtruth and right context) only lets examples of one file share one index; nothing
        after the cursor is ever known."""
        return cls(_index(prompt + rest, language), len(prompt))

    def knows_word(self, word: str, with_imports: bool = False) -> bool:
        table = self.index.word_end_with_imports if with_imports else self.index.word_end
        return table.get(word, _NEVER) <= self.cursor

    def knows_literal(self, literal: str) -> bool:
        return self.index.literal_end.get(literal, _NEVER) <= self.cursor

    def knows_keyword(self, name: str) -> bool:
        return self.index.keyword_end.get(name, _NEVER) <= self.cursor

    def code_prefix(self) -> str:
        """The encoded code tokens that end before the cursor."""
        return self.index.encoded[: bisect.bisect_right(self.index.code_ends, self.cursor)]

    def outline(self) -> list[str]:
        """The cursor's line and the lines it is nested in: going back, each non-empty line indented less than
        every line seen so far (the enclosing ``if``/loop, method, class headers)."""
        text, starts = self.index.text, self.index.line_starts
        row = bisect.bisect_right(starts, self.cursor) - 1
        current = text[starts[row]:self.cursor]
        out = [current]
        indent = _indent(current) if current.strip() else len(current)
        for r in range(row - 1, -1, -1):
            if indent == 0:
                break
            line = text[starts[r]:starts[r + 1] - 1]
            if not line.strip():
                continue
            ind = _indent(line)
            if ind < indent:
                out.append(line)
                indent = ind
        return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def groundtruth_tokens(groundtruth: str, language: str) -> list[Token]:
    return [t for t in lex(groundtruth, language) if t.kind is not Tok.COMMENT]


def first_name(tokens: Iterable[Token]) -> str | None:
    return next((t.text for t in tokens if t.kind is Tok.IDENT), None)


_SMALL_INT = re.compile(r"\d")


def keyword_positions(tokens: list[Token]) -> Iterable[int]:
    """Indices of names used as keyword arguments or named parameters: ``(`` or ``,``, a name, then ``=`` (not
    ``==`` or ``=>``).  Which keywords a callee takes is knowledge of its definition, so a name that occurs
    before the cursor only in another role does not make a keyword argument known."""
    for i in range(1, len(tokens) - 1):
        t = tokens[i]
        if t.kind is Tok.IDENT and tokens[i - 1].text in ("(", ",") and tokens[i + 1].text == "=" and (
                i + 2 >= len(tokens) or tokens[i + 2].text not in ("=", ">")):
            yield i


def unknown_tokens(tokens: list[Token], known: FileKnowledge, with_imports: bool = False) -> list[str]:
    """Tokens of the groundtruth the file before the cursor does not contain."""
    missing = [tokens[i].text for i in keyword_positions(tokens) if not known.knows_keyword(tokens[i].text)]
    for t in tokens:
        if t.kind is Tok.IDENT and not known.knows_word(t.text, with_imports):
            missing.append(t.text)
        elif t.kind is Tok.STRING and not known.knows_literal(t.text):
            missing.append(t.text)
        elif t.kind is Tok.NUMBER and not known.knows_literal(t.text) and not _SMALL_INT.fullmatch(t.text):
            missing.append(t.text)
    return missing


def _norm_name(name: str) -> str:
    return name.replace("_", "").lower()


# ------------------------------------------------------------------------------------------------- the screens


class ScreenName(StrEnum):
    COPY = "copy"
    VOCABULARY = "vocabulary"
    ECHO = "echo"
    IMPORTED_VOCABULARY = "imported_vocabulary"
    FIRST_NAME = "first_name"


@dataclass(frozen=True)
class Verdict:
    reason: Reason
    detail: str


class Screen(Filter[CompletionExample]):
    """A filter that drops an example the current file predicts.  ``judge`` decides from the prompt and the
    groundtruth alone (the right context only lets a file's examples share one ``FileIndex``); subclasses
    implement ``_judge`` on the ``FileKnowledge`` at the cursor."""

    stage = Stage.SCREEN
    name: ScreenName
    reason: Reason

    def check(self, ex: CompletionExample):
        verdict = self.judge(ex.prompt, ex.groundtruth, ex.metadata.language, ex.right_context)
        return None if verdict is None else (verdict.reason, verdict.detail)

    def judge(self, prompt: str, groundtruth: str, language: str, right_context: str = "") -> Verdict | None:
        tokens = groundtruth_tokens(groundtruth, language)
        if not tokens:
            return None
        known = FileKnowledge.of(prompt, language, groundtruth + right_context)
        detail = self._judge(prompt, groundtruth, tokens, known)
        return None if detail is None else Verdict(self.reason, detail)

    def _judge(self, prompt: str, groundtruth: str, tokens: list[Token], known: FileKnowledge) -> str | None:
        raise NotImplementedError  # pragma: no cover - interface


class InFileCopy(Screen):
    """An in-file copy predictor over tokens (comments and whitespace never matter): before each token of the
    groundtruth, take the longest suffix of the token stream so far (the prompt, then the groundtruth up to that
    token) that occurred earlier, and predict the token that followed its most recent occurrence.  Predictable
    when the predictions are right except for at most a third of the tokens (at least one may differ), and
    every token it gets wrong occurs before the cursor anyway: a repeated pattern with a known substitution
    (``state = State.IN_QUOTE;`` above ``state = State.IN_SQUOTE;``)."""

    name = ScreenName.COPY
    reason = Reason.PREDICTABLE_BY_COPY
    max_match = 256  # tokens of suffix looked for; longer repeats predict the same and cost time
    max_miss_share = 1 / 3

    def _judge(self, prompt, groundtruth, tokens, known):
        text = known.code_prefix()
        if not text or known.index.overflow:
            return None
        code = known.index.encode
        allowed = max(1, int(len(tokens) * self.max_miss_share))
        misses: list[Token] = []
        for tok in tokens:
            nxt = _copy_next(text, self.max_match)
            c = code(tok.text)
            if nxt is None or text[nxt] != c:
                misses.append(tok)
                if len(misses) > allowed:
                    return None
            text += c
        if unknown_tokens(misses, known):
            return None
        if not misses:
            return "copying what followed the earlier repeats gives the groundtruth"
        return f"copying what followed the earlier repeats gives the groundtruth but {len(misses)} of " \
               f"{len(tokens)} tokens, and those occur before the cursor"


def _copy_next(text: str, max_match: int) -> int | None:
    """Position of the character that followed the most recent earlier occurrence of the longest repeated suffix
    of ``text``; None when not even the last character occurred before."""
    n = len(text)
    # Occurring earlier is monotone in the suffix length (a suffix of a repeated suffix repeats too): binary search.
    lo, hi, at = 0, min(n - 1, max_match), -1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        pos = text.rfind(text[n - mid:], 0, n - 1)
        if pos >= 0:
            lo, at = mid, pos
        else:
            hi = mid - 1
    if lo == 0:
        return None
    return text.rfind(text[n - lo:], 0, n - 1) + lo


class KnownVocabulary(Screen):
    """Every name and literal of the groundtruth occurs before the cursor, imports aside: nothing in it is new."""

    name = ScreenName.VOCABULARY
    reason = Reason.GROUNDTRUTH_VOCABULARY_IN_FILE
    with_imports = False

    def _judge(self, prompt, groundtruth, tokens, known):
        if not any(t.kind is Tok.IDENT for t in tokens):
            return None
        if unknown_tokens(tokens, known, self.with_imports):
            return None
        where = "before the cursor" if not self.with_imports else "before the cursor, imports included"
        return f"every name and literal of the groundtruth occurs {where}"


class ImportedVocabulary(KnownVocabulary):
    """``KnownVocabulary`` with the names of import statements counting (an imported, still unused name)."""

    name = ScreenName.IMPORTED_VOCABULARY
    reason = Reason.GROUNDTRUTH_VOCABULARY_WITH_IMPORTS
    with_imports = True


class EnclosingEcho(Screen):
    """The first name repeats a name on the cursor's line or a line it is nested in (the method header, the
    ``if`` around it), or is what a test, predicate or accessor there is named after (``test_http_date`` ->
    ``http_date``, ``isCallerSensitive`` -> ``CALLER_SENSITIVE``, compared without case and underscores), and
    the rest of the groundtruth occurs before the cursor."""

    name = ScreenName.ECHO
    reason = Reason.ECHOES_ENCLOSING_NAME
    prefixes = ("test", "is", "get", "set", "has")
    min_chars = 4  # after a prefix, shorter names (id, x) echo by chance

    def _judge(self, prompt, groundtruth, tokens, known):
        first = first_name(tokens)
        if first is None:
            return None
        key = _norm_name(first)
        host = None
        for line in known.outline():
            for t in lex(line, known.language):
                if t.kind is Tok.IDENT and (t.text == first or (
                        len(key) >= self.min_chars and _norm_name(t.text) in {p + key for p in self.prefixes})):
                    host = t.text
                    break
            if host is not None:
                break
        if host is None:
            return None
        rest = tokens[next(i for i, t in enumerate(tokens) if t.kind is Tok.IDENT) + 1:]
        if unknown_tokens(rest, known):
            return None
        return f"{first!r} echoes {host!r} on an enclosing line and the rest of the groundtruth occurs before the " \
               "cursor"


class FirstNameSeen(Screen):
    """The groundtruth's first name, the cross-file API, already occurs before the cursor, imports aside."""

    name = ScreenName.FIRST_NAME
    reason = Reason.FIRST_NAME_IN_FILE

    def _judge(self, prompt, groundtruth, tokens, known):
        first = first_name(tokens)
        if first is None or not known.knows_word(first):
            return None
        return f"{first!r} already occurs before the cursor (imports aside)"


SCREENS: dict[ScreenName, type[Screen]] = {
    ScreenName.COPY: InFileCopy,
    ScreenName.VOCABULARY: KnownVocabulary,
    ScreenName.ECHO: EnclosingEcho,
    ScreenName.IMPORTED_VOCABULARY: ImportedVocabulary,
    ScreenName.FIRST_NAME: FirstNameSeen,
}


class ScreenProfile(StrEnum):
    """Which screens a build applies.  ``none``: the paper's filters only (replication); ``default``: the screens
    that are precise on the annotated development set; ``strict``: all of them."""

    NONE = "none"
    DEFAULT = "default"
    STRICT = "strict"


PROFILES: dict[ScreenProfile, tuple[ScreenName, ...]] = {
    ScreenProfile.NONE: (),
    ScreenProfile.DEFAULT: (ScreenName.COPY, ScreenName.VOCABULARY, ScreenName.ECHO),
    ScreenProfile.STRICT: (ScreenName.COPY, ScreenName.VOCABULARY, ScreenName.ECHO, ScreenName.IMPORTED_VOCABULARY,
                           ScreenName.FIRST_NAME),
}


def profile_screens(profile: ScreenProfile | str, counter=None) -> list[Screen]:
    """The screens of ``profile`` in the order they apply (an example dropped by one is counted under its
    reason only)."""
    return [SCREENS[name](counter) for name in PROFILES[ScreenProfile(profile)]]


def judge_all(prompt: str, groundtruth: str, language: str, right_context: str = "") -> dict[ScreenName, Verdict | None]:
    """Every screen's verdict on one example, each on its own (for audits and measurements)."""
    return {name: cls().judge(prompt, groundtruth, language, right_context) for name, cls in SCREENS.items()}


def profile_drops(verdicts: dict[ScreenName, Verdict | None], profile: ScreenProfile | str) -> ScreenName | None:
    """The screen of ``profile`` that drops an example with these verdicts (the first in profile order)."""
    return next((name for name in PROFILES[ScreenProfile(profile)] if verdicts.get(name) is not None), None)
