"""What a file already knows, for the model-free predictability screens (``screens.py``): a small lexer for the
languages the builder supports, import lines, and ``FileIndex``/``FileKnowledge`` (where each word first occurs
in a file, and what the prompt before a cursor holds)."""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable

from benchsmith.enums import StrEnum
from benchsmith.records import Language


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
    kinds = _KIND_OF_GROUP
    return [Token(kinds[m.lastgroup], m.group(), m.start()) for m in rx.finditer(text)]


_KIND_OF_GROUP = {k.value: k for k in Tok}  # Tok(name) per token is an enum call: a third of a file's lexing


@functools.lru_cache(maxsize=None)
def _import_start(language: str) -> re.Pattern | None:
    """Where an import statement starts (``Analyzer.import_pattern``); it runs on while the brackets it opened stay
    open (``from m import (``, ``import {`` ... ``} from``, Go's ``import (``)."""
    from benchsmith.analyzers import analyzer_class

    try:
        pattern = analyzer_class(language).import_pattern
    except (KeyError, ValueError):
        return None
    return re.compile(pattern) if pattern else None


def import_lines(text: str, language: str) -> set[int]:
    """0-based numbers of the lines that belong to import statements."""
    start = _import_start(language)
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
_LITERALS = frozenset({Tok.STRING, Tok.NUMBER})
_PROSE = frozenset({Tok.STRING, Tok.COMMENT})
_MEMBER_LEADS = frozenset({".", ":", ">"})  # what a member follows: ``.``, ``::``, ``->``
COMMENT_LINES = 8  # lines above the cursor whose comments describe the code being written

_MAX_IDS = 0x10FFFF - 0x100


class FileIndex:
    """Where each word, literal and keyword argument of a file first occurs (its end offset), with and without
    import statements, and the file's code tokens, so that what the text before any cursor contains is a lookup.
    Built once per file and shared by its examples and the screens: lexing each prompt again would make a file
    with many examples cost its size times their number."""

    def __init__(self, text: str, language: str) -> None:
        # Built for every file a build screens: the loops below stay in comprehensions and run over the tokens
        # that matter (a build's screens cost is mostly this constructor).
        self.text = text
        self.language = language
        self.line_starts = [0, *itertools.accumulate(len(line) + 1 for line in text.split("\n")[:-1])]
        skip = import_lines(text, language)
        starts = self.line_starts
        # Imports sit at the top of a file: past the last one, no offset needs a line lookup.
        until = (starts[max(skip) + 1] if max(skip) + 1 < len(starts) else len(text)) if skip else 0

        def outside(off: int) -> bool:
            return off >= until or bisect.bisect_right(starts, off) - 1 not in skip

        words = list(_WORD.finditer(text))
        # reversed: the first occurrence is the one a dict built in order keeps last
        self.word_end_with_imports: dict[str, int] = {m.group(): m.end() for m in reversed(words)}
        self.word_end: dict[str, int] = {m.group(): m.end() for m in reversed(words) if outside(m.start())} \
            if skip else dict(self.word_end_with_imports)
        tokens = lex(text, language)
        self.literal_end: dict[str, int] = {
            t.text: t.end for t in reversed(tokens) if t.kind in _LITERALS and outside(t.start)}
        # words of comments and strings (not the module paths of imports)
        self.prose_end: dict[str, int] = {w: t.end for t in reversed(tokens) if t.kind in _PROSE and outside(t.start)
                                          for w in reversed(_WORD.findall(t.text))}
        self.code_tokens = code = [t for t in tokens if t.kind is not Tok.COMMENT]
        self.code_ends = [t.end for t in code]
        self.keyword_end: dict[str, int] = {}
        for i in keyword_positions(code):
            self.keyword_end.setdefault(code[i].text, code[i].end)
        texts = [t.text for t in code]
        self.member_end: dict[str, int] = {}
        for i in [k + 1 for k, prev in enumerate(texts[:-1]) if prev in _MEMBER_LEADS]:
            t = code[i]
            if t.kind is Tok.IDENT and is_member(texts, i) and outside(t.start):
                self.member_end.setdefault(t.text, t.end)
        if language == Language.PYTHON.value and skip:
            # ``from m import a, b`` reaches a and b through m, as ``m.a`` does
            from_import = False
            for i, t in enumerate(code):
                if t.start >= until:
                    break
                if outside(t.start):
                    from_import = False
                elif t.text in ("from", "import") and not text[text.rfind("\n", 0, t.start) + 1:t.start].strip():
                    from_import = t.text == "from"  # a statement's first word
                elif from_import and t.kind is Tok.IDENT and texts[i - 1] in ("import", ",", "("):
                    end = self.member_end.get(t.text)
                    if end is None or end > t.end:
                        self.member_end[t.text] = t.end
        self.ids: dict[str, int] = {}
        self.overflow = False
        self._nesting: tuple[list[int], list[int]] | None = None
        self._positions: dict[str, list[int]] | None = None
        # One character per distinct token, so that str.rfind searches token sequences in C.
        ids = self.ids
        for tx in texts:
            if tx not in ids and len(ids) < _MAX_IDS:
                ids[tx] = len(ids)
        if len(ids) >= _MAX_IDS and any(tx not in ids for tx in texts):
            self.overflow = True  # more distinct tokens than characters: the copy screen abstains
        self.encoded = "".join(chr(0x100 + ids[tx]) if tx in ids else "\x00" for tx in texts)

    def positions(self, token: str) -> list[int]:
        """Indices in ``code_tokens`` where ``token`` occurs, ascending (built on first use, for every token at
        once: the analogy screen looks up each cursor's anchor)."""
        if self._positions is None:
            self._positions = {}
            for i, t in enumerate(self.code_tokens):
                self._positions.setdefault(t.text, []).append(i)
        return self._positions.get(token, [])

    def nesting(self) -> tuple[list[int], list[int]]:
        """Each line's indent (-1 when blank) and the nearest earlier non-blank line indented less (-1 if none),
        computed once per file, so that finding the lines a cursor is nested in is a few hops, not a walk back
        over the whole file for every example."""
        if self._nesting is None:
            starts, text = self.line_starts, self.text
            indents, parents, stack = [], [], []  # stack: rows of strictly increasing indent
            for r, start in enumerate(starts):
                line = text[start:starts[r + 1] - 1] if r + 1 < len(starts) else text[start:]
                ind = _indent(line) if line.strip() else -1
                indents.append(ind)
                if ind < 0:
                    parents.append(-1)
                    continue
                while stack and indents[stack[-1]] >= ind:
                    stack.pop()
                parents.append(stack[-1] if stack else -1)
                stack.append(r)
            self._nesting = (indents, parents)
        return self._nesting

    def encode(self, token: str) -> str:
        i = self.ids.get(token)
        if i is None:
            if len(self.ids) >= _MAX_IDS:
                self.overflow = True  # more distinct tokens than characters: the copy screen abstains
                return "\x00"
            i = self.ids[token] = len(self.ids)
        return chr(0x100 + i)


