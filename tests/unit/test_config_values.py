"""Repository configuration values as data (issue 22): each value that reaches a tool is checked against its
grammar and refused with a recorded reason; the csproj, tsconfig and go.mod parsers are linear (counted in the
characters their scans read, never in seconds) and capped."""

from __future__ import annotations

import json
import re

import pytest

from benchsmith import config_values as cv
from benchsmith.analyzers.csharp import project_xml
from benchsmith.analyzers.csharp.compile import CompilerCalls
from benchsmith.analyzers.csharp.project import ProjectIndex, framework_symbols, parse_project
from benchsmith.analyzers.go.modules import module_path, module_rejections, package_paths
from benchsmith.analyzers.typescript import tsconfig
from benchsmith.analyzers.typescript.tsconfig import JsoncTooLarge, merge_path_configs, strip_jsonc
from benchsmith.records import Reason, Stage


@pytest.mark.parametrize("value", ["net6.0", "netstandard2.0", "net48", "net6.0-windows10.0.19041.0", "net40-client",
                                   "portable-net45+win8+wpa81", "uap10.0.16299", "MonoAndroid10.0"])
def test_framework_monikers_accepted(value):
    assert cv.is_framework_moniker(value)


@pytest.mark.parametrize("value", ["net6.0-x -doc:../../outside/x.xml", "net6.0-x\n-out:/tmp/e.dll", "@evil.rsp",
                                   "net6.0-a/b", "-define:X", "net6.0;net48", "", "n" * 200, "net6.0-x\t", "net6.0-"])
def test_framework_monikers_refused(value):
    assert not cv.is_framework_moniker(value)


def test_symbols_namespaces_module_paths():
    assert cv.is_preprocessor_symbol("NET6_0_OR_GREATER") and cv.is_preprocessor_symbol("_X1")
    for bad in ("A B", "A;B", "1A", "A-B", "true", "false", "A\n", "", "A" * 600, "-doc:x"):
        assert not cv.is_preprocessor_symbol(bad), bad
    assert cv.is_namespace("System.Collections.Generic") and cv.is_namespace("Ünï.Code")
    for bad in ("System; class Evil {}", "System.", ".System", "Sys tem", "A..B", "1A", "System\n"):
        assert not cv.is_namespace(bad), bad
    for good in ("example.com/m", "github.com/a/b/v2", "m", "gopkg.in/yaml.v3", "a_b/c-d~e"):
        assert cv.is_go_module_path(good), good
    for bad in ("../outside", "a//b", "/abs", "a/", "-x", "a b", "a/.hidden", "x.", "a\nb", "é.com/x", ""):
        assert not cv.is_go_module_path(bad), bad


def test_repo_paths_stay_inside():
    assert cv.repo_path("pkg", "../src/*") == "src/*"
    assert cv.repo_path("", ".") == "" and cv.repo_path("a", "..") == ""
    for bad in ("../../x", "/etc/*", "a\x00b", "a\nb", "x" * 2000):
        assert cv.repo_path("pkg", bad) is None, bad


def test_a_files_rejections_are_one_exclusion_naming_the_first_few():
    rs = [cv.Rejection.of("a.csproj", "DefineConstants", f"bad {i}", cv.ValueKind.PREPROCESSOR_SYMBOL)
          for i in range(8)]
    rs.append(cv.Rejection.too_large("b.csproj", "more than 3 elements"))
    out = cv.exclusions("repo", rs)
    assert [(e.item_id, e.reason, e.stage) for e in out] == [
        ("repo/a.csproj", Reason.CONFIG_VALUE_REJECTED, Stage.ANALYZER),
        ("repo/b.csproj", Reason.CONFIG_TOO_LARGE, Stage.ANALYZER)]
    assert out[0].detail.count("DefineConstants = 'bad") == cv.SHOWN_PER_FILE and out[0].detail.endswith("3 more")
    # control characters never reach a detail as they are
    assert "\n" not in cv.Rejection.of("a", "k", "x\ny", cv.ValueKind.NAMESPACE).describe()


# -- C# project files --------------------------------------------------------------------------------------------

HOSTILE_CSPROJ = """<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup>
    <TargetFrameworks>net48;net6.0-x -doc:../../outside/x.xml</TargetFrameworks>
    <DefineConstants>$(DefineConstants);GOOD;BAD -out:/tmp/x.dll;A&#59;B</DefineConstants>
  </PropertyGroup>
  <ItemGroup>
    <Using Include="Acme.Good" />
    <Using Include="System; class Evil {}" />
  </ItemGroup>
</Project>
"""


