"""Compiler positions on a C# text: mcs and csc print 1-based lines and 1-based UTF-16 columns; benchsmith counts
characters on ``\\n``-split lines.  A thin cache over ``benchsmith.text_positions`` (one ``TextPositions`` per text
object: one analysis maps thousands of diagnostics onto the same few texts).

The compilers end a line where benchsmith does not: mcs at a lone CR, U+2028 and U+2029 as well as at LF and CRLF
(measured on mono 6.8: a block comment holding one of them moves every later diagnostic a line down); Roslyn, per
the C# specification, at U+0085 too.  A diagnostic's line is read on the compiler's own lines (``offset``); the
positions benchsmith reports stay on ``\\n``-split lines (``position``)."""

from __future__ import annotations

import re

from benchsmith.analyzers.csharp.diagnostics import Compiler
from benchsmith.text_positions import TextPositions

_CACHE: dict[int, tuple[str, TextPositions]] = {}
_COMPILER_CACHE: dict[tuple[int, Compiler], tuple[str, TextPositions]] = {}
# the line terminators each compiler counts (CRLF is one)
LINE_BREAKS = {Compiler.MCS: re.compile("\r\n|[\r\n\u2028\u2029]"),
               Compiler.CSC: re.compile("\r\n|[\r\n\u0085\u2028\u2029]")}
# what, beyond LF and CRLF, makes a text's compiler lines differ from its ``\\n`` lines
_OTHER_BREAKS = {Compiler.MCS: re.compile("\r(?!\n)|[\u2028\u2029]"),
                 Compiler.CSC: re.compile("\r(?!\n)|[\u0085\u2028\u2029]")}


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


def compiler_positions(text: str, compiler: Compiler = Compiler.MCS) -> TextPositions:
    """The ``TextPositions`` of ``text`` on the lines ``compiler`` counts (those of ``positions`` where the text has
    no other terminator than LF and CRLF: the usual case costs one scan)."""
    compiler = Compiler.CSC if compiler is Compiler.CSC else Compiler.MCS
    key = (id(text), compiler)
    hit = _COMPILER_CACHE.get(key)
    if hit is not None and hit[0] is text:
        return hit[1]
    pos = TextPositions(text, LINE_BREAKS[compiler]) if _OTHER_BREAKS[compiler].search(text) else positions(text)
    if len(_COMPILER_CACHE) > 4096:
        _COMPILER_CACHE.clear()
    _COMPILER_CACHE[key] = (text, pos)
    return pos


def offset(text: str, line: int, col: int, compiler: Compiler = Compiler.MCS) -> int | None:
    """1-based line and UTF-16 column, as ``compiler`` prints them -> character offset (None for a line that does
    not exist).  A column past the line's end runs on into the next line, as the compiler would count it; one
    inside a surrogate pair names that pair's character."""
    pos = compiler_positions(text, compiler)
    unit = max(0, col - 1)
    off = pos.offset_utf16(line - 1, unit, within_line=False)
    if off is None and 0 <= line - 1 < pos.line_count() and unit > 0:
        off = pos.offset_utf16(line - 1, unit - 1, within_line=False)
    return off


def position(text: str, off: int) -> tuple[int, int]:
    """Character offset -> 0-based (line, column), lines split on ``\\n`` only."""
    return positions(text).position(off)
