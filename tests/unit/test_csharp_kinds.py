"""C# reference kinds: type, heritage, attribute, constructor and inherited-member uses read off the tree with the
scan's index (``csharp.kinds``, ``csharp.inherited``), and the kinds of the compile's own references.  The fixture
(tests/fixtures/csharp/kinds) is in the shape of released CrossCodeEval C# code (a Unity quest system): Unity,
Newtonsoft and BCL types stand beside the project's, and only the project's are references."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchsmith import treesitter
from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.analyzers.csharp import Compiler
from benchsmith.analyzers.csharp.kinds import TypeRefFinder, classify, identifiers
from benchsmith.analyzers.csharp.scan import scan_csharp
from benchsmith.builders.cceval.examples import groundtruth_cut
from benchsmith.files import SourceFile, snapshot
from benchsmith.records import ReferenceKind as K

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "csharp" / "kinds"
needs_mcs = pytest.mark.skipif(shutil.which("mcs") is None,
                               reason="mcs not on PATH (apt-get install mono-mcs; scripts/setup_toolchains.sh)")
# library, framework and Unity types the fixture uses: never references
EXTERNAL = {"List", "Dictionary", "Transform", "JsonProperty", "Serializable", "Exception", "MonoBehaviour",
            "ScriptableObject", "CreateAssetMenu", "System", "Attribute", "T"}


def _texts() -> dict[str, str]:
    return {p.relative_to(FIXTURE).as_posix(): p.read_text(encoding="utf-8") for p in sorted(FIXTURE.rglob("*.cs"))}


def _scan_refs(texts: dict[str, str]):
    infos = {p: scan_csharp(SourceFile(p, t)) for p, t in texts.items()}
    finder = TypeRefFinder(infos, set(texts), texts, texts, {})
    return [r for p in sorted(texts) for r in finder.refs(p)]


def _at(text: str, before: str, name: str, nth: int = 0) -> tuple[int, int]:
    """(line, column) of ``name`` right after the ``nth`` occurrence of ``before``."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(before + name, at + 1)
    off = at + len(before)
    line = text.count("\n", 0, off)
    return line, off - (text.rfind("\n", 0, off) + 1)


def test_type_heritage_attribute_constructor_and_inherited_uses_at_their_names():
    texts = _texts()
    log = texts["Runtime/QuestLog.cs"]
    got = {(r.line, r.column, r.symbol, r.kind) for r in _scan_refs(texts) if r.file == "Runtime/QuestLog.cs"}
    want = {
        (*_at(log, "[", "QuestInfo"), "QuestInfo", K.ATTRIBUTE),
        (*_at(log, "QuestLog : ", "QuestInteraction"), "QuestInteraction", K.HERITAGE),
        (*_at(log, "QuestInteraction, ", "IQuestListener"), "IQuestListener", K.HERITAGE),
        (*_at(log, "public List<", "Quest"), "Quest", K.TYPE),  # generic argument
        (*_at(log, "new List<", "Quest"), "Quest", K.TYPE),
        (*_at(log, "public ", "Quest lastQuest"), "Quest", K.TYPE),  # field
        (*_at(log, "Dictionary<string, ", "NodeQuest"), "NodeQuest", K.TYPE),
        (*_at(log, "Dictionary<string, ", "NodeQuest", 1), "NodeQuest", K.TYPE),
        (*_at(log, "IsCurrent(", "Quest"), "Quest", K.TYPE),  # parameter
        (*_at(log, "public ", "NodeQuest GetNode"), "NodeQuest", K.TYPE),  # return type
        (*_at(log, "(", "Quest)o"), "Quest", K.TYPE),  # cast
        (*_at(log, "typeof(", "NodeQuest"), "NodeQuest", K.TYPE),
        (*_at(log, "as ", "NodeQuest"), "NodeQuest", K.TYPE),
        (*_at(log, "is ", "QuestObjective"), "QuestObjective", K.TYPE),
        (*_at(log, "nameof(", "QuestObjective"), "QuestObjective", K.TYPE),
        (*_at(log, "new ", "QuestObjective"), "QuestObjective", K.CONSTRUCTOR),
        (*_at(log, "this.", "Interact"), "Interact", K.INHERITED_MEMBER),
        (*_at(log, "            ", "Interact();"), "Interact", K.INHERITED_MEMBER),
        (*_at(log, "return ", "uses"), "uses", K.INHERITED_MEMBER),
        (*_at(log, "OnQuest(", "Quest"), "Quest", K.TYPE),
    }
    assert got == want
    # `new QuestLog()` names the file's own class: not cross-file
    assert not any(r.symbol == "QuestLog" for r in _scan_refs(texts))


def test_library_framework_and_shadowed_names_are_never_references():
    refs = _scan_refs(_texts())
    assert not [r for r in refs if r.symbol in EXTERNAL]
    holder = sorted((r.line, r.symbol, r.kind) for r in refs if r.file == "Runtime/Holder.cs")
    # `where T : QuestObjective` and the field's type `Kind`; not the nested NodeQuest the class declares, nor
    # `Kind.Side`, where the field Kind may be what the name means (Color Color)
    assert holder == [(2, "QuestObjective", K.TYPE), (4, "Kind", K.TYPE)]