class _IndexCache:
    """The files' indexes, most recently used last, up to ``max_chars`` characters of source in all: a build's
    released examples come in sampled order, so a cache of a few files rebuilt most indexes several times (160
    builds for 54 files on pythonnet's runtime, most of the screens' cost)."""

    max_chars = 2_000_000  # about 100 MB of indexes (50 bytes a character): a large repository's example files

    def __init__(self) -> None:
        self._cache: OrderedDict[tuple[str, str], FileIndex] = OrderedDict()
        self._chars = 0

    def __call__(self, text: str, language: str) -> FileIndex:
        key = (text, language)
        index = self._cache.get(key)
        if index is not None:
            self._cache.move_to_end(key)
            return index
        index = self._cache[key] = FileIndex(text, language)
        self._chars += len(text)
        while self._chars > self.max_chars and len(self._cache) > 1:
            (old, _), _ = self._cache.popitem(last=False)
            self._chars -= len(old)
        return index

    def cache_clear(self) -> None:
        self._cache.clear()
        self._chars = 0


_index = _IndexCache()


class FileKnowledge:
    """What the file's text before the cursor contains: words (identifiers, also inside comments and strings),
    literal tokens and keyword arguments, with and without import statements."""

    def __init__(self, index: FileIndex, cursor: int) -> None:
        self.index = index
        self.cursor = cursor
        self.language = index.language
        self._commented: set[str] | None = None

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
        """``name`` occurs before the cursor as a keyword argument, or a comment just above names it (``#
        field_transformer`` over ``@attrs.define(field_transformer=ft_hook2)``)."""
        return self.index.keyword_end.get(name, _NEVER) <= self.cursor or name in self.commented()

    def commented(self) -> set[str]:
        """Words of the comments on the last ``COMMENT_LINES`` lines up to the cursor: a comment there describes
        the code being written (strings do not: a test's parameter names are strings above it)."""
        if self._commented is None:
            text, starts = self.index.text, self.index.line_starts
            row = bisect.bisect_right(starts, self.cursor) - 1
            near = text[starts[max(0, row - COMMENT_LINES)]:self.cursor]
            self._commented = {w for t in lex(near, self.language) if t.kind is Tok.COMMENT
                               for w in _WORD.findall(t.text)}
        return self._commented

    def knows_member(self, name: str) -> bool:
        """``name`` occurs before the cursor as a member reached through a receiver (``x.name``, ``X::name``) or in
        prose (a comment, a docstring, a string: ``// defer the `complete` call``)."""
        idx = self.index
        return min(idx.member_end.get(name, _NEVER), idx.prose_end.get(name, _NEVER)) <= self.cursor

    def knows_sequence(self, tokens: list[Token]) -> bool:
        """The code before the cursor contains these tokens in a row (comments and whitespace aside)."""
        ids = self.index.ids
        if any(t.text not in ids for t in tokens):
            return False
        return "".join(chr(0x100 + ids[t.text]) for t in tokens) in self.code_prefix()

    def lead(self) -> list[str]:
        """The last two code tokens before the cursor (what a groundtruth's first token follows)."""
        end = bisect.bisect_right(self.index.code_ends, self.cursor)
        return [t.text for t in self.index.code_tokens[max(0, end - 2):end]]

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
        indents, parents = self.index.nesting()
        r = row - 1
        while r >= 0 and indent > 0:
            if indents[r] < 0:  # blank
                r -= 1
            elif indents[r] < indent:
                line = text[starts[r]:starts[r + 1] - 1]
                out.append(line)
                # A brace on its own line (Allman style) opens the block of the header just above, at its indent.
                indent = indents[r] + (line.strip() == "{")
                r -= 1
            else:  # every line between its parent and it is indented at least as much: skip them
                r = parents[r]
        return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def groundtruth_tokens(groundtruth: str, language: str) -> list[Token]:
    return list(_code_tokens(groundtruth, language))


