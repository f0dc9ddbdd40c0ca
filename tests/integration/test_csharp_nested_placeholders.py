"""The C# analyzer with the real mcs on a project in the shape of released CrossCodeEval C# code (a Unity editor
tool): a file uses nested types, enum members, constants and an attribute with named arguments declared in another
file of the project, and a nested type of a library the build does not have (``Port.Capacity`` of Unity's
GraphView).  Every one of those uses is a reference, and no file is lost: before placeholders declared nested types,
mcs rejected the file (CS0426 in a signature stops it before every method body)."""

from __future__ import annotations

import shutil

import pytest

from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.analyzers.csharp import Compiler
from benchsmith.files import snapshot
from benchsmith.records import ReferenceKind as K

pytestmark = pytest.mark.skipif(shutil.which("mcs") is None,
                                reason="mcs not on PATH (apt-get install mono-mcs; scripts/setup_toolchains.sh)")

LIB = """namespace Demo
{
    public class Outer
    {
        public class Inner { public static int Count; public int Size; }
        public enum Mode { Fast, Slow }
        public class Gen<T> { public class Deep { public int Depth; } }
    }

    public enum Color { Red, Green }

    [System.AttributeUsage(System.AttributeTargets.All)]
    public class TagAttribute : System.Attribute
    {
        public string Name { get; set; }
        public TagAttribute() { }
        public TagAttribute(int level) { }
    }

    public static class Consts { public const string Title = "t"; }
}
"""

USER = """using UnityEditor.Experimental.GraphView;

namespace Demo
{
    public class User : GraphView
    {
        public Outer.Inner inner;
        public Outer.Mode mode = Outer.Mode.Fast;
        public Outer.Gen<int>.Deep deep;
        [Tag(Name = "x")] public int tagged;
        [Tag(3, Name = Consts.Title)] public int tagged2;
        public Color color = Color.Red;

        private Port MakePort(Port.Capacity capacity = Port.Capacity.Single) { return null; }

        public int Paint(Color c = Color.Green)
        {
            var n = Outer.Inner.Count;
            var s = inner.Size;
            return deep.Depth;
        }
    }
}
"""


def _at(line: str, needle: str, name: str) -> int:
    return line.index(needle) + needle.index(name)


def test_nested_types_enum_members_and_named_attribute_arguments_are_references(tmp_path):
    repo = tmp_path / "repo"
    (repo / "Runtime").mkdir(parents=True)
    (repo / "Editor").mkdir()
    (repo / "Runtime" / "Lib.cs").write_text(LIB, encoding="utf-8")
    (repo / "Editor" / "User.cs").write_text(USER, encoding="utf-8")
    analyzer = get_analyzer("csharp", AnalyzerOptions())
    analyzer.compiler = Compiler.MCS
    snap = snapshot(repo, analyzer.extensions, tmp_path / "snap", repo_name="demo")
    res = analyzer.analyze(snap, tmp_path / "work")

    assert res.exclusions == []  # no file lost
    assert res.stats["rejected_files"] == 0 and res.stats["files_stubs_dropped"] == 0
    assert res.stats["stubs_dropped"] == 0 and res.stats["stubs_dropped_predicted"] == 0
    lines = USER.splitlines()

    def ref(needle: str, name: str, kind: K) -> tuple:
        i = next(i for i, line in enumerate(lines) if needle in line)
        return (i, _at(lines[i], needle, name), name, kind)

    got = {(r.line, r.column, r.symbol, r.kind) for r in res.refs if r.file == "Editor/User.cs"}
    want = {
        ref("public Outer.Inner", "Outer", K.TYPE),
        ref("public Outer.Inner", "Inner", K.TYPE),  # a nested type is a project type too
        ref("public Outer.Mode", "Outer", K.TYPE),
        ref("public Outer.Mode", "Mode", K.TYPE),
        ref("= Outer.Mode.Fast", "Outer", K.TYPE),  # the qualifier of a parameter's default / an initializer
        ref("Outer.Mode.Fast;", "Fast", K.MEMBER),  # an enum member of a nested type of the stub
        ref("public Outer.Gen<int>", "Outer", K.TYPE),
        ref("public Outer.Gen<int>", "Gen", K.TYPE),
        ref("Gen<int>.Deep", "Deep", K.TYPE),
        ref('[Tag(Name = "x")]', "Tag", K.ATTRIBUTE),
        ref("[Tag(3,", "Tag", K.ATTRIBUTE),
        ref("Name = Consts.Title", "Consts", K.TYPE),
        ref("Consts.Title", "Title", K.MEMBER),
        ref("public Color color", "Color", K.TYPE),
        ref("= Color.Red", "Color", K.TYPE),
        ref("Color.Red", "Red", K.MEMBER),
        ref("Paint(Color c", "Color", K.TYPE),
        ref("= Color.Green", "Color", K.TYPE),
        ref("Color.Green", "Green", K.MEMBER),
        ref("Outer.Inner.Count", "Count", K.MEMBER),  # in a body: the member, through the nested stub
        ref("inner.Size", "Size", K.MEMBER),
        ref("deep.Depth", "Depth", K.MEMBER),
    }
    assert got == want
    assert {r.defining_file for r in res.refs if r.file == "Editor/User.cs"} == {"Runtime/Lib.cs"}
