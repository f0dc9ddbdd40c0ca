"""Line numbering as Python's tokenizer does it, and the conversion to benchsmith's own.

Python's tokenizer, hence ast, astroid and pylint, ends a line at \\r\\n, \\r or \\n and nowhere else: a form feed,
\\v, \\x1c-\\x1e, \\x85, U+2028 and U+2029 are characters of a line (str.splitlines() would break there and shift
every later line number).  The rest of benchsmith (the cutter, task ids) counts lines by \\n alone, so each ref
is converted from Python's numbering to that one before it leaves the analyzer.
"""

from __future__ import annotations

import re

from benchsmith.text_positions import TextPositions

PYTHON_EOL = re.compile(r"\r\n|\r|\n")
_LONE_CR = re.compile(r"\r(?!\n)")


def python_lines(text: str, keepends: bool = False) -> list[str]:
    """``text`` split into lines the way Python's tokenizer numbers them (index i = line i + 1)."""
    pos = TextPositions(text, PYTHON_EOL)
    count = pos.line_count()
    if count > 1 and pos.line_start(count - 1) == len(text):
        count -= 1  # a final line break ends the last line; no empty line follows it
    if keepends:
        return [text[pos.line_start(i): pos.line_start(i + 1) if i + 1 < pos.line_count() else len(text)]
                for i in range(count)]
    return [pos.line_text(i) for i in range(count)]


class LineNumbering:
    """(Python line, char column) -> (\\n-line, char column) for one text; the identity unless the text has a
    lone \\r (a CRLF file numbers its lines the same both ways)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lone_cr = bool(_LONE_CR.search(text))
        if self.lone_cr:
            self.python = TextPositions(text, PYTHON_EOL)
            self.lf = TextPositions(text)

    def to_lf(self, line: int, column: int) -> tuple[int, int]:
        if not self.lone_cr or not (0 <= line < self.python.line_count()):
            return line, column
        return self.lf.position(self.python.line_start(line) + column)
