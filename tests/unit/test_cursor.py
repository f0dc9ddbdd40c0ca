"""--cursor released: the places a released cursor may take in a line, the seeded draw, and the cutter's use of it
(real tree-sitter grammars; the references are what an analyzer would hand the cutter)."""

from __future__ import annotations

from collections import Counter

import pytest

from benchsmith.analyzers import get_analyzer
from benchsmith.analyzers.base import Boundary, ReleasedCursor
from benchsmith.builders.cceval.cursor import candidate_places, choose_place, classify
from benchsmith.builders.cceval.examples import ExampleCutter, line_end_cut
from benchsmith.files import SourceFile
from benchsmith.pipeline import DropLedger
from benchsmith.records import CrossFileRef, CursorPlace, Reason, ReferenceKind
from benchsmith.builders.cceval.records import CursorRule

JAVA = """package a;

class Use {
    double blend(Hct hct) {
        int x = 1;
        double hue = hct.getHue();
        return MathUtils.lerp(this.low, hue, 0.5);
    }
}
"""

TS = """import { Engine } from './engine';

export function play(engine: Engine) {
    const x = 1;
    await engine.removeCard(x);
    return x;
}
"""


def _places(lang: str, text: str, name_text: str, line_text: str) -> list[str]:
    analyzer = get_analyzer(lang)
    data = text.encode()
    name = data.index(name_text.encode(), data.index(line_text.encode()))
    line_start = data.rfind(b"\n", 0, name) + 1
    tree = analyzer.parser_for("x").parse(data)
    places = candidate_places(analyzer.released_cursor, tree, line_start, name)
    return [text[p:text.index("\n", p)] for p in places]


def test_classify_line_start_after_dot_elsewhere():
    assert classify("") is CursorPlace.LINE_START
    assert classify("        ") is CursorPlace.LINE_START
    assert classify("    x = hct.") is CursorPlace.AFTER_DOT
    assert classify("    double ") is CursorPlace.ELSEWHERE


def test_java_places_are_token_starts_up_to_the_name():
    got = _places("java", JAVA, "getHue", "double hue")
    assert got == ["double hue = hct.getHue();", "hue = hct.getHue();", "= hct.getHue();", "hct.getHue();",
                   ".getHue();", "getHue();"]


def test_typescript_places_are_token_ends_and_column_zero():
    got = _places("typescript", TS, "removeCard", "await engine")
    assert got == ["    await engine.removeCard(x);", " engine.removeCard(x);", ".removeCard(x);", "removeCard(x);"]


def test_draw_is_seeded_and_follows_the_weights():
    rule = ReleasedCursor(Boundary.TOKEN_START, {CursorPlace.LINE_START: 1.0, CursorPlace.ELSEWHERE: 0.0})
    places = [0, 5, 9]
    kind = {0: CursorPlace.LINE_START, 5: CursorPlace.ELSEWHERE, 9: CursorPlace.ELSEWHERE}.__getitem__
    assert {choose_place(rule, places, kind, f"0:{i}") for i in range(50)} == {0}
    even = ReleasedCursor(Boundary.TOKEN_START)
    draws = [choose_place(even, places, kind, f"7:{i}") for i in range(300)]
    assert draws == [choose_place(even, places, kind, f"7:{i}") for i in range(300)]
    assert set(Counter(draws)) == {0, 5, 9}


def _refs(text: str, path: str, names: list[tuple[str, str]], kind=ReferenceKind.MEMBER) -> list[CrossFileRef]:
    refs = []
    lines = text.split("\n")
    for line_text, name in names:
        line = next(i for i, t in enumerate(lines) if line_text in t)
        refs.append(CrossFileRef(path, line, lines[line].index(name, lines[line].index(line_text)), name, "X",
                                 "other", kind=kind))
    return refs


@pytest.mark.parametrize("lang, path, text, names", [
    ("java", "a/Use.java", JAVA, [("double hue", "getHue"), ("return MathUtils", "lerp")]),
    ("typescript", "src/play.ts", TS, [("await engine", "removeCard")]),
])
def test_released_cursor_keeps_the_statement_end_and_the_file(lang, path, text, names):
    files = {path: SourceFile(path, text)}
    refs = _refs(text, path, names)
    by_name = list(ExampleCutter(get_analyzer(lang), files, "r", counter=DropLedger())(refs))
    seen_places = set()
    for seed in range(40):
        released = list(ExampleCutter(get_analyzer(lang), files, "r", counter=DropLedger(), seed=seed,
                                      cursor=CursorRule.RELEASED)(refs))
        assert [e.metadata.task_id for e in released] == [e.metadata.task_id for e in by_name]
        for a, b in zip(by_name, released):
            assert b.prompt + b.groundtruth + b.right_context == text
            assert len(a.prompt + a.groundtruth) == len(b.prompt + b.groundtruth)  # the same end
            assert len(b.prompt) <= len(a.prompt)
            assert b.metadata.cursor_place == classify(b.prompt[b.prompt.rfind("\n") + 1:]).value
            seen_places.add(b.metadata.cursor_place)
    assert CursorPlace.LINE_START.value in seen_places and CursorPlace.ELSEWHERE.value in seen_places
    again = list(ExampleCutter(get_analyzer(lang), files, "r", counter=DropLedger(), seed=3,
                               cursor=CursorRule.RELEASED)(refs))
    assert again == list(ExampleCutter(get_analyzer(lang), files, "r", counter=DropLedger(), seed=3,
                                       cursor=CursorRule.RELEASED)(refs))


