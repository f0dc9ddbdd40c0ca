"""C# analyzer on tiny fixtures with the real mcs (mono): stubs, shim, diagnostics parsing (mcs and csc), failures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.analyzers.csharp import Compiler
from benchsmith.analyzers.csharp.copy import neutralise_error_directives
from benchsmith.analyzers.csharp.diagnostics import parse_compiler_output
from benchsmith.analyzers.csharp.refs import cs_ref
from benchsmith.analyzers.csharp.scan import scan_csharp
from benchsmith.analyzers.csharp.stubs import plan_all_stubs
from benchsmith.files import SourceFile, snapshot
from benchsmith.records import Reason

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "csharp"
needs_mcs = pytest.mark.skipif(shutil.which("mcs") is None,
                               reason="mcs not on PATH (apt-get install mono-mcs; scripts/setup_toolchains.sh)")


def _mcs_analyzer(**opts):
    a = get_analyzer("csharp", AnalyzerOptions(**opts))
    a.compiler = Compiler.MCS  # these tests are about mcs even where dotnet is installed
    return a


def _analyze(repo: Path, tmp_path: Path, analyzer=None):
    analyzer = analyzer or _mcs_analyzer()
    snap = snapshot(repo, analyzer.extensions, tmp_path / "snap", repo_name="fixture")
    return snap, analyzer.analyze(snap, tmp_path / "work")


# -- pure parts -----------------------------------------------------------------------------------------------

MCS_SAMPLE = """\
App/Dir With Space/Ünï (old).cs(7,53): error CS0117: `Acme.App.Uni.Widget' does not contain a definition for `Max'
Lib/Widget.cs(3,18): (Location of the symbol related to previous error)
App/Program.cs(16,20): error CS1061: Type `Acme.App.Program.Widget' does not contain a definition for `Draw' and no extension method `Draw' of type `Acme.App.Program.Widget' could be found. Are you missing an assembly reference?
App/Program.cs(15,26): error CS1729: The type `Acme.App.Program.Widget' does not contain a constructor that takes `1' arguments
Compilation failed: 3 error(s), 0 warnings
"""

# Hand-written in Roslyn's format (dotnet is not installed here): quotes are '...' and msbuild appends [project].
CSC_SAMPLE = """\
App\\Program.cs(16,20): error CS1061: 'Program.Widget' does not contain a definition for 'Draw' and no accessible extension method 'Draw' accepting a first argument of type 'Program.Widget' could be found (are you missing a using directive or an assembly reference?) [/src/app.csproj]
App/Program.cs(15,30): error CS1729: 'Program.Widget' does not contain a constructor that takes 1 arguments
App/Program.cs(17,30): warning CS0168: The variable 'x' is declared but never used
"""


def test_mcs_output_parsing_keeps_odd_paths():
    diags = parse_compiler_output(MCS_SAMPLE)
    assert [(d.file, d.line, d.col, d.code) for d in diags] == [
        ("App/Dir With Space/Ünï (old).cs", 7, 53, "CS0117"),
        ("App/Program.cs", 16, 20, "CS1061"),
        ("App/Program.cs", 15, 26, "CS1729"),
    ]
    assert diags[0].message.endswith("`Max'")


def test_csc_output_parsing():
    diags = parse_compiler_output(CSC_SAMPLE)
    assert [(d.file, d.code, d.kind) for d in diags] == [("App/Program.cs", "CS1061", "error"),
                                                          ("App/Program.cs", "CS1729", "error"),
                                                          ("App/Program.cs", "CS0168", "warning")]
    assert not diags[0].message.endswith("]")  # the msbuild project suffix is dropped


def _fixture_files() -> dict[str, str]:
    root = FIXTURES / "basic"
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.cs"))}


def _planned(files: dict[str, str]):
    """(texts, scans, stub plans) of ``files``, every one compiled."""
    texts = dict(files)
    infos = {p: scan_csharp(SourceFile(p, t)) for p, t in texts.items()}
    return texts, infos, plan_all_stubs(infos, texts, set(texts))


def test_partial_type_gets_one_copy_of_stubs():
    texts, infos, plans = _planned({p: t for p, t in _fixture_files().items() if not p.startswith("Modern/")})
    p1, p2 = plans["App/Holder.Part1.cs"], plans["App/Holder.Part2.cs"]
    # both parts use Widget; the stub is emitted in the first part only (a second copy would be CS0102)
    assert p1.stubbed_text.count("public class Widget {}") == 1
    assert "public class Widget" not in p2.stubbed_text and p2.stubbed_text == texts["App/Holder.Part2.cs"]
    assert p2.stubs["Widget"].file == "Lib/Widget.cs" and "Acme.App.Holder.Widget" in p2.stub_fqns
    prog = plans["App/Program.cs"]
    assert sorted(prog.stubs) == ["IShape", "Widget"]
    assert "public interface IShape {} public class Widget {}" in prog.stubbed_text
    assert prog.stubbed_text.count("\n") == texts["App/Program.cs"].count("\n")
    assert "Lib/Widget.cs" not in plans  # it names no type of another file


def test_csc_style_diagnostic_maps_to_the_member_name():
    texts, _, plans = _planned({p: t for p, t in _fixture_files().items() if not p.startswith("Modern/")})
    plan = plans["App/Program.cs"]
    refs = [cs_ref(d, plan, texts["App/Program.cs"]) for d in parse_compiler_output(CSC_SAMPLE)[:2]]
    assert [(r.line, r.column, r.symbol, r.import_name, r.defining_file) for r in refs] == [
        (15, 19, "Draw", "Widget", "Lib/Widget.cs"),
        (14, 29, "Widget", "Widget", "Lib/Widget.cs"),
    ]


def test_error_directives_are_blanked_in_place():
    text = "#if A\n#error need A or B\r\n#endif\nclass X {}\n"
    out = neutralise_error_directives(text)
    assert len(out) == len(text) and "#error" not in out and out.endswith("#endif\nclass X {}\n")
    assert out.split("\n")[1] == " " * len("#error need A or B") + "\r"


# -- the real compiler ----------------------------------------------------------------------------------------


@needs_mcs
def test_fixture_refs_are_found_at_their_names(tmp_path):
    snap, res = _analyze(FIXTURES / "basic", tmp_path)
    texts = snap.by_path()
    # (the compile's references; the type uses the scan adds are tests/unit/test_csharp_kinds.py's)
    got = {(r.file, r.symbol, r.diagnostic) for r in res.refs if r.diagnostic != "scan"}
    assert {(r.file, r.symbol, r.kind) for r in res.refs if r.diagnostic == "scan"} == {
        ("App/Program.cs", "IShape", "type"), ("App/Holder.Part1.cs", "Widget", "type"),
        ("App/Holder.Part2.cs", "Widget", "type")}
    assert got == {
        ("App/Program.cs", "Widget", "CS1729"),
        ("App/Program.cs", "Draw", "CS1061"),
        ("App/Program.cs", "Max", "CS0117"),
        ("App/Program.cs", "Area", "CS1061"),
        ("App/Program.cs", "Create", "CS0117"),
        ("App/Program.cs", "Size", "CS1061"),
        ("App/Holder.Part1.cs", "Create", "CS0117"),
        ("App/Holder.Part2.cs", "Size", "CS1061"),
        ("App/Dir With Space/Ünï.cs", "Max", "CS0117"),
    }
    for r in res.refs:
        assert texts[r.file].text.split("\n")[r.line][r.column:].startswith(r.symbol), r
        assert r.defining_file == "Lib/Widget.cs"
    # The Newtonsoft.Json attribute and field type would stop mcs before any body: the shim placeholders let it on.
    assert res.stats["shim_entries"] >= 3
    assert res.tool_versions.get("mcs")


EXTERNAL_INTERFACE = {
    "Lib/Widget.cs": "namespace Acme { public class Widget { public static int Max = 3; public int Size() { return 1; } } }\n",
    # a framework interface the machine does not have (Unity's), implemented explicitly; and, in the file's second
    # top-level class (after the first one's stubs), an override of a framework base member
    "App/Handler.cs": """using UnityEngine.EventSystems;
