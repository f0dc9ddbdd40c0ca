"""Compiler positions on a C# text: mcs and csc print 1-based lines and 1-based UTF-16 columns; benchsmith counts
characters on ``\\n``-split lines.  A thin cache over ``benchsmith.text_positions`` (one ``TextPositions`` per text
object: one analysis maps thousands of diagnostics onto the same few texts)."""

from __future__ import annotations

from benchsmith.text_positions import TextPositions

_CACHE: dict[int, tuple[str, TextPositions]] = {}


def positions(text: str) -> TextPositions:
    """The ``TextPositions`` of ``text``, cached per text object."""
    key = id(text)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is text:
        return hit[1]
    pos = TextPositions(text)
    if len(_CACHE) > 4096:
        _CACHE.clear()
    _CACHE[key] = (text, pos)
    return pos


def offset(text: str, line: int, col: int) -> int | None:
    """1-based line and UTF-16 column -> character offset (None for a line that does not exist).  A column past
    the line's end runs on into the next line, as the compiler would count it; one inside a surrogate pair names
    that pair's character."""
    pos = positions(text)
    unit = max(0, col - 1)
    off = pos.offset_utf16(line - 1, unit, within_line=False)
    if off is None and 0 <= line - 1 < pos.line_count() and unit > 0:
        off = pos.offset_utf16(line - 1, unit - 1, within_line=False)
    return off


def position(text: str, off: int) -> tuple[int, int]:
    """Character offset -> 0-based (line, column), lines split on ``\\n`` only."""
    return positions(text).position(off)
