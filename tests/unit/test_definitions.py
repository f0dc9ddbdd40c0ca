"""Where each API is defined (analyzers/definitions.py) and how often retrieval finds it
(builders/cceval/definition_recall.py), on real tree-sitter trees."""

from __future__ import annotations

import json

import pytest

from benchsmith.analyzers import get_analyzer
from benchsmith.analyzers.definitions import find_definition, resolve_definitions
from benchsmith.builders.cceval.definition_recall import definition_rank, definition_recall
from benchsmith.files import SourceFile
from benchsmith.jsonio import JsonlError
from benchsmith.records import CrossFileRef, ReferenceKind

PY = """class Base:
    x = 1

    def __init__(self):
        self.splitter = 3
        splitter = 4

    def go(self, q):
        return q


def go():
    pass
"""

JAVA = """package a;
public class Hct {
  private double hue;
  public static Hct from(double hue) {
    int local = 1;
    return null;
  }
  public double getHue() { return hue; }
}
"""

TS = """export interface Card { id: string; mem(): number }
export const removeCard = (e: number) => {
  const removeCard = 2;
};
export class Engine { static scale(x: number) { return x } }
export enum StatusCodes {
    ok = 200,
    notFound,
}
export namespace CardMod { export const Content = { lag: 1 }; }
"""

CS = """namespace N {
  public class FooAttribute : System.Attribute {}
  public class Thing {
    public int Count { get; set; }
    private static float speed = 1;
    public void Go(int speed) {}
  }
}
"""


def _find(lang, text, names, owner=""):
    tree = get_analyzer(lang).parser_for("x").parse(text.encode())
    return find_definition(tree, names, owner)


@pytest.mark.parametrize("lang, text, name, owner, expected", [
    ("python", PY, "splitter", "", (4, 4)),  # self.splitter = ..., not the local of the same name
    ("python", PY, "go", "", (11, 12)),  # a name imported by itself: the module-level function
    ("python", PY, "go", "Base", (7, 8)),  # through the class: its method
    ("java", JAVA, "hue", "", (2, 2)),  # the field, not the parameter
    ("java", JAVA, "from", "Hct", (3, 6)),
    ("java", JAVA, "Hct", "", (1, 8)),
    ("typescript", TS, "removeCard", "", (1, 3)),  # the exported const, not the inner one
    ("typescript", TS, "mem", "", (0, 0)),
    ("typescript", TS, "scale", "Engine", (4, 4)),
    ("typescript", TS, "ok", "StatusCodes", (6, 6)),  # enum members, with a value or without
    ("typescript", TS, "notFound", "StatusCodes", (7, 7)),
    ("typescript", TS, "CardMod", "", (9, 9)),  # a namespace

    ("csharp", CS, "Count", "Thing", (3, 3)),
    ("csharp", CS, "speed", "", (4, 4)),  # the field, not Go's parameter
])
def test_find_definition(lang, text, name, owner, expected):
    assert _find(lang, text, [name], owner)[:2] == expected


def test_a_name_declared_nowhere_has_no_definition():
    assert _find("java", JAVA, ["getChroma"]) is None
    assert _find("python", PY, ["q"]) is None  # a parameter declares nothing an API user needs


def test_resolve_fills_only_missing_definitions_and_tries_the_attribute_suffix():
    files = {"N/Foo.cs": SourceFile("N/Foo.cs", CS)}
    refs = [CrossFileRef("Use.cs", 3, 5, "Foo", "Foo", "N/Foo.cs", kind=ReferenceKind.ATTRIBUTE),
            CrossFileRef("Use.cs", 4, 5, "Missing", "Thing", "N/Foo.cs"),
            CrossFileRef("Use.cs", 5, 5, "Count", "Thing", "elsewhere.cs")]
    assert resolve_definitions(get_analyzer("csharp"), files, refs) == 1
    assert (refs[0].definition.file, refs[0].definition.start_line, refs[0].definition.symbol) == \
        ("N/Foo.cs", 1, "FooAttribute")
    assert refs[1].definition is None and refs[2].definition is None


