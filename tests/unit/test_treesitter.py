"""The shared tree-sitter factory (``benchsmith/treesitter.py``) on the real C# grammar wheel."""

from __future__ import annotations

from tree_sitter import QueryCursor

from benchsmith import treesitter

GRAMMAR = "tree_sitter_c_sharp"
SRC = b"class A { int x; void M() { var f = (int y) => y; } }"


def _captured(query) -> dict[str, list[bytes]]:
    tree = treesitter.parser(GRAMMAR).parse(SRC)
    return {k: [n.text for n in v] for k, v in QueryCursor(query).captures(tree.root_node).items()}


def test_patterns_compile_as_one_query():
    q = treesitter.query_of_patterns(GRAMMAR, ("(class_declaration name: (_) @cls)", "(lambda_expression) @lam"))
    assert _captured(q) == {"cls": [b"A"], "lam": [b"(int y) => y"]}
    assert treesitter.query_of_patterns(GRAMMAR, ["(class_declaration name: (_) @cls)",
                                                  "(lambda_expression) @lam"]) is q  # one compile per process


def test_a_pattern_this_grammar_lacks_leaves_only_its_own_rule_blind():
    # another grammar version may lack a node kind or field: the rest still compiles and matches
    q = treesitter.query_of_patterns(GRAMMAR, ("(no_such_node_kind) @gone", "(class_declaration name: (_) @cls)",
                                               "(lambda_expression no_such_field: (_)) @gone2"))
    assert _captured(q) == {"cls": [b"A"]}
