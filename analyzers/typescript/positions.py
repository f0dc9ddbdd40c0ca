"""Positions in one TypeScript/JavaScript file, in the three numberings the analyzer meets.

tsc counts lines TypeScript's way (``\\r\\n``, ``\\n``, ``\\r``, U+2028, U+2029), 1-based, with 1-based UTF-16
columns; references use ``\\n``-separated lines and character columns (what the example builder indexes);
tree-sitter gives UTF-8 bytes.  Both line numberings are ``benchsmith.text_positions.TextPositions``; this glue
only adds tsc's 1-based convention.
"""

from __future__ import annotations

import re

from benchsmith.text_positions import TextPositions

TSC_LINE_BREAKS = re.compile(r"\r\n|[\n\r\u2028\u2029]")  # what tsc ends a line at


class FilePositions:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tsc = TextPositions(text, line_breaks=TSC_LINE_BREAKS)
        self.lines = TextPositions(text)  # benchsmith's own '\n' numbering

    def from_tsc(self, line1: int, col1: int) -> int | None:
        """Char offset of a tsc (1-based line, 1-based UTF-16 column) position, or None if out of range."""
        return self.tsc.offset_utf16(line1 - 1, col1 - 1, within_line=True)

    def tsc_line(self, offset: int) -> int:
        """tsc's 0-based line of a char offset."""
        return self.tsc.line_of(offset)

    def line_col(self, offset: int) -> tuple[int, int]:
        """0-based ('\\n'-separated) line and character column."""
        return self.lines.position(offset)

    def line_start(self, line: int) -> int:
        return self.lines.line_start(line)

    def to_char(self, byte: int) -> int:
        return self.lines.to_char(byte)

    def to_byte(self, offset: int) -> int:
        return self.lines.to_byte(offset)
