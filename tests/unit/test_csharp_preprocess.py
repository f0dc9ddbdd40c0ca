"""The C# preprocessor evaluated before parsing, and the project settings read from csproj files as data."""

from __future__ import annotations

import pytest

from benchsmith.analyzers.csharp import CSharpAnalyzer
from benchsmith.analyzers.csharp.conditions import PreprocessError, evaluate
from benchsmith.analyzers.csharp.preprocess import preprocess
from benchsmith.analyzers.csharp.project import ProjectIndex, framework_symbols, parse_project


@pytest.mark.parametrize("expr,want", [
    ("A", True), ("B", False), ("!B", True), ("A && B", False), ("A || B", True), ("!(A && B)", True),
    ("A == true", True), ("B != false", False), ("(A || B) && !C // comment", True), ("true", True),
    ("false || B", False), ("A && (B || !C) == true", True), ("A==B", False), ("A != B", True),
])
def test_conditions(expr, want):
    assert evaluate(expr, {"A"}) is want


@pytest.mark.parametrize("expr", ["", "A &&", "(A", "A B", "A & B", "A)", "1"])
def test_bad_conditions_raise(expr):
    with pytest.raises(PreprocessError):
        evaluate(expr, {"A"})


SOURCE = """\
#define LOCAL
#undef GONE
using System;
#if LOCAL && !GONE
class A : IFirst
#elif RELEASE
class A : ISecond
#else
class A : IThird
#endif
{
    string s = @"
#if NOT_A_DIRECTIVE
";
    /* a comment spanning lines
#endif
    */
    string r = \"\"\"
        #else (raw string)
        \"\"\";
#region stays code between
    int x;
#endregion
#if RELEASE
    int y; // ünïcödé 𝔘
#else
    int z;
#endif
#nullable enable
#pragma warning disable CS0168
#line 200 "other.cs"
}
"""


def test_inactive_branches_and_directives_are_blanked_in_place():
    pre = preprocess(SOURCE, {"RELEASE", "GONE"})
    assert not pre.error
    assert len(pre.text) == len(SOURCE)
    assert pre.text.count("\n") == SOURCE.count("\n")
    lines = pre.text.split("\n")
    # every line keeps its length (columns of every other line stay) and blanked ones are spaces only
    for got, orig in zip(lines, SOURCE.split("\n")):
        assert len(got) == len(orig)
    kept = [line.strip() for line in lines if line.strip()]
    assert "class A : IFirst" in kept and "class A : ISecond" not in kept and "class A : IThird" not in kept
    assert "#if NOT_A_DIRECTIVE" in kept and "#endif" in kept  # inside a verbatim string / a block comment
    assert "#else (raw string)" in kept
    assert "int x;" in kept and "int y; // ünïcödé 𝔘" in kept and "int z;" not in kept
    assert not any(line.startswith(("#define", "#region", "#nullable", "#pragma", "#line")) for line in kept)
    assert pre.defines >= {"LOCAL", "RELEASE"} and "GONE" not in pre.defines


def test_tree_bytes_keep_the_original_byte_offsets_and_parse_one_branch():
    pre = preprocess(SOURCE, set())
    data = pre.tree_bytes()
    orig = SOURCE.encode("utf-8")
    assert len(data) == len(orig)
    assert [i for i, b in enumerate(data) if b == 10] == [i for i, b in enumerate(orig) if b == 10]
    # both branches parsed as they are: two headers for one body
    assert CSharpAnalyzer.parser_for().parse(orig).root_node.has_error
    assert not CSharpAnalyzer.parser_for().parse(data).root_node.has_error
    assert b"int z;" in data and b"int y;" not in data  # no RELEASE now


@pytest.mark.parametrize("text,why", [
    ("#endif\nclass A {}\n", "without #if"),
    ("#if A\nclass A {}\n", "no #endif"),
    ("class A {}\n#define X\n", "after the first token"),
    ("#if A &&\n#endif\n", "ends early"),
    ("#if A\n#else\n#elif B\n#endif\n", "after #else"),
])
def test_what_the_compiler_rejects_is_left_to_it(text, why):
    pre = preprocess(text, {"A"})
    assert why in pre.error
    assert pre.text == text and not pre.changed


def test_define_after_comments_is_fine_and_nested_inactive_sections():
    text = "// header\n/* c */\n#define X\n#if !X\n#if Y\nbad\n#else\nbad2\n#endif\n#elif X\ngood\n#endif\n"
    pre = preprocess(text)
    assert not pre.error
    assert [line.strip() for line in pre.text.split("\n") if line.strip()] == ["// header", "/* c */", "good"]


def test_interpolated_strings_and_chars_do_not_hide_directives():
    text = 'var a = $"{x}\\"" + \'"\' + $@"{y}"" ";\n#if A\nint b;\n#endif\n'
    pre = preprocess(text)
    assert "int b;" not in pre.text and 'var a' in pre.text


