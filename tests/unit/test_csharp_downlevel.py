"""The C# down-level pass (``analyzers/csharp_downlevel.py``): each construct of the modern corpus
(``tests/fixtures/csharp_modern``) rewritten for the real mcs, which must then compile it cleanly against the real
definitions and report each cross-file use -- against empty stand-ins of the definitions, the way the analyzer's
stubs work -- at a position that maps back to the use in the original text; plus the map's round trip and the
no-op on C# 7 code (pythonnet 2.5.2's runtime, from PyPI)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from benchsmith.analyzers.csharp.downlevel import HELPER_SOURCES, downlevel, extract_global_usings

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "csharp_modern"
CONSTRUCT_FILES = sorted(p.name for p in CORPUS.glob("*.cs") if p.name != "Defs.cs")
# empty stand-ins of Defs.cs, as the analyzer's stubs are: every member use becomes a CS0117 / CS1061 / CS1729
STUB_DEFS = "namespace Lib { public class Widget { } public enum Color { } public struct Point { } }\n"
KEPT = {"CS0117", "CS1061", "CS1729", "CS0246", "CS0103", "CS0426"}
DIAG = re.compile(r"^(?P<file>[^(]+)\((?P<line>\d+),(?P<col>\d+)\): error (?P<code>CS\d+): (?P<msg>.*)$")

needs_mcs = pytest.mark.skipif(shutil.which("mcs") is None, reason="mcs not on PATH (apt-get install mono-mcs)")


def expected_uses() -> dict[str, set[tuple[int, int, str]]]:
    """The README's table: file -> {(1-based line, 1-based column, symbol)} of the cross-file uses."""
    out: dict[str, set] = {}
    for row in (CORPUS / "README.md").read_text().splitlines():
        m = re.match(r"^\| (\w+\.cs) \| (\d+) \| (\d+) \| (\w+) \|", row)
        if m:
            out.setdefault(m.group(1), set()).add((int(m.group(2)), int(m.group(3)), m.group(4)))
    return out


def _compile(tmp: Path, files: dict[str, str]) -> list[dict]:
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
    proc = subprocess.run(["mcs", "-target:library", "-unsafe", "-langversion:experimental", "-warn:0",
                           f"-out:{tmp / 'out.dll'}", *sorted(files)], cwd=tmp, capture_output=True, text=True,
                          timeout=120)
    diags = []
    for line in (proc.stdout + proc.stderr).splitlines():
        m = DIAG.match(line.strip())
        if m:
            diags.append(m.groupdict())
    return diags


def _project_globals() -> list[str]:
    return [d for name in CONSTRUCT_FILES for d in extract_global_usings((CORPUS / name).read_text())]


def _rewrite(name: str):
    return downlevel((CORPUS / name).read_text(encoding="utf-8"), global_usings=_project_globals())


def _helpers(res) -> dict[str, str]:
    return {h: HELPER_SOURCES[h] for h in res.helpers}


@needs_mcs
@pytest.mark.parametrize("name", CONSTRUCT_FILES)
def test_original_is_rejected_and_rewrite_compiles_clean(name, tmp_path):
    original = (CORPUS / name).read_text(encoding="utf-8")
    before = _compile(tmp_path, {name: original, "Defs.cs": (CORPUS / "Defs.cs").read_text()})
    assert before, f"{name}: mcs already reads the original; the corpus file tests nothing"
    res = _rewrite(name)
    assert res.changed and not res.unsupported, res.unsupported
    after = _compile(tmp_path, {name: res.text, "Defs.cs": (CORPUS / "Defs.cs").read_text(), **_helpers(res)})
    assert after == [], after


