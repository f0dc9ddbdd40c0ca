"""Statement cutting: where the groundtruth ends, per language, from tree-sitter tokens."""

from __future__ import annotations

import pytest

from benchsmith.analyzers import get_analyzer
from benchsmith.builders.cceval.examples import ExampleCutter, groundtruth_cut, statement_end
from benchsmith.files import SourceFile
from benchsmith.pipeline import DropLedger
from benchsmith.records import CrossFileRef
from benchsmith.text_positions import TextPositions


def cut(lang: str, text: str, marker: str = "@") -> str:
    """Groundtruth for a cursor placed where ``marker`` is (the marker is removed)."""
    cursor = text.index(marker)
    text = text.replace(marker, "", 1)
    analyzer = get_analyzer(lang)
    idx, data = TextPositions(text), text.encode("utf-8")
    tree = analyzer.parser_for().parse(data)
    res = statement_end(tree, data, idx.to_byte(cursor), analyzer.statement_terminators)
    assert res is not None
    return text[cursor : idx.to_char(res.end_byte)]


@pytest.mark.parametrize(
    "src, expected",
    [
        ("x = gen.@seq[:, -1]\ny = 2\n", "seq[:, -1]"),
        ("r = api.@call(a,\n    b)\nz = 1\n", "call(a,\n    b)"),
        ("a = 1; b = mod.@f(x); c = 3\n", "f(x)"),
        ("v = mod.@thing(1)  # trailing comment\n", "thing(1)"),
        ("v = mod.@x + \\\n    2\nw = 1\n", "x + \\\n    2"),
        ("if mod.@flag(x):\n    pass\n", "flag(x):"),
        ('s = mod.@fmt("""a\nb""")\nq = 1\n', 'fmt("""a\nb""")'),
        ("d = {k: mod.@val for k in ks}\n", "val for k in ks}"),
        ('print(f"{mod.@name} and more")\n', 'name} and more")'),
        ("x = mod.@café(1)\n", "café(1)"),
    ],
)
def test_python_logical_line(src, expected):
    assert cut("python", src) == expected


@pytest.mark.parametrize(
    "src, expected",
    [
        ("class A { void f() { int x = util.@compute(1,\n   2); int y = 3; } }", "compute(1,\n   2);"),
        ('class A { void f() { log.@info("a;b{c}"); } }', 'info("a;b{c}");'),
        ("class A { void f() { if (cfg.@enabled()) { go(); } } }", "enabled()) {"),
        ("class A { void f() { int x = util.@compute(/* ; */ 1); } }", "compute(/* ; */ 1);"),
    ],
)
def test_java_first_terminator_token(src, expected):
    assert cut("java", src) == expected


def _cutter_refs():
    text = "import m\n\nx = m.a(m.b)\ny = m.c()\n"
    files = {"f.py": SourceFile("f.py", text)}
    refs = [
        CrossFileRef("f.py", 2, 6, "a", "m", "m.py"),
        CrossFileRef("f.py", 2, 10, "b", "m", "m.py"),  # a later reference in the same statement
        CrossFileRef("f.py", 2, 10, "b", "m", "m.py", "E0602"),  # a second diagnostic on the same name
        CrossFileRef("f.py", 3, 6, "c", "m", "m.py"),
        CrossFileRef("f.py", 3, 0, "nope", "m", "m.py"),  # symbol not at the position
    ]
    return text, files, refs


def test_cutter_every_reference_and_reconstruction():
    text, files, refs = _cutter_refs()
    counter = DropLedger()
    cutter = ExampleCutter(get_analyzer("python"), files, "r", counter=counter)
    examples = list(cutter(refs))
    # the later reference of line 3 is an example of its own, running from its cursor to the statement's end
    assert [e.groundtruth for e in examples] == ["a(m.b)", "b)", "c()"]
    assert examples[1].prompt.endswith("x = m.a(m.")
    for e in examples:
        assert e.prompt + e.groundtruth + e.right_context == text
    assert examples[0].metadata.groundtruth_start_lineno == 2
    assert examples[0].metadata.right_context_start_lineno == 3
    assert dict(counter.dropped) == {"duplicate_reference": 1, "cursor_not_found": 1}
    assert examples[0].metadata.task_id == "project_cc_python/r/f.py:3:7"
    assert examples[1].metadata.task_id == "project_cc_python/r/f.py:3:11"


