"""Templates: the released {{ name }} form, plain source, exact renames, docstring blocks."""

import ast

import pytest

from benchsmith.builders.humanext.render import (
    PairFormatError,
    docstring_block_from_text,
    from_placeholder_template,
    from_source,
    rename_is_exact,
)

RELEASED = (
    "def {{ total }}({{ xs }}: List[int]) -> int:\n"
    "    {{ acc }} = 0\n"
    "    for {{ x }} in {{ xs }}:\n"
    "        {{ acc }} += {{ x }}\n"
    "    return {{ acc }}"
)


def test_released_template_renders_as_written_with_its_docstring():
    t = from_placeholder_template("total", RELEASED, ["total", "xs", "acc", "x"], "Sum xs.\n\n>>> total([1])\n1",
                                  "rec 1", "auxiliary_function")
    code = t.code()
    assert code.startswith('def total(xs: List[int]) -> int:\n    """Sum xs.\n\n    >>> total([1])\n    1"""\n')
    assert "    acc = 0\n    for x in xs:\n        acc += x\n    return acc" in code
    assert t.header_lines == 1
    assert t.body() == "    acc = 0\n    for x in xs:\n        acc += x\n    return acc\n"
    node = ast.parse(code).body[0]
    assert ast.get_docstring(node) == "Sum xs.\n\n>>> total([1])\n1"
    renamed = t.code({"acc": "s"})
    assert "s = 0" in renamed and "acc" not in renamed
    assert t.declaration() == "total(xs: List[int]) -> int"


def test_undeclared_placeholder_names_record_and_field():
    with pytest.raises(PairFormatError) as err:
        from_placeholder_template("total", RELEASED, ["total", "xs", "acc"], None, "data.json record 7",
                                  "target_function")
    assert err.value.record == "data.json record 7"
    assert err.value.field == "target_function.template"
    assert "'x'" in str(err.value)


def test_template_that_does_not_parse_is_reported():
    with pytest.raises(PairFormatError) as err:
        from_placeholder_template("f", "def {{ f }}(:\n    return 1", ["f"], None, "rec 3", "auxiliary_function")
    assert err.value.field == "auxiliary_function.template"
    assert "does not parse" in str(err.value)


def test_name_field_must_match_the_template():
    with pytest.raises(PairFormatError) as err:
        from_placeholder_template("g", "def {{ f }}(x):\n    return x", ["f", "x"], None, "rec 2", "target_function")
    assert err.value.field == "target_function.name"


@pytest.mark.parametrize("text", ['ends with a "quote"', "has a backslash \\n inside", 'triple """ inside'])
def test_docstring_block_keeps_the_value(text):
    block = docstring_block_from_text(text, "    ")
    tree = ast.parse("def f():\n" + block + "\n    pass\n")
    assert ast.get_docstring(tree.body[0], clean=False) == text


SOURCE = '''def count(words, word):
    """Count word in words; '{{ not_a_placeholder }}' stays text."""
    seen = 0
    for w in words:
        if w.lower() == word:
            seen += 1
    try:
        pass
    except ValueError as err:
        raise err
    return sorted([seen], key=abs)[0]
'''


def test_from_source_marks_identifiers_not_strings_attributes_or_keywords():
    t = from_source(SOURCE, "my.jsonl record 1", "auxiliary")
    assert t.name == "count"
    assert t.docstring_text.startswith("Count word in words")
    assert "{{ not_a_placeholder }}" in t.code()  # a literal in a string is not a placeholder
    mapping = {"seen": "n", "w": "item", "err": "exc"}
    assert rename_is_exact(t, mapping)
    out = t.code(mapping)
    assert "n = 0" in out and "item.lower()" in out and "except ValueError as exc" in out
    assert "key=abs" in out  # keyword argument names are left alone
    assert t.code() == SOURCE.rstrip("\n")  # identity rendering reproduces the source byte for byte


def test_rename_is_exact_detects_an_unmarked_occurrence():
    # The release marks Name nodes only: an "except ... as e" binding is not marked, so renaming e is not exact.
    t = from_placeholder_template(
        "f", "def {{ f }}():\n    try:\n        pass\n    except ValueError as e:\n        return {{ e }}",
        ["f", "e"], None, "rec", "auxiliary_function")
    assert not rename_is_exact(t, {"e": "z"})
    assert rename_is_exact(t, {"f": "g"})


def test_body_must_start_on_its_own_line():
    with pytest.raises(PairFormatError) as err:
        from_source("def f(x): return x\n", "rec 4", "auxiliary")
    assert err.value.field == "auxiliary"
    assert "body" in str(err.value)