@needs_mcs
@pytest.mark.parametrize("name", CONSTRUCT_FILES)
def test_cross_file_uses_map_back_exactly(name, tmp_path):
    original = (CORPUS / name).read_text(encoding="utf-8")
    lines = original.split("\n")
    res = _rewrite(name)
    diags = _compile(tmp_path, {name: res.text, "Defs.cs": STUB_DEFS, **_helpers(res)})
    got = set()
    for d in diags:
        assert d["file"] == name, d  # the helper and stand-ins compile cleanly
        assert d["code"] in KEPT, d
        line, col = res.to_original(int(d["line"]) - 1, int(d["col"]) - 1)
        names = re.findall(r"`([^']+)'", d["msg"])
        if d["code"] == "CS1729":  # reported at ``new``: the symbol is the type constructed
            symbol, at = names[0].split(".")[-1], "new"
        else:
            symbol = at = (names[1] if d["code"] in ("CS1061", "CS0117") else names[0]).split(".")[-1]
        assert lines[line][col:].startswith(at), (d, lines[line][col:col + 30])
        got.add((line + 1, col + 1, symbol))
    assert got == expected_uses()[name]


@pytest.mark.parametrize("name", CONSTRUCT_FILES)
def test_map_round_trips(name):
    original = (CORPUS / name).read_text(encoding="utf-8")
    res = _rewrite(name)
    inside = [False] * (len(original) + 1)
    for e in res.edits:
        for k in range(e.start, e.end):
            inside[k] = True
    for off in range(len(original) + 1):
        new = res.to_rewritten_offset(off)
        if not inside[off]:
            assert res.to_original_offset(new) == off
            if off < len(original):
                assert res.text[new] == original[off]
    for off in range(len(res.text) + 1):
        assert 0 <= res.to_original_offset(off) <= len(original)
    # lines and columns: every identifier the pass did not write itself maps to the same identifier
    new_lines = res.text.split("\n")
    orig_lines = original.split("\n")
    line_start = 0
    checked = 0
    for ln, row in enumerate(new_lines):
        for m in re.finditer(r"\b[A-Za-z_]\w*", row):
            if res.is_generated(line_start + m.start()):
                continue
            oline, ocol = res.to_original(ln, m.start())
            assert orig_lines[oline][ocol:ocol + len(m.group())] == m.group(), (name, ln, m.group())
            checked += 1
        line_start += len(row) + 1
    assert checked > 10


@pytest.mark.parametrize("name", CONSTRUCT_FILES)
def test_incremental_reparse_equals_a_fresh_parse(name):
    from tree_sitter import Parser

    from benchsmith import treesitter
    from benchsmith.analyzers.csharp.downlevel.rules import parse

    original = (CORPUS / name).read_text(encoding="utf-8")
    res = downlevel(original, parse(original), global_usings=_project_globals())
    parser = Parser(treesitter.language("tree_sitter_c_sharp"))
    fresh = parser.parse(res.text.encode("utf-8"))
    assert str(res.reparse(parse(original), parser).root_node) == str(fresh.root_node)


def test_long_lines_are_wrapped_below_mcs_column_limit():
    # mcs prints columns past 255 as "255+": a line the rewrite grows is wrapped at its edits
    checks = " && ".join(f"o{i} is not null" for i in range(12))
    text = f"class A {{ bool M(object {', object '.join(f'o{i}' for i in range(12))}) => {checks}; }}\n"
    res = downlevel(text)
    assert res.changed
    line_start = 0
    for row in res.text.split("\n"):
        for m in re.finditer(r"\bo\d+\b", row):
            if not res.is_generated(line_start + m.start()):
                assert m.start() < 250, row
        line_start += len(row) + 1
    assert [m.group() for m in re.finditer(r"\bo\d+ ", res.text)] == [f"o{i} " for i in range(12)]


def test_lambda_parameter_shadowing_a_later_local_is_renamed():
    text = "class A { void M(int[] xs) { var f = System.Linq.Enumerable.Select(xs, type => type + 1); int type = 2; } }\n"
    res = downlevel(text)
    assert "type__" in res.text and res.text.count("type__") == 2
    assert "int type = 2" in res.text
    same = "class A { void M(int[] xs) { var f = System.Linq.Enumerable.Select(xs, t => t); var g = xs; } }\n"
    assert downlevel(same).text is same