namespace Acme.App {
    public class Handler : IPointerClickHandler {
        void IPointerClickHandler.OnPointerClick(PointerEventData e) { int n = Widget.Max; }
    }
    public class Runner : UnityEngine.MonoBehaviour {
        protected override void Update() { int s = new Widget().Size(); }
    }
}
""",
}


@needs_mcs
def test_a_missing_interface_named_before_a_dot_is_one_placeholder_interface(tmp_path):
    # ``IPointerClickHandler.OnPointerClick`` once made ``IPointerClickHandler`` a namespace placeholder as well as
    # an interface one: CS0101 in the shim stopped mcs before every body (a Unity library gave no reference)
    snap, res = _analyze(_write(tmp_path / "repo", EXTERNAL_INTERFACE), tmp_path)
    got = {(r.file, r.line, r.symbol) for r in res.refs if r.diagnostic != "scan"}  # (and `new Widget()`'s type)
    assert got == {("App/Handler.cs", 3, "Max"), ("App/Handler.cs", 6, "Size")}, \
        (got, res.stats)
    shim = (tmp_path / "work" / "original" / "__benchsmith_shim__.cs").read_text(encoding="utf-8")
    assert "namespace IPointerClickHandler" not in shim and "interface IPointerClickHandler" in shim
    # the explicit implementation and the override are blanked in both trees, the stubbed one included, where
    # the first class's stubs moved the second class's text
    for tree in ("original", "stubbed"):
        text = (tmp_path / "work" / tree / "App/Handler.cs").read_text(encoding="utf-8")
        assert "IPointerClickHandler.OnPointerClick" not in text and "override" not in text, tree


@needs_mcs
def test_no_reference_because_mcs_never_reached_a_body_says_so(tmp_path):
    # every file has a declaration error mcs stops at (a base class cycle): nothing is left to compile without
    # them, so the analysis ends with no reference, and says which error stopped mcs
    repo = _write(tmp_path / "repo", {
        "Lib/Widget.cs": "namespace Acme { public class Widget { public static int Max = 3; }\n"
                         "  class LoopA : LoopB { } class LoopB : LoopA { } }\n",
        "Lib/User.cs": "namespace Acme { class LoopC : LoopC { int M() { return Widget.Max; } } }\n"})
    _, res = _analyze(repo, tmp_path)
    assert res.refs == []
    assert res.no_refs_detail.startswith("mcs stopped before every method body: Lib/"), res.no_refs_detail
    assert "CS0146" in res.no_refs_detail


PARSE_GAP = {
    "Lib/Widget.cs": "namespace Acme { public class Widget { public static int Max = 3; public int Size() { return 1; } }"
                     " public interface ISrc<T> { } }\n",
    "App/Good.cs": "namespace Acme.App { class Good { int M() { return Widget.Max + new Widget().Size(); } } }\n",
    # tree-sitter reads this cast, mcs 6.8 does not (a generic type with a tuple argument, cast to)
    "App/Gap.cs": "namespace Acme.App { class Gap : ISrc<(int a, int b)> {\n"
                  "  object M() { return (ISrc<(int a, int b)>)(object)this; } int N() { return Widget.Max; } } }\n",
}


@needs_mcs
@pytest.mark.parametrize("files", [
    {k: v for k, v in PARSE_GAP.items() if k != "App/Gap.cs"},  # every file parses: no parse pass at all
    PARSE_GAP,  # one does not: the first round is compiled again without it
], ids=["clean", "a file mcs cannot parse"])
def test_the_parse_pass_put_off_gives_what_it_gives_up_front(tmp_path, monkeypatch, files):
    from benchsmith.analyzers.csharp import parse_check

    repo = _write(tmp_path / "repo", files)
    _, deferred = _analyze(repo, tmp_path / "deferred")
    parse_rsp = (tmp_path / "deferred" / "work" / "parse.rsp").exists()
    monkeypatch.setattr(parse_check, "may_defer", lambda *a: False)
    _, upfront = _analyze(repo, tmp_path / "upfront")
    key = lambda res: [(r.file, r.line, r.column, r.symbol, r.defining_file) for r in res.refs]  # noqa: E731
    assert key(deferred) == key(upfront) and key(deferred)
    assert [(e.reason, e.detail) for e in deferred.exclusions] == [(e.reason, e.detail) for e in upfront.exclusions]
    assert deferred.stats["unparsed_files"] == upfront.stats["unparsed_files"] == (len(files) == 3)
    assert parse_rsp == (len(files) == 3)  # the parse pass runs only where the first compile could not tell
    if len(files) == 3:
        assert [e.detail.split(":")[0] for e in deferred.exclusions] == ["mcs line 2"]


def test_errors_mcs_parser_reports_itself_prove_nothing():
    from benchsmith.analyzers.csharp.diagnostics import CsDiagnostic
    from benchsmith.analyzers.csharp.parse_check import parsed_every_file

    def d(code):
        return CsDiagnostic("a.cs", 1, 1, "error", code, "")

    assert parsed_every_file([])
    assert parsed_every_file([d("CS1525"), d("CS0246")])  # a name mcs did not resolve: it had parsed
    # duplicate types, members and locals are the parser's own: they come beside syntax errors
    assert not parsed_every_file([d("CS0101"), d("CS0102"), d("CS0128"), d("CS0136"), d("CS1525")])


@needs_mcs
def test_file_mcs_cannot_parse_is_recorded_not_silent(tmp_path):
    a = _mcs_analyzer()
    a.downlevel = False
    _, res = _analyze(FIXTURES / "basic", tmp_path / "off", a)
    # a C# 9 positional record: tree-sitter reads it, mcs cannot
    assert [(e.item_id, e.reason) for e in res.exclusions] == [("fixture/Modern/Point.cs",
                                                                 Reason.TOOLCHAIN_CANNOT_PARSE)]
    assert res.exclusions[0].detail.startswith("mcs line 3: CS1525")
    # the down-level pass makes it C# 7: compiled, nothing left out
    _, res = _analyze(FIXTURES / "basic", tmp_path / "on")
    assert res.exclusions == [] and res.stats["compiled_files"] == res.stats["files"]


@needs_mcs
def test_deterministic(tmp_path):
    _, a = _analyze(FIXTURES / "basic", tmp_path / "a")
    _, b = _analyze(FIXTURES / "basic", tmp_path / "b")
    assert [r.to_dict() for r in a.refs] == [r.to_dict() for r in b.refs]


FAKE_VERSION = 'if [ "$1" = --version ]; then echo "Mono C# compiler version 0.0"; exit 0; fi\n'


def _fake_tool(dir_: Path, name: str, body: str) -> Path:
    dir_.mkdir(parents=True, exist_ok=True)
    p = dir_ / name
    p.write_text("#!/bin/sh\n" + body + "\n")
    p.chmod(0o755)  # executable by the throwaway uid a confined toolchain runs as, like a real one
    return p


def test_hanging_compiler_is_a_timeout_exclusion(tmp_path):
    # Stands for an mcs that never finishes: a script that sleeps, with a 1 s timeout.
    a = _mcs_analyzer(timeout=1.0)
    a.mcs = str(_fake_tool(tmp_path / "bin", "mcs", FAKE_VERSION + "sleep 30"))
    _, res = _analyze(FIXTURES / "basic", tmp_path, a)
    assert res.refs == [] and [e.reason for e in res.exclusions] == [Reason.TOOL_TIMEOUT]


def test_crashing_compiler_is_a_crash_exclusion(tmp_path):
    # Stands for mono aborting (SIGABRT in the runtime): a script that prints a stack trace and exits 134.
    a = _mcs_analyzer()
    a.mcs = str(_fake_tool(tmp_path / "bin", "mcs", FAKE_VERSION + "echo 'Native Crash Reporting' >&2; exit 134"))
    # the parse pass survives a crash (tree-sitter decides); the compile itself is recorded as a crash
    _, res = _analyze(FIXTURES / "basic", tmp_path, a)
    assert [e.reason for e in res.exclusions] == [Reason.TOOL_CRASH]


def test_missing_compiler_is_recorded(tmp_path):
    a = _mcs_analyzer()
    a.mcs = "benchsmith-no-such-mcs"
    _, res = _analyze(FIXTURES / "basic", tmp_path, a)
    assert [e.reason for e in res.exclusions] == [Reason.TOOL_MISSING]


# -- what the batched run predicts instead of learning it from extra compiles ----------------------------------

PREDICT_FILES = {
    "Lib/Widget.cs": """\
