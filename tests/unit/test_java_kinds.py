"""Java reference kinds (issue 27) from the original javac run, and names written with unicode escapes (issue 22).

The fixture ``tests/fixtures/java/kinds`` has the shapes of the released Java repositories (m3color's palettes and
colour utilities, DiscordLeaderboards' config classes): project types in fields, locals, generics, casts,
``instanceof`` and ``.class``, annotations, ``extends``/``implements``, ``new`` (plain and qualified), static
members, members inherited from a base class or interface of another file, and next to them JDK types
(``String``, ``List``) and library types that are not there (androidx ``@NonNull``, bukkit's
``FileConfiguration``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchsmith.analyzers import AnalyzerOptions, AnalysisResult, get_analyzer
from benchsmith.analyzers.java.driver import JavacResolved, parse_driver_output
from benchsmith.analyzers.java.escapes import decode, name_span, tree_view
from benchsmith.analyzers.java.resolved import ResolvedFiles, ResolvedTally, resolved_refs
from benchsmith.builders.cceval.examples import ExampleCutter
from benchsmith.analyzers.java.scan import scan_java
from benchsmith.files import SourceFile, snapshot
from benchsmith.records import ReferenceKind as K
from benchsmith.records import Reason

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "java"
needs_javac = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                                 reason="javac/java not on PATH (run scripts/setup_toolchains.sh)")
SRC = "src/main/java/com/example/"


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kinds")
    analyzer = get_analyzer("java", AnalyzerOptions())
    snap = snapshot(FIXTURES / "kinds", analyzer.extensions, tmp / "snap", repo_name="kinds")
    return analyzer, snap, analyzer.analyze(snap, tmp / "work")


def _at(res, file: str) -> set[tuple[int, int, str, K]]:
    """(1-based line, 1-based column, symbol, kind) of the refs of one file."""
    return {(r.line + 1, r.column + 1, r.symbol, r.kind) for r in res.refs if r.file == SRC + file}


@needs_javac
def test_every_kind_is_found_at_its_name(kinds):
    _, _, res = kinds
    assert not res.exclusions, res.exclusions
    config = _at(res, "config/LeaderboardConfig.java")
    assert {
        (7, 40, "BaseConfig", K.HERITAGE), (7, 62, "Configurable", K.HERITAGE),  # extends / implements
        (8, 11, "CustomConfig", K.TYPE),  # a field's type
        (14, 24, "CustomConfig", K.CONSTRUCTOR),  # new CustomConfig(name): the class name after `new`
        (26, 5, "CustomConfig", K.TYPE), (26, 49, "CustomConfig", K.CONSTRUCTOR),  # new com.example.config.C(..)
        (15, 18, "setup", K.MEMBER), (16, 32, "get", K.MEMBER),
        (13, 10, "name", K.INHERITED_MEMBER),  # this.name, a field of the base class
        (17, 5, "save", K.INHERITED_MEMBER), (18, 11, "save", K.INHERITED_MEMBER),  # save(); super.save();
        (19, 16, "getPluginVersion", K.INHERITED_MEMBER),
        (21, 16, "VERSION", K.INHERITED_MEMBER),  # an interface constant, unqualified
        (28, 5, "Configurable", K.TYPE), (28, 30, "Configurable", K.CONSTRUCTOR),  # an anonymous class
    } <= config
    assert not {c for c in config if c[0] == 28 and c[3] is K.HERITAGE}  # its body's supertype is the `new` type
    palette = _at(res, "palettes/CorePalette.java")
    assert {
        (12, 2, "Keep", K.ATTRIBUTE),  # @Keep: the name after `@`
        (14, 10, "TonalPalette", K.TYPE), (16, 22, "TonalPalette", K.TYPE),  # a field; a generic argument
        (23, 5, "Hct", K.TYPE), (23, 15, "Hct", K.TYPE), (23, 19, "fromInt", K.MEMBER),  # Hct hct = Hct.fromInt(..)
        (26, 50, "MathUtils", K.TYPE), (26, 60, "clampDouble", K.MEMBER),  # a static call
        (29, 17, "clampInt", K.MEMBER),  # a static import is no inherited member
        (33, 10, "TonalPalette", K.TYPE),  # a return type
        (34, 22, "TonalPalette", K.TYPE), (35, 15, "TonalPalette", K.TYPE),  # instanceof, a cast
        (37, 19, "TonalPalette", K.TYPE),  # TonalPalette.class
    } <= palette


@needs_javac
def test_jdk_library_and_same_file_names_are_never_candidates(kinds):
    _, snap, res = kinds
    symbols = {r.symbol for r in res.refs}
    # JDK types and members, a missing library's annotation and type, the file's own class and constructor
    assert not symbols & {"String", "List", "ArrayList", "Object", "Math", "round", "add", "set", "isEmpty",
                          "getSimpleName", "NonNull", "FileConfiguration", "Retention", "Override", "CorePalette"}
    # nor an import line
    texts = snap.by_path()
    for r in res.refs:
        assert r.defining_file in texts and r.defining_file != r.file
        line = texts[r.file].text.split("\n")[r.line]
        assert not line.startswith("import")
        assert line[r.column:].startswith(r.symbol), r


@needs_javac
def test_definitions_are_the_declarations_lines(kinds):
    _, snap, res = kinds
    texts = snap.by_path()
    for r in res.refs:
        d = r.definition
        assert d is not None and d.file == r.defining_file
        lines = texts[d.file].text.split("\n")[d.start_line:d.end_line + 1]
        assert any(d.symbol in line for line in lines), r
    version = next(r for r in res.refs if r.symbol == "getPluginVersion")
    assert (version.definition.start_line, version.definition.end_line) == (10, 12)
    assert version.import_name == "BaseConfig"
    keep = next(r for r in res.refs if r.kind is K.ATTRIBUTE)
    assert keep.definition.file.endswith("utils/Keep.java") and keep.definition.end_line == 7


@needs_javac
def test_a_name_written_with_unicode_escapes_is_cut_exactly(kinds):
    analyzer, snap, res = kinds
    esc = next(r for r in res.refs if r.definition is not None and r.definition.symbol == "add")
    # javac reads `add`; the cursor goes before what is written, the definition names what javac read
    assert (esc.line + 1, esc.column + 1, esc.symbol, esc.kind) == (20, 28, "\\u0061dd", K.MEMBER)
    assert res.stats["resolved_escaped"] == 1
    cuts = {e.metadata.groundtruth_start_lineno: e.groundtruth
            for e in ExampleCutter(analyzer, snap.by_path(), "kinds").run([esc])}
    assert cuts == {19: "\\u0061dd(1, 2);"}


def test_tree_view_keeps_every_offset_and_reads_escapes_as_javac_does():
    text = 'int s = calc.\\u0061dd(1); String q = "\\\\u0041"; y\\u002e\\uuu0062(); String é = "ü";'
    view = tree_view(text)
    assert len(view.encode("utf-8")) == len(text.encode("utf-8"))
    assert "calc.a_____dd(1)" in view and "y.     b_______()" in view
    assert '"\\\\u0041"' in view  # an escaped backslash starts no escape
    # literals and comments are left to tree-sitter (a padded character would break a character literal)
    kept = "char c = '\\u000F'; String s = \"\\u0041\"; /* \\u0041 */ // \\u0062\n"
    assert tree_view(kept) == kept
    decoded = decode(text)
    assert "calc.add(1)" in decoded.decoded and "y.b()" in decoded.decoded
    assert name_span(text, -1, text.index("(1)"), "add", decoded) == (13, 21)
    assert name_span(text, 13, -1, "add", decoded) == (13, 21)
    assert name_span(text, 14, -1, "add", decoded) is None  # inside the escape
    assert get_analyzer("java").tree_source("a.java", text) == view.encode("utf-8")


def test_a_name_that_cannot_be_placed_is_recorded_not_lost():
    text = "class A { int f(C c) { return c.\\u0061dd(); } }"
    end = text.index("()")
    found = [JavacResolved("member", "A.java", -1, end - 2, "add", "C", "C.java", 1, 1),  # inside the escape
             JavacResolved("member", "A.java", -1, end, "add", "C", "C.java", 1, 1)]
    result = AnalysisResult()
    tally = ResolvedTally()
    refs = resolved_refs("r", found, ResolvedFiles({"A.java": text, "C.java": "class C {}"}, {}), set(), result, tally)
    assert [(r.symbol, r.column) for r in refs] == [("\\u0061dd", text.index("\\u"))]
    assert [e.reason for e in result.exclusions] == [Reason.UNSUPPORTED_SYNTAX]
    assert result.exclusions[0].item_id == f"r/A.java:1:{end - 2 + 1}" and tally.misplaced == 1


def test_driver_ref_lines_are_parsed_and_foreign_lines_ignored():
    out = "\n".join([
        '{"phase":"analyze"}',
        '{"ref":"heritage","file":"./src/a/B.java","start":40,"end":44,"name":"Base","owner":"Base",'
        '"dfile":"./src/a/Base.java","dline":3,"dend":9}',
        '{"ref":"member","file":"src/a/B.java"}',  # cut short: not a line of ours
        '{"done":true,"ok":true,"errors":0,"others":0}',
    ])
    run = parse_driver_output(out)
    assert run.done and run.resolved == [JavacResolved("heritage", "src/a/B.java", 40, 44, "Base", "Base",
                                                       "src/a/Base.java", 3, 9)]


def test_the_scan_reads_a_file_with_escapes_as_javac_does():
    text = "package p;\nclass A {\n  int f(C c) { return c.\\u0061dd(1); }\n}\n"
    info = scan_java(SourceFile("p/A.java", text))
    assert not info.ts_error  # the escape is no syntax error
    assert [t.name for t in info.top_types] == ["A"] and text[info.top_types[0].insert_at] == "}"