def test_csharp7_text_is_returned_unchanged():
    text = "namespace A { class B { int? x; string s; bool M(object o) => o is string t && t.Length > 0; } }\n"
    res = downlevel(text)
    assert res.text is text and not res.changed and res.edits == []
    assert res.to_original(0, 10) == (0, 10)


def test_unsupported_is_recorded_not_dropped():
    text = "class A { void M() { } }\nSystem.Console.WriteLine(1);\n"
    res = downlevel(text)
    assert [(u.construct, u.line, u.col) for u in res.unsupported] == [("top_level_statements", 1, 0)]


@needs_mcs
def test_generic_local_function_becomes_a_method(tmp_path):
    text = ("class A<K> { int M<T>(T x, Lib.Widget w) { return Id(x, 1) + w.Size;\n"
            "  static int Id<U>(T a, U b) where U : struct { return Lib.Widget.Limit; } } }\n")
    res = downlevel(text)
    assert not res.unsupported and not res.lossy  # static: nothing captured, nothing lost
    diags = _compile(tmp_path, {"A.cs": res.text, "Defs.cs": STUB_DEFS, **_helpers(res)})
    got = {(d["code"], res.to_original(int(d["line"]) - 1, int(d["col"]) - 1)) for d in diags}
    lines = text.split("\n")
    assert got == {("CS1061", (0, lines[0].index("Size"))), ("CS0117", (1, lines[1].index("Limit")))}


def test_lossy_rewrites_are_reported_as_such():
    text = "class A { bool N(object a) => a is [1, .., var last] && last != null; }\n"
    res = downlevel(text)
    assert not res.unsupported and [u.construct for u in res.lossy] == ["list_pattern"]
    assert "last" in res.text and " 1" in res.text


@needs_mcs
def test_new_without_a_visible_type_keeps_its_arguments(tmp_path):
    # the target's type is not declared in this file: ``Any(args)`` (dynamic) compiles and keeps ``Limit`` visible
    text = ("class A { void M(System.Action<Lib.Widget> f, Lib.Widget w) { f(new(Lib.Widget.Limit)); "
            "var x = w.Next ?? new(); x.Grow(); } }\n")
    res = downlevel(text)
    assert not res.unsupported and not res.lossy
    diags = _compile(tmp_path, {"A.cs": res.text, "Defs.cs": STUB_DEFS, **_helpers(res)})
    got = {(d["code"], res.to_original(int(d["line"]) - 1, int(d["col"]) - 1)) for d in diags}
    assert ("CS0117", (0, text.index("Limit"))) in got
    assert ("CS1061", (0, text.index("Next"))) in got


def test_pattern_end_follows_csharp_precedence_not_the_grammar():
    # tree-sitter-c-sharp 0.23.5 reads ``o is not null && x`` as ``o is not (null && x)``
    res = downlevel("class A { bool M(object o, bool x) => o is not null && x; }\n")
    assert "!(o  is      null) && x" in res.text


def test_global_usings_are_extracted():
    assert extract_global_usings("global using X.Y;\nglobal using static System.Math;\nusing Z;\n") == \
        ["using X.Y;", "using static System.Math;"]


def test_hostile_input_does_not_crash():
    for text in ["", "namespace", "record", "class A { int M() => o switch { ", "x is not", "\ufeffnamespace A;",
                 "class A { string s = $\"\"\"{", "é" * 50 + " namespace X;\nclass Ü { Widget? w = new(); }"]:
        res = downlevel(text)
        assert isinstance(res.text, str)
        for off in range(len(res.text) + 1):
            assert 0 <= res.to_original_offset(off) <= len(text)