namespace Acme.Lib {
    public class Widget {
        public virtual void Draw() {} public int Size; public static Widget Create() { return null; }
    }
    public interface IShape { double Area(); }
}
""",
    # an external library type named with its namespace: mcs reports one segment per compile
    "App/Program.cs": """\
using Acme.Lib;
namespace Acme.App {
    public class Program {
        private Ext.Lib.Thing<int> thing;
        public int Run() { Widget.Create(); Widget w = new Widget(); w.Draw(); return w.Size; }
    }
}
""",
    # a nested type overriding a member of a stubbed class: the stub breaks the declaration (CS0115)
    "App/Blocked.cs": """\
using Acme.Lib;
namespace Acme.App {
    public class Outer {
        class Fancy : Widget { public override void Draw() {} }
        public void Use() { Widget.Create().Draw(); }
    }
}
""",
    # only object's virtuals overridden, and a top-level type (its base list does not see its nested stubs)
    "App/Fine.cs": """\
using Acme.Lib;
namespace Acme.App {
    public class Fine : Widget {
        public override void Draw() {}
        class Plain : Widget { public override string ToString() { return ""; } }
        public void Use() { Widget.Create().Draw(); }
    }
}
""",
    # an explicit implementation of a stubbed interface's member
    "App/Explicit.cs": """\