# Every screen, and the score after them, reads the same groundtruth and the same few enclosing lines: lexed once.
@functools.lru_cache(maxsize=1024)
def _code_tokens(text: str, language: str) -> tuple[Token, ...]:
    return tuple(t for t in lex(text, language) if t.kind is not Tok.COMMENT)


@functools.lru_cache(maxsize=4096)
def lex_line(line: str, language: str) -> tuple[Token, ...]:
    """``lex`` of one line (an enclosing header, the cursor's line), cached: a file's examples share them."""
    return tuple(lex(line, language))


def first_name(tokens: Iterable[Token]) -> str | None:
    return next((t.text for t in tokens if t.kind is Tok.IDENT), None)


def keyword_positions(tokens: list[Token]) -> Iterable[int]:
    """Indices of names used as keyword arguments or named parameters: ``(`` or ``,``, a name, then ``=`` (not
    ``==`` or ``=>``).  Which keywords a callee takes is knowledge of its definition, so a name that occurs
    before the cursor only in another role does not make a keyword argument known."""
    for i in range(1, len(tokens) - 1):
        t = tokens[i]
        if t.kind is Tok.IDENT and tokens[i - 1].text in ("(", ",") and tokens[i + 1].text == "=" and (
                i + 2 >= len(tokens) or tokens[i + 2].text not in ("=", ">")):
            yield i


# Receivers whose members the file itself declares: ``self.name`` is known once ``def name`` is.
_OWN_RECEIVERS = frozenset({"this", "self", "cls", "super", "base"})


def is_member(texts: list[str], i: int) -> bool:
    """Whether ``texts[i]`` is reached through a receiver: after ``.``, ``::`` or ``->``."""
    prev = texts[i - 1] if i >= 1 else ""
    return prev == "." or (prev in (":", ">") and i >= 2 and texts[i - 2] == {":": ":", ">": "-"}[prev])


def is_foreign_member(texts: list[str], i: int) -> bool:
    """Whether ``texts[i]`` is a member reached through a receiver other than the file's own class (``this``,
    ``self``...): an API the file may call without declaring it."""
    if not is_member(texts, i):
        return False
    k = i - (1 if texts[i - 1] == "." else 2) - 1  # the receiver's last token
    return k < 0 or texts[k] not in _OWN_RECEIVERS


def _norm_name(name: str) -> str:
    return name.replace("_", "").lower()