@needs_mcs
def test_csharp7_runtime_unchanged(download, tmp_path):
    """pythonnet 2.5.2's runtime (C# 7): every file mcs parses comes out byte-identical."""
    from benchsmith.analyzers.csharp.downlevel.rules import declared_value_types
    from benchsmith.sources import extract_archive

    try:
        archive = download("pypi", "pythonnet==2.5.2", "pythonnet-2.5.2.tar.gz")
    except Exception as exc:  # noqa: BLE001 - no network and no cache: visible skip
        pytest.skip(f"pythonnet 2.5.2 sdist unavailable: {exc}")
    root = extract_archive(archive, tmp_path / "src")
    files = sorted((root / "src" / "runtime").rglob("*.cs"))
    texts = {f: f.read_text(encoding="utf-8", errors="replace") for f in files}
    values = frozenset().union(*(declared_value_types(t) for t in texts.values()))
    proc = subprocess.run(["mcs", "--parse", "-unsafe", "-langversion:experimental", *map(str, files)],
                          capture_output=True, text=True, timeout=300)
    unparsed = {m.group("file") for m in map(DIAG.match, (proc.stdout + proc.stderr).splitlines()) if m}
    checked = 0
    for f, text in texts.items():
        if str(f) in unparsed:
            continue
        res = downlevel(text, value_types=values)
        assert res.text == text and not res.edits, (f, res.edits[:3])
        checked += 1
    assert checked >= 60  # of the 73 runtime files; the rest need defines mcs does not get here


def test_native_ints_become_intptr_and_nothing_else_named_like_them():
    # found in the text, not by a query predicate: only the keyword's own node is rewritten, never a name, a
    # string or a comment spelled the same
    src = ('class A {\n    nint a; nuint b; nint[] c;\n    int nintx = 0; string s = "nint"; // nuint\n'
           '    int @nint = 1;\n    void M(nint p) { var q = (nuint)p; }\n}\n')
    res = downlevel(src)
    assert not res.unsupported, res.unsupported
    text = res.text
    assert text.count("global::System.IntPtr") == 3 and text.count("global::System.UIntPtr") == 2
    assert 'int nintx = 0; string s = "nint"; // nuint' in text and "int @nint = 1;" in text
    at = text.index("(global::System.UIntPtr)p") + 1
    assert src[res.to_original_offset(at):].startswith("nuint)p")
    assert src[res.to_original_offset(text.index("p; }")):].startswith("p; }")


def test_a_rule_that_fails_on_odd_input_loses_only_its_own_rewrites(monkeypatch):
    from benchsmith.analyzers.csharp.downlevel import rules

    def broken(ctx, caps):
        ctx.new_group()
        ctx.insert(0, "half-made ", rules.C.OTHER)
        raise RuntimeError("a bug of one rule")

    monkeypatch.setattr(rules, "_rules", lambda: (rules._nullable_types, broken, rules._file_scoped_namespace))
    res = downlevel("namespace N;\nclass A { string? s; }\n")
    assert "half-made" not in res.text
    assert res.text == "namespace N{\nclass A { string  s; }\n}"  # the other rules' rewrites are kept
    assert [(u.construct, u.line, u.col) for u in res.unsupported] == [("other", 0, 0)]


@pytest.mark.parametrize("name", CONSTRUCT_FILES)
def test_the_scan_reads_the_same_from_its_cheaper_tree(name):
    # the scan's tree leaves out the edits that move no position (a file-scoped namespace keeps its `;` form, a
    # blanked `?`, `!` or `using` stays, a function pointer stays with its names masked): every scan figure must
    # be what a fresh parse of the rewritten text gives
    from tests.csharp_scans import assert_same_scan

    assert_same_scan(name, (CORPUS / name).read_text(encoding="utf-8"))