def test_project_values_outside_their_grammar_are_refused_and_recorded():
    index = ProjectIndex({"App/App.csproj": HOSTILE_CSPROJ})
    s = index.settings("App/Program.cs")
    assert "GOOD" in s.defines and {"NET48", "NETFRAMEWORK"} <= s.defines
    assert all(cv.is_preprocessor_symbol(d) for d in s.defines), s.defines
    assert s.implicit_usings == ("Acme.Good",)
    got = {(r.config, r.key, r.reason) for r in index.rejections()}
    assert got == {("App/App.csproj", "TargetFrameworks", Reason.CONFIG_VALUE_REJECTED),
                   ("App/App.csproj", "DefineConstants", Reason.CONFIG_VALUE_REJECTED),
                   ("App/App.csproj", "Using Include", Reason.CONFIG_VALUE_REJECTED)}
    values = " ".join(r.value for r in index.rejections())
    assert "-doc:" in values and "-out:" in values and "A&#59" in values and "class Evil" in values


def test_a_refused_single_framework_gives_no_framework_symbols():
    p = parse_project("<Project><PropertyGroup><TargetFramework>net6.0-x -doc:y</TargetFramework>"
                      "</PropertyGroup></Project>")
    assert p.frameworks == [] and [k for k, _v, _t in p.rejected] == ["TargetFramework"]
    # a platform that is no symbol gives none (it used to be upper-cased into a define as it was)
    assert framework_symbols("net6.0-a+b") == framework_symbols("net6.0")
    assert "WINDOWS" in framework_symbols("net6.0-windows10.0.19041.0")


def test_define_args_hold_symbols_only():
    calls = CompilerCalls()
    calls._defines = frozenset({"TRACE", "X -doc:../../o/x.xml", "Y\n-out:z", "OK"})
    (arg,) = calls._define_args()
    assert arg == "-define:OK;TRACE"


def test_unity_version_of_thousands_of_digits_is_refused_not_a_crash():
    index = ProjectIndex({"ProjectSettings/ProjectVersion.txt": "m_EditorVersion: " + "9" * 5000 + ".1f1\n",
                          "Assets/A.asmdef": "{}"})
    assert index.unity_version == (2021, 3)
    (r,) = index.rejections()
    assert (r.config, r.key, r.expected) == ("ProjectSettings/ProjectVersion.txt", "m_EditorVersion",
                                             cv.ValueKind.EDITOR_VERSION)
    assert ProjectIndex({"ProjectSettings/ProjectVersion.txt": "m_EditorVersion: 2019.4.1f1"}).unity_version == \
        (2019, 4)


@pytest.mark.parametrize("text,cap", [
    ("<Project>" + "<PropertyGroup>" * 100, "nested deeper"),
    ("<Project>" + "<a/>" * (cv.MAX_ELEMENTS + 1) + "</Project>", "elements"),
    ("<Project>" + " " * cv.MAX_CONFIG_CHARS + "</Project>", "characters"),
])
def test_project_files_past_a_cap_are_refused_whole(text, cap):
    index = ProjectIndex({"a.csproj": text + "<PropertyGroup><DefineConstants>X</DefineConstants></PropertyGroup>"})
    assert "X" not in index.settings("a.cs").defines
    (r,) = index.rejections()
    assert r.reason is Reason.CONFIG_TOO_LARGE and cap in r.value


class _Counting:
    """A compiled pattern or a str whose searches count the characters they cross (how far each one reads)."""

    def __init__(self, inner, counter: list[int]) -> None:
        self.inner, self.counter = inner, counter

    def search(self, text, pos=0, *a):
        m = self.inner.search(text, pos, *a)
        self.counter[0] += (m.end() if m else len(text)) - pos
        return m

    def match(self, text, pos=0, *a):
        m = self.inner.match(text, pos, *a)
        self.counter[0] += (m.end() if m else 0) - pos if m else 1
        return m


class _CountingStr(str):
    counter = [0]

    def find(self, sub, start=0, *a):
        at = super().find(sub, start, *a)
        _CountingStr.counter[0] += (at + len(sub) if at >= 0 else len(self)) - start
        return at


HOSTILE_XML = {
    "unclosed_groups": "<Project>" + "<PropertyGroup a='1'></x>" * 4000,
    "unclosed_comments": "<Project>" + "<!-- c " * 4000,
    "open_tags": "<Project " * 4000,
    "stray_brackets": "<Project><PropertyGroup><DefineConstants>" + "a < b " * 4000,
    "attribute_soup": "<Project " + "a b = 'c' d " * 4000 + ">",
    "closed_groups": "<Project>" + "<PropertyGroup><DefineConstants>A</DefineConstants></PropertyGroup>" * 1000,
}


