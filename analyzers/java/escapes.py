"""Java unicode escapes (JLS 3.3): javac reads ``calc.\\u0061dd()`` as ``calc.add()`` anywhere in a file, tree-sitter
reads a backslash.  Names javac reports are mapped back onto the text as written (``EscapedText``), and the text
tree-sitter cuts statements with gets each escape replaced by its character padded to the escape's length
(``tree_view``), so every byte offset stays where it was."""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass

# A backslash starts an escape only after an even number of backslashes (``"\\u0041"`` is no escape).
_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)(\\u+([0-9a-fA-F]{4}))")


@dataclass(frozen=True)
class EscapedText:
    """A text with its escapes decoded, and the offset in the written text of each decoded character."""

    decoded: str
    starts: list[int]  # one per decoded character, then the written text's length

    def span(self, start: int, end: int, name: str) -> tuple[int, int] | None:
        """The written span of ``name`` as javac reads it, starting at ``start`` (or, when ``start`` < 0, ending at
        ``end``): None where the decoded text there is not ``name``."""
        if start >= 0:
            i = bisect_left(self.starts, start)
            if i >= len(self.starts) - 1 or self.starts[i] != start or not self.decoded.startswith(name, i):
                return None
            return start, self.starts[i + len(name)]
        j = bisect_left(self.starts, end)
        i = j - len(name)
        if j >= len(self.starts) or self.starts[j] != end or i < 0 or self.decoded[i:j] != name:
            return None
        return self.starts[i], end


def decode(text: str) -> EscapedText:
    decoded: list[str] = []
    starts: list[int] = []
    at = 0
    for m in _ESCAPE.finditer(text):
        s = m.start(2)
        decoded.append(text[at:s])
        starts.extend(range(at, s))
        decoded.append(chr(int(m.group(3), 16)))
        starts.append(s)
        at = m.end()
    decoded.append(text[at:])
    starts.extend(range(at, len(text) + 1))
    return EscapedText("".join(decoded), starts)


def name_span(text: str, start: int, end: int, name: str, view: EscapedText | None) -> tuple[int, int] | None:
    """Where ``name`` (as javac reads it) is written: from ``start``, or ending at ``end`` when ``start`` < 0."""
    if start >= 0 and text.startswith(name, start):
        return start, start + len(name)
    if start < 0 and end >= len(name) and text[end - len(name):end] == name:
        return end - len(name), end
    return view.span(start, end, name) if view is not None else None


def has_escape(text: str) -> bool:
    return "\\u" in text and _ESCAPE.search(text) is not None


# What the view leaves alone: comments, text blocks, string and character literals (tree-sitter reads escapes
# there itself, and a padded character would break a character literal).
_NOT_CODE = re.compile(r'//[^\n]*|/\*.*?(?:\*/|\Z)|"""(?:\\.|[^\\])*?(?:"""|\Z)|"(?:\\.|[^"\\\n])*"?'
                       r"|'(?:\\.|[^'\\\n])*'?", re.S)


def tree_view(text: str) -> str:
    """``text`` with every unicode escape of its code (outside comments and literals) replaced by its character and
    padding of the same UTF-8 length: a name char continues the name (``\\u0061dd`` -> ``a_____dd``), other ASCII
    is padded with spaces, so tree-sitter reads the names and punctuation javac reads, at the same offsets."""
    out: list[str] = []
    at = 0
    for lit in _NOT_CODE.finditer(text):
        out.append(_code_view(text[at:lit.start()]))
        out.append(lit.group())
        at = lit.end()
    out.append(_code_view(text[at:]))
    return "".join(out)


def _code_view(code: str) -> str:
    if "\\u" not in code:
        return code
    out: list[str] = []
    at = 0
    for m in _ESCAPE.finditer(code):
        s, e = m.start(2), m.end()
        out.append(code[at:s])
        ch = chr(int(m.group(3), 16))
        if ch.isascii():
            out.append(ch + ("_" if ch.isalnum() or ch in "_$" else " ") * (e - s - 1))
        else:
            out.append(("x" + "_" * (e - s - 1)) if ch.isalnum() else " " * (e - s))
        at = e
    out.append(code[at:])
    return "".join(out)
