"""Go analyzer on a tiny fixture module with the real Go toolchain (go/types through our driver): stubs, import
paths, statement cuts, diagnostics parsing, failures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.analyzers.go import (GoAnalyzer, ignored_dir, module_path, package_paths, parse_driver_output,
                                     scan_file, stub_file)
from benchsmith.builders.cceval.examples import ExampleCutter, statement_end
from benchsmith.files import SourceFile, snapshot
from benchsmith.records import CrossFileRef, Reason
from benchsmith.text_positions import byte_col_to_char

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "go" / "basic"
needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="go not on PATH (run scripts/setup_toolchains.sh)")


def _analyze(tmp_path: Path, repo: Path = FIXTURE, configs: bool = True, **opts):
    analyzer = get_analyzer("go", AnalyzerOptions(**opts))
    snap = snapshot(repo, analyzer.extensions, tmp_path / "snap", repo_name="fixture")
    if configs:
        snap.configs = analyzer.read_configs(repo)
    return snap, analyzer.analyze(snap, tmp_path / "work")


# -- pure parts -------------------------------------------------------------------------------------------------


def test_module_path_reads_only_the_module_directive():
    assert module_path("// comment\nmodule example.com/m // trailing\n\ngo 1.21\n") == "example.com/m"
    assert module_path('module "quoted.org/x/v2"\n') == "quoted.org/x/v2"
    assert module_path("go 1.21\nrequire a.b/c v1.0.0\n") is None


def test_ignored_directories_follow_the_go_command():
    assert ignored_dir("vendor/a.org/x/x.go") and ignored_dir("pkg/testdata/t.go") and ignored_dir("_old/x.go")
    assert ignored_dir(".hidden/x.go") and not ignored_dir("pkg/x.go") and not ignored_dir("x.go")


def test_package_paths_from_nested_go_mod_files():
    mods = {"go.mod": "module a.org/root\n", "tools/go.mod": "module a.org/tools\n"}
    paths, how = package_paths(["", "x", "x/y", "tools", "tools/gen"], mods, [])
    assert paths == {"": "a.org/root", "x": "a.org/root/x", "x/y": "a.org/root/x/y", "tools": "a.org/tools",
                     "tools/gen": "a.org/tools/gen"}
    assert how == "go.mod"


def test_package_paths_inferred_from_imports_without_go_mod():
    # the project's own imports outvote an external path that happens to end like one of its directories
    imports = ["github.com/me/proj/util", "github.com/me/proj/util", "github.com/me/proj/api",
               "github.com/other/lib/util"]
    paths, how = package_paths(["", "util", "api", "api/v1"], {}, imports)
    assert how == "inferred"
    assert paths == {"": "github.com/me/proj", "util": "github.com/me/proj/util", "api": "github.com/me/proj/api",
                     "api/v1": "github.com/me/proj/api/v1"}


def test_stub_blanks_imports_in_place_and_appends_stubs():
    text = ('package p\n\nimport "a.org/m/one"\nimport (\n\t"fmt"; two "a.org/m/two"\n\t_ "a.org/m/side"\n'
            '\t. "a.org/m/dot"\n\t"ext.org/lib"\n)\n\nvar _ = one.X + two.Y // é\n')
    info = scan_file("p/p.go", text)
    assert info.parse_error is None and info.package == "p"
    dirs = {"a.org/m/one": "one", "a.org/m/two": "two", "a.org/m/side": "side", "a.org/m/dot": "dot"}
    s = stub_file(info, {"one": "one", "two": "zwei", "side": "side", "dot": "dot"}, dirs)
    assert s is not None
    original_lines, stubbed_lines = text.split("\n"), s.text.split("\n")
    # same lines up to the stubs, each of the same length; every untouched line is byte-identical
    assert s.first_stub_line == text.count("\n")
    for a, b in zip(original_lines[:-1], stubbed_lines):
        assert len(a) == len(b)
    assert stubbed_lines[2].strip() == ""  # `import "a.org/m/one"` as a whole
    assert stubbed_lines[4] == '\t"fmt";' + " " * len(' two "a.org/m/two"')
    assert stubbed_lines[5] == '\t_ "a.org/m/side"'  # a blank import binds nothing: kept
    assert stubbed_lines[6].strip() == "" and stubbed_lines[7] == '\t"ext.org/lib"'
    # an alias binds its own name; a plain import the package's declared name (not the last path element)
    assert s.locals == {"one": "one", "two": "two"}
    assert s.dots == ["dot"]
    assert stubbed_lines[s.first_stub_line:] == ["var one struct{}", "var two struct{}", ""]
    assert scan_file("p/q.go", s.text).parse_error is None


def test_stub_of_a_file_without_project_imports_is_none():
    info = scan_file("a.go", 'package a\n\nimport "fmt"\n\nfunc F() { fmt.Println() }')
    assert stub_file(info, {"b": "b"}, {"a.org/m/b": "b"}) is None
    assert info.declared == {"F"}


def test_declared_names_cover_grouped_and_generic_declarations():
    info = scan_file("d.go", "package d\nvar (\n\tA, B = 1, 2\n)\nconst C = 3\ntype (\n\tD struct{}\n\tE = int\n)\n"
                             "type G[T any] struct{}\nfunc H() {}\nfunc (D) M() {}\n")
    assert info.declared == {"A", "B", "C", "D", "E", "G", "H"}  # methods are not package-level names


def test_driver_output_parsing():
    out = "\n".join([
        '{"kind":"start","importer":"gc","go":"go1.19.8"}',
        'panic: not ours',
        '{"kind":"skip","file":"w_windows.go","why":"build constraints exclude it for linux/amd64"}',
        '{"kind":"parse","file":"a b/ü.go","line":3,"col":2,"msg":"expected operand"}',
        '{"kind":"error","file":"x.go","line":4,"col":7,"msg":"x.F undefined (type struct{} has no field or method F)","soft":false}',
        '{"kind":"done","packages":2,"errors":1}',
    ])
    run = parse_driver_output(out)
    assert run.done and run.crash is None and run.importer == "gc" and run.go == "go1.19.8"
    assert [(m.kind, m.file) for m in run.messages] == [("skip", "w_windows.go"), ("parse", "a b/ü.go"),
                                                        ("error", "x.go")]
    assert not parse_driver_output('{"kind":"error","file":"x.go","line":1,"col":1,"msg":"m"}').done
    assert parse_driver_output('{"kind":"crash","msg":"bad input"}').crash == "bad input"


def test_byte_columns_become_character_columns():
    # go/types columns are 1-based UTF-8 byte columns; the analyzer converts them with byte_col_to_char
    assert byte_col_to_char('\ts := "héllo"; x.F', 18 - 1) == 16
    assert byte_col_to_char("abc", 1 - 1) == 0


# -- statement cuts (automatic semicolons) --------------------------------------------------------------------


def _cut(text: str, at: str) -> str:
    data = text.encode("utf-8")
    tree = GoAnalyzer.parser_for("x.go").parse(data)
    cursor = data.index(at.encode())
    cut = statement_end(tree, data, cursor, GoAnalyzer.statement_terminators, GoAnalyzer.line_end_terminators)
    assert cut is not None
    return data[cursor:cut.end_byte].decode()


def test_statement_ends_at_an_automatic_semicolon():
    src = ("package p\n\nfunc f() {\n\tv := x.Call(1,\n\t\t2) // done\n\tw := x.Val\n\tif x.Ok {\n\t}\n"
           "\ts := x.Raw(`a\nb`)\n\tr := x.T{A: 1}; _ = r\n\tswitch {\n\t}\n\treturn\n}\nvar z = x.Last")
    assert _cut(src, "Call") == "Call(1,\n\t\t2)"  # the ',' line does not end it; the comment is not included
    assert _cut(src, "Val") == "Val"
    assert _cut(src, "Ok") == "Ok {"
    assert _cut(src, "Raw") == "Raw(`a\nb`)"  # a raw string's line break is inside a token
    assert _cut(src, "T{") == "T{"
    assert _cut(src, "Last") == "Last"  # end of file without a newline
    sw = "package p\n\nfunc f() {\n\tswitch v {\n\tcase x.A:\n\t\t// why\n\t\treturn\n\tcase x.B: g()\n\t}\n}\n"
    assert _cut(sw, "A") == "A:"  # a case header ends with its line, not at the next statement's end
    assert _cut(sw, "B") == "B: g()"


def test_other_languages_keep_the_plain_brace_rule():
    java = get_analyzer("java")
    assert java.line_end_terminators == frozenset()
    data = b"class A { void f() { int v = x.call(1,\n 2)\n ; } }"
    tree = java.parser_for("A.java").parse(data)
    cursor = data.index(b"call")
    cut = statement_end(tree, data, cursor, java.statement_terminators, java.line_end_terminators)
    assert data[cursor:cut.end_byte] == b"call(1,\n 2)\n ;"


def test_example_cutter_uses_the_go_rule():
    text = "package p\n\nfunc f() {\n\tv := geom.Dist(a,\n\t\tb)\n\t_ = v\n}\n"
    ref = CrossFileRef("p.go", 3, 11, "Dist", "geom", "geom/g.go", "MissingFieldOrMethod", "")
    (ex,) = list(ExampleCutter(GoAnalyzer(), {"p.go": SourceFile("p.go", text)}, "r").run([ref]))
    assert ex.groundtruth == "Dist(a,\n\t\tb)"
    assert ex.prompt + ex.groundtruth + ex.right_context == text


# -- the real toolchain ---------------------------------------------------------------------------------------


def _declares(text: str, name: str) -> bool:
    import re

    return re.search(rf"^(?:func|type|var|const)\s+(?:\([^)]*\)\s*)?{name}\b|^\t{name}\b", text, re.M) is not None


@needs_go
def test_fixture_module_references(tmp_path):
    snap, res = _analyze(tmp_path)
    texts = snap.by_path()
    assert res.tool_versions["go"].startswith("go1.")
    assert res.stats["import_paths"] == "go.mod"
    assert not [e for e in res.exclusions if e.item_id == "fixture"], res.exclusions
    refs = {(r.file, r.line + 1, r.symbol): r for r in res.refs}
    for r in res.refs:
        line = texts[r.file].text.split("\n")[r.line]
        assert line[r.column:].startswith(r.symbol), r
        assert r.defining_file != r.file and _declares(texts[r.defining_file].text, r.symbol), r
    # alias, plain and dot imports; the defining file is the one declaring the name, not the package's first file
    assert refs[("render/render.go", 19, "Epsilon")].defining_file == "geom/consts.go"
    assert refs[("render/render.go", 19, "Epsilon")].import_name == "g"
    assert refs[("render/render.go", 17, "Clamp")].import_name == "."
    assert refs[("render/render.go", 17, "Clamp")].diagnostic == "UndeclaredName"
    assert refs[("cmd/tool/main.go", 11, "Describe")].defining_file == "render/render.go"
    # an external test package importing its own directory's package
    assert refs[("geom/point_test.go", 10, "Dist")].defining_file == "geom/point.go"
    # the second line of a multi-line expression and a column after a non-ASCII character
    assert ("render/render.go", 16, "Origin") in refs
    col = refs[("render/render.go", 15, "Dist")].column
    assert texts["render/render.go"].text.split("\n")[14][col:].startswith("Dist(at,")
    # //line directives do not move positions
    assert ("render/gen.go", 9, "Dist") in refs
    # not references: an external package's member, a name the original already lacked (render.Missing),
    # files the build excludes (windows, cgo), ignored directories, a file that does not parse
    files = {r.file for r in res.refs}
    assert not any(r.symbol in ("Red", "Paint", "Missing", "Area", "Add") for r in res.refs)
    assert not files & {"render/render_windows.go", "render/native.go", "vendor/example.org/dep/dep.go",
                        "testdata/sample.go", "broken/broken.go"}
    assert res.stats["excluded_by_build_constraints"] == 2
    assert res.stats["ignored_files"] == 2
    assert res.stats["diagnostics_on_stub_lines"] >= 2  # shapes.go and circle.go both stub `geom`
    assert [(e.item_id, e.reason) for e in res.exclusions] == [("fixture/broken/broken.go", Reason.SYNTAX_ERROR)]


@needs_go
def test_checker_is_package_data_and_its_source_keys_the_cache(tmp_path, monkeypatch):
    from benchsmith.analyzers.go.driver import driver_file

    main_go = driver_file("main.go")
    assert main_go.startswith("// benchsmith's Go type checker") and driver_file("go.mod").startswith("module ")
    monkeypatch.setenv("BENCHSMITH_CACHE", str(tmp_path / "cache"))
    analyzer = GoAnalyzer()
    first, err = analyzer._driver(tmp_path / "w0")
    assert first is not None and (first / "benchsmith-gotype").is_file(), err
    assert analyzer._driver(tmp_path / "w1")[0] == first  # built once, then found in the cache
    # an edited checker is never taken from the cache: it is built again (here it does not compile)
    monkeypatch.setattr("benchsmith.analyzers.go.analyzer.driver_file",
                        lambda name: main_go + "\nfunc broken( {\n" if name == "main.go" else driver_file(name))
    second, err = analyzer._driver(tmp_path / "w2")
    assert second is None and "could not build the Go type checker" in err


@needs_go
def test_deterministic_and_same_refs_without_go_mod(tmp_path):
    _, a = _analyze(tmp_path / "a")
    _, b = _analyze(tmp_path / "b")
    assert [r.to_dict() for r in a.refs] == [r.to_dict() for r in b.refs] and a.stats == b.stats
    _, c = _analyze(tmp_path / "c", configs=False)
    assert c.stats["import_paths"] == "inferred"
    assert [r.to_dict() for r in c.refs] == [r.to_dict() for r in a.refs]


@needs_go
def test_a_repository_go_mod_never_reaches_the_toolchain(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    # a toolchain switch, a replace pointing outside, a workspace and a go:generate line: none may take effect
    (repo / "go.mod").write_text("module example.com/shapes\n\ngo 1.99\n\ntoolchain go1.99.0\n\n"
                                 "replace example.com/shapes/geom => /etc\n", encoding="utf-8")
    (repo / "go.work").write_text("go 1.99\nuse /\n", encoding="utf-8")
    marker = tmp_path / "generated"
    (repo / "gen.go").write_text(f"package shapes\n\n//go:generate touch {marker}\n", encoding="utf-8")
    _, res = _analyze(tmp_path, repo=repo)
    assert not marker.exists()
    assert len(res.refs) >= 20, res.stats


@needs_go
def test_missing_toolchain_timeout_and_crash_are_recorded(tmp_path, monkeypatch):
    analyzer = GoAnalyzer()
    analyzer.go = "go-not-installed-here"
    snap = snapshot(FIXTURE, analyzer.extensions, tmp_path / "snap", repo_name="fixture")
    res = analyzer.analyze(snap, tmp_path / "w1")
    assert [e.reason for e in res.exclusions] == [Reason.TOOL_MISSING] and not res.refs

    _, res = _analyze(tmp_path / "t", timeout=0.001)
    assert Reason.TOOL_TIMEOUT in [e.reason for e in res.exclusions] and not res.refs

    # Stands for a driver that dies mid-run (a runtime panic): its output has no closing line.
    fake = tmp_path / "fake-driver"
    fake.mkdir()
    (fake / "benchsmith-gotype").write_text("#!/bin/sh\necho '{\"kind\":\"start\"}'\necho 'panic: boom' >&2\n"
                                            "exit 2\n", encoding="utf-8")
    (fake / "benchsmith-gotype").chmod(0o755)
    monkeypatch.setattr(GoAnalyzer, "_driver", lambda self, workdir: (fake, ""))
    _, res = _analyze(tmp_path / "c")
    (exc,) = res.exclusions
    assert exc.reason is Reason.TOOL_CRASH and "panic: boom" in exc.detail and not res.refs
