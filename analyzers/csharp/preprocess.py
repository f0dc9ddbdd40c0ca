"""The C# preprocessor, evaluated before anything parses a file, so tree-sitter reads what the compiler reads.

tree-sitter-c-sharp parses both branches of an ``#if``/``#else`` (and fails where they only make sense apart:
two base lists, an unbalanced brace per branch), while the compiler reads one.  ``preprocess`` evaluates the
conditional directives the way the compiler does (``#if/#elif/#else/#endif`` over ``&&``, ``||``, ``!``, ``==``,
``!=``, parentheses, ``true``/``false``; ``#define``/``#undef`` before the first token) and blanks, in a copy of the
same length:
- the inactive sections (the compiler skips them unread: only lines starting with ``#`` count there);
- every directive line it knows: the conditional ones (they are evaluated; nothing is left to the compiler),
  ``#region``/``#endregion``, ``#pragma``, ``#nullable`` (mcs, C# 7, knows no ``#nullable``), ``#error`` and
  ``#warning`` (they guard configurations we do not build), and ``#line`` (it would remap the compiler's
  positions, and a diagnostic placed in another line or file loses its reference without a record).
Blanking turns each character into one space and keeps every line break (``\\r``, ``\\n``, U+0085, U+2028,
U+2029), so character offsets, line numbers and the columns of every other line stay those of the original;
``tree_bytes`` gives the UTF-8 twin for tree-sitter (each blanked character becomes as many spaces as its UTF-8
bytes), whose byte offsets are those of the original file's bytes.

Directives are found only where the compiler finds them: at the start of a line that is not inside a block
comment or a multi-line string (verbatim, raw, interpolated); a small lexer follows those across lines.

A file the compiler would reject (an ``#endif`` without ``#if``, an expression it cannot read, ``#define`` after
code, an ``#if`` never closed) is left as it is with ``error`` set: the compiler then reports it, and the analyzer
records the file, instead of analysing a guess.

Defines: the symbols the build would define, ``default_defines`` (documented there) from a project file's
properties read as data (``csproj.py``-style text, never evaluated by msbuild).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchsmith.analyzers.csharp.conditions import PreprocessError, evaluate, strip_comment

LINE_BREAKS = frozenset("\r\n\u0085\u2028\u2029")
_BREAK_RE = re.compile(r"\r\n|[\r\n\u0085\u2028\u2029]")
# the directives blanked once evaluated or not needed by the compiler we run (see the module docstring)
CONDITIONAL = frozenset({"if", "elif", "else", "endif"})
BLANKED = CONDITIONAL | {"define", "undef", "region", "endregion", "pragma", "nullable", "line", "error",
                         "warning"}
_INTEREST = re.compile("[/\"'@$\r\n\u0085\u2028\u2029]")
_ANY_DIRECTIVE = re.compile(r"^[ \t\v\f\u00a0\ufeff]*#", re.M)
_SPACE = frozenset(" \t\v\f\ufeff\u00a0")
_DIRECTIVE = re.compile(r"[ \t\v\f\u00a0\ufeff]*#[ \t]*([A-Za-z]+)")


@dataclass(frozen=True)
class Preprocessed:
    original: str
    text: str  # same length as ``original``; blanked spans are spaces, line breaks kept
    blanked: tuple[tuple[int, int], ...]  # character spans blanked, in order
    defines: frozenset[str]  # the symbols defined at the end of the file
    error: str = ""  # why the file was left as it was (the compiler will report it)
    inactive_lines: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.blanked)

    def tree_bytes(self) -> bytes:
        """UTF-8 of ``text`` with each blanked character as many spaces as its UTF-8 bytes in the original: byte
        offsets of a tree parsed from it are byte offsets of the original file."""
        if not self.blanked:
            return self.original.encode("utf-8")
        if self.original.isascii():
            return self.text.encode("ascii")
        parts: list[bytes] = []
        at = 0
        for s, e in self.blanked:
            parts.append(self.original[at:s].encode("utf-8"))
            parts.append(_blank_bytes(self.original[s:e]))
            at = e
        parts.append(self.original[at:].encode("utf-8"))
        return b"".join(parts)


def _blank(seg: str) -> str:
    return "".join(ch if ch in LINE_BREAKS else " " for ch in seg)


def _blank_bytes(seg: str) -> bytes:
    return b"".join(ch.encode("utf-8") if ch in LINE_BREAKS else b" " * len(ch.encode("utf-8")) for ch in seg)


# ----------------------------------------------------------------------------------------------------------------
# A lexer just good enough to know where lines start outside comments and strings
# ----------------------------------------------------------------------------------------------------------------


class _Lexer:
    """Skips one token of code at a time; multi-line tokens (block comments, verbatim / raw / interpolated strings)
    are skipped whole, so the caller only ever stops at code positions."""

    def __init__(self, text: str) -> None:
        self.t = text
        self.n = len(text)

    def skip_token(self, i: int) -> int:
        """Index just past the token (or comment, or run of spaces) starting at ``i``."""
        t = self.t
        c = t[i]
        if c == "/" and t.startswith("//", i):
            return self._line_end(i)
        if c == "/" and t.startswith("/*", i):
            j = t.find("*/", i + 2)
            return self.n if j < 0 else j + 2
        if c in "\"'@$" or (c in "uU" and t.startswith('8"', i + 1)):
            j = self._string(i)
            if j is not None:
                return j
        return i + 1

    def _line_end(self, i: int) -> int:
        while i < self.n and self.t[i] not in LINE_BREAKS:
            i += 1
        return i

    def _string(self, i: int) -> int | None:
        t = self.t
        j = i
        dollars, verbatim = 0, False
        while j < self.n and t[j] in "$@":
            if t[j] == "$":
                dollars += 1
            else:
                verbatim = True
            j += 1
        if j >= self.n:
            return None
        if t[j] == "'" and j == i:
            return self._char(j)
        if t[j] != '"':
            return None
        if t.startswith('"""', j) and not verbatim:
            return self._raw(j, dollars)
        if verbatim:
            return self._verbatim(j + 1, dollars > 0)
        return self._regular(j + 1, dollars > 0)

    def _char(self, j: int) -> int:
        k = j + 1
        while k < self.n and self.t[k] not in LINE_BREAKS:
            if self.t[k] == "\\":
                k += 2
                continue
            if self.t[k] == "'":
                return k + 1
            k += 1
        return k

    def _regular(self, k: int, interpolated: bool) -> int:
        t = self.t
        while k < self.n:
            c = t[k]
            if c == "\\":
                k += 2
            elif c == '"':
                return k + 1
            elif c in LINE_BREAKS:
                return k  # unterminated: the compiler reports it; the lexer goes on at the next line
            elif interpolated and c == "{":
                if t.startswith("{{", k):
                    k += 2
                else:
                    k = self._hole(k + 1, multiline=False)
            else:
                k += 1
        return k

    def _verbatim(self, k: int, interpolated: bool) -> int:
        t = self.t
        while k < self.n:
            c = t[k]
            if c == '"':
                if t.startswith('""', k):
                    k += 2
                    continue
                return k + 1
            if interpolated and c == "{":
                if t.startswith("{{", k):
                    k += 2
                    continue
                k = self._hole(k + 1, multiline=True)
                continue
            k += 1
        return k

    def _raw(self, j: int, dollars: int) -> int:
        t = self.t
        q = j
        while q < self.n and t[q] == '"':
            q += 1
        quotes = q - j
        close = '"' * quotes
        end = t.find(close, q)
        if end < 0:
            return self.n
        while end + quotes < self.n and t[end + quotes] == '"':
            end += 1  # a longer run closes with its last quotes
        return end + quotes

    def _hole(self, k: int, multiline: bool) -> int:
        """Skip an interpolation hole's code up to its closing ``}`` (nested braces, strings, a format part)."""
        t = self.t
        depth = 0
        while k < self.n:
            c = t[k]
            if c in LINE_BREAKS and not multiline:
                # C# 11 allows line breaks in holes; keep going, the hole's code is lexed as code
                pass
            if c == "}":
                if depth == 0:
                    return k + 1
                depth -= 1
                k += 1
            elif c in "({[":
                depth += 1
                k += 1
            elif c in ")]":
                depth = max(0, depth - 1)
                k += 1
            elif c == ":" and depth == 0 and not t.startswith("::", k):
                j = k + 1
                while j < self.n and t[j] != "}" and t[j] not in LINE_BREAKS and t[j] != '"':
                    j += 1
                k = j
            else:
                k = self.skip_token(k)
        return k