def test_cutter_first_reference_per_statement_option():
    text, files, refs = _cutter_refs()
    counter = DropLedger()
    cutter = ExampleCutter(get_analyzer("python"), files, "r", counter=counter, first_per_statement=True)
    examples = list(cutter(refs))
    assert [e.groundtruth for e in examples] == ["a(m.b)", "c()"]
    assert dict(counter.dropped) == {"same_statement": 1, "duplicate_reference": 1, "cursor_not_found": 1}


# ---- statement ends the scorers share; declarations' non-statement parts ----------------------------------------


def full_cut(lang: str, text: str, marker: str = "§", path: str = "f") -> str:
    """Groundtruth with every rule the example cutter applies (``groundtruth_cut``)."""
    cursor = text.index(marker)
    text = text.replace(marker, "", 1)
    analyzer = get_analyzer(lang)
    idx, data = TextPositions(text), text.encode("utf-8")
    tree = analyzer.parser_for(path).parse(data)
    res = groundtruth_cut(analyzer, tree, data, idx.to_byte(cursor))
    assert res is not None
    return text[cursor : idx.to_char(res.end_byte)]


@pytest.mark.parametrize(
    "lang, src, expected",
    [
        # C# attributes end at their closing bracket, not at the next line's class header `{`
        ("csharp", 'namespace N {\n[§Obsolete("use Other")]\npublic class A { }\n}', 'Obsolete("use Other")]'),
        ("csharp", "class A {\n  [Test, §Category(Names.Slow)]\n  public void M() { }\n}", "Category(Names.Slow)]"),
        ("csharp", "class A {\n  [Category(Names.§Slow)] public void M() { }\n}", "Slow)]"),
        # ... a C# case label at its colon; an enum member before the next member
        ("csharp", "class A { int M(T o) { switch (o) { case Os.§Windows:\n return 1; } return 0; } }", "Windows:"),
        ("csharp", "enum E {\n  A = Flags.§Read,\n  B = Flags.Write\n}", "Read,"),
        ("csharp", "enum E {\n  A = Flags.§Read\n}", "Read"),
        # Java annotations end with their closing parenthesis, not at the method's `{`
        ("java", "class A {\n  @Retry(times = Config.§TIMES)\n  public void m() { }\n}", "TIMES)"),
        ("java", "class A {\n  @§Tagged(\"x\")\n  public void m() { }\n}", 'Tagged("x")'),
        ("java", "class A { void m(T o) { switch (o) { case Os.§LINUX:\n return; } } }", "LINUX:"),
        ("java", "enum E {\n  A(Conf.§a()),\n  B(Conf.b());\n}", "a()),"),
        # TypeScript decorators; statements without `;` end with their node (the default scorer's rule)
        ("typescript", "@§Injectable()\nexport class X {\n}\n", "Injectable()"),
        ("typescript", "function f() {\n  return lib.§map(x => g(x))\n}\n", "map(x => g(x))"),
        ("typescript", "switch (o) {\n  case Kind.§A:\n    return 1;\n}\n", "A:"),
        # ... and keep the `;` a member node leaves outside itself
        ("typescript", "class K {\n  operator: lib.§Operator<T> | undefined;\n  x = 1;\n}\n",
         "Operator<T> | undefined;"),
        ("typescript", "class K {\n  f(a: lib.§T): void;\n  f(a: any): void {}\n}\n", "T): void;"),
        # unchanged: the first terminator token still ends a statement or header
        ("typescript", "const m = `a ${lib.§b(1)} c`;\n", "b(1)} c`;"),
        ("csharp", 'class A { void M() { Log.§Info($"a {x} b"); } }', 'Info($"a {x} b");'),
        ("java", "class A { void f() { if (cfg.§enabled()) { go(); } } }", "enabled()) {"),
    ],
)
def test_statement_ends_shared_with_the_scorers(lang, src, expected):
    assert full_cut(lang, src) == expected