def test_function_pointers_stay_in_the_scans_tree_with_the_names_of_their_replacement():
    # project types inside function pointers (in fields, an override's signature, a cast in a body, a qualified
    # name): the rewritten text names none of them, only global::System.IntPtr, and the scan must read just that
    from tests.csharp_scans import assert_same_scan
    from benchsmith.analyzers.csharp.scan import scan_csharp
    from benchsmith.files import SourceFile
    from benchsmith import treesitter

    src = ("using Lib;\nnamespace App\n{\n    unsafe class Native : Base\n    {\n"
           "        delegate* unmanaged[Cdecl]<Handle, Lib.Ref, int> _incRef;\n"
           "        public override delegate* unmanaged<Owned, void> Finalizer => null;\n"
           "        static delegate*<int> Plain;\n"
           "        void Call(System.IntPtr p) { var f = (delegate* unmanaged<Borrowed, int>)p; f(default); }\n"
           "        string? Name;\n    }\n}\n")
    # left out: the `?` and the three function pointers longer than their replacement (the short `delegate*<int>`
    # grows into it, moves what follows, and is re-parsed)
    assert assert_same_scan("Native.cs", src) == 4
    parser = treesitter.parser("tree_sitter_c_sharp")
    res = downlevel(src, parser.parse(src.encode("utf-8")))
    info = scan_csharp(SourceFile("Native.cs", res.text), res.scan_tree(parser.parse(src.encode("utf-8")), parser),
                       res.scan_masks())
    assert {"IntPtr", "System", "Base"} <= info.used
    assert not {"Handle", "Lib", "Ref", "Owned", "Borrowed"} & info.used  # `Lib` is named in a using and in a mask
    assert [n.text for n in info.blocker_caps["qualifier"]] == [b"System"]  # of `System.IntPtr p`, not `Lib.Ref`


def test_a_mask_that_is_no_plain_type_falls_back_to_the_texts_own_tree():
    from benchsmith import treesitter
    from benchsmith.analyzers.csharp.scan import scan_csharp, type_names
    from benchsmith.files import SourceFile

    assert type_names("global::System.IntPtr") == ("IntPtr", "System", "global")
    assert type_names("List<int>") is None and type_names("A.B") is None and type_names("int )") is None
    parser = treesitter.parser("tree_sitter_c_sharp")
    text = "class A { List<int> f; }"
    stale = parser.parse(b"class A { Other   x; }")
    info = scan_csharp(SourceFile("A.cs", text), stale, ((10, 19, "List<int>"),))
    assert not info.masks and "List" in info.used and "Other" not in info.used


def test_a_file_scoped_namespace_alone_needs_no_reparse():
    from benchsmith import treesitter

    parser = treesitter.parser("tree_sitter_c_sharp")
    src = "namespace N.M;\n\nclass A { int x; }\n"
    tree = parser.parse(src.encode("utf-8"))
    res = downlevel(src, tree)
    assert res.text == "namespace N.M{\n\nclass A { int x; }\n}"
    assert res.scan_tree(tree, parser) is tree  # the `;` form is the preprocessed text itself


def test_a_structs_parameterless_constructor_gets_a_parameter_for_mcs(tmp_path):
    # C# 10; mcs rejects it (CS0568) and the file was lost (UltraPain's CommonComponents.cs)
    src = ("struct S { public int a; public S() { a = Lib.Widget.Max; } public S(int x) : this() { a = x; }\n"
           "    static S() { } }\nclass C { S s = new S(); }\n")
    res = downlevel(src)
    assert not res.unsupported and [u.construct for u in res.lossy] == ["struct_parameterless_ctor"]
    assert "public S(bool __bsdl_ctor) {" in res.text and "static S() { }" in res.text
    at = res.text.index("Max")  # the body keeps its place in the map
    assert src[res.to_original_offset(at):].startswith("Max")
    if shutil.which("mcs") is None:
        pytest.skip("mcs not on PATH: the rewrite's text is checked, not its compile")
    stubs = {"Defs.cs": STUB_DEFS}
    (tmp_path / "orig").mkdir()
    (tmp_path / "new").mkdir()
    assert [d["code"] for d in _compile(tmp_path / "orig", {**stubs, "a.cs": src})] == ["CS0568"]
    assert [(d["code"], d["msg"]) for d in _compile(tmp_path / "new", {**stubs, "a.cs": res.text})] == \
        [("CS0117", "`Lib.Widget' does not contain a definition for `Max'")]
