"""JavaScript analyzer (the TypeScript analyzer in allowJs/checkJs mode) on a tiny fixture project with the real
pinned tsc: ES imports (default, named with alias, namespace, path-mapped through jsconfig, an explicit ``.mjs``),
CommonJS ``require`` (plain and destructured with a rename), a class extending a stubbed import, semicolon-free
code, a syntax error, ``node_modules`` and an external package."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.analyzers import get_analyzer, registry
from benchsmith.analyzers.base import AnalysisResult, AnalyzerOptions
from benchsmith.analyzers.javascript import JavaScriptAnalyzer
from benchsmith.analyzers.typescript import TSC_ENV, TypeScriptAnalyzer
from benchsmith.builders.cceval.examples import ExampleCutter, statement_end
from benchsmith.files import SourceFile, snapshot
from benchsmith.records import CrossFileRef, Reason, ReferenceKind
from tests.typescript_support import require_tsc

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "javascript" / "project"


def _require_tsc() -> None:
    require_tsc(JavaScriptAnalyzer().tsc_path())


def _snap(work: Path, analyzer: JavaScriptAnalyzer):
    snap = snapshot(FIXTURE, analyzer.extensions, work / "snap", repo_name="fixture")
    snap.configs = analyzer.read_configs(FIXTURE)
    return snap


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    _require_tsc()
    work = tmp_path_factory.mktemp("js")
    analyzer = JavaScriptAnalyzer()
    snap = _snap(work, analyzer)
    return analyzer.analyze(snap, work / "work"), {f.path: f.text for f in snap.files}


# -- configuration and planning (no compiler) ---------------------------------------------------------------------


def test_registered_as_its_own_language_on_the_typescript_machinery():
    assert registry()["javascript"] is JavaScriptAnalyzer and registry()["typescript"] is TypeScriptAnalyzer
    js = get_analyzer("javascript")
    assert issubclass(type(js), TypeScriptAnalyzer)
    opts = js.compiler_options()
    assert opts["allowJs"] and opts["checkJs"] and opts["noResolve"] and opts["plugins"] == []
    assert not TypeScriptAnalyzer().compiler_options()["allowJs"]  # the subclass did not change its parent
    assert {js.grammar_for(p) for p in ("a.js", "b.jsx", "c.mjs", "d.cjs")} == {"language"}
    assert js.ts_language_for("b.jsx") is not None


def test_plan_resolves_es_and_commonjs_imports(tmp_path):
    analyzer = JavaScriptAnalyzer()
    snap = _snap(tmp_path, analyzer)
    assert "node_modules/dep/index.js" not in snap.by_path()
    plan = analyzer.plan(snap, tmp_path / "work", AnalysisResult())
    targets = {(path, site.specifier): site.target for path, info in plan.files.items() for site in info.sites}
    assert targets[("src/index.js", "./circle.mjs")] == "src/circle.mjs"  # explicit extension
    assert targets[("src/index.js", "./geo/index.js")] == "src/geo/index.js"
    assert targets[("src/index.js", "@geo/dist.js")] == "src/geo/dist.js"  # jsconfig paths
    assert targets[("src/index.js", "dep")] is None  # a package, never looked up
    assert targets[("src/legacy.cjs", "./util")] == "src/util.js"  # extensionless require
    assert ("src/legacy.cjs", "path") in targets and targets[("src/legacy.cjs", "path")] is None
    legacy = plan.stubbed["src/legacy.cjs"]
    assert set(legacy.locals) == {"util", "limit"}  # `const { clamp: limit } = require(...)` binds limit
    assert "namespace" not in legacy.text and "export {}" not in legacy.text  # JS syntax, still CommonJS
    assert legacy.text.count("\n") == snap.by_path()["src/legacy.cjs"].text.count("\n")
    assert "require('./util')" not in legacy.text and "require('path')" in legacy.text
    assert plan.files["src/circle.mjs"].heritage["Circle"] == [("Shape", None)]  # JS `class_heritage`
    assert plan.files["src/broken.js"].parse_error


def test_semicolon_free_statements_end_with_their_node():
    js = JavaScriptAnalyzer
    src = (b"const d = geo.dist(a,\n  b)\nconst s = Shape\n  .unit()\nif (geo.ok) { f() }\nlet x = geo.x; let y = 1\n"
           b"items.map(function () {\n  return geo.y // note\n})\n")
    tree = js.parser_for("x.js").parse(src)

    def cut(at: bytes) -> bytes:
        c = src.index(at)
        end = statement_end(tree, src, c, js.statement_terminators, js.line_end_terminators, js.statement_containers)
        return src[c:end.end_byte]

    assert cut(b"dist") == b"dist(a,\n  b)"
    assert cut(b"Shape") == b"Shape\n  .unit()"  # a line that continues is one statement
    assert cut(b"ok") == b"ok) {"  # a block header still ends at its brace, as in TypeScript
    assert cut(b"x;") == b"x;"
    assert cut(b"y //") == b"y"  # the return statement ends before its comment, not at the closing brace
    # TypeScript keeps the token rule
    assert TypeScriptAnalyzer.statement_containers == frozenset()

    text = src.decode()
    ref = CrossFileRef("x.js", 0, text.index("dist"), "dist", "geo", "geo.js", "TS2339", "")
    (ex,) = list(ExampleCutter(js(), {"x.js": SourceFile("x.js", text)}, "r").run([ref]))
    assert ex.groundtruth == "dist(a,\n  b)" and ex.prompt + ex.groundtruth + ex.right_context == text


# -- the real compiler ----------------------------------------------------------------------------------------


def test_references_of_every_import_form(analysed):
    result, texts = analysed
    refs = {(r.file, r.line + 1, r.symbol): r for r in result.refs}
    expected = {
        ("src/index.js", 8, "makeShape"): ("src/shape.js", "TS2348"),  # default import called
        ("src/index.js", 9, "unit"): ("src/shape.js", "TS2339"),  # `Shape as S`, static member
        ("src/index.js", 10, "Circle"): ("src/circle.mjs", "TS2554"),  # `new Circle(2)`: the callee
        ("src/index.js", 11, "describe"): ("src/circle.mjs", "TS2339"),  # an instance member
        ("src/index.js", 11, "area"): ("src/shape.js", "TS2339"),  # inherited: declared up the extends chain
        ("src/index.js", 12, "EPSILON"): ("src/geo/dist.js", "TS2339"),  # namespace import through `export *`
        ("src/legacy.cjs", 8, "VERSION"): ("src/util.js", "TS2339"),  # require(), after a non-ASCII character
        ("src/legacy.cjs", 9, "clamp"): ("src/util.js", "TS2339"),
        ("src/legacy.cjs", 10, "limit"): ("src/util.js", "TS2348"),  # destructured require with a rename
        ("src/circle.mjs", 10, "area"): ("src/shape.js", "TS2339"),  # `this.area()` in a class extending a stub
        ("src/nosemi.js", 5, "dist"): ("src/geo/dist.js", "TS2348"),
        ("src/nosemi.js", 7, "unit"): ("src/shape.js", "TS2339"),
    }
    for key, (defining, code) in expected.items():
        assert key in refs, (key, sorted(refs))
        assert (refs[key].defining_file, refs[key].diagnostic) == (defining, code), refs[key]
    for r in result.refs:
        line = texts[r.file].split("\n")[r.line]
        assert line[r.column:].startswith(r.symbol), r
        assert r.defining_file != r.file and r.defining_file in texts, r
    # `dep.x` (an external package) and files that are not analysed give nothing
    assert not any(r.symbol == "x" for r in result.refs)
    assert not any(r.file.startswith(("node_modules/", "src/broken")) for r in result.refs)


def test_syntax_error_is_recorded(analysed):
    result, _ = analysed
    assert [(e.item_id, e.reason) for e in result.exclusions] == [("fixture/src/broken.js", Reason.SYNTAX_ERROR)]
    assert result.stats["compiled_files"] == len(result_files := [p for p in analysed[1] if p != "src/broken.js"])
    assert result_files


def test_missing_compiler_is_an_exclusion(tmp_path, monkeypatch):
    monkeypatch.setenv(TSC_ENV, str(tmp_path / "no-such-tsc.js"))
    analyzer = JavaScriptAnalyzer(AnalyzerOptions())
    result = analyzer.analyze(_snap(tmp_path, analyzer), tmp_path / "work")
    (exc,) = [e for e in result.exclusions if e.item_id == "fixture"]
    assert exc.reason is Reason.TOOL_MISSING and not result.refs


def test_kinds_and_uses_no_diagnostic_reveals(analysed):
    """The binding scan of the TypeScript machinery runs on JavaScript too: `extends Shape` (a stub is a fine base)
    and a bare imported constant are references; every reference has a kind by its place."""
    result, _ = analysed
    by_place = {(r.file, r.line + 1, r.symbol): r for r in result.refs}
    heritage = by_place[("src/circle.mjs", 3, "Shape")]
    assert (heritage.kind, heritage.defining_file) == (ReferenceKind.HERITAGE, "src/shape.js")
    assert by_place[("src/circle.mjs", 10, "area")].kind is ReferenceKind.INHERITED_MEMBER  # this.area()
    assert by_place[("src/index.js", 10, "Circle")].kind is ReferenceKind.CONSTRUCTOR  # new Circle(2)
    dists = sorted((r.column, r.kind) for r in result.refs if (r.file, r.line + 1, r.symbol) == ("src/index.js", 12, "dist"))
    assert [k for _, k in dists] == [ReferenceKind.MODULE_MEMBER, ReferenceKind.MEMBER]  # geo.dist (import * as geo), dist()
    assert by_place[("src/nosemi.js", 8, "EPSILON")].defining_file == "src/geo/dist.js"
    assert not [r for r in result.refs if r.file == "src/broken.js"]