def _variant(definition, chunks, lines):
    return {"prompt": "", "groundtruth": "x", "right_context": "",
            "metadata": {"task_id": "t", "definition": definition, "retrieved_lines": lines},
            "crossfile_context": {"text": "", "list": [{"retrieved_chunk": "c", "filename": f, "score": 1.0}
                                                       for f in chunks]}}


def test_definition_rank_and_recall(tmp_path):
    d = {"file": "b.py", "start_line": 10, "end_line": 12, "symbol": "f"}
    assert definition_rank(_variant(d, ["a.py", "b.py"], [[0, 20], [12, 30]])) == 2  # a.py's lines do not count
    assert definition_rank(_variant(d, ["b.py"], [[0, 9]])) is None
    assert definition_rank(_variant(None, ["b.py"], [[0, 20]])) is None
    split = tmp_path / "line_completion.jsonl"
    split.write_text("")
    rows = [_variant(d, ["b.py"], [[11, 11]]), _variant(d, ["a.py"] * 5 + ["b.py"], [[0, 1]] * 5 + [[10, 10]]),
            _variant(d, ["a.py", "b.py"], [[0, 1], [0, 10]]), _variant(None, [], [])]
    (tmp_path / "line_completion_rg1_bm25.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    got = definition_recall(split, JsonlError)
    assert got == {"rg1_bm25": {"examples": 4, "with_definition": 3, "recall@1": round(1 / 3, 4),
                                "recall@5": round(2 / 3, 4)}}


def test_a_name_the_defining_file_only_re_exports_is_found_where_it_is_declared():
    files = {"pkg/__init__.py": SourceFile("pkg/__init__.py", "from .models import Widget\n"),
             "pkg/models.py": SourceFile("pkg/models.py", "import os\n\n\nclass Widget:\n    size = 1\n"),
             "pkg/sub/__init__.py": SourceFile("pkg/sub/__init__.py", "X = 1\nY = 2\n"),
             "pkg/other.py": SourceFile("pkg/other.py", "def f():\n    Widget = 3\n    return Widget\n")}
    refs = [CrossFileRef("app.py", 1, 4, "Widget", "pkg", "pkg/__init__.py"),
            CrossFileRef("app.py", 2, 4, "sub", "pkg", "pkg/sub/__init__.py", kind=ReferenceKind.MODULE_MEMBER)]
    assert resolve_definitions(get_analyzer("python"), files, refs) == 2
    assert refs[0].definition.to_dict() == {"file": "pkg/models.py", "start_line": 3, "end_line": 4,
                                            "symbol": "Widget"}  # other.py's local Widget is no declaration
    assert (refs[1].definition.file, refs[1].definition.start_line, refs[1].definition.end_line) == \
        ("pkg/sub/__init__.py", 0, 1)


def test_the_definition_oracle_gives_each_example_its_definition(tmp_path):
    from benchsmith.builders.cceval.definition_context import KEY, with_definitions
    from benchsmith.builders.cceval.records import CompletionExample, ExampleMetadata

    defining = SourceFile("pkg/models.py", "import os\n\n\nclass Widget:\n    size = 1\n    big = 2\n")
    d = {"file": "pkg/models.py", "start_line": 3, "end_line": 5, "symbol": "Widget"}
    meta = ExampleMetadata("t1", "r", "app.py", 0, 1, 2, definition=d)
    examples = [CompletionExample("x = ", "Widget()", "\n", meta),
                CompletionExample("y = ", "other()", "\n", ExampleMetadata("t2", "r", "app.py", 0, 1, 2))]
    out = with_definitions(examples, [defining], lambda chunks: "|".join(c.retrieved_chunk for c in chunks), 2)
    first, second = out[KEY]
    assert first.crossfile_context.list[0].retrieved_chunk == "class Widget:\n    size = 1"  # capped at 2 lines
    assert first.crossfile_context.text == "class Widget:\n    size = 1"
    assert first.metadata.retrieved_lines == [[3, 4]] and definition_rank(first.to_dict()) == 1
    assert second.crossfile_context.list == [] and second.metadata.retrieved_lines == []
