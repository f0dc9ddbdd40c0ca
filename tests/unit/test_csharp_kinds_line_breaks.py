"""Diagnostic positions where a C# text holds line terminators other than LF/CRLF (issue 22): mcs ends a line at a
lone CR, U+2028 and U+2029 (Roslyn at U+0085 too), so a block comment holding one moves every later diagnostic a
line down from benchsmith's ``\\n`` lines; the analyzer reads the compiler's lines and still reports the reference
at its name."""

from __future__ import annotations

import shutil

import pytest

from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.analyzers.csharp import Compiler
from benchsmith.analyzers.csharp.positions import offset, position
from benchsmith.files import snapshot

needs_mcs = pytest.mark.skipif(shutil.which("mcs") is None,
                               reason="mcs not on PATH (apt-get install mono-mcs; scripts/setup_toolchains.sh)")
BREAKS = {"cr": "\r", "u2028": "\u2028", "u2029": "\u2029"}


@pytest.mark.parametrize("brk", ["\r", "\u2028", "\u2029", "\r\n", "\n"])
def test_a_compiler_line_after_each_terminator_maps_to_its_character(brk):
    text = f"class A {{\n  /* a{brk}b */ int x = Foo.Bar;\n}}\n"
    at = text.index("Foo")
    # the compiler's line of `Foo`: one more than benchsmith's where the comment holds a terminator it counts
    line = text[:at].count("\n") + (brk in ("\r", "\u2028", "\u2029"))
    col = at - max(text.rfind(c, 0, at) for c in "\n\r\u2028\u2029")
    assert offset(text, line + 1, col) == at
    # benchsmith's own lines are `\n` lines
    assert position(text, at) == (text[:at].count("\n"), at - text.rfind("\n", 0, at) - 1)


def test_roslyn_counts_next_line_and_mcs_does_not():
    text = "class A {\n  /* a\u0085b */ int x = Foo.Bar;\n}\n"
    at = text.index("Foo")
    assert offset(text, 3, at - text.index("\u0085"), Compiler.CSC) == at
    assert offset(text, 2, at - text.index("\n"), Compiler.MCS) == at


@needs_mcs
@pytest.mark.parametrize("name", sorted(BREAKS))
def test_references_after_an_odd_terminator_in_a_comment_are_at_their_names(tmp_path, name):
    repo = tmp_path / "repo"
    (repo / "Lib").mkdir(parents=True)
    (repo / "Lib" / "Widget.cs").write_text(
        "namespace Acme { public class Widget { public static int Max = 3; } }\n", encoding="utf-8")
    use = ("namespace Acme {\n    class User {\n        /* one" + BREAKS[name] + "two" + BREAKS[name] + "three */\n"
           "        int M() { return Widget.Max; }\n    }\n}\n")
    with open(repo / "User.cs", "w", encoding="utf-8", newline="") as f:
        f.write(use)
    analyzer = get_analyzer("csharp", AnalyzerOptions())
    analyzer.compiler = Compiler.MCS
    snap = snapshot(repo, analyzer.extensions, tmp_path / "snap", repo_name="r")
    res = analyzer.analyze(snap, tmp_path / "work")
    text = snap.by_path()["User.cs"].text
    assert text == use  # the snapshot keeps the terminators
    member = [r for r in res.refs if r.diagnostic == "CS0117"]
    assert [(r.symbol, r.line, r.column) for r in member] == [("Max", 3, text.split("\n")[3].index("Max"))]