using Acme.Lib;
namespace Acme.App {
    public class Holder {
        class Circle : IShape { double IShape.Area() { return 1; } }
        public int Use() { return Widget.Create().Size; }
    }
}
""",
}


def test_stub_blockers_are_predicted_from_declarations():
    from benchsmith.analyzers.csharp.blockers import predict_blockers

    texts, infos, plans = _planned(PREDICT_FILES)
    assert {"App/Blocked.cs", "App/Fine.cs", "App/Explicit.cs", "App/Program.cs"} <= set(plans)
    left_out = predict_blockers(plans, infos, texts)
    # the stubs themselves, not their files: Explicit.cs keeps its Widget stub
    assert left_out == {("Outer", "Widget"), ("Holder", "IShape")}
    again = plan_all_stubs(infos, texts, set(texts), frozenset(left_out))
    assert "App/Blocked.cs" not in again and set(again["App/Explicit.cs"].stubs) == {"Widget"}
    assert "public class Widget {}" in again["App/Explicit.cs"].stubbed_text
    assert "IShape {}" not in again["App/Explicit.cs"].stubbed_text
    assert {p: pl.stubbed_text for p, pl in again.items() if p not in ("App/Explicit.cs",)} == \
        {p: pl.stubbed_text for p, pl in plans.items() if p not in ("App/Explicit.cs", "App/Blocked.cs")}


def test_a_recompile_takes_out_the_stubs_its_errors_name_and_else_their_files():
    from benchsmith.analyzers.csharp.diagnostics import CsDiagnostic
    from benchsmith.analyzers.csharp.verdicts import new_declaration_errors

    texts, infos, plans = _planned(PREDICT_FILES)
    # mcs's messages for the two blockers of PREDICT_FILES, at their declarations (line 4)
    after = [CsDiagnostic("App/Blocked.cs", 4, 36, "error", "CS0115",
                          "`Acme.App.Outer.Fancy.Draw()' is marked as an override but no suitable method found to override"),
             CsDiagnostic("App/Explicit.cs", 4, 40, "error", "CS0539",
                          "`Acme.App.Holder.IShape.Area' in explicit interface declaration is not a member of interface"),
             CsDiagnostic("App/Program.cs", 5, 36, "error", "CS0117", "`Acme.App.Program.Widget' does not contain a "
                          "definition for `Create'")]  # in a body: a reference, no blocker
    args = ([], after, plans, infos, texts, set())
    assert new_declaration_errors(*args) == ({"App/Blocked.cs"}, {("Holder", "IShape")})
    assert new_declaration_errors(*args, whole_files=True) == ({"App/Blocked.cs", "App/Explicit.cs"}, set())
    assert new_declaration_errors(after, after, plans, infos, texts, set()) == (set(), set())  # none is new


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


@needs_mcs
def test_predictions_and_side_by_side_compiles_keep_the_reference_refs(tmp_path):
    repo = _write(tmp_path / "repo", PREDICT_FILES)
    fast = _mcs_analyzer()
    assert fast.parallel > 1 and fast.predict
    reference = _mcs_analyzer()
    reference.parallel, reference.predict = 1, False
    _, a = _analyze(repo, tmp_path / "fast", fast)
    _, b = _analyze(repo, tmp_path / "ref", reference)
    # the reference learns the blockers from a recompile: the stub a message names (IShape, in Explicit.cs), the
    # file of an error that names none (Blocked.cs, whose one stub is the cause); the prediction takes out the
    # same, so Explicit.cs keeps its Widget stub and its use of Widget.Create in both
    assert [r.to_dict() for r in a.refs] == [r.to_dict() for r in b.refs]
    got = {(r.file, r.symbol, r.diagnostic) for r in a.refs}
    assert {("App/Program.cs", "Create", "CS0117"), ("App/Program.cs", "Draw", "CS1061"),
            ("App/Program.cs", "Size", "CS1061"), ("App/Fine.cs", "Create", "CS0117"),
            ("App/Explicit.cs", "Create", "CS0117")} <= got
    assert "App/Blocked.cs" not in {f for f, _, d in got if d != "scan"}  # its one stub blocks
    # Ext, Ext.Lib, Ext.Lib.Thing<T>: one round instead of three; the blockers cost no stubbed recompile
    assert (a.stats["shim_rounds"], b.stats["shim_rounds"]) == (1, 3)
    assert a.stats["stubs_dropped_predicted"] == 2 and a.stats["stubbed_recompiles"] == 0
    assert b.stats["stubbed_recompiles"] == 1 and (b.stats["files_stubs_dropped"], b.stats["stubs_dropped"]) == (1, 1)


# Stubs that block in ways only a stub-by-stub prediction sees (found on UniTask 2.2.5): a stub inherited from a
# project base class named by an explicit implementation, a stub named in an explicit implementation's signature
# (the interface's member is declared where no stub is seen), a stub of the type around an override's class named
# in the override's signature; and a partial class with two parts in one file (its stubs are written once).
PER_STUB_FILES = {
    "Lib/Defs.cs": """\
