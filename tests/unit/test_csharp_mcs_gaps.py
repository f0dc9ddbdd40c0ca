"""C# 7 that mcs 6.8 misreads, rewritten by the down-level pass (``downlevel/mcs_gaps.py``), a crash of mcs told
apart from a clean compile, and the Unity symbols of a Unity project (the real mcs where it exists)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from benchsmith.analyzers.csharp.compile import CompileOutcome, CompilerCalls
from benchsmith.analyzers.csharp.downlevel import downlevel
from benchsmith.analyzers.csharp.project import ProjectIndex, unity_symbols
from benchsmith.runner import RunResult

SRC = """using System.Collections.Generic;
class N<T> { }
class A<T> {
    N<T> n;
    public ref N<T> X => ref n;
    static List<KeyValuePair<int, (string name, int id)>> pairs;
    object M() { return (List<(List<int> a, int b)>)null; }
    async Later<int> Run() { var x = await Other(); return x; }
    System.Threading.Tasks.Task<int> Other() => null;
}
class Later<T> { }
"""


def test_rewrites_keep_names_and_map_back():
    res = downlevel(SRC)
    assert not res.unsupported, res.unsupported
    text = res.text
    assert "public     N<T> X =>     n;" in text  # `ref` blanked, positions kept
    assert "global::System.ValueTuple<string     , int   >" in text
    assert "__bsdl.Any(Other())" in text and "async" not in text
    # every untouched name maps back to its original place
    for name in ("pairs", "Run", "Other", "X"):
        at = text.index(name)
        assert SRC[res.to_original_offset(at):].startswith(name)
    assert {u.construct for u in res.lossy} >= {"ref_return", "nested_tuple_type", "task_like_async"}


@pytest.mark.skipif(shutil.which("mcs") is None, reason="mcs not on PATH (scripts/setup_toolchains.sh)")
def test_mcs_reads_the_rewrite_it_cannot_read_before(tmp_path):
    for name, text in (("before.cs", SRC), ("after.cs", downlevel(SRC).text + "\n" + _helper())):
        (tmp_path / name).write_text(text, encoding="utf-8")
    parse = lambda f: subprocess.run(["mcs", "--parse", "-langversion:experimental", f], cwd=tmp_path,  # noqa: E731
                                     capture_output=True, text=True, timeout=120)
    assert parse("before.cs").returncode != 0
    after = parse("after.cs")
    assert after.returncode == 0, after.stdout + after.stderr


def _helper() -> str:
    from benchsmith.analyzers.csharp.downlevel import HELPER_SOURCE

    return HELPER_SOURCE


def test_long_tuples_are_recorded_not_sent_to_mcs():
    res = downlevel("class T { (int,int,int,int,int,int,int,int) big; object o = (1,2,3,4,5,6,7,8); }")
    assert [u.construct for u in res.unsupported] == ["long_tuple", "long_tuple"]


class _Calls(CompilerCalls):
    class options:  # noqa: N801 - stands for AnalyzerOptions: only the timeout is read
        timeout = 60.0


def test_an_unhandled_exception_is_a_crash_naming_the_file():
    out = ("\nUnhandled Exception:\nMono.CSharp.InternalErrorException: src/A.cs(8,29): Ns ---> "
           "Mono.CSharp.InternalErrorException: src/A.cs(1301,22): Ns.T<T1> ---> System.NotImplementedException: "
           "tuples > 7\n  at Mono.CSharp.TypeContainer.DefineContainer ()\n")
    res = RunResult(argv=["mcs"], returncode=1, stdout=out, stderr="", timed_out=False, duration=0.1)
    got: CompileOutcome = _Calls()._outcome(res, {"src/A.cs"})
    assert got.diagnostics is None and "tuples > 7" in got.error
    assert (got.crash_file, got.crash_line) == ("src/A.cs", 1301)


def test_unity_projects_get_the_unity_symbols():
    index = ProjectIndex({"Runtime/UniTask.asmdef": "{}", "Other/x.csproj": "<Project Sdk='Microsoft.NET.Sdk'/>"})
    defines = index.settings("Runtime/Sub/A.cs").defines
    assert {"UNITY_2018_3_OR_NEWER", "UNITY_2021_3_OR_NEWER", "UNITY_2021"} <= defines
    assert "UNITY_2022_1_OR_NEWER" not in defines and "UNITY_EDITOR" not in defines
    assert not any(d.startswith("UNITY_") for d in index.settings("Other/B.cs").defines)  # a real project wins
    versioned = ProjectIndex({"ProjectSettings/ProjectVersion.txt": "m_EditorVersion: 2019.4.1f1\n"})
    assert "UNITY_2019_4_OR_NEWER" in versioned.settings("Assets/A.cs").defines
    assert "UNITY_2020_1_OR_NEWER" not in versioned.settings("Assets/A.cs").defines
    assert unity_symbols((5, 6)) >= {"UNITY_5_3_OR_NEWER", "UNITY_5_6_OR_NEWER"}


@pytest.mark.skipif(shutil.which("mcs") is None, reason="mcs not on PATH (scripts/setup_toolchains.sh)")
def test_placeholder_attributes_take_any_positional_arguments(tmp_path):
    from benchsmith.analyzers.csharp.diagnostics import parse_compiler_output
    from benchsmith.analyzers.csharp.placeholders import PlaceholderKind
    from benchsmith.analyzers.csharp.shim import SHIM_FILE, Shim, is_probe

    shim = Shim(namespaces={"Ext"}, types={("Ext", "DllExport", 0): PlaceholderKind.ATTRIBUTE})
    (tmp_path / SHIM_FILE).write_text(shim.text(), encoding="utf-8")
    (tmp_path / "a.cs").write_text('using Ext;\nclass A { [DllExport("init", 2)] static int F() { return 0; } }\n',
                                   encoding="utf-8")
    res = subprocess.run(["mcs", "-target:library", "-out:" + str(tmp_path / "a.dll"), SHIM_FILE, "a.cs"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    errors = [d for d in parse_compiler_output(res.stdout + res.stderr) if d.kind == "error"]
    assert len(errors) == 1 and is_probe(errors[0]), res.stdout + res.stderr  # the shim's own probe alone


def test_foreach_deconstruction_becomes_a_declaration_in_the_body(tmp_path):
    src = ("using System.Collections.Generic;\nclass A { void M(List<(int, string)> l) {\n"
           "    foreach (var (c, state) in l) { System.Console.Write(c); }\n"
           "    foreach (var (a, b) in l) System.Console.Write(b); } }\n")
    res = downlevel(src)
    assert not res.unsupported
    for name in ("Write(c)", "Write(b)", "(a, b)", "(c, state)"):
        at = res.text.index(name)
        assert src[res.to_original_offset(at):].startswith(name)
    if shutil.which("mcs") is None:
        pytest.skip("mcs not on PATH: the rewrite's text is checked, not its compile")
    (tmp_path / "a.cs").write_text(res.text, encoding="utf-8")
    (tmp_path / "b.cs").write_text(src, encoding="utf-8")
    compile_ = lambda f: subprocess.run(["mcs", "-target:library", f"-out:{tmp_path / f}.dll", f],  # noqa: E731
                                        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert compile_("b.cs").returncode != 0
    assert compile_("a.cs").returncode == 0, compile_("a.cs").stdout


def test_foreach_over_a_tuple_of_declarations_becomes_a_deconstruction_in_the_body(tmp_path):
    # `foreach ((var k, int v) in xs)`: tree-sitter reads a tuple of declarations, mcs cannot parse it (found in
    # react-native-windows 0.74's code generator)
    src = ("using System.Collections.Generic;\nclass A { void M(List<(string, int)> l) {\n"
           "    foreach ((var k, int v) in l) { System.Console.Write(k); }\n"
           "    foreach ((var a, (var b, var c)) in new List<(int, (int, int))>()) System.Console.Write(c);\n"
           "    foreach ((x, y) in l) { } } string x; int y; }\n")
    res = downlevel(src)
    assert not res.unsupported
    # each variable typed as its tuple element (mcs resolves no declaration form of the deconstruction)
    assert "foreach (var __fe1 in l) { var k = __fe1.Item1; int v = __fe1.Item2;" in res.text
    assert "{ var a = __fe2.Item1; var b = __fe2.Item2.Item1; var c = __fe2.Item2.Item2; System.Console" in res.text
    assert "foreach ((x, y) in l)" in res.text  # assignments to existing variables: not a declaration, kept
    for name in ("Write(k)", "Write(c)", "int v", "var b"):
        at = res.text.index(name)
        assert src[res.to_original_offset(at):].startswith(name)
    at = res.text.index("var c = ") + len("var ")
    assert src[res.to_original_offset(at):].startswith("c)) in")  # the name maps to its declaration
    if shutil.which("mcs") is None:
        pytest.skip("mcs not on PATH: the rewrite's text is checked, not its compile")
    kept = src.replace("    foreach ((x, y) in l) { } } string x; int y; }\n", "} }\n")
    (tmp_path / "b.cs").write_text(kept, encoding="utf-8")
    (tmp_path / "a.cs").write_text(downlevel(kept).text, encoding="utf-8")
    compile_ = lambda f: subprocess.run(["mcs", "-target:library", f"-out:{tmp_path / f}.dll", f],  # noqa: E731
                                        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert compile_("b.cs").returncode != 0
    assert compile_("a.cs").returncode == 0, compile_("a.cs").stdout


def test_a_ref_extension_receiver_is_passed_by_value_for_mcs(tmp_path):
    # `ref this` / `this ref` (C# 7.2): mcs 6.8 rejects the pair (CS1101) while parsing, which lost the whole file
    # (found in VSIntelliSenseTweaks, a released CrossCodeEval C# repository)
    src = ("struct Span2 { public int Start; }\nstatic class H {\n"
           "    public static int A(ref this Span2 s) { return s.Start; }\n"
           "    public static int B(this ref Span2 s, ref int q) { q = 1; return s.Start; }\n"
           "    public static int C(this Span2 s, in int q) { return q; }\n"
           "    static int Use(Span2 s) { int q = 0; return s.A() + s.B(ref q); } }\n")
    res = downlevel(src)
    assert not res.unsupported and [u.construct for u in res.lossy] == ["ref_receiver", "ref_receiver"]
    assert "A(    this Span2 s)" in res.text and "B(this     Span2 s, ref int q)" in res.text
    assert len(res.text) == len(src)  # blanks only: every position kept
    if shutil.which("mcs") is None:
        pytest.skip("mcs not on PATH: the rewrite's text is checked, not its compile")
    (tmp_path / "a.cs").write_text(res.text, encoding="utf-8")
    (tmp_path / "b.cs").write_text(src, encoding="utf-8")
    compile_ = lambda f: subprocess.run(["mcs", "-langversion:experimental", "-target:library",  # noqa: E731
                                         f"-out:{tmp_path / f}.dll", f],
                                        cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "CS1101" in compile_("b.cs").stdout + compile_("b.cs").stderr
    assert compile_("a.cs").returncode == 0, compile_("a.cs").stdout
