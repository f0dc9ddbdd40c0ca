"""TypeScript analyzer on a tiny fixture project (tests/fixtures/typescript/project) with the real pinned tsc.

The fixture covers every import form (default, named with alias, namespace, `import type`, `import = require`,
path-mapped, a `.js` specifier, a re-export through an index, an external package), a `.tsx` file, a `.d.ts`
file, a CRLF file, a file with a non-ASCII name and astral characters before the reference, a file with a
syntax error, and a repository tsconfig whose language-service plugin writes a marker file if it is ever loaded.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from benchsmith.analyzers import get_analyzer
from benchsmith.analyzers.base import AnalyzerOptions
from benchsmith.analyzers.typescript import TSC_ENV, FileInfo, TypeScriptAnalyzer
from benchsmith.analyzers.typescript.checker import CHECKER_DIAGNOSTIC
from benchsmith.analyzers.typescript.positions import FilePositions
from benchsmith.analyzers.typescript.resolver import ModuleResolver
from benchsmith.analyzers.typescript.tsc_output import parse_tsc_output
from benchsmith.analyzers.typescript.tsconfig import PathConfig, merge_path_configs, strip_jsonc
from benchsmith.analyzers.typescript.uses import SCAN_DIAGNOSTIC
from benchsmith.files import snapshot
from benchsmith.records import Reason
from tests.typescript_support import require_tsc

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "typescript" / "project"


def _require_tsc() -> None:
    require_tsc(TypeScriptAnalyzer().tsc_path())


def _analyze(repo: Path, work: Path, analyzer: TypeScriptAnalyzer | None = None):
    analyzer = analyzer or TypeScriptAnalyzer()
    snap = snapshot(repo, analyzer.extensions, work / "snap", repo_name="fixture")
    snap.configs = analyzer.read_configs(repo)
    return analyzer.analyze(snap, work / "work"), snap


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    _require_tsc()
    base = tmp_path_factory.mktemp("ts")
    repo = base / "repo"
    shutil.copytree(FIXTURE, repo)
    result, snap = _analyze(repo, base)
    return repo, base, result, {f.path: f.text for f in snap.files}


def _refs(result, file: str) -> dict[tuple[str, str], object]:
    """The references the diagnostics revealed (the binding scan's are tested in test_typescript_kinds*.py, the
    type checker's in test_typescript_checker.py)."""
    return {(r.symbol, r.import_name): r for r in result.refs
            if r.file == file and r.diagnostic not in (SCAN_DIAGNOSTIC, CHECKER_DIAGNOSTIC)}


# -- end to end on the fixture --------------------------------------------------------------------------------------
def test_import_forms_each_yield_a_reference(analysed):
    _, _, result, _ = analysed
    app = _refs(result, "src/app.ts")
    expected = {
        ("register", "Registry"): ("src/util/helper.ts", "TS2339"),  # default import, member of an instance
        ("Shape", "Shape"): ("src/shapes.ts", "TS2554"),  # `new Shape(2, 3)`: the callee, not the arguments
        ("unit", "Shape"): ("src/shapes.ts", "TS2339"),  # static member
        ("Green", "Colour"): ("src/shapes.ts", "TS2339"),  # `Color as Colour`
        ("makeShape", "makeShape"): ("src/shapes.ts", "TS2348"),  # a function called
        ("helper", "helpers"): ("src/util/helper.ts", "TS2339"),  # namespace import, './util/helper.js' specifier
        ("Options", "helpers"): ("src/util/helper.ts", "TS2694"),  # namespace member in a type position
        ("aidHelper", "aidHelper"): ("src/util/helper.ts", "TS2348"),  # re-exported through index.ts under an alias
        ("Box", "Box"): ("src/shapes.ts", "TS2315"),  # path-mapped '@lib/shapes' (repository tsconfig paths)
        ("name", "Named"): ("src/shapes.ts", "TS2339"),  # `import type`
        ("depth", "Decl"): ("src/decl.d.ts", "TS2339"),  # a declaration file as the defining file
        ("area", "Shape"): ("src/shapes.ts", "TS2339"),  # also `this.area()` in `class Square extends Shape`
    }
    for key, (defining, code) in expected.items():
        assert key in app, f"no reference {key} in src/app.ts; found {sorted(app)}"
        assert app[key].defining_file == defining, (key, app[key])
        assert app[key].diagnostic == code, (key, app[key])
    # a member inherited across files is attributed to the file declaring it, up the `extends` chain
    assert app[("label", "Special")].defining_file == "src/special.ts"
    assert app[("area", "Special")].defining_file == "src/shapes.ts"
    assert ("side", "Shape") not in app  # declared in the file itself
    inherited = [r for r in result.refs if r.file == "src/app.ts" and r.symbol == "area" and "Square" in r.message]
    assert inherited and inherited[0].defining_file == "src/shapes.ts"
    assert not any(r.import_name == "lodash" for r in result.refs)  # an external package is never stubbed
    assert _refs(result, "src/legacy.ts")[("helper", "Helper")].defining_file == "src/util/helper.ts"  # import = require
    assert ("unit", "Shape") in _refs(result, "src/components/view.tsx")  # TSX


def test_every_reference_points_at_its_symbol_in_the_original(analysed):
    _, _, result, texts = analysed
    assert len(result.refs) >= 15
    for r in result.refs:
        text = texts[r.file]
        lines = text.split("\n")
        offset = sum(len(line) + 1 for line in lines[: r.line]) + r.column
        assert text[offset:].startswith(r.symbol), r
        assert r.defining_file != r.file and r.defining_file in texts, r
    assert not any(r.file.endswith(".d.ts") for r in result.refs)  # decl.d.ts imports nothing of the project


def test_columns_are_characters_not_utf16_units_and_crlf_lines(analysed):
    _, _, result, texts = analysed
    wide, area = sorted((r for r in result.refs if r.file == "src/ünï code.ts" and r.symbol != "Shape"),
                        key=lambda r: r.column)
    line = texts[wide.file].split("\n")[wide.line]
    assert "😀" in line[: wide.column]  # astral characters before the name: tsc counts 2 units each
    assert line[wide.column:].startswith("unit")
    # the type checker's references too (`Shape.unit().area()`: area of the inferred Shape)
    assert line[area.column:].startswith("area") and area.diagnostic == CHECKER_DIAGNOSTIC
    crlf, width = sorted((r for r in result.refs if r.file == "src/crlf.ts" and r.symbol != "Shape"),
                         key=lambda r: r.line)
    assert (crlf.line, crlf.symbol) == (2, "unit")
    assert texts["src/crlf.ts"].split("\n")[2][crlf.column:].startswith("unit")
    # the binding scan places its references on the same numbering: `crlf.width`, crlf = Shape.unit(): Shape
    assert (width.line, width.symbol, width.diagnostic) == (3, "width", SCAN_DIAGNOSTIC)
    assert texts["src/crlf.ts"].split("\n")[3][width.column:].startswith("width")


def test_syntax_error_is_recorded_and_does_not_hide_other_files(analysed):
    _, _, result, _ = analysed
    broken = [e for e in result.exclusions if e.item_id == "fixture/src/broken.ts"]
    assert broken and broken[0].reason is Reason.SYNTAX_ERROR
    # tsc reports no semantic diagnostic while any file has a syntax error: refs exist only because the broken
    # file was taken out of the compile
    assert result.stats["compiled_files"] == result.stats["files"] - 1
    assert not any(r.file == "src/broken.ts" for r in result.refs)


def test_repository_plugins_and_extends_never_reach_tsc(analysed):
    repo, base, result, _ = analysed
    assert not (repo / "PLUGIN_WAS_LOADED").exists()
    for tag in ("original", "stubbed"):
        config = json.loads((base / "work" / f"tsconfig-{tag}" / "tsconfig.json").read_text(encoding="utf-8"))
        assert "extends" not in config
        assert config["compilerOptions"]["plugins"] == []
        assert config["compilerOptions"]["noResolve"] is True
        assert config["compilerOptions"]["types"] == []
        # only the re-based path patterns came from the repository's tsconfig
        assert list(config["compilerOptions"]["paths"]) == ["@lib/*"]
    assert any(r.symbol == "Box" for r in result.refs)  # ... and they were honoured


def test_the_plugin_fixture_would_leave_a_marker_if_loaded(tmp_path):
    """Guards the test above: loading the fixture plugin does write the marker it checks for."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is required for TypeScript analysis; install Node.js")
    shutil.copytree(FIXTURE, tmp_path / "repo")
    subprocess.run([node, "-e", "require(process.argv[1])", str(tmp_path / "repo" / "evil-plugin")], check=True,
                   timeout=60)
    assert (tmp_path / "repo" / "PLUGIN_WAS_LOADED").exists()


def test_deterministic(analysed, tmp_path):
    repo, _, first, _ = analysed
    second, _ = _analyze(repo, tmp_path)
    assert [r.to_dict() for r in first.refs] == [r.to_dict() for r in second.refs]
    assert first.stats == second.stats


def test_registry_and_grammar_per_file():
    analyzer = get_analyzer("typescript")
    assert isinstance(analyzer, TypeScriptAnalyzer)
    assert analyzer.grammar_for("a/b.tsx") == "language_tsx"
    assert analyzer.grammar_for("a/b.ts") == "language_typescript"
    from tree_sitter import Parser

    tree = Parser(analyzer.ts_language_for("x.tsx")).parse(b"const a = <div>{x}</div>;")
    assert not tree.root_node.has_error



# -- the owner of a member is the object before the '.', not an import of the same name --------------------------
_SAME_NAME_TS = {
    "src/single.ts": "export function dist(a: number): number { return a; }\nexport function area(): number { return 0; }\n",
    "src/geo.ts": "export function dist(a: number, b: number): number { return a - b; }\n"
                  "export class Point { x = 0; }\nexport class Shape { area(): number { return 1; } }\n",
    "src/main.ts": "import { dist, area } from './single';\n"
                   "import * as geo from './geo';\n"
                   "import { Shape } from './geo';\n"
                   "export const a = dist(1) + area();\n"
                   "export const b = geo.dist(1, 2);\n"  # a member named like the named import `dist`
                   "export function f(p: geo.Point): number { return 0; }\n"
                   "export const s = new Shape();\n"
                   "export const c = s.area();\n",  # object `s` is no import: the quoted type 'Shape' is the owner
}


@pytest.mark.parametrize("language", ["typescript", "javascript"])
def test_member_named_like_an_import_is_owned_by_its_object(tmp_path, language):
    _require_tsc()
    files = dict(_SAME_NAME_TS)
    if language == "javascript":  # the same project without type annotations
        files = {k.replace(".ts", ".js"): v.replace(": number", "").replace("(p: geo.Point)", "(p)")
                 .replace("x = 0;", "constructor() { this.x = 0; }") for k, v in files.items()}
    repo = tmp_path / "repo"
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    ext = ".ts" if language == "typescript" else ".js"
    result, _ = _analyze(repo, tmp_path, get_analyzer(language))
    found = {(r.line, r.symbol): (r.import_name, r.defining_file) for r in result.refs if r.file == f"src/main{ext}"}
    assert found[(4, "dist")] == ("geo", f"src/geo{ext}")
    assert found[(7, "area")] == ("Shape", f"src/geo{ext}")
    # the named imports themselves still resolve to their own module
    assert found[(3, "dist")] == ("dist", f"src/single{ext}")
    assert found[(3, "area")] == ("area", f"src/single{ext}")
    if language == "typescript":
        assert found[(5, "Point")] == ("geo", "src/geo.ts")  # type position: `geo.Point`


# -- failures of the toolchain ------------------------------------------------------------------------------------
def test_timeout_is_an_exclusion(tmp_path):
    _require_tsc()
    result, _ = _analyze(FIXTURE, tmp_path, TypeScriptAnalyzer(AnalyzerOptions(timeout=0.05)))
    assert not result.refs
    assert [e.reason for e in result.exclusions if e.item_id == "fixture"] == [Reason.TOOL_TIMEOUT]


def test_missing_compiler_is_an_exclusion(tmp_path, monkeypatch):
    monkeypatch.setenv(TSC_ENV, str(tmp_path / "no-such-tsc.js"))
    result, _ = _analyze(FIXTURE, tmp_path)
    (exc,) = [e for e in result.exclusions if e.item_id == "fixture"]
    assert exc.reason is Reason.TOOL_MISSING and "setup_toolchains" in exc.detail


def test_crashing_compiler_is_an_exclusion(tmp_path, monkeypatch):
    # Stands in for a tsc that dies (an internal compiler error): a script that throws, run through the same path.
    if shutil.which("node") is None:
        pytest.fail("node is required for TypeScript analysis; install Node.js")
    fake = tmp_path / "tsc.js"
    fake.write_text("throw new Error('Debug Failure. False expression.');\n", encoding="utf-8")
    monkeypatch.setenv(TSC_ENV, str(fake))
    result, _ = _analyze(FIXTURE, tmp_path)
    (exc,) = [e for e in result.exclusions if e.item_id == "fixture"]
    assert exc.reason is Reason.TOOL_CRASH and "Debug Failure" in exc.detail


# -- pieces ------------------------------------------------------------------------------------------------------
def test_parse_tsc_output_paths_with_spaces_parens_and_unicode():
    out = (
        "src/a b/ü (1,2) x.ts(3,27): error TS2339: Property 'zz' does not exist on type 'L'.\n"
        "src/plain.ts(10,1): error TS2322: Type 'A' is not assignable to type 'B'.\r\n"
        "  Types of property 'x' are incompatible.\n"
        "error TS5023: Unknown compiler option 'foo'.\n"
        "some unrelated noise\n"
    )
    msgs = parse_tsc_output(out, ["src/a b/ü (1,2) x.ts", "src/plain.ts"])
    assert [(m.file, m.line, m.column, m.code) for m in msgs] == [
        ("src/a b/ü (1,2) x.ts", 3, 27, "TS2339"),
        ("src/plain.ts", 10, 1, "TS2322"),
        (None, 0, 0, "TS5023"),
    ]
    assert msgs[0].message == "Property 'zz' does not exist on type 'L'."
    assert msgs[1].message.endswith("\nTypes of property 'x' are incompatible.")
    # a file named like a diagnostic head: the known path wins over the first head on the line
    (tricky,) = parse_tsc_output("a(1,2): error TS1: .ts(4,5): error TS2304: Cannot find name 'q'.\n",
                                 ["a(1,2): error TS1: .ts"])
    assert (tricky.file, tricky.line, tricky.column, tricky.code) == ("a(1,2): error TS1: .ts", 4, 5, "TS2304")


def test_positions_utf16_and_typescript_line_breaks():
    text = 'const s = "😀😀"; x.foo;\r\nlet a\u2028= 1; b.bar\n'
    pos = FilePositions(text)
    off = pos.from_tsc(1, 21)  # tsc: 11 + 4 UTF-16 units for the two emoji + 5, 1-based
    assert text[off:].startswith("foo") and pos.line_col(off) == (0, 18)
    # U+2028 ends a line for tsc but not for '\n'-separated refs
    off = pos.from_tsc(3, 8)
    assert text[off:].startswith("bar") and pos.line_col(off) == (1, 13)
    assert pos.from_tsc(9, 1) is None and pos.from_tsc(1, 400) is None
    # tree-sitter byte offsets <-> characters, on every boundary of a mixed text
    for off in range(len(text) + 1):
        b = len(text[:off].encode("utf-8"))
        assert pos.to_byte(off) == b and pos.to_char(b) == off


def test_stub_replaces_imports_and_keeps_every_line():
    analyzer = TypeScriptAnalyzer()
    text = ("import {\r\n  A,\r\n  B as C,\r\n} from './a';\r\nimport * as ns from './b';\r\n"
            "import ext from 'ext';\r\nnew A().m(); C.x; ns.y;\r\n")
    info: FileInfo = analyzer.file_info("src/f.ts", text)
    resolver = ModuleResolver({"src/f.ts", "src/a.ts", "src/b/index.ts"}, PathConfig(),
                              analyzer.resolution_extensions, analyzer.extension_map)
    for site in info.sites:
        site.target = resolver.resolve(site.specifier, info.path)
    assert [s.target for s in info.sites] == ["src/a.ts", "src/b/index.ts", None]
    stub = analyzer.stub_file(info)
    assert stub is not None
    assert stub.text.count("\r\n") == text.count("\r\n")  # same lines, same line breaks
    assert stub.text.splitlines()[-1] == text.splitlines()[-1]
    assert "class A {} namespace A {}" in stub.text and "class C {} namespace C {}" in stub.text
    assert "class ns {}" in stub.text and "import ext from 'ext';" in stub.text
    assert "export {}" not in stub.text  # the kept external import keeps it a module
    assert stub.stub_ts_lines == {0, 1, 2, 3, 4}
    assert sorted(stub.locals) == ["A", "C", "ns"]
    assert stub.locals["C"].imported == "B" and stub.locals["ns"].imported is None


def test_stub_of_a_file_left_without_module_syntax_stays_a_module():
    analyzer = TypeScriptAnalyzer()
    info = analyzer.file_info("f.ts", "import { A } from './a';\nconst x = new A();\n")
    info.sites[0].target = "a.ts"
    stub = analyzer.stub_file(info)
    assert stub.text.startswith("class A {} namespace A {} export {};\n")


def test_resolver_follows_typescript_rules():
    files = {"src/a.ts", "src/b.tsx", "src/c/index.ts", "src/d.d.ts", "src/e.mts", "lib/x.ts", "root.ts"}
    cfg = PathConfig(paths=(("@lib/*", ("lib/*",)), ("exact", ("src/a.ts",)), ("@/*", ("src/*",))), base_url="src")
    r = ModuleResolver(files, cfg, TypeScriptAnalyzer.resolution_extensions, TypeScriptAnalyzer.extension_map)
    assert r.resolve("./a", "src/z.ts") == "src/a.ts"
    assert r.resolve("./a.js", "src/z.ts") == "src/a.ts"  # tsc maps .js to .ts
    assert r.resolve("./a.ts", "src/z.ts") == "src/a.ts"
    assert r.resolve("./b.js", "src/z.ts") == "src/b.tsx"
    assert r.resolve("./c", "src/z.ts") == "src/c/index.ts"
    assert r.resolve("./d", "src/z.ts") == "src/d.d.ts"
    assert r.resolve("./e.mjs", "src/z.ts") == "src/e.mts"
    assert r.resolve("../root", "src/z.ts") == "root.ts"
    assert r.resolve("../../etc/passwd", "src/z.ts") is None
    assert r.resolve("@lib/x", "src/z.ts") == "lib/x.ts"
    assert r.resolve("exact", "src/z.ts") == "src/a.ts"
    assert r.resolve("c", "lib/x.ts") == "src/c/index.ts"  # baseUrl
    assert r.resolve("react", "src/z.ts") is None


def test_repository_configs_are_data_only(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tsconfig.base.json").write_text(
        '{"compilerOptions": {"baseUrl": "./src", // base\n "paths": {"~/*": ["./*"],}}}', encoding="utf-8")
    (tmp_path / "pkg" / "tsconfig.json").write_text(
        '{"extends": ["../tsconfig.base.json", "@org/base"], "compilerOptions": {"plugins": [{"name": "x"}]}}',
        encoding="utf-8")
    (tmp_path / "node_modules" / "@org" / "base").mkdir(parents=True)
    (tmp_path / "node_modules" / "@org" / "base" / "tsconfig.json").write_text('{"compilerOptions": {"paths": '
                                                                               '{"evil/*": ["/etc/*"]}}}')
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    (tmp_path / "tsconfig.bad.json").write_text("{", encoding="utf-8")
    configs = TypeScriptAnalyzer.read_configs(tmp_path)
    assert sorted(configs) == ["pkg/tsconfig.json", "tsconfig.bad.json", "tsconfig.base.json"]
    merged = merge_path_configs(configs)
    assert merged.paths == (("~/*", ("src/*",)),)  # inherited by pkg through a local extends, re-based
    assert merged.base_url == "src"
    assert any("tsconfig.bad.json" in n for n in merged.notes)
    assert json.loads(strip_jsonc('{"a": "//not a comment", /* c */ "b": [1, 2,],}')) == \
        {"a": "//not a comment", "b": [1, 2]}


def test_read_configs_does_not_follow_symlinks(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text('{"compilerOptions": {"paths": {"x": ["y"]}}}', encoding="utf-8")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "tsconfig.json").symlink_to(outside)
    assert TypeScriptAnalyzer.read_configs(repo) == {}


def test_every_stubbed_file_broken_for_tsc_is_recorded_not_a_crash(tmp_path):
    # tree-sitter reads `08` as a number; tsc's scanner rejects it (TS1489), so the only file with project imports
    # leaves the compile and there is no stubbed tree to compile (this used to raise AttributeError).
    _require_tsc()
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "b.ts").write_text("export class B { m(): number { return 1; } }\n", encoding="utf-8")
    (repo / "src" / "a.ts").write_text("import { B } from './b';\nexport const y = new B().m();\nlet x = 08;\n",
                                       encoding="utf-8")
    result, _ = _analyze(repo, tmp_path)
    assert not result.refs
    assert [(e.item_id, e.reason) for e in result.exclusions] == [("fixture/src/a.ts", Reason.SYNTAX_ERROR)]
    assert result.stats["compiled_files"] == 1 and result.stats["refs"] == 0