namespace Acme.Lib {
    public enum Status { Ready }
    public interface ISource { Status Get(); void Run(); }
    public class Widget { public int Size; public static Widget Create() { return null; } }
}
""",
    "Lib/ReaderBase.cs": """\
using Acme.Lib;
namespace Acme.Core {
    public abstract class ReaderBase {
        public virtual Status Completion { get { return Status.Ready; } }
        protected ISource source;
    }
}
""",
    "App/Channel.cs": """\
using Acme.Lib;
using Acme.Core;
namespace Acme.App {
    public class Channel {
        sealed class MyReader : ReaderBase, ISource {
            Status ISource.Get() { return Status.Ready; }
            void ISource.Run() { }
            public override Status Completion { get { return Status.Ready; } }
        }
        public int Use() { return Widget.Create().Size; }
    }
}
""",
    "App/Parts.cs": """\
using Acme.Lib;
namespace Acme.App {
    public partial class Parts { public int A() { return Widget.Create().Size; } }
    public partial class Parts { public int B() { Widget w = new Widget(); return w.Size; } }
}
""",
}


@needs_mcs
def test_only_the_blocking_stubs_are_left_out_and_no_recompile_finds_more(tmp_path):
    from benchsmith.analyzers.csharp.blockers import predict_blockers

    texts, infos, plans = _planned(PER_STUB_FILES)
    # MyReader sees ReaderBase's stubs (inherited) before Channel's (around it): either Status in the explicit
    # implementations' signatures blocks them, either ISource names no interface of MyReader's; and Channel's
    # ReaderBase stub would be MyReader's base, with no Completion to override
    assert predict_blockers(plans, infos, texts) == {
        ("ReaderBase", "ISource"), ("ReaderBase", "Status"), ("Channel", "ISource"), ("Channel", "Status"),
        ("Channel", "ReaderBase")}
    # two parts of one partial class in one file: one copy of its stubs
    assert plans["App/Parts.cs"].stubbed_text.count("public class Widget {}") == 1
    repo = _write(tmp_path / "repo", PER_STUB_FILES)
    fast = _mcs_analyzer()
    reference = _mcs_analyzer()
    reference.parallel, reference.predict = 1, False
    _, a = _analyze(repo, tmp_path / "fast", fast)
    _, b = _analyze(repo, tmp_path / "ref", reference)
    assert a.stats["stubbed_recompiles"] == 0 and a.stats["stubs_dropped_predicted"] == 5
    got = {(r.file, r.line, r.symbol, r.diagnostic) for r in a.refs}
    assert {(r.file, r.line, r.symbol, r.diagnostic) for r in b.refs} <= got
    # Channel.cs keeps its Widget stub; both parts of Parts are analysed
    assert {("App/Channel.cs", 9, "Create", "CS0117"), ("App/Parts.cs", 2, "Create", "CS0117"),
            ("App/Parts.cs", 3, "Size", "CS1061")} <= got, sorted(got)


@needs_mcs
def test_a_using_static_of_a_missing_library_gets_a_type_placeholder(tmp_path):
    # `using static Ext.Syntax.Factory;` of a library the repository does not ship (react-native-windows's code
    # generator and Roslyn's SyntaxFactory): a namespace placeholder for Factory is CS7007, which mcs reports as a
    # rejected declaration, and the file was lost
    repo = _write(tmp_path / "repo", {
        "Lib/Widget.cs": "namespace Acme.Lib { public class Widget { public static Widget Create() { return null; } } }\n",
        "App/Gen.cs": ("using static Ext.Syntax.Factory;\nusing Alias = Ext.Syntax.Node<int>;\nusing Acme.Lib;\n"
                       "namespace Acme.App {\n    public class Gen {\n"
                       "        public object Make() { Widget.Create(); return IdentifierName(\"x\"); }\n    }\n}\n"),
    })
    _, res = _analyze(repo, tmp_path / "work")
    assert not res.exclusions, [(e.reason.value, e.detail) for e in res.exclusions]
    assert {(r.file, r.line, r.symbol) for r in res.refs} == {("App/Gen.cs", 5, "Create")}


# -- Roslyn stays the first choice where dotnet exists ---------------------------------------------------------

def _fake_dotnet(root: Path, body: str) -> Path:
    """A dotnet install's layout (an SDK's csc.dll, a reference pack) with ``body`` as the ``dotnet`` program."""
    (root / "sdk" / "8.0.100" / "Roslyn" / "bincore").mkdir(parents=True)
    (root / "sdk" / "8.0.100" / "Roslyn" / "bincore" / "csc.dll").write_bytes(b"")
    ref = root / "packs" / "Microsoft.NETCore.App.Ref" / "8.0.0" / "ref" / "net8.0"
    ref.mkdir(parents=True)
    (ref / "System.Runtime.dll").write_bytes(b"")
    exe = root / "dotnet"
    exe.write_text(body)
    exe.chmod(0o755)  # the confined toolchain runs as a throwaway uid, not as the file's owner
    return exe


def test_roslyn_is_chosen_where_dotnet_has_an_sdk_and_then_no_downlevel_pass(tmp_path, monkeypatch):
    _fake_dotnet(tmp_path / "dotnet", "#!/bin/sh\nexit 0\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'dotnet'}:{__import__('os').environ['PATH']}")
    auto = get_analyzer("csharp")
    assert auto.compiler is Compiler.AUTO and auto._backend()[0] is Compiler.CSC
    assert not auto.uses_downlevel() and "csc" in auto.tool_versions()
    forced = _mcs_analyzer()
    assert forced._backend()[0] is Compiler.MCS and forced.uses_downlevel()
    forced.downlevel = False
    assert not forced.uses_downlevel()
    # a dotnet without an SDK (a runtime only) is no Roslyn
    shutil.rmtree(tmp_path / "dotnet" / "sdk")
    assert get_analyzer("csharp")._backend()[0] is Compiler.MCS



def test_container_backends_run_mcs_with_the_downlevel_pass_even_beside_a_local_sdk(tmp_path, monkeypatch):
    """The toolchain image has no .NET SDK (its optional ``csc`` variant is mono's Roslyn, no parse-only mode): a
    container backend runs mcs and the down-level pass, whatever ``dotnet`` the host has."""
    from benchsmith.analyzers import AnalyzerOptions
    from benchsmith.runner import ToolchainBackend

    _fake_dotnet(tmp_path / "dotnet", "#!/bin/sh\nexit 0\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'dotnet'}:{__import__('os').environ['PATH']}")
    for backend in (ToolchainBackend.DOCKER, ToolchainBackend.PODMAN):
        a = get_analyzer("csharp", AnalyzerOptions(backend=backend))
        assert a._backend()[0] is Compiler.MCS and a.uses_downlevel()
        assert a.toolchain_paths() == []
    assert get_analyzer("csharp")._backend()[0] is Compiler.CSC  # locally the SDK is the first choice

# Stands for Roslyn: a ``dotnet`` that runs the real mcs on the response file csc gets (the options only csc knows
# dropped) and prints mcs's diagnostics with Roslyn's quotes.  It exercises the csc path of the analyzer (its
# response file, no parse pass, no shim, no down-level pass, csc-style messages) on code both compilers read.  Like
# a real .NET runtime in a view without ICU, it aborts unless globalization is invariant.
ROSLYN_STANDIN = """#!{python}
import os, re, subprocess, sys
if os.environ.get("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT") != "1":
    sys.exit("Process terminated. Couldn't find a valid ICU package installed on the system.")
rsp = sys.argv[2][1:]
keep = []
for line in open(rsp, encoding="utf-8").read().splitlines():
    if line.startswith(("-out:", "-define:", '"', "'")):
        keep.append(line)
open(rsp + ".mcs", "w", encoding="utf-8").write("\\n".join(["-target:library", "-warn:0", *keep]) + "\\n")
res = subprocess.run(["mcs", "@" + rsp + ".mcs"], capture_output=True, text=True)
sys.stdout.write(re.sub(r"`([^']*)'", r"'\\1'", res.stdout + res.stderr))
sys.exit(res.returncode)
"""

CSHARP7_PROJECT = {
    "Lib/Widget.cs": """\
namespace Acme.Lib {
    public class Widget {
        public int Size;
        public Widget(int size) { Size = size; }
        public static Widget Create() { return new Widget(1); }
        public void Draw() {}
    }
}
""",
    "App/Program.cs": """\
using Acme.Lib;
namespace Acme.App {
    public class Program {
#if DEBUG
        public int Debug() { return Widget.Create().Size; }
#endif
        public int Run() {
            var w = new Widget(2);
            w.Draw();
            return Widget.Create().Size + w.Size;
        }
    }
}
""",
}


@needs_mcs
def test_roslyn_path_reports_the_references_of_the_mcs_path(tmp_path, monkeypatch):
    import sys

    repo = _write(tmp_path / "repo", CSHARP7_PROJECT)
    _, by_mcs = _analyze(repo, tmp_path / "mcs")
    _fake_dotnet(tmp_path / "dotnet", ROSLYN_STANDIN.format(python=sys.executable))
    monkeypatch.setenv("PATH", f"{tmp_path / 'dotnet'}:{__import__('os').environ['PATH']}")
    roslyn = get_analyzer("csharp")
    assert str(tmp_path / "dotnet") in roslyn.toolchain_paths()  # the dotnet install is in the confined view
    # The stand-in dotnet is a Python script: its interpreter must be in the confined view too, as a real dotnet's
    # own runtime is (inside its install directory).
    from benchsmith import confine

    monkeypatch.setattr(roslyn, "toolchain_paths", lambda: [str(tmp_path / "dotnet"), *confine.python_paths()])
    _, by_csc = _analyze(repo, tmp_path / "csc", roslyn)
    assert by_csc.stats["compiler"] == "csc" and by_mcs.stats["compiler"] == "mcs"
    assert "files_downleveled" not in by_csc.stats or by_csc.stats["files_downleveled"] == 0
    key = lambda r: (r.file, r.line, r.column, r.symbol, r.defining_file)  # noqa: E731
    assert {key(r) for r in by_csc.refs} == {key(r) for r in by_mcs.refs}
    # the inactive #if DEBUG method is read by neither (RELEASE build symbols)
    assert sorted((r.line, r.column, r.symbol) for r in by_mcs.refs) == [(7, 24, "Widget"), (8, 14, "Draw"),
                                                                         (9, 26, "Create")]
