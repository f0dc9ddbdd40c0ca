"""Nested types through placeholders: the shim's (types of a missing library, ``Port.Capacity``) and the stubs'
(project types, ``Outer.Inner``), to any depth and with type parameters; a nested type a placeholder lacks in a
signature is CS0426, which stops mcs before every method body.  Also the qualifying type of a static member outside
the bodies (``= Mode.Fast``), a type use of its own."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from benchsmith.analyzers.csharp.blockers import predict_blockers
from benchsmith.analyzers.csharp.diagnostics import CsDiagnostic, parse_compiler_output
from benchsmith.analyzers.csharp.kinds import TypeRefFinder
from benchsmith.analyzers.csharp.placeholders import PlaceholderKind as P
from benchsmith.analyzers.csharp.scan import scan_csharp
from benchsmith.analyzers.csharp.shim import SHIM_FILE, Shim, is_probe, reached_bodies, shim_fixes
from benchsmith.analyzers.csharp.stubs import plan_all_stubs
from benchsmith.files import SourceFile
from benchsmith.records import ReferenceKind as K

needs_mcs = pytest.mark.skipif(shutil.which("mcs") is None, reason="mcs not on PATH (scripts/setup_toolchains.sh)")

LIB = """namespace Demo
{
    public class Outer
    {
        public class Inner { public static int Count; }
        public enum Mode { Fast, Slow }
        public class Gen<T> { public class Deep { } }
    }
    public enum Color { Red, Green }
}
"""
USER = """namespace Demo
{
    public class User
    {
        public Outer.Inner inner;
        public Outer.Gen<int>.Deep deep;
        public Color color = Color.Red;
        public int Paint(Outer.Mode m = Outer.Mode.Fast) { return Outer.Inner.Count; }
    }
}
"""


def _infos(texts: dict[str, str]):
    return {p: scan_csharp(SourceFile(p, t)) for p, t in texts.items()}


def _errors(res: subprocess.CompletedProcess):
    return [d for d in parse_compiler_output(res.stdout + res.stderr) if d.kind == "error"]


def _mcs(tmp_path, files: dict[str, str]) -> subprocess.CompletedProcess:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return subprocess.run(["mcs", "-target:library", "-out:" + str(tmp_path / "out.dll"), *sorted(files)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)


@needs_mcs
def test_shim_placeholders_nest_to_any_depth_with_type_parameters(tmp_path):
    shim = Shim(namespaces={"Ext", "Port", "Port.Capacity"},  # (a name before a dot, later seen as a type)
                types={("", "Port", 0): P.CLASS, ("Port", "Capacity", 0): P.CLASS,
                       ("Ext", "Outer", 1): P.CLASS, ("Ext.Outer", "Inner", 1): P.CLASS,
                       ("Ext.Outer.Mid", "Leaf", 0): P.CLASS,  # Mid itself was never asked for
                       ("Ext", "Host", 0): P.CLASS, ("Ext.Host", "TagAttribute", 0): P.ATTRIBUTE})
    text = shim.text()
    assert "namespace Port" not in text  # a namespace beside the type Port would be CS0101
    assert "public class Port { public class Capacity { } }" in text
    assert shim.text() == text
    user = """using Ext;
