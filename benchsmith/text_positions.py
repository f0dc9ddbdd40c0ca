"""One place for converting positions in a text: character offsets, (line, column) pairs, UTF-8 bytes and UTF-16
code units.

Toolchains and parsers count differently: tree-sitter and Python's ``ast`` give UTF-8 byte columns, javac, tsc and
the .NET compilers UTF-16 code units, Go byte columns; benchsmith itself counts characters and numbers lines by
``\\n`` alone (the cutter, task ids, the scorer).  Every conversion goes through ``TextPositions`` so a fix to one
(an astral character, a line past the end) is a fix for all languages.
"""

from __future__ import annotations

import bisect
import re
from typing import Pattern

_NEWLINE = re.compile("\n")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def byte_col_to_char(line_text: str, byte_col: int) -> int:
    """Character column of a 0-based UTF-8 byte column within one line, clamped to the line (a cut multi-byte
    character rounds down)."""
    if line_text.isascii():
        return min(max(byte_col, 0), len(line_text))
    return len(line_text.encode("utf-8")[: max(byte_col, 0)].decode("utf-8", errors="ignore"))


def utf16_to_char(text: str, unit: int) -> int:
    """Character offset of a UTF-16 code-unit offset into ``text`` (astral characters count two units)."""
    if unit <= 0:
        return unit
    if text.isascii():
        return unit
    chars = units = 0
    for ch in text:
        if units >= unit:
            break
        units += 2 if ord(ch) > 0xFFFF else 1
        chars += 1
    return chars + max(0, unit - units)


class TextPositions:
    """Positions in one text.  Lines are split where ``line_breaks`` matches (default ``\\n``, benchsmith's own
    numbering; TypeScript numbers lines as tsc does by passing its own pattern); lines and columns are 0-based
    and columns count characters unless a method says otherwise."""

    def __init__(self, text: str, line_breaks: Pattern[str] | None = None) -> None:
        self.text = text
        self.ascii = text.isascii()
        pattern = line_breaks or _NEWLINE
        if pattern is _NEWLINE:
            starts, find, at = [0], text.find, text.find("\n")
            while at != -1:
                starts.append(at + 1)
                at = find("\n", at + 1)
            self.starts = starts
            self.ends = [s - 1 for s in starts[1:]] + [len(text)]
        else:
            matches = list(pattern.finditer(text))
            self.starts = [0] + [m.end() for m in matches]
            self.ends = [m.start() for m in matches] + [len(text)]
        self._byte_starts: list[int] | None = None
        self._astral_units: list[int] | None = None

    # -- lines ----------------------------------------------------------------------------------------------------
    def line_count(self) -> int:
        return len(self.starts)

    def line_start(self, line: int) -> int:
        return self.starts[line]

    def line_end(self, line: int) -> int:
        """Offset where ``line``'s text ends: its line break's start, or the text's end."""
        return self.ends[line]

    def line_text(self, line: int) -> str:
        return self.text[self.starts[line]:self.ends[line]]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def position(self, offset: int) -> tuple[int, int]:
        """0-based (line, character column) of a character offset."""
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]

    def offset(self, line: int, column: int, *, within_line: bool = False) -> int | None:
        """Character offset of a 0-based (line, character column); None when the line does not exist, or, with
        ``within_line``, when the column runs past the line's end (its break included)."""
        if not (0 <= line < len(self.starts)):
            return None
        off = self.starts[line] + column
        if within_line:
            end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
            if off > end:
                return None
        return off

    def offset_utf16(self, line: int, unit: int, *, within_line: bool = True) -> int | None:
        """Character offset of a 0-based line and 0-based UTF-16 column (javac, tsc, mcs/csc); None out of range."""
        if not (0 <= line < len(self.starts)) or unit < 0:
            return None
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        if self.ascii:
            off = start + unit
            return None if within_line and off > end else off
        off, left = start, unit
        while left > 0 and off < end:
            left -= 2 if ord(self.text[off]) > 0xFFFF else 1
            off += 1
        if left == 0:
            return off
        if left < 0:  # the column points inside a surrogate pair
            return None
        return None if within_line else off + left

    def utf16_to_char(self, unit: int) -> int:
        """``utf16_to_char(self.text, unit)`` for an offset into the whole text (javac's positions), in O(log n)
        after one pass: the UTF-16 start of every astral character is found once."""
        if self.ascii:
            return unit
        if self._astral_units is None:
            self._astral_units = [m.start() + k for k, m in enumerate(_ASTRAL.finditer(self.text))]
        if unit <= 0 or not self._astral_units:
            return unit
        # each astral character before ``unit`` took two units for one character; one starting at ``unit - 1``
        # (``unit`` falls inside it) is not subtracted, so the offset rounds up past it as ``utf16_to_char`` does
        return unit - bisect.bisect_left(self._astral_units, unit - 1)

    # -- bytes ----------------------------------------------------------------------------------------------------
    def _bytes(self) -> list[int]:
        if self._byte_starts is None:
            out, total, text, starts = [], 0, self.text, self.starts
            for i, start in enumerate(starts):
                out.append(total)
                end = starts[i + 1] if i + 1 < len(starts) else len(text)
                total += len(text[start:end].encode("utf-8"))
            self._byte_starts = out
        return self._byte_starts

    def to_char(self, byte: int) -> int:
        """Character offset of a UTF-8 byte offset (tree-sitter, ``ast``), converting within one line."""
        if self.ascii:
            return byte
        bstarts = self._bytes()
        line = max(0, bisect.bisect_right(bstarts, byte) - 1)
        start = self.starts[line]
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        chunk = self.text[start:end].encode("utf-8")[: byte - bstarts[line]]
        return start + len(chunk.decode("utf-8", errors="ignore"))

    def to_byte(self, offset: int) -> int:
        if self.ascii:
            return offset
        line = self.line_of(offset)
        return self._bytes()[line] + len(self.text[self.starts[line]:offset].encode("utf-8"))