@pytest.mark.parametrize("shape", sorted(HOSTILE_XML))
def test_the_project_scanner_reads_each_character_a_bounded_number_of_times(shape, monkeypatch):
    """Linear, counted: every str.find and regex match of the scan reads at most a few times the text's length
    (the regexes it replaced read each unclosed group to the end of the file: quadratic)."""
    counter = [0]
    _CountingStr.counter = counter
    for name in ("_NAME", "_ATTR", "_TAG_END"):
        monkeypatch.setattr(project_xml, name, _Counting(getattr(project_xml, name), counter))
    text = _CountingStr(HOSTILE_XML[shape])
    project_xml.parse(text)
    assert counter[0] <= 4 * len(text) + 10, (shape, counter[0], len(text))


# -- tsconfig ------------------------------------------------------------------------------------------------------

def test_strip_jsonc_keeps_behaviour():
    assert json.loads(strip_jsonc('{"a": "//not a comment", /* c */ "b": [1, 2,],}')) == \
        {"a": "//not a comment", "b": [1, 2]}
    assert json.loads(strip_jsonc('[1, // c\n /* d */ ]')) == [1]
    assert json.loads(strip_jsonc('{"a\\"b,": "x\\\\", }')) == {'a"b,': "x\\"}
    assert strip_jsonc("[1, /* unclosed") == "[1, "


@pytest.mark.parametrize("text", ["[" * (cv.MAX_DEPTH + 1), '{"a":' * (cv.MAX_DEPTH + 1), " " * (cv.MAX_CONFIG_CHARS + 1)])
def test_strip_jsonc_caps(text):
    with pytest.raises(JsoncTooLarge):
        strip_jsonc(text)


@pytest.mark.parametrize("text", ["[" + "1," * 20000 + "1]", "[1" + ", /* c */" * 20000 + "]",
                                  '["' + "\\\\" * 20000 + '"]', "[1" + ", // c\n" * 20000 + "]"])
def test_strip_jsonc_reads_each_character_a_bounded_number_of_times(text, monkeypatch):
    counter = [0]
    _CountingStr.counter = counter
    for name in ("_OUTSIDE", "_IN_STRING"):
        monkeypatch.setattr(tsconfig, name, _Counting(getattr(tsconfig, name), counter))
    strip_jsonc(_CountingStr(text))
    assert counter[0] <= 3 * len(text) + 10, (counter[0], len(text))


def test_tsconfig_values_outside_the_tree_are_refused_and_recorded():
    configs = {
        "tsconfig.json": json.dumps({"compilerOptions": {"baseUrl": "../..", "paths": {
            "ok/*": ["src/*"], "evil/*": ["../../outside/*", "/etc/*"], "two/*/*": ["src/*"],
            "ctl": ["src/a\nb"], "notalist": "src"}}}),
    }
    merged = merge_path_configs(configs)
    assert merged.paths == (("ok/*", ("src/*",)),) and merged.base_url is None
    got = sorted((r.key, r.expected) for r in merged.rejections)
    assert got == sorted([
        ("compilerOptions.baseUrl", cv.ValueKind.REPO_PATH),
        ("compilerOptions.paths['evil/*']", cv.ValueKind.REPO_PATH),
        ("compilerOptions.paths['evil/*']", cv.ValueKind.REPO_PATH),
        ("compilerOptions.paths", cv.ValueKind.PATH_PATTERN),
        ("compilerOptions.paths['ctl']", cv.ValueKind.PATH_PATTERN),
        ("compilerOptions.paths['notalist']", cv.ValueKind.REPO_PATH)])
    assert {r.config for r in merged.rejections} == {"tsconfig.json"}


def test_too_deep_tsconfig_is_refused_whole():
    merged = merge_path_configs({"tsconfig.json": '{"compilerOptions": {"paths": {"a": ["b"]}}, "x": '
                                 + "[" * 200 + "]" * 200 + "}"})
    assert not merged and [(r.config, r.reason) for r in merged.rejections] == [
        ("tsconfig.json", Reason.CONFIG_TOO_LARGE)]


class _CountingDict(dict):
    gets = 0

    def get(self, key, default=None):
        _CountingDict.gets += 1
        return super().get(key, default)


