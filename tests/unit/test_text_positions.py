"""The shared parts every analyzer and the cutter stand on: benchsmith.text_positions (every offset, line, column,
byte and UTF-16 conversion), benchsmith.treesitter (one factory) and analyzers/probes.py (toolchain versions)."""

from __future__ import annotations

import re
import sys

import pytest

from benchsmith import treesitter
from benchsmith.analyzers.probes import probe_version
from benchsmith.text_positions import TextPositions, byte_col_to_char, utf16_to_char

TEXT = "ab\r\ncé😀x\n\nlast"  # CRLF, a two-byte and a four-byte (astral) character, an empty line, no final break


def test_lines_split_on_newline_only_with_offsets_both_ways():
    p = TextPositions(TEXT)
    assert p.line_count() == 4
    assert [p.line_text(i) for i in range(4)] == ["ab\r", "cé😀x", "", "last"]
    for offset in range(len(TEXT) + 1):
        line, col = p.position(offset)
        assert p.offset(line, col) == offset
        assert p.line_of(offset) == line
    assert p.offset(9, 0) is None and p.offset(-1, 0) is None
    assert p.offset(1, 99) == p.line_start(1) + 99  # columns are not checked ...
    assert p.offset(1, 99, within_line=True) is None  # ... unless asked


def test_a_tool_line_numbering_keeps_its_own_breaks():
    tsc = TextPositions(TEXT, re.compile(r"\r\n|[\r\n\u2028\u2029]"))
    assert tsc.line_text(0) == "ab"  # the whole CRLF is the break
    sep = TextPositions("a\u2028b\nc", re.compile(r"\r\n|[\r\n\u2028\u2029]"))
    assert sep.line_count() == 3 and sep.line_text(1) == "b"
    assert TextPositions("a\u2028b\nc").line_count() == 2  # benchsmith's own numbering: \n alone


def test_utf8_bytes_and_characters_round_trip():
    p = TextPositions(TEXT)
    for offset in range(len(TEXT) + 1):
        byte = p.to_byte(offset)
        assert byte == len(TEXT[:offset].encode("utf-8"))
        assert p.to_char(byte) == offset
    inside = p.to_byte(TEXT.index("😀")) + 2  # a byte inside the four-byte character rounds down
    assert p.to_char(inside) == TEXT.index("😀")
    assert byte_col_to_char("cé😀x", 7) == 3 and byte_col_to_char("cé😀x", 2) == 1
    assert byte_col_to_char("abc", 10) == 3 and byte_col_to_char("abc", -2) == 0


def test_utf16_units_count_an_astral_character_twice():
    line = "cé😀x"
    assert [utf16_to_char(line, u) for u in range(6)] == [0, 1, 2, 3, 3, 4]  # unit 3 is inside the emoji
    p = TextPositions(TEXT)
    start = p.line_start(1)
    assert p.offset_utf16(1, 4) == start + 3  # past the emoji: 4 units, 3 characters
    assert p.offset_utf16(1, 3) is None  # inside the surrogate pair
    assert p.offset_utf16(1, 99) is None and p.offset_utf16(1, 99, within_line=False) == start + 99 - 1
    whole = TextPositions(TEXT)
    for unit in range(len(TEXT.encode("utf-16-le")) // 2 + 1):
        assert whole.utf16_to_char(unit) == utf16_to_char(TEXT, unit)


def test_one_tree_sitter_factory_shared_by_all():
    assert treesitter.parser("tree_sitter_python") is treesitter.parser("tree_sitter_python")
    tree = treesitter.parser("tree_sitter_python").parse(b"x = 1\n")
    assert tree.root_node.type == "module" and not tree.root_node.has_error
    from benchsmith.analyzers import analyzer_class

    assert analyzer_class("python").parser_for("a.py") is treesitter.parser("tree_sitter_python")
    assert analyzer_class("typescript").parser_for("a.tsx") is not analyzer_class("typescript").parser_for("a.ts")


def test_version_probe_reads_a_pattern_and_never_fails():
    argv = (sys.executable, "-c", "print('fake tool version 1.2.3')")
    assert probe_version(argv, sys.executable, r"version\s+(\S+)") == "1.2.3"
    assert probe_version(argv, sys.executable, r"nope (\S+)") == ""
    assert probe_version(argv, sys.executable, r"nope (\S+)", fallback_chars=4) == "fake"
    assert probe_version(("/nonexistent/tool", "--version"), "", missing="missing") == "missing"


@pytest.mark.parametrize("text", ["", "\n", "only"])
def test_degenerate_texts(text):
    p = TextPositions(text)
    assert p.position(len(text))[0] == p.line_count() - 1
    assert p.to_char(p.to_byte(len(text))) == len(text)
