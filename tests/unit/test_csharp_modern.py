"""Modern C# through the whole C# analyzer with the real mcs: the preprocessor, the down-level pass, the project's
usings, and the way back to the original positions; the references and the cuts are asserted exactly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchsmith.analyzers import get_analyzer
from benchsmith.analyzers.csharp import Compiler
from benchsmith.builders.cceval.examples import ExampleCutter
from benchsmith.files import snapshot
from benchsmith.records import Reason

pytestmark = pytest.mark.skipif(shutil.which("mcs") is None,
                                reason="mcs not on PATH (apt-get install mono-mcs; scripts/setup_toolchains.sh)")

LIB = """\
namespace Acme.Lib
{
    public class Widget
    {
        public int Size;
        public Widget(int size) { Size = size; }
        public static Widget Create() { return new Widget(1); }
        public void Draw() { }
    }
}
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode("utf-8"))
    return root


def _analyze(tmp_path: Path, files: dict[str, str], **attrs):
    repo = _write(tmp_path / "repo", files)
    a = get_analyzer("csharp")
    a.compiler = Compiler.MCS
    for k, v in attrs.items():
        setattr(a, k, v)
    snap = snapshot(repo, a.extensions, tmp_path / "snap", repo_name="repo")
    snap.configs = a.read_configs(repo)
    return a, snap, a.analyze(snap, tmp_path / "work")


def _refs(res, file: str) -> list[tuple[int, int, str]]:
    return sorted((r.line, r.column, r.symbol) for r in res.refs if r.file == file)


def _cuts(analyzer, snap, res, file: str) -> list[str]:
    cutter = ExampleCutter(analyzer, snap.by_path(), "repo", tree_views=res.tree_views)
    return [e.groundtruth for e in cutter.run([r for r in res.refs if r.file == file])]


def test_inactive_branches_are_not_analysed_and_positions_after_them_hold(tmp_path):
    app = """\
using Acme.Lib;
namespace Acme.App
{
    public class Program
#if DEBUG
        : System.IDisposable
#endif
    {
#if DEBUG
        public void Dispose() { Widget.Create().Draw(); }
#else
        public int Release() { return Widget.Create().Size; }
#endif
        public void Run() { var w = new Widget(2); w.Draw(); }
    }
}
"""
    a, snap, res = _analyze(tmp_path, {"Lib/Widget.cs": LIB, "App/Program.cs": app})
    assert _refs(res, "App/Program.cs") == [(11, 45, "Create"), (13, 40, "Widget"), (13, 53, "Draw")]
    assert _cuts(a, snap, res, "App/Program.cs") == ["Create().Size;", "Widget(2);", "Draw();"]


def test_line_directives_do_not_move_the_compilers_positions(tmp_path):
    # mcs would place everything after `#line 300 "Other.cs"` in another file: the references were lost
    app = """\
using Acme.Lib;
namespace Acme.App
{
    public class Program
    {
#line 300 "Other.cs"
        public void Run() { Widget.Create().Draw(); }
#line default
        public int Size() { return new Widget(3).Size; }
    }
}
"""
    a, snap, res = _analyze(tmp_path, {"Lib/Widget.cs": LIB, "App/Program.cs": app})
    assert _refs(res, "App/Program.cs") == [(6, 35, "Create"), (8, 39, "Widget"), (8, 49, "Size")]
    # every reference is a candidate (issue 14): the later `Size` in the same statement is an example too
    assert _cuts(a, snap, res, "App/Program.cs") == ["Create().Draw();", "Widget(3).Size;", "Size;"]


def test_project_defines_and_implicit_usings_come_from_the_csproj(tmp_path):
    csproj = """<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><TargetFramework>netstandard2.0</TargetFramework><ImplicitUsings>enable</ImplicitUsings>
  <DefineConstants>$(DefineConstants);ACME_FAST</DefineConstants></PropertyGroup>
  <ItemGroup><Using Include="Acme.Lib" /></ItemGroup>
</Project>
"""
    # no `using Acme.Lib;`: the project's <Using> item imports it; List<> comes from the SDK's implicit usings
    app = """\
namespace Acme.App
{
    public class Program
    {
        public List<int> Sizes = new List<int>();
#if ACME_FAST && NETSTANDARD2_0
        public void Run() { Sizes.Add(Widget.Create().Size); }
#else
        public void Slow() { new Widget(5).Draw(); }
#endif
    }
}
"""
    a, snap, res = _analyze(tmp_path, {"Acme.csproj": csproj, "Lib/Widget.cs": LIB, "App/Program.cs": app})
    assert _refs(res, "App/Program.cs") == [(6, 45, "Create")]
    assert _cuts(a, snap, res, "App/Program.cs") == ["Create().Size);"]
    assert not res.exclusions
    # what the cutter's tree-sitter should read: the same branch, with the project's symbols
    data = res.tree_views["App/Program.cs"]
    assert b"Sizes.Add(Widget" in data and b"Slow()" not in data and len(data) == len(app.encode())


def test_a_file_the_preprocessor_rejects_is_left_to_the_compiler_and_recorded(tmp_path):
    bad = "namespace Acme.App {\n#if FOO\n    public class Broken { }\n}\n"  # no #endif
    _, _, res = _analyze(tmp_path, {"Lib/Widget.cs": LIB, "App/Broken.cs": bad})
    assert [(e.item_id, e.reason) for e in res.exclusions] in (
        [("repo/App/Broken.cs", Reason.TOOLCHAIN_CANNOT_PARSE)], [("repo/App/Broken.cs", Reason.SYNTAX_ERROR)])
    assert "preprocessor: #if on line 2 has no #endif" in res.exclusions[0].detail


CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "csharp_modern"


def _corpus_table() -> set[tuple[str, int, int, str, str]]:
    """The corpus README's cross-file uses: (file, 1-based line, 1-based column, symbol, code)."""
    import re

    rows = set()
    for row in (CORPUS / "README.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\| (\w+\.cs) \| (\d+) \| (\d+) \| (\w+) \| (CS\d+) \|", row)
        if m:
            rows.add((m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)))
    return rows


def _where_the_analyzer_puts(row, texts) -> tuple[str, int, int, str]:
    """A reference sits at its name in the original: mcs's CS1729 points at `new`, so the name after it
    (`new Point(...)`), or, for a target-typed `new(...)`, the type it takes where the line names it."""
    import re

    file, line, col, symbol, code = row
    if code != "CS1729":
        return file, line, col, symbol
    text = texts[file].split("\n")[line - 1]
    m = re.compile(rf"new\s+{symbol}\b").match(text, col - 1)
    if m:
        return file, line, m.end() - len(symbol) + 1, symbol
    return file, line, re.search(rf"\b{symbol}\b", text).start() + 1, symbol


def test_modern_corpus_end_to_end_exact_refs_and_cuts(tmp_path):
    """The rewriter's corpus (one file per C# 8-12 construct, uses of Defs.cs inside and after each construct)
    through the whole analyzer: exactly the uses the corpus README lists, at their original positions, and cuts
    made on the original text."""
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(CORPUS.glob("*.cs"))}
    a, snap, res = _analyze(tmp_path, files)
    assert res.exclusions == [] and res.stats["compiled_files"] == len(files)
    assert res.stats["files_downleveled"] == len(files)  # Defs.cs too: GlobalUsings.cs's `global using` reaches it
    # the compile's references; the type uses the scan adds (tests/unit/test_csharp_kinds.py) sit at their names
    got = {(r.file, r.line + 1, r.column + 1, r.symbol) for r in res.refs if r.diagnostic != "scan"}
    assert all(files[r.file].split("\n")[r.line][r.column:].startswith(r.symbol) for r in res.refs)
    want = {_where_the_analyzer_puts(row, files) for row in _corpus_table()}
    assert len(want) >= 50 and got == want
    assert {r.defining_file for r in res.refs} == {"Defs.cs"}
    cutter = ExampleCutter(a, snap.by_path(), "repo", tree_views=res.tree_views)
    examples = list(cutter.run(res.refs))
    assert len(examples) >= 45
    for ex in examples:
        assert ex.prompt + ex.groundtruth + ex.right_context == files[ex.metadata.file]
        assert ex.groundtruth.startswith(ex.metadata.symbol)
    cuts = {(ex.metadata.file, ex.metadata.groundtruth_start_lineno + 1, len(ex.prompt) - ex.prompt.rfind("\n")):
            ex.groundtruth for ex in examples}
    assert cuts[("TargetTypedNew.cs", 11, 13)] == "Widget local = new(Widget.Limit);"
    assert cuts[("Records.cs", 20, 45)] == "Limit }"
    assert cuts[("RangesAndOperators.cs", 13, 32)] == "Make();"
    assert cuts[("Nullable.cs", 12, 24)] == "Name;"
    assert cuts[("FileScopedNamespace.cs", 7, 32)] == "Grow();"
    assert cuts[("FileScopedNamespace.cs", 7, 54)] == "Limit;"
    assert cuts[("PrimaryConstructor.cs", 13, 27)] == "X;"
    assert cuts[("Strings.cs", 13, 26)] == "Size + Widget.Limit;"
    assert cuts[("Patterns.cs", 9, 41)] == "Size: > 1, Name: \"x\" }"


def test_a_construct_the_pass_cannot_rewrite_is_a_named_exclusion(tmp_path):
    # top-level statements (C# 9) have no C# 7 form that keeps the file's positions and meaning
    program = "using Acme.Lib;\n\nvar w = Widget.Create();\nw.Draw();\n"
    app = "using Acme.Lib;\nnamespace Acme.App { public class P { public void Run() { Widget.Create(); } } }\n"
    _, _, res = _analyze(tmp_path, {"Lib/Widget.cs": LIB, "Program.cs": program, "App/P.cs": app})
    assert [(e.item_id, e.reason, e.detail) for e in res.exclusions] == [
        ("repo/Program.cs", Reason.UNSUPPORTED_SYNTAX, "unsupported_syntax:top_level_statements line 3")]
    assert _refs(res, "App/P.cs") == [(1, 65, "Create")] and not _refs(res, "Program.cs")


def test_a_construct_the_pass_cannot_rewrite_is_recorded_even_with_nothing_to_compile(tmp_path):
    # no file names another's types, so no compile will run: the parse pass, put off until the first compile
    # where tree-sitter reads every file, gives its verdict (and this record) anyway
    program = "using System;\n\nvar x = 1;\nConsole.WriteLine(x);\n"
    alone = "namespace Acme.App { public class P { public int Run() { return 1; } } }\n"
    _, _, res = _analyze(tmp_path, {"Program.cs": program, "App/P.cs": alone})
    assert res.refs == []
    assert [(e.item_id, e.reason, e.detail) for e in res.exclusions] == [
        ("repo/Program.cs", Reason.UNSUPPORTED_SYNTAX, "unsupported_syntax:top_level_statements line 3")]
