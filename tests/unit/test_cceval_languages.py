"""Default-mode scoring beyond the paper's four languages: JavaScript and Go, driven by their analyzer classes
(grammar, statement rules) and their grammars (comment and identifier node types).  Compat mode refuses them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.analyzers import registry
from benchsmith.builders.cceval.examples import statement_end
from benchsmith.evaluate.cceval import default
from benchsmith.evaluate.cceval.scoring import Language, Mode, describe, score_example
from benchsmith.evaluate.cceval.common import COMPAT_LANGUAGES

JS, GO = Language.JAVASCRIPT, Language.GO


def score(prompt: str, gt: str, pred: str, lang: Language):
    return score_example("t", prompt, gt, pred, lang, Mode.DEFAULT)


# ---- every registered language is scored -------------------------------------------------------------------------


def test_scorer_languages_are_the_registered_analyzers() -> None:
    assert {m.value for m in Language} == set(registry())
    assert Language.parse("js") is JS and Language.parse("golang") is GO


def test_rules_come_from_the_grammar_and_keep_the_four_languages_unchanged() -> None:
    # The tables default mode used before it read them from the grammars.
    assert default.rules(Language.PYTHON).comment_types == {"comment"}
    assert default.rules(Language.JAVA).comment_types == {"line_comment", "block_comment"}
    assert default.rules(Language.TYPESCRIPT).comment_types == {"comment", "html_comment"}
    assert default.rules(Language.CSHARP).comment_types == {"comment"}
    assert default.rules(JS).comment_types == {"comment", "html_comment"}
    assert default.rules(GO).comment_types == {"comment"}
    go = default.rules(GO)
    assert {"package_identifier", "field_identifier", "type_identifier", "label_name"} <= go.identifier_types
    assert go.line_end_terminators == registry()["go"].line_end_terminators
    assert registry()["javascript"].statement_containers <= default.rules(JS).statement_parents
    assert default.rules(Language.PYTHON).terminators is None


def test_results_name_every_grammar_version() -> None:
    versions = describe(Mode.DEFAULT)["versions"]
    assert {"tree-sitter-go", "tree-sitter-javascript", "tree-sitter-python", "tree-sitter-c-sharp"} <= set(versions)
    assert all(v != "not installed" for v in versions.values())


# ---- JavaScript ----------------------------------------------------------------------------------------------------

JS_PROMPT = "import api from './api';\nfunction load(name) {\n  const a = "


def test_js_comments_are_parser_nodes() -> None:
    s = score(JS_PROMPT, "api.get(name)", "api.get(name) // fetch it\n  return a\n", JS)
    assert s.pred_postprocessed == "api.get(name) // fetch it" and s.pred == "api.get(name)" and s.em == 1
    # `//` inside a regular expression and a URL in a string are code; a block comment is not.
    s = score(JS_PROMPT, "x", "s.replace(/\\/\\//g, 'http://a') /* note */ + x", JS)
    assert s.pred == "s.replace(/\\/\\//g, 'http://a') + x"


def test_js_identifiers() -> None:
    s = score(JS_PROMPT, "api.get(name)", "api.get(`${name}/users list`, this.#cache ?? undefined, null)", JS)
    # words of the template literal are text; its substitution is code; `#cache` counts as `cache`
    assert s.pred_ids == ["api", "get", "name", "cache"]
    assert s.target_ids == ["api", "get", "name"]
    assert s.id_recall == 1.0 and s.id_precision == 0.75


def test_js_statement_without_semicolon_ends_with_its_node() -> None:
    s = score(JS_PROMPT, "api.get(name)", "api.get(name)\n  const b = 2\n}\n", JS)
    assert s.pred == "api.get(name)" and s.em == 1 and s.es == 100.0
    # a `;` inside a string ends nothing; the token after it does
    s = score(JS_PROMPT, "api.get('a;b');", "api.get('a;b');\n  other();\n", JS)
    assert s.pred == "api.get('a;b');" and s.em == 1
    # a multi-line call without semicolons runs to its end
    s = score(JS_PROMPT, "api.get(\n    name)", "api.get(\n    name)\n  next()\n", JS)
    assert s.pred == "api.get(\n    name)" and s.em == 1


# ---- Go ------------------------------------------------------------------------------------------------------------

GO_PROMPT = 'package main\n\nimport "example.com/pkg"\n\nfunc run(a, b int) error {\n\tx := '


def test_go_comments_are_parser_nodes() -> None:
    s = score(GO_PROMPT, 'pkg.New("http://x")', 'pkg.New("http://x") // note\n\ty := 2\n', GO)
    assert s.pred_postprocessed == 'pkg.New("http://x") // note' and s.pred == 'pkg.New("http://x")' and s.em == 1
    s = score(GO_PROMPT, "pkg.New(a)", "pkg.New(a /* first */)\n", GO)
    assert s.pred == "pkg.New(a)" and s.em == 1


def test_go_identifiers() -> None:
    s = score(GO_PROMPT, "pkg.New(a)", "pkg.Conv(int(a), nil, true, \"b c\", string(b))\n", GO)
    # predeclared types, nil/true and words in strings are not identifiers
    assert s.pred_ids == ["pkg", "Conv", "a", "b"]
    s = score("package main\n\nfunc f() {\nouter:\n\tfor {\n\t\t", "break outer", "break outer\n\t}\n}\n", GO)
    assert s.pred_ids == ["outer"] and s.pred == "break outer" and s.em == 1


def test_go_statement_ends_at_an_automatic_semicolon() -> None:
    # No `;` token: the line break after `)` ends the statement (before, the first `}` three lines on did).
    s = score(GO_PROMPT, "pkg.New(a)", "pkg.New(a)\n\ty := 2\n\treturn nil\n}\n", GO)
    assert s.pred == "pkg.New(a)" and s.em == 1 and s.es == 100.0
    # A line ending in `,` or an operator continues; the statement ends after `b)` / `b`.
    s = score(GO_PROMPT, "pkg.New(a)", "pkg.New(a, // first\n\t\tb)\n\ty := 2\n", GO)
    assert s.pred == "pkg.New(a,\n\t\tb)" and s.pred_ids == ["pkg", "New", "a", "b"]
    s = score(GO_PROMPT, "pkg.New(a)", "pkg.New(a) +\n\t\tb\n\ty := 2\n", GO)
    assert s.pred == "pkg.New(a) +\n\t\tb"
    # A `{` still ends a header line; a composite literal's first line is all that is kept.
    s = score("package main\n\nfunc f() {\n\tif err := ", "pkg.Do(x); err != nil {",
              "pkg.Do(x); err != nil {\n\t\treturn err\n\t}\n", GO)
    assert s.pred == "pkg.Do(x); err != nil {" and s.em == 1
    s = score(GO_PROMPT, "pkg.Opts{", "pkg.Opts{\n\t\tA: 1,\n\t}\n", GO)
    assert s.pred == "pkg.Opts{" and s.em == 1


GO_FILE = """package server