# ----------------------------------------------------------------------------------------------------------------
# The pass
# ----------------------------------------------------------------------------------------------------------------


@dataclass
class _Frame:
    active_parent: bool  # whether the enclosing section is active
    taken: bool  # a branch of this #if was already active
    active: bool  # whether the current branch is active
    seen_else: bool = False
    line: int = 0


@dataclass
class _State:
    defines: set[str]
    stack: list[_Frame] = field(default_factory=list)
    seen_code: bool = False

    @property
    def active(self) -> bool:
        return not self.stack or self.stack[-1].active


def preprocess(text: str, defines: set[str] | frozenset[str] | tuple[str, ...] = ()) -> Preprocessed:
    """Evaluate the file's directives with ``defines`` as the build's symbols (see the module docstring)."""
    try:
        return _preprocess(text, set(defines))
    except PreprocessError as exc:
        return Preprocessed(text, text, (), frozenset(defines), error=str(exc))


def _preprocess(text: str, defines: set[str]) -> Preprocessed:
    if _ANY_DIRECTIVE.search(text) is None:
        return Preprocessed(text, text, (), frozenset(defines))
    lex = _Lexer(text)
    st = _State(set(defines))
    blanks: list[tuple[int, int]] = []
    inactive = 0
    n = len(text)
    pos = 0  # always a line start outside any comment or string
    while pos < n:
        m = _BREAK_RE.search(text, pos)
        end, nxt = (m.start(), m.end()) if m else (n, n)
        d = _DIRECTIVE.match(text, pos, end)
        if d is not None:
            name = d.group(1)
            line = text.count("\n", 0, pos) + 1
            was_active = st.active
            if name in CONDITIONAL:
                _conditional(st, name, text[d.end():end], line)
            elif was_active and name in ("define", "undef"):
                if st.seen_code:
                    raise PreprocessError(f"line {line}: #{name} after the first token")
                sym = strip_comment(text[d.end():end]).strip()
                if not re.fullmatch(r"[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*", sym) or sym in ("true", "false"):
                    raise PreprocessError(f"line {line}: bad #{name} {sym!r}")
                (st.defines.add if name == "define" else st.defines.discard)(sym)
            if name in BLANKED or not was_active:
                blanks.append((pos, end))
            pos = nxt
            continue
        if not st.active:
            if pos < end:
                blanks.append((pos, end))
                inactive += 1
            pos = nxt
            continue
        # active code: token by token up to a line break outside any token (a block comment or a verbatim, raw
        # or interpolated string may carry the line on)
        k = pos
        while True:
            m = _INTEREST.search(text, k)
            stop = m.start() if m else n
            if not st.seen_code and text[k:stop].strip():
                st.seen_code = True
            if m is None:
                pos = n
                break
            c = text[stop]
            if c in LINE_BREAKS:
                pos = stop + 2 if text.startswith("\r\n", stop) else stop + 1
                break
            if c != "/" or not text.startswith(("//", "/*"), stop):
                st.seen_code = True  # comments are no tokens: #define may follow them
            k = lex.skip_token(stop)
    if st.stack:
        raise PreprocessError(f"#if on line {st.stack[-1].line} has no #endif")
    if not blanks:
        return Preprocessed(text, text, (), frozenset(st.defines))
    merged = _merge(blanks)
    parts = []
    at = 0
    for s, e in merged:
        parts.append(text[at:s])
        parts.append(_blank(text[s:e]))
        at = e
    parts.append(text[at:])
    return Preprocessed(text, "".join(parts), tuple(merged), frozenset(st.defines), inactive_lines=inactive)


def _conditional(st: _State, name: str, rest: str, line: int) -> None:  # line: 1-based
    if name == "if":
        parent = st.active
        value = evaluate(rest, st.defines) if parent else _check(rest)
        st.stack.append(_Frame(parent, value and parent, value and parent, line=line))
        return
    if not st.stack:
        raise PreprocessError(f"line {line}: #{name} without #if")
    top = st.stack[-1]
    if name == "endif":
        if strip_comment(rest).strip():
            raise PreprocessError(f"line {line}: text after #endif")
        st.stack.pop()
        return
    if top.seen_else:
        raise PreprocessError(f"line {line}: #{name} after #else")
    if name == "else":
        if strip_comment(rest).strip():
            raise PreprocessError(f"line {line}: text after #else")
        top.seen_else = True
        top.active = top.active_parent and not top.taken
        top.taken = top.taken or top.active
        return
    # elif
    value = evaluate(rest, st.defines) if top.active_parent and not top.taken else _check(rest)
    top.active = top.active_parent and not top.taken and value
    top.taken = top.taken or top.active


def _check(expr: str) -> bool:
    """A condition in a skipped section is still read by the compiler only loosely; accept anything."""
    return False


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(spans):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out
