"""Every cross-file reference is a candidate example, a later one in the same statement too.

CrossCodeEval's released ``project_cc_python/62`` (turboderp/exllama @a544085, ``example_ws.py``) cuts
``old_tail = tokenizer.decode(generator.sequence_actual[:, -max_stop_string:])[0]`` at its *second* cross-file
reference: the prompt ends in ``old_tail = tokenizer.decode(generator.`` and the groundtruth is
``sequence_actual[:, -max_stop_string:])[0]``, i.e. from the cursor to the end of the statement.  The fixture below
is our own small project of the same shape (a websocket-style server module using a tokenizer and a generator object
whose classes live in two other modules, bound as annotated module globals and used through ``global``), built
through the real analyzer (pylint) and the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.cli import main
from tests.invariants import check_split, load

TOKENIZER = '''\
"""Text <-> token ids."""


class TextTokenizer:
    def __init__(self, model_path):
        self.model_path = model_path
        self.eos_token_id = 2

    def encode(self, text):
        return [[ord(c) for c in text]]

    def decode(self, ids):
        return ["".join(chr(i) for i in row) for row in ids]
'''

GENERATOR = '''\
"""Token-by-token generation over a shared sequence."""


class StreamGenerator:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.sequence_actual = None
        self.settings = None

    def begin(self, ids):
        self.sequence_actual = ids

    def gen_single_token(self):
        return self.tokenizer.eos_token_id
'''

SERVER = '''\
"""Streams completions to a client, stopping at stop strings."""
import json
import sys

from tokenizer import TextTokenizer
from generator import StreamGenerator

generator: StreamGenerator
tokenizer: TextTokenizer
max_stop_string = 2


def begin_stream(prompt):
    global generator, tokenizer
    ids = tokenizer.encode(prompt)
    generator.begin(ids)


def stream():
    global generator, tokenizer, max_stop_string
    old_tail = tokenizer.decode(generator.sequence_actual[:, -max_stop_string:])[0]
    next_token = generator.gen_single_token()
    new_tail = tokenizer.decode(generator.sequence_actual[:, -(max_stop_string + 1):])[0]
    return old_tail, new_tail, next_token


tokenizer = TextTokenizer(sys.argv[1])
generator = StreamGenerator(tokenizer)
print(json.dumps(stream()))
'''

PROJECT = {"tokenizer.py": TOKENIZER, "generator.py": GENERATOR, "example_ws.py": SERVER}


def _build(tmp_path: Path, *extra: str) -> tuple[list[dict], dict, Path]:
    repo = tmp_path / "exllama-like"
    repo.mkdir()
    for name, text in PROJECT.items():
        (repo / name).write_text(text)
    out = tmp_path / ("out" + "".join(extra).replace("-", "_"))
    assert main(["build", "cceval", "--lang", "python", "--repo", str(repo), "--output", str(out),
                 "--retrievers", "none", "--workers", "1", "--quiet", "--no-card", *extra]) == 0
    split = out / "python" / "line_completion.jsonl"
    examples = check_split(split, {"exllama-like": repo})
    stats = json.loads((out / "python" / "stats.json").read_text())
    return examples, stats, out


def _at(examples: list[dict], prompt_end: str) -> list[dict]:
    return [e for e in examples if e["prompt"].endswith(prompt_end)]


def test_later_reference_in_a_statement_is_an_example(tmp_path):
    examples, stats, _ = _build(tmp_path)
    later = _at(examples, "    old_tail = tokenizer.decode(generator.")
    assert len(later) == 1, [e["prompt"][-60:] for e in examples]
    ex = later[0]
    assert ex["groundtruth"] == "sequence_actual[:, -max_stop_string:])[0]"
    assert ex["right_context"].startswith("\n    next_token = generator.gen_single_token()")
    assert ex["metadata"]["symbol"] == "sequence_actual"
    assert ex["metadata"]["defining_file"] == "generator.py"
    # the first reference of the statement stays an example too, running over the later one
    first = _at(examples, "    old_tail = tokenizer.")
    assert [e["groundtruth"] for e in first] == ["decode(generator.sequence_actual[:, -max_stop_string:])[0]"]
    assert first[0]["metadata"]["defining_file"] == "tokenizer.py"
    assert "same_statement" not in stats["dropped"]
    assert stats["self_consistency"]["compat"]["violations"] == 0
    assert stats["self_consistency"]["default"]["violations"] == 0


def test_first_reference_per_statement_restores_the_earlier_rule(tmp_path):
    examples, stats, out = _build(tmp_path, "--first-reference-per-statement")
    assert not _at(examples, "old_tail = tokenizer.decode(generator.")
    assert _at(examples, "old_tail = tokenizer.")
    assert stats["dropped"]["same_statement"] >= 2  # both `generator.sequence_actual` behind a `tokenizer.decode`
    excluded = load(out / "python" / "excluded.jsonl")
    assert any(e["reason"] == "same_statement" and e["item_id"].endswith("example_ws.py:21:43") for e in excluded)


# Two cross-file references in one statement, per language (the cutter with the analyzer's real statement rules;
# the references are given, as an analyzer would report them): both become examples, the later one's groundtruth
# runs from its cursor to the end of the statement.
STATEMENTS = {
    "python": ("f.py", "old_tail = tokenizer.decode(generator.sequence_actual[:, -n:])[0]\n",
               "decode(generator.sequence_actual[:, -n:])[0]", "sequence_actual[:, -n:])[0]"),
    "java": ("F.java", "class F { void m() {\n  String t = tokenizer.decode(generator.sequence(n));\n} }\n",
             "decode(generator.sequence(n));", "sequence(n));"),
    "typescript": ("f.ts", "const t = tokenizer.decode(generator.sequence(n))\nlet z = 1;\n",
                   "decode(generator.sequence(n))", "sequence(n))"),
    "javascript": ("f.js", "const t = tokenizer.decode(generator.sequence(n))\nlet z = 1\n",
                   "decode(generator.sequence(n))", "sequence(n))"),
    "csharp": ("F.cs", "class F { void M() {\n  var t = tokenizer.Decode(generator.Sequence(n));\n} }\n",
               "Decode(generator.Sequence(n));", "Sequence(n));"),
    "go": ("f.go", "package p\n\nfunc f() {\n\tt := tokenizer.Decode(generator.Sequence(n))\n\t_ = t\n}\n",
           "Decode(generator.Sequence(n))", "Sequence(n))"),
}


@pytest.mark.parametrize("language", sorted(STATEMENTS))
def test_every_language_keeps_the_later_reference(language):
    from benchsmith.analyzers import get_analyzer
    from benchsmith.builders.cceval.examples import ExampleCutter
    from benchsmith.files import SourceFile
    from benchsmith.pipeline import DropLedger
    from benchsmith.records import CrossFileRef

    path, text, first_gt, later_gt = STATEMENTS[language]
    refs = []
    for symbol in (first_gt.split("(")[0], later_gt.split("(")[0].split("[")[0]):
        offset = text.index(symbol)
        line = text.count("\n", 0, offset)
        refs.append(CrossFileRef(path, line, offset - (text.rfind("\n", 0, offset) + 1), symbol, "m", "m" + path[1:]))
    counter = DropLedger()
    examples = list(ExampleCutter(get_analyzer(language), {path: SourceFile(path, text)}, "r", counter=counter)(refs))
    assert [e.groundtruth for e in examples] == [first_gt, later_gt]
    assert examples[1].prompt.endswith("generator.")
    assert not counter.dropped