class A
{
    Port.Capacity c;
    Outer<int>.Inner<string> i;
    Outer<int>.Mid.Leaf l;
    [Host.Tag("x")] static int F(Port.Capacity c = null) { return 0; }
}
"""
    res = _mcs(tmp_path, {SHIM_FILE: text, "a.cs": user})
    # the shim's own probe is the one error: every name resolved and mcs went on to the bodies
    assert [d.code for d in _errors(res)] == ["CS0103"] and all(map(is_probe, _errors(res))), res.stdout


def test_cs0426_in_a_signature_nests_a_placeholder_in_the_placeholder_type():
    text = "class A\n{\n    void F(Port.Capacity.Kind k, Real.Missing r) { }\n}\n"
    infos = _infos({"a.cs": text})
    shim = Shim(types={("", "Port", 0): P.CLASS, ("", "Real", 0): P.CLASS})
    col = text.splitlines()[2].index("Capacity") + 1
    diag = CsDiagnostic("a.cs", 3, col, "error", "CS0426", "The nested type `Capacity' does not exist in the type "
                                                           "`Port'")
    assert shim_fixes([diag], infos, {"a.cs": text}, shim, set(), predict=True) > 0
    assert shim.types[("Port", "Capacity", 0)] == P.CLASS
    assert ("Port.Capacity", "Kind", 0) in shim.types  # the segment after it, in the same round
    # a type the compiler knows (a project's or a framework's) gets no placeholder member
    other = CsDiagnostic("a.cs", 3, 1, "error", "CS0426", "The nested type `X' does not exist in the type `System.Int32'")
    assert shim_fixes([other], infos, {"a.cs": text}, shim, set(), predict=True) == 0


def test_stubs_declare_the_nested_types_of_the_project_type():
    texts = {"Lib.cs": LIB, "User.cs": USER}
    plans = plan_all_stubs(_infos(texts), texts, set(texts))
    stubbed = plans["User.cs"].stubbed_text
    assert ("public class Outer { public class Inner {} public enum Mode {} "
            "public class Gen<BsT1_0> { public class Deep {} } }") in stubbed
    # a member reached through a nested stub is attributed to the stubbed type
    assert plans["User.cs"].stub_fqns["Demo.User.Outer.Gen.Deep"] == "Outer"
    assert plans["User.cs"].stub_fqns["User.Outer.Inner"] == "Outer"


def test_nested_types_of_every_part_of_a_partial_type_are_stubbed():
    texts = {"A.cs": "namespace Demo { public partial class Outer { public class One { } } }\n",
             "B.cs": "namespace Demo { public partial class Outer { public class Two { } } }\n",
             "User.cs": "namespace Demo { public class User { Outer.One a; Outer.Two b; } }\n"}
    stubbed = plan_all_stubs(_infos(texts), texts, set(texts))["User.cs"].stubbed_text
    assert "public class Outer { public class One {} public class Two {} }" in stubbed


@needs_mcs
def test_the_stubbed_file_compiles_to_its_bodies(tmp_path):
    texts = {"Lib.cs": LIB, "User.cs": USER}
    infos = _infos(texts)
    plans = plan_all_stubs(infos, texts, set(texts))
    assert predict_blockers(plans, infos, texts) == set()  # every qualified name goes through declared nested types
    res = _mcs(tmp_path, {"Lib.cs": LIB, "User.cs": plans["User.cs"].stubbed_text})
    # only member uses fail, in signatures and bodies alike (CS0117 stops no mcs phase)
    assert [d.code for d in _errors(res)] == ["CS0117", "CS0117", "CS0117"], res.stdout + res.stderr


def test_a_nested_type_the_stub_lacks_still_predicts_a_blocker():
    user = USER.replace("public Outer.Inner inner;", "public Outer.Gone inner;")
    texts = {"Lib.cs": LIB, "User.cs": user}
    infos = _infos(texts)
    assert predict_blockers(plan_all_stubs(infos, texts, set(texts)), infos, texts) == {("User", "Outer")}


def test_a_static_members_qualifier_outside_the_bodies_is_a_type_use():
    texts = {"Lib.cs": LIB, "User.cs": USER}
    finder = TypeRefFinder(_infos(texts), set(texts), texts, texts, {})
    got = {(r.line, r.column, r.symbol, r.kind) for r in finder.refs("User.cs")}
    lines = USER.splitlines()
    assert (6, lines[6].index("Color.Red"), "Color", K.TYPE) in got  # a field's initializer
    assert (7, lines[7].index("Outer.Mode.Fast"), "Outer", K.TYPE) in got  # a parameter's default
    assert (7, lines[7].index("Outer.Mode m"), "Outer", K.TYPE) in got
    # in a body the compile marks the member (``Count``) instead
    assert (7, lines[7].index("Outer.Inner.Count"), "Outer", K.TYPE) not in got


def test_a_stubbed_interface_declares_no_nested_type():
    # C# 8 allows types nested in an interface; the stub (C# 7, for mcs) cannot hold them
    texts = {"Lib.cs": "namespace Demo { public interface IShape { public class Part { } } }\n",
             "User.cs": "namespace Demo { public class User { public IShape.Part part; } }\n"}
    infos = _infos(texts)
    plans = plan_all_stubs(infos, texts, set(texts))
    assert "public interface IShape {}" in plans["User.cs"].stubbed_text
    assert predict_blockers(plans, infos, texts) == {("User", "IShape")}


@needs_mcs
def test_the_shim_proves_that_mcs_reached_the_bodies(tmp_path):
    # every error of this tree lies in a signature and stops nothing: only the shim's probe says mcs went on
    text = "class A\n{\n    static int F(Port.Capacity c = Port.Capacity.Single) { return 0; }\n}\n"
    shim = Shim(types={("", "Port", 0): P.CLASS, ("Port", "Capacity", 0): P.CLASS})
    res = _mcs(tmp_path, {SHIM_FILE: shim.text(), "a.cs": text})
    diags = parse_compiler_output(res.stdout + res.stderr)
    infos = _infos({"a.cs": text})
    assert [d.code for d in diags if d.file == "a.cs"] == ["CS0117"]
    assert reached_bodies(diags, infos, {"a.cs": text})
    # a tree mcs stopped in (a missing type in a signature) has no probe
    res = _mcs(tmp_path, {SHIM_FILE: Shim().text(), "a.cs": text})
    assert not reached_bodies(parse_compiler_output(res.stdout + res.stderr), infos, {"a.cs": text})


def test_a_nested_type_named_through_its_outer_type_is_a_reference_to_its_own_part():
    texts = {"A.cs": "namespace Demo { public partial class Outer { public class One { } } }\n",
             "B.cs": "namespace Demo { public partial class Outer { public class Two { public class Leaf { } } } }\n",
             "User.cs": "namespace Demo { public class User { Outer.One a; Outer.Two.Leaf b; } }\n"}
    finder = TypeRefFinder(_infos(texts), set(texts), texts, texts, {})
    line = texts["User.cs"]
    got = {(r.column, r.symbol, r.defining_file, r.kind) for r in finder.refs("User.cs")}
    assert got == {(line.index("Outer.One"), "Outer", "A.cs", K.TYPE), (line.index("One"), "One", "A.cs", K.TYPE),
                   (line.index("Outer.Two"), "Outer", "A.cs", K.TYPE), (line.index("Two"), "Two", "B.cs", K.TYPE),
                   (line.index("Leaf"), "Leaf", "B.cs", K.TYPE)}


@needs_mcs
def test_a_missing_type_of_another_arity_than_a_framework_type_gets_a_placeholder(tmp_path):
    # Visual Studio's `Microsoft.VisualStudio.Text.Span` is missing; mono's `System.Span<T>` is found instead, of
    # the wrong arity (CS0305 in a signature stops mcs before every body: three files of VSIntelliSenseTweaks)
    text = "using System;\nclass A\n{\n    static Span.Kind F(Span s) { return null; }\n}\n"
    shim = Shim()
    res = _mcs(tmp_path, {SHIM_FILE: shim.text(), "a.cs": text})
    assert {d.code for d in _errors(res)} == {"CS0305"}
    infos = _infos({"a.cs": text})
    assert shim_fixes(_errors(res), infos, {"a.cs": text}, shim, set(), predict=True) > 0
    # the type nested after it in the same round (else a round more: CS0426)
    assert shim.types == {("", "Span", 0): P.CLASS, ("Span", "Kind", 0): P.CLASS}
    res = _mcs(tmp_path, {SHIM_FILE: shim.text(), "a.cs": text})
    assert all(map(is_probe, _errors(res))) and _errors(res), res.stdout + res.stderr


@needs_mcs
def test_a_stub_in_a_generic_methods_constraints_is_predicted_to_break_the_implementation(tmp_path):
    # the interface member's constraint names the project type; the implementation's would name the stub (CS0425,
    # which stops mcs before every body: RelentStateMachine's state machines lost all their stubs to a recompile)
    texts = {"IState.cs": "namespace Demo { public interface IState { } }\n",
             "IMachine.cs": "namespace Demo { public interface IMachine { bool Is<T>() where T : IState; } }\n",
             "Machine.cs": "namespace Demo { public class Machine : IMachine {\n"
                           "    IState current;\n"
                           "    public bool Is<T>() where T : IState { return current is T; } } }\n"}
    infos = _infos(texts)
    plans = plan_all_stubs(infos, texts, set(texts))
    assert "public interface IState {}" in plans["Machine.cs"].stubbed_text
    res = _mcs(tmp_path, {**texts, "Machine.cs": plans["Machine.cs"].stubbed_text})
    assert [d.code for d in _errors(res)] == ["CS0425"]
    left_out = predict_blockers(plans, infos, texts)
    assert left_out == {("Machine", "IState")}
    kept = plan_all_stubs(infos, texts, set(texts), frozenset(left_out))
    assert "Machine.cs" not in kept or "IState" not in kept["Machine.cs"].stubs