def test_definitions_name_the_declaration_an_attribute_names_the_attribute_class():
    refs = {(r.file, r.symbol, r.kind): r for r in _scan_refs(_texts())}
    attr = refs[("Runtime/QuestLog.cs", "QuestInfo", K.ATTRIBUTE)]
    assert attr.import_name == "QuestInfoAttribute" and attr.defining_file == "Runtime/QuestInfoAttribute.cs"
    assert (attr.definition.symbol, attr.definition.start_line, attr.definition.end_line) == ("QuestInfoAttribute", 2, 5)
    inherited = refs[("Runtime/QuestLog.cs", "uses", K.INHERITED_MEMBER)]
    assert inherited.defining_file == "Runtime/QuestInteraction.cs"
    assert (inherited.definition.start_line, inherited.definition.symbol) == (6, "uses")
    quest = refs[("Runtime/QuestLog.cs", "Quest", K.TYPE)]
    assert (quest.definition.file, quest.definition.start_line) == ("Runtime/Quest.cs", 5)


@pytest.mark.parametrize("code, name, kind", [
    ("class A { Foo f; }", "Foo", K.TYPE),
    ("class A { Foo[] f; Foo? g; }", "Foo", K.TYPE),
    ("class A { void M(ref Foo x) {} }", "Foo", K.TYPE),
    ("class A { (Foo a, int b) t; }", "Foo", K.TYPE),
    ("class A { void M() { foreach (Foo x in xs) {} } }", "Foo", K.TYPE),
    ("class A { void M() { var x = default(Foo); } }", "Foo", K.TYPE),
    ("class A { void M() { G<Foo>(); } }", "Foo", K.TYPE),
    ("class A { void M() { Foo.Inner x; } }", "Foo", K.TYPE),
    ("class A : Base<Foo> { }", "Foo", K.TYPE),
    ("class A : Foo<int> { }", "Foo", K.HERITAGE),
    ("[Foo(1)] class A { }", "Foo", K.ATTRIBUTE),
    ("class A { object o = new Foo<int>(); }", "Foo", K.CONSTRUCTOR),
    ("class A { void M() { x.Foo(); } }", "Foo", None),  # a member of something else
    ("class A { void Foo() { } }", "Foo", None),  # a declaration
    ("class A { int x = y.Foo; }", "Foo", None),
])
def test_classify_reads_the_place_of_a_type_name(code, name, kind):
    root = treesitter.parser("tree_sitter_c_sharp").parse(code.encode()).root_node
    got = {classify(n)[0] if classify(n) else None for n in identifiers(root) if n.text.decode() == name}
    assert got == {kind}


# -- with the compiler ------------------------------------------------------------------------------------------


def _analyze(tmp_path: Path):
    analyzer = get_analyzer("csharp", AnalyzerOptions())
    analyzer.compiler = Compiler.MCS
    snap = snapshot(FIXTURE, analyzer.extensions, tmp_path / "snap", repo_name="fixture")
    return analyzer, snap, analyzer.analyze(snap, tmp_path / "work")


@needs_mcs
def test_analysis_labels_every_reference_and_keeps_the_compile_ones(tmp_path):
    analyzer, snap, res = _analyze(tmp_path)
    assert not res.exclusions, res.exclusions
    log = snap.by_path()["Runtime/QuestLog.cs"].text
    by_place = {(r.file, r.line, r.column): r for r in res.refs}
    member = by_place[("Runtime/QuestLog.cs", *_at(log, "lastQuest.", "misionName"))]
    assert (member.kind, member.diagnostic) == (K.MEMBER, "CS1061")
    assert {r.kind for r in res.refs} == {K.MEMBER, K.TYPE, K.HERITAGE, K.ATTRIBUTE, K.CONSTRUCTOR,
                                          K.INHERITED_MEMBER}
    assert not [r for r in res.refs if r.symbol in EXTERNAL]
    assert res.stats["scan_refs"] == sum(1 for r in res.refs if r.diagnostic == "scan") > 20
    texts = snap.by_path()
    for r in res.refs:
        assert texts[r.file].text.split("\n")[r.line][r.column:].startswith(r.symbol), r
        assert r.defining_file not in (None, r.file)


@needs_mcs
def test_a_new_with_arguments_the_stub_lacks_is_a_constructor_reference(tmp_path):
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "Lib.cs").write_text("namespace N { public class Box { public Box(int n) { } } }\n")
    (tmp_path / "repo" / "Use.cs").write_text("namespace N { class Use { object M() { return new Box(2); } } }\n")
    analyzer = get_analyzer("csharp", AnalyzerOptions())
    analyzer.compiler = Compiler.MCS
    snap = snapshot(tmp_path / "repo", analyzer.extensions, tmp_path / "snap", repo_name="r")
    res = analyzer.analyze(snap, tmp_path / "work")
    assert [(r.symbol, r.kind, r.diagnostic) for r in res.refs] == [("Box", K.CONSTRUCTOR, "CS1729")]
    assert res.refs[0].definition.file == "Lib.cs"


def test_a_declaration_header_is_cut_through_the_brace_on_the_next_line():
    text = _texts()["Runtime/QuestLog.cs"]
    data = text.encode()
    tree = treesitter.parser("tree_sitter_c_sharp").parse(data)
    line, col = _at(text, "public ", "NodeQuest GetNode")
    start = sum(len(x) + 1 for x in text.split("\n")[:line]) + col
    analyzer = get_analyzer("csharp", AnalyzerOptions())
    cut = groundtruth_cut(analyzer, tree, data, start)
    assert data[start:cut.end_byte].decode() == "NodeQuest GetNode(string key)\n        {"