def test_crlf_lines():
    text = "#if A\r\nint a;\r\n#else\r\nint b;\r\n#endif\r\n"
    pre = preprocess(text, {"A"})
    assert pre.text == "     \r\nint a;\r\n     \r\n      \r\n      \r\n"


def test_analyzer_tree_source_is_the_preprocessed_bytes():
    a = CSharpAnalyzer()
    src = "#if DEBUG\nclass A : B\n#else\nclass A : C\n#endif\n{ }\n"
    data = a.tree_source("x.cs", src)
    assert len(data) == len(src.encode()) and b"A : C" in data and b"A : B" not in data


CSPROJ = """\
<Project Sdk="Microsoft.NET.Sdk.Web">
  <!-- <DefineConstants>COMMENTED</DefineConstants> -->
  <PropertyGroup>
    <TargetFrameworks>net8.0;netstandard2.0</TargetFrameworks>
    <ImplicitUsings>enable</ImplicitUsings>
    <DefineConstants>$(DefineConstants);MY_FLAG;bad-flag</DefineConstants>
  </PropertyGroup>
  <PropertyGroup Condition="'$(Configuration)' == 'TraceAlloc'">
    <DefineConstants>$(DefineConstants);TRACE_ALLOC</DefineConstants>
  </PropertyGroup>
  <PropertyGroup Condition=" '$(TargetFramework)' == 'netstandard2.0' ">
    <DefineConstants>$(DefineConstants);FEATURE_OLD</DefineConstants>
  </PropertyGroup>
  <PropertyGroup Condition=" '$(TargetFramework)' == 'net8.0' ">
    <DefineConstants>$(DefineConstants);FEATURE_NEW</DefineConstants>
  </PropertyGroup>
  <ItemGroup>
    <Using Include="Acme.Extra" />
    <Using Remove="System.Net.Http" />
    <Using Include="Acme.Alias" Alias="Al" />
  </ItemGroup>
</Project>
"""


def test_project_settings_are_read_as_data():
    p = parse_project(CSPROJ)
    assert p.sdk == "Microsoft.NET.Sdk.Web" and p.implicit == "enable" and p.defines == ["MY_FLAG"]
    index = ProjectIndex({"src/App/App.csproj": CSPROJ, "Directory.Build.props": "<Project><PropertyGroup>"
                          "<DefineConstants>FROM_PROPS</DefineConstants></PropertyGroup></Project>",
                          "other/Old.csproj": "<Project><PropertyGroup><TargetFramework>net48</TargetFramework>"
                          "</PropertyGroup></Project>"})
    s = index.settings("src/App/Sub/File.cs")
    assert s.project == "src/App/App.csproj"
    # the project's DefineConstants replace the imported props' ones, the conditional group does not count
    assert {"MY_FLAG", "TRACE", "RELEASE", "NETSTANDARD2_0", "NETSTANDARD"} <= s.defines
    assert "TRACE_ALLOC" not in s.defines and "NET8_0" not in s.defines  # netstandard2.0 is closest to mono
    # the one condition read: the chosen target framework's own DefineConstants
    assert "FEATURE_OLD" in s.defines and "FEATURE_NEW" not in s.defines
    assert s.implicit_usings[:2] == ("System", "System.Collections.Generic")
    assert "Microsoft.AspNetCore.Builder" in s.implicit_usings and "Acme.Extra" in s.implicit_usings
    assert "System.Net.Http" not in s.implicit_usings and "Acme.Alias" not in s.implicit_usings
    old = index.settings("other/Legacy.cs")
    assert {"NETFRAMEWORK", "NET48", "NET45_OR_GREATER"} <= old.defines and old.implicit_usings == ()
    loose = index.settings("tools/x.cs")
    assert loose.project == "" and "FROM_PROPS" in loose.defines


def test_framework_symbols():
    assert {"NET", "NET6_0", "NET5_0_OR_GREATER", "NET6_0_OR_GREATER", "NETCOREAPP3_1_OR_GREATER"} <= \
        framework_symbols("net6.0")
    assert "NET7_0_OR_GREATER" not in framework_symbols("net6.0")
    assert "WINDOWS" in framework_symbols("net6.0-windows")
    assert framework_symbols("netcoreapp3.1") >= {"NETCOREAPP", "NETCOREAPP3_1", "NETCOREAPP2_0_OR_GREATER"}
    assert framework_symbols("nonsense") == set()


def test_garbage_project_files_do_not_crash():
    assert parse_project("<Project><PropertyGroup><DefineConstants>").defines == []
    assert ProjectIndex({"a.csproj": "\x00<<>>"}).settings("a.cs").implicit_usings == ()