import (
\t"fmt"

\t"example.com/app/store"
)

type Server struct {
\tdb   *store.DB
\tname string
}

func (s *Server) Get(id int) (*store.Item, error) {
\titem, err := s.db.Find(id) // by primary key
\tif err != nil {
\t\treturn nil, fmt.Errorf("find %d: %w", id, err)
\t}
\ts.db.Touch(item,
\t\tstore.Now())
\tfor _, tag := range item.Tags {
\t\tstore.Count(tag)
\t}
\treturn item, nil
}
"""

JS_FILE = """import { Store, now } from './store'
const cache = new Map()

export class Server {
  constructor(db) {
    this.db = db
  }

  get(id) {
    const item = this.db.find(id) // by primary key
    if (!item) {
      throw new Error(`missing ${id}`)
    }
    cache.set(id, Store.wrap(item,
      now()))
    return item
  }
}
"""


@pytest.mark.parametrize("language,text", [(GO, GO_FILE), (JS, JS_FILE)])
def test_an_exact_copy_of_a_built_groundtruth_matches(language: Language, text: str) -> None:
    """For a cursor before every identifier of a file, the example builder's groundtruth (the analyzer's statement
    rules) and the rest of the file as the prediction: the scorer keeps the groundtruth's lines, so it matches."""
    cls = registry()[language.value]
    data = text.encode()
    tree = cls.parser_for("f").parse(data)
    kinds = default.rules(language).identifier_types
    checked = 0
    stack = [tree.root_node]
    cursors = []
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.child_count == 0 and node.type in kinds:
            cursors.append(node.start_byte)  # ASCII text: bytes are characters
    for pos in sorted(cursors):
        cut = statement_end(tree, data, pos, cls.statement_terminators, cls.line_end_terminators,
                            cls.statement_containers)
        if cut is None or data[cut.end_byte:].split(b"\n", 1)[0].strip(b" \t;{}()"):
            continue  # code after the cut on its line: the scorer keeps whole lines (tested elsewhere)
        gt = data[pos:cut.end_byte].decode()
        s = score(text[:pos], gt, text[pos:], language)
        assert s.em == 1 and s.pred == s.target, (pos, gt, s.pred_postprocessed)
        checked += 1
    assert checked >= 20


# ---- compat mode stays four-language -------------------------------------------------------------------------------


@pytest.mark.parametrize("language", [JS, GO])
def test_compat_refuses_languages_the_released_scorer_never_had(language: Language) -> None:
    assert language not in COMPAT_LANGUAGES
    with pytest.raises(ValueError, match=r"only knows csharp, java, python, typescript.*default mode"):
        score_example("t", "x = ", "a", "a", language, Mode.COMPAT)


def test_score_cli_scores_go_by_default_and_refuses_compat(tmp_path: Path, capsys) -> None:
    from benchsmith.evaluate.cceval import command as score_cli

    split = tmp_path / "go" / "line_completion.jsonl"
    split.parent.mkdir()
    split.write_text(json.dumps({"prompt": GO_PROMPT, "groundtruth": "pkg.New(a)", "right_context": "",
                                 "metadata": {"task_id": "g/0"}}) + "\n", encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"task_id": "g/0", "pred": "pkg.New(a)\n\ty := 2\n}\n"}) + "\n", encoding="utf-8")

    def run(*extra: str, out: str) -> int:
        import argparse

        parser = argparse.ArgumentParser()
        score_cli.add_arguments(parser)
        return score_cli.run(parser.parse_args(["--prompts", str(split), "--predictions", str(preds),
                                                "--output", str(tmp_path / out), *extra]))

    assert run(out="d") == 0
    results = json.loads((tmp_path / "d" / "results.json").read_text())
    assert results["language"] == "go" and results["em"] == 100.0 and results["mode"] == "default"
    capsys.readouterr()
    assert run("--compat", "cceval", out="c") == 2
    err = capsys.readouterr().err
    assert "compat-cceval" in err and "go" in err and "drop --compat" in err
    assert not (tmp_path / "c" / "results.json").exists()
