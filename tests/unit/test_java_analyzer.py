"""Java analyzer on tiny fixtures with the real javac (17): stubs, diagnostics parsing, failures."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.analyzers.common import Insertions
from benchsmith.analyzers.java import JavaIndex, location_type, parse_driver_output, plan_stubs, scan_java
from benchsmith.analyzers.java.driver import driver_source
from benchsmith.files import SourceFile, snapshot
from benchsmith.records import Reason, ReferenceKind
from benchsmith.text_positions import TextPositions, utf16_to_char

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "java"
needs_javac = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                                 reason="javac/java not on PATH (run scripts/setup_toolchains.sh)")


def _analyze(repo: Path, tmp_path: Path, **opts):
    analyzer = get_analyzer("java", AnalyzerOptions(**opts))
    snap = snapshot(repo, analyzer.extensions, tmp_path / "snap", repo_name="fixture")
    return snap, analyzer.analyze(snap, tmp_path / "work")


# -- pure parts -----------------------------------------------------------------------------------------------


def test_driver_output_parsing_keeps_paths_with_spaces_and_unicode():
    out = "\n".join([
        "Picked up JAVA_TOOL_OPTIONS: -Xmx1g",  # JVM chatter is not ours
        '{"kind":"ERROR","code":"compiler.err.expected","file":"./a b/Ünï.java","pos":5,"start":4,"end":6,'
        '"line":1,"col":6,"msg":"\';\' expected"}',
        '{"phase":"analyze"}',
        '{"kind":"ERROR","code":"compiler.err.cant.resolve.location","file":"src/x/Y.java","pos":10,"start":9,'
        '"end":14,"line":2,"col":3,"msg":"cannot find symbol\\n  symbol:   variable C\\n  location: class x.Y.Foo"}',
        '{"done":true,"ok":false,"errors":2,"others":0}',
    ])
    run = parse_driver_output(out)
    assert run.done and run.crash is None
    assert [d.file for d in run.diagnostics] == ["a b/Ünï.java", "src/x/Y.java"]
    assert run.diagnostics[0].parse_phase and not run.diagnostics[1].parse_phase
    assert location_type(run.diagnostics[1].message) == "x.Y.Foo"
    assert parse_driver_output('{"crash":"java.lang.StackOverflowError"}').crash == "java.lang.StackOverflowError"
    assert not parse_driver_output('{"kind":"ERROR","code":"x","file":"a.java","pos":1,"start":1,"end":1,'
                                   '"line":1,"col":1,"msg":"m"}').done  # cut short: no closing line


def test_location_type_of_variables_and_generics():
    assert location_type("cannot find symbol\n  symbol: method m()\n  location: variable f of type a.T.Foo<java.util.List<String>>") == "a.T.Foo"
    assert location_type("cannot find symbol\n  symbol: class X\n  location: interface a.T.Shape") == "a.T.Shape"


def test_utf16_offsets_map_to_characters():
    text = 'a"😀"b😀c é'
    idx = TextPositions(text)
    # 'b' is character 4 but UTF-16 unit 5 (the emoji takes two units)
    assert text[idx.utf16_to_char(5)] == "b"
    assert text[idx.utf16_to_char(8)] == "c"
    assert TextPositions("plain").utf16_to_char(3) == 3
    # the whole-text lookup javac's offsets go through agrees with the one-off conversion everywhere, a unit
    # inside a surrogate pair and past the end included
    assert [idx.utf16_to_char(u) for u in range(-1, 16)] == [utf16_to_char(text, u) for u in range(-1, 16)]


def test_insertions_map_back_and_hide_stub_text():
    ins = Insertions([(5, 3), (10, 4)])
    assert ins.to_original(4) == 4
    assert ins.to_original(5) is None and ins.to_original(7) is None  # inside the first stub
    assert ins.to_original(8) == 5
    assert ins.to_original(20) == 13


def test_stubs_are_nested_on_the_closing_line_and_skip_local_names():
    files = [
        SourceFile("p/Foo.java", "package p;\npublic class Foo<T> { public static int X = 1; }\n"),
        SourceFile("q/Bar.java", "package q;\npublic interface Bar {}\n"),
        SourceFile("q/Baz.java", "package q;\npublic enum Baz { A }\n"),
        SourceFile("r/Use.java", "package r;\nimport p.Foo;\nimport q.*;\n"
                                 "enum Use { ONE, TWO }\nclass Other { Bar b; Baz z; int y = Foo.X; class Baz {} }\n"),
    ]
    infos = [scan_java(f) for f in files]
    index = JavaIndex(infos)
    plan = plan_stubs(infos[3], files[3].text, index)
    assert plan is not None
    # Foo (single import) and Bar (on-demand import, used) are stubbed; Baz is declared in the file itself.
    assert sorted(plan.stubs) == ["Bar", "Foo"]
    assert plan.stubs["Foo"].file == "p/Foo.java" and plan.stubs["Foo"].arity == 1
    assert plan.stubbed_text.count("\n") == files[3].text.count("\n")  # no line moved
    assert "enum Use { ONE, TWO  ; public interface Bar {} public static class Foo<BsT0> {} }" in plan.stubbed_text
    assert "r.Other.Foo" in plan.stub_fqns and "r.Use.Bar" in plan.stub_fqns
    # every original character is found back through the insertion map
    text = plan.stubbed_text
    for s in range(len(text)):
        o = plan.insertions.to_original(s)
        if o is not None:
            assert files[3].text[o] == text[s]


def test_line_index_splits_on_newline_only():
    idx = TextPositions("a\r\nb\u2028c\nd")
    assert idx.position(3) == (1, 0)
    assert idx.position(7) == (2, 0)  # U+2028 is not a line break for the example builder


# -- the real compiler ----------------------------------------------------------------------------------------


@needs_javac
def test_fixture_refs_are_found_at_their_names(tmp_path):
    snap, res = _analyze(FIXTURES / "basic", tmp_path)
    assert not res.exclusions, res.exclusions
    texts = snap.by_path()
    got = {(r.file.rsplit("/", 1)[-1], r.symbol, r.defining_file) for r in res.refs if r.kind is ReferenceKind.MEMBER}
    assert got == {
        ("App.java", "css", "src/com/acme/model/Color.java"),  # on Color.RED, which the original run resolves
        ("App.java", "LIMIT", "src/com/acme/util/Helper.java"),
        ("App.java", "get", "src/com/acme/util/Helper.java"),
        ("App.java", "size", "src/com/acme/util/Helper.java"),
        ("App.java", "name", "src/com/acme/util/Helper.java"),
        ("App.java", "area", "src/com/acme/model/Shape.java"),
        ("App.java", "RED", "src/com/acme/model/Color.java"),
        ("App.java", "load", "src/com/acme/app/Config.java"),
        ("App.java", "value", "src/com/acme/app/Config.java"),
        ("Möde.java", "LIMIT", "src/com/acme/util/Helper.java"),
    }
    # the project types the file names are references of their own kinds; android.os.Bundle and String are not
    others = {(r.file.rsplit("/", 1)[-1], r.line + 1, r.symbol, r.kind) for r in res.refs
              if r.kind is not ReferenceKind.MEMBER}
    assert others == {("App.java", 10, "Shape", ReferenceKind.TYPE), ("App.java", 11, "Helper", ReferenceKind.TYPE),
                      ("App.java", 11, "Helper", ReferenceKind.CONSTRUCTOR), ("App.java", 14, "Config", ReferenceKind.TYPE),
                      ("App.java", 15, "Color", ReferenceKind.TYPE), ("App.java", 20, "Helper", ReferenceKind.TYPE),
                      ("Möde.java", 7, "Helper", ReferenceKind.TYPE)}
    for r in res.refs:
        line = texts[r.file].text.split("\n")[r.line]
        assert line[r.column:].startswith(r.symbol), r
        assert r.defining_file != r.file
    # `state.size()` fails in both runs (android.os.Bundle is missing): never a ref
    app = next(r for r in res.refs if r.symbol == "size")
    assert texts[app.file].text.split("\n")[app.line][: app.column].endswith("helper.")
    # the call split over two lines points at `name` on its own line
    name = next(r for r in res.refs if r.symbol == "name")
    assert texts[name.file].text.split("\n")[name.line].strip() == ".name();"
    # the emoji before the name on a tab-indented line does not shift the column
    uni = next(r for r in res.refs if r.file.endswith("Möde.java") and r.symbol == "LIMIT")
    assert texts[uni.file].text.split("\n")[uni.line][uni.column:].startswith("LIMIT;")
    assert res.tool_versions.get("javac", "").startswith("17") or res.tool_versions.get("javac")


@needs_javac
def test_driver_is_package_data_and_its_source_keys_the_cache(tmp_path, monkeypatch):
    source = driver_source()
    assert "public final class BenchsmithJavac" in source
    monkeypatch.setenv("BENCHSMITH_CACHE", str(tmp_path / "cache"))
    analyzer = get_analyzer("java")
    first, err = analyzer._driver_dir(tmp_path / "w0")
    assert first is not None and (first / "BenchsmithJavac.class").is_file(), err
    assert analyzer._driver_dir(tmp_path / "w1")[0] == first  # compiled once, then found in the cache
    # an edited driver is compiled again, into a directory of its own
    monkeypatch.setattr("benchsmith.analyzers.java.analyzer.driver_source", lambda: source + "// edited\n")
    second, err = analyzer._driver_dir(tmp_path / "w2")
    assert second is not None and second != first and second.parent == first.parent, err


@needs_javac
def test_deterministic(tmp_path):
    _, a = _analyze(FIXTURES / "basic", tmp_path / "a")
    _, b = _analyze(FIXTURES / "basic", tmp_path / "b")
    assert [r.to_dict() for r in a.refs] == [r.to_dict() for r in b.refs]


@needs_javac
def test_files_javac_cannot_parse_are_recorded(tmp_path):
    _, res = _analyze(FIXTURES / "choke", tmp_path)
    reasons = {e.item_id.rsplit("/", 1)[-1]: e.reason for e in res.exclusions}
    # Java 21 record patterns: tree-sitter reads them, javac 17 cannot
    assert reasons["Modern.java"] is Reason.TOOLCHAIN_CANNOT_PARSE
    assert reasons["Broken.java"] is Reason.SYNTAX_ERROR
    # the healthy file still yields its reference, the unparsable ones none
    assert [(r.file, r.symbol) for r in res.refs] == [("src/p/Uses.java", "Util"), ("src/p/Uses.java", "twice")]


def _fake_tool(dir_: Path, name: str, body: str) -> Path:
    dir_.mkdir(parents=True, exist_ok=True)
    p = dir_ / name
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)  # executable by the throwaway uid a confined toolchain runs as, like a real one
    return p


@needs_javac
def test_hanging_compiler_is_a_timeout_exclusion(tmp_path, monkeypatch):
    # Stands for a javac that never finishes (a pathological file): a `java` on PATH that sleeps. The driver
    # itself is compiled by the real javac beforehand.
    analyzer = get_analyzer("java", AnalyzerOptions(timeout=1.5))
    snap = snapshot(FIXTURES / "basic", analyzer.extensions, tmp_path / "snap", repo_name="fixture")
    analyzer._driver_dir(tmp_path / "w0")
    fake = _fake_tool(tmp_path / "bin", "java", "sleep 30")
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    res = analyzer.analyze(snap, tmp_path / "work")
    assert res.refs == []
    assert [e.reason for e in res.exclusions] == [Reason.TOOL_TIMEOUT]


@needs_javac
def test_crashing_compiler_is_a_crash_exclusion(tmp_path, monkeypatch):
    # Stands for a JVM dying mid-run (out of memory): it prints half a report and exits 137.
    analyzer = get_analyzer("java")
    snap = snapshot(FIXTURES / "basic", analyzer.extensions, tmp_path / "snap", repo_name="fixture")
    analyzer._driver_dir(tmp_path / "w0")
    fake = _fake_tool(tmp_path / "bin", "java", "echo '{\"phase\":\"analyze\"}'; exit 137")
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    res = analyzer.analyze(snap, tmp_path / "work")
    assert [e.reason for e in res.exclusions] == [Reason.TOOL_CRASH]
    assert "137" in res.exclusions[0].detail


def test_missing_compiler_is_recorded(tmp_path):
    analyzer = get_analyzer("java")
    analyzer.java = analyzer.javac = "benchsmith-no-such-javac"
    snap = snapshot(FIXTURES / "basic", analyzer.extensions, tmp_path / "snap", repo_name="fixture")
    res = analyzer.analyze(snap, tmp_path / "work")
    assert [e.reason for e in res.exclusions] == [Reason.TOOL_MISSING]