def test_extends_graph_is_walked_once_per_config(monkeypatch):
    """200 configs each extending the next three (and a cycle back): each config's options are computed once,
    not once per path through the graph (3^8 paths per config before)."""
    n = 200
    texts = {f"c{i:03d}/tsconfig.json": json.dumps({"extends": [f"../c{j % n:03d}/tsconfig.json"
                                                                 for j in range(i + 1, i + 4)]}) for i in range(n)}
    texts["c100/tsconfig.json"] = json.dumps({"extends": "../c101/tsconfig.json",
                                              "compilerOptions": {"paths": {"x/*": ["y/*", "a/*/*"]}}})
    real = tsconfig._parse
    monkeypatch.setattr(tsconfig, "_parse", lambda *a: _CountingDict(real(*a)))
    _CountingDict.gets = 0
    merged = merge_path_configs(texts)
    assert _CountingDict.gets <= 2 * n, _CountingDict.gets
    assert dict(merged.paths)["x/*"] == ("c100/y/*",)
    # the refused target is recorded once, on the config that holds it, however many inherit it
    assert [(r.config, r.value) for r in merged.rejections] == [("c100/tsconfig.json", "'a/*/*'")]


def test_paths_targets_are_capped():
    many = {"x/*": [f"t{i}/*" for i in range(tsconfig.MAX_PATH_ENTRIES + 1)]}
    merged = merge_path_configs({"tsconfig.json": json.dumps({"compilerOptions": {"paths": many}})})
    assert [r.reason for r in merged.rejections] == [Reason.CONFIG_TOO_LARGE]


# -- go.mod ------------------------------------------------------------------------------------------------------

def test_go_module_paths_outside_the_grammar_are_refused():
    mods = {"go.mod": 'module "../../outside"\n', "tools/go.mod": "module example.com/tools\n",
            "bad/go.mod": "module `a b/c`\n"}
    paths, how = package_paths(["", "tools", "bad"], mods, [])
    assert paths == {"tools": "example.com/tools"} and how == "go.mod"
    assert [(r.config, r.key) for r in module_rejections(mods)] == [("bad/go.mod", "module"), ("go.mod", "module")]


def test_go_mod_is_read_line_by_line():
    """1 MB of blank lines before the module line: each line is matched on its own (a ^\\s* over the whole text
    backtracked across every blank line)."""
    text = "\n" * 200_000 + "module example.com/m\n"
    assert module_path(text) == "example.com/m"
    assert re.fullmatch(r"\S+", module_path("module example.com/m // c\n") or "")


@pytest.mark.parametrize("group,what", [
    ("<ItemGroup>" + '<Using Include="A.B" />' * (cv.MAX_LIST_VALUES + 1) + "</ItemGroup>", "Using items"),
    ("<PropertyGroup><DefineConstants>" + ";".join(f"S{i}" for i in range(cv.MAX_LIST_VALUES + 1))
     + "</DefineConstants></PropertyGroup>", "DefineConstants symbols"),
    ("<PropertyGroup><TargetFrameworks>" + "net48;" * (cv.MAX_LIST_VALUES + 1)
     + "</TargetFrameworks></PropertyGroup>", "target frameworks"),
])
def test_list_settings_past_their_cap_refuse_the_file(group, what):
    """Each using goes into every file of the project and each symbol onto mcs's command line: a list of 100k
    would multiply the analysed text (or the command) instead of being read."""
    index = ProjectIndex({"a.csproj": f"<Project>{group}</Project>"})
    s = index.settings("a.cs")
    assert s.implicit_usings == () and "S0" not in s.defines and "NET48" not in s.defines
    (r,) = index.rejections()
    assert r.reason is Reason.CONFIG_TOO_LARGE and what in r.value
    ok = ProjectIndex({"a.csproj": "<Project><PropertyGroup><TargetFrameworks>netcoreapp3.1;"
                                   + "net6.0;" * (cv.MAX_LIST_VALUES - 3) + "netstandard2.0;net48</TargetFrameworks>"
                                   "</PropertyGroup></Project>"})
    assert "NET48" in ok.settings("a.cs").defines and ok.rejections() == []  # the best rank, first listed


def test_paths_patterns_are_capped():
    many = {f"p{i}/*": ["src/*"] for i in range(tsconfig.MAX_PATH_PATTERNS + 1)}
    merged = merge_path_configs({"tsconfig.json": json.dumps({"compilerOptions": {"paths": many}})})
    assert [r.reason for r in merged.rejections] == [Reason.CONFIG_TOO_LARGE]
    assert merged.paths == ()  # refused whole, not cut where the count ran out