def test_python_released_cursor_is_the_name():
    text = "import m\n\n\ndef f():\n    x = 1\n    return m.helper(x)\n"
    files = {"p.py": SourceFile("p.py", text)}
    refs = _refs(text, "p.py", [("return m", "helper")])
    a = list(ExampleCutter(get_analyzer("python"), files, "r", counter=DropLedger())(refs))
    b = list(ExampleCutter(get_analyzer("python"), files, "r", counter=DropLedger(), cursor=CursorRule.RELEASED)(refs))
    assert a == b and a[0].groundtruth == "helper(x)" and a[0].metadata.cursor_place == "after_dot"


def test_kinds_not_selected_are_recorded():
    files = {"a/Use.java": SourceFile("a/Use.java", JAVA)}
    refs = _refs(JAVA, "a/Use.java", [("double hue", "getHue")]) + _refs(JAVA, "a/Use.java", [("Hct hct", "Hct")],
                                                                          kind=ReferenceKind.TYPE)
    ledger = DropLedger()
    out = list(ExampleCutter(get_analyzer("java"), files, "r", counter=ledger,
                             kinds=frozenset({ReferenceKind.TYPE}))(refs))
    assert [e.metadata.reference_kind for e in out] == ["type"]
    assert [e.reason for e in ledger.exclusions] == [Reason.KIND_NOT_SELECTED]


@pytest.mark.parametrize("lang, text, at, expected", [
    ("typescript", "function f(p) {\n  return [ok, { player: toClientPlayer(p) }];\n}\n", "toClientPlayer",
     "toClientPlayer(p) }];"),
    ("typescript", "const x = make({\n  a: 1,\n  b: Lib.two(),\n});\n", "two", "two(),\n});"),
    ("csharp", "class A {\n    [HarmonyBefore]\n    static bool Prefix(Enemy e)\n    {\n    }\n}\n", "HarmonyBefore",
     "HarmonyBefore]\n    static bool Prefix(Enemy e)\n    {"),
    ("java", "class A {\n  void f() {\n    for (int i = 0; i < Util.n(); i++) {\n    }\n  }\n}\n", "n()", "n(); i++) {"),
])
def test_released_end_runs_to_the_first_line_ending_a_statement(lang, text, at, expected):
    analyzer = get_analyzer(lang)
    data = text.encode()
    tree = analyzer.parser_for("x").parse(data)
    cursor = data.index(at.encode())
    cut = line_end_cut(tree, cursor, analyzer.statement_terminators)
    assert data[cursor:cut.end_byte].decode() == expected


def test_released_csharp_attribute_example_takes_the_member_header():
    text = "namespace N {\n    class A {\n        [HarmonyBefore]\n        static bool Prefix(Enemy e)\n        {\n" \
           "            return true;\n        }\n    }\n}\n"
    files = {"A.cs": SourceFile("A.cs", text)}
    refs = _refs(text, "A.cs", [("[HarmonyBefore]", "HarmonyBefore")], kind=ReferenceKind.ATTRIBUTE)
    (by_name,) = ExampleCutter(get_analyzer("csharp"), files, "r", counter=DropLedger())(refs)
    (released,) = ExampleCutter(get_analyzer("csharp"), files, "r", counter=DropLedger(),
                                cursor=CursorRule.RELEASED)(refs)
    assert by_name.groundtruth == "HarmonyBefore]"
    assert released.groundtruth == "HarmonyBefore]\n        static bool Prefix(Enemy e)\n        {"
    assert released.prompt == by_name.prompt


def test_released_examples_read_crlf_files_as_lf_like_the_released_data():
    text = ("namespace N {\r\n    class A {\r\n        public Quest Get(Node n)\r\n        {\r\n"
            "            return null;\r\n        }\r\n    }\r\n}\r\n")
    files = {"A.cs": SourceFile("A.cs", text)}
    refs = _refs(text, "A.cs", [("public Quest", "Quest")], kind=ReferenceKind.TYPE)
    (by_name,) = ExampleCutter(get_analyzer("csharp"), files, "r", counter=DropLedger())(refs)
    (released,) = ExampleCutter(get_analyzer("csharp"), files, "r", counter=DropLedger(),
                                cursor=CursorRule.RELEASED)(refs)
    assert by_name.prompt + by_name.groundtruth + by_name.right_context == text  # name: the file's bytes
    assert released.groundtruth == "Quest Get(Node n)\n        {"
    assert released.prompt + released.groundtruth + released.right_context == text.replace("\r\n", "\n")
    assert released.metadata.groundtruth_start_lineno == by_name.metadata.groundtruth_start_lineno == 2
    assert released.metadata.right_context_start_lineno == 4
