"""Fill-in-the-middle templates, prompt layouts under three budgets, and the named post-processing rules."""

from __future__ import annotations

import json

import pytest

from benchsmith.evaluate.generation import fim
from benchsmith.evaluate.generation import prompting as pr
from benchsmith.evaluate.generation.fim import FimOrder, TemplateError
from benchsmith.evaluate.generation.layout import (
    ContextPlacement,
    PromptFormat,
    PromptParts,
    PromptSettings,
    build_prompt,
)
from benchsmith.evaluate.generation.postprocess import Rule, apply, parse_rules, statement_end, suffix_repeat

pytest.importorskip("tokenizers", reason="the transformers extra (tokenizers) is not installed")
pytest.importorskip("transformers", reason="the transformers extra is not installed")

ALL_SENTINELS = sorted({s for t in fim.TEMPLATES.values() for s in t["sentinels"] + t["end_tokens"]})


@pytest.fixture(scope="module")
def hf_tok():
    """A byte-level BPE tokenizer holding every family's sentinels as single special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    lines = ["def add(a, b):", "    return a + b", "import os", "value = helper(path, strict=True)",
             "for i in range(10):", "    print(i)", "class Stack:", "    self.items = []"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=ALL_SENTINELS,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(lines * 3, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>",
                                   additional_special_tokens=ALL_SENTINELS)


@pytest.fixture(scope="module")
def tok(hf_tok):
    return pr.HFTokenizer(hf_tok)


P, S = "def add(a, b):\n    return", "\n\nprint(add(1, 2))\n"

# Each family's documented layout as a sequence of pieces: a sentinel (one special token) or text.
DOCUMENTED = {
    ("starcoder", "psm"): ["<fim_prefix>", P, "<fim_suffix>", S, "<fim_middle>"],
    ("starcoder", "spm"): ["<fim_prefix>", "<fim_suffix>", S, "<fim_middle>", P],
    ("starcoder2", "psm"): ["<fim_prefix>", P, "<fim_suffix>", S, "<fim_middle>"],
    ("granite", "psm"): ["<fim_prefix>", P, "<fim_suffix>", S, "<fim_middle>"],
    ("codellama", "psm"): ["<PRE>", " " + P + " ", "<SUF>", S + " ", "<MID>"],
    ("codellama", "spm"): ["<PRE>", " ", "<SUF>", S + " ", "<MID>", " " + P],
    ("deepseek-coder", "psm"): ["<｜fim▁begin｜>", P, "<｜fim▁hole｜>", S, "<｜fim▁end｜>"],
    ("qwen2.5-coder", "psm"): ["<|fim_prefix|>", P, "<|fim_suffix|>", S, "<|fim_middle|>"],
    ("codestral", "spm"): ["[SUFFIX]", S, "[PREFIX]", P],
}


def _ids(hf_tok, pieces):
    ids = []
    for piece in pieces:
        if piece in ALL_SENTINELS:
            ids.append(hf_tok.convert_tokens_to_ids(piece))
        else:
            ids.extend(hf_tok(piece, add_special_tokens=False).input_ids)
    return ids


@pytest.mark.parametrize("family,order", sorted(DOCUMENTED))
def test_template_renders_the_documented_tokens(hf_tok, family, order):
    text = fim.builtin(family).render_fim(FimOrder(order), P, S)
    assert hf_tok(text, add_special_tokens=False).input_ids == _ids(hf_tok, DOCUMENTED[(family, order)])


def test_undocumented_orders_and_repo_formats_are_refused():
    with pytest.raises(TemplateError, match="no PSM format"):
        fim.builtin("codestral").render_fim(FimOrder.PSM, P, S)
    with pytest.raises(TemplateError, match="no SPM"):
        PromptSettings(PromptFormat.FIM, order=FimOrder.SPM, template=fim.builtin("qwen2.5-coder"))
    with pytest.raises(TemplateError, match="repository-level"):
        PromptSettings(PromptFormat.FIM, ContextPlacement.REPO_FILES, template=fim.builtin("codellama"))
    with pytest.raises(TemplateError, match="need a template"):
        PromptSettings(PromptFormat.FIM)
    with pytest.raises(TemplateError, match="unknown FIM template 'nope'"):
        fim.load_template("nope")


def test_repository_formats_token_by_token(hf_tok):
    files = [("src/util.py", "def helper():\n    pass\n"), ("src/b.py", "X = 1\n")]
    parts = PromptParts(prefix=P, suffix=S, chunks=tuple(files), repository="proj", path="src/run.py")
    for family, pieces in {
        # StarCoder2 paper 5.1: <repo_name>R<file_sep>path\ncode ... <file_sep><fim_prefix>path\nprefix...
        "starcoder2": ["<repo_name>", "proj", "<file_sep>", "src/util.py\n" + files[0][1], "<file_sep>",
                       "src/b.py\n" + files[1][1], "<file_sep>", "<fim_prefix>", "src/run.py\n" + P,
                       "<fim_suffix>", S, "<fim_middle>"],
        # Qwen2.5-Coder: <|repo_name|>R\n<|file_sep|>path\ncode\n ... <|file_sep|>path\n<|fim_prefix|>...
        "qwen2.5-coder": ["<|repo_name|>", "proj\n", "<|file_sep|>", "src/util.py\n" + files[0][1] + "\n",
                          "<|file_sep|>", "src/b.py\n" + files[1][1] + "\n", "<|file_sep|>", "src/run.py\n",
                          "<|fim_prefix|>", P, "<|fim_suffix|>", S, "<|fim_middle|>"],
    }.items():
        s = PromptSettings(PromptFormat.FIM, ContextPlacement.REPO_FILES, template=fim.builtin(family),
                           crossfile_max_tokens=10_000)
        text = build_prompt(parts, s, None, None).text
        assert hf_tok(text, add_special_tokens=False).input_ids == _ids(hf_tok, pieces), family


def test_placeholders_are_filled_once():
    # code holding the text "{suffix}" is not substituted again
    text = fim.builtin("starcoder").render_fim(FimOrder.PSM, "x = '{suffix}'", "{prefix}")
    assert text == "<fim_prefix>x = '{suffix}'<fim_suffix>{prefix}<fim_middle>"


def test_detect_from_special_tokens_and_user_file(tmp_path, hf_tok):
    assert fim.detect(["<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<|endoftext|>"]).name == "starcoder"
    assert fim.detect(["<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<repo_name>", "<file_sep>"]).name == "starcoder2"
    assert fim.detect(["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|repo_name|>", "<|file_sep|>"]).name \
        == "qwen2.5-coder"
    with pytest.raises(TemplateError, match="none of the known"):
        fim.detect(["<s>", "</s>"])
    assert "<fim_middle>" in fim.tokenizer_special_tokens(hf_tok)
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"psm": "<A>{prefix}<B>{suffix}<C>", "spm": None, "end_tokens": ["<D>"],
                                "sentinels": ["<A>", "<B>", "<C>"]}), encoding="utf-8")
    t = fim.load_template(str(path))
    assert t.name == "mine" and t.render_fim(FimOrder.PSM, "p", "s") == "<A>p<B>s<C>"
    path.write_text(json.dumps({"psm": "<A>{prefix}", "end_tokens": [], "sentinels": []}), encoding="utf-8")
    with pytest.raises(TemplateError, match="once each"):
        fim.load_template(str(path))
    path.write_text("[1]", encoding="utf-8")
    with pytest.raises(TemplateError, match="one JSON object"):
        fim.load_template(str(path))


# ------------------------------------------------------------------------------------------------- budgets

LONG_PREFIX = "import os\n" * 60 + "def run(path):\n    value = "
LONG_SUFFIX = "\n    return value\n" + "print(value)\n" * 60
COMMENTS = "# Here are some relevant code fragments from other files of the repo:\n" + "# def helper(a): pass\n" * 50
CHUNKS = (("src/util.py", "def helper(path, strict=False):\n    return os.path.normpath(path)\n" * 20),
          ("src/b.py", "X = 1\n" * 30))


@pytest.mark.parametrize("placement", list(ContextPlacement))
@pytest.mark.parametrize("order", list(FimOrder))
def test_fim_budgets_are_guarantees(tok, placement, order):
    parts = PromptParts(LONG_PREFIX, LONG_SUFFIX, COMMENTS, CHUNKS, "proj", "src/run.py")
    s = PromptSettings(PromptFormat.FIM, placement, order, fim.builtin("starcoder2"), crossfile_max_tokens=40,
                       suffix_max_tokens=25)
    for budget in (30, 61, 97, 150, 400):
        b = build_prompt(parts, s, tok, budget)
        assert b.total_tokens == tok.count(b.text) <= budget
        assert b.suffix_tokens <= 25 and b.context_tokens <= 40
        assert b.truncated
        # the prefix keeps its end, the suffix its start: the code next to the cursor survives the cuts
        middle = b.text.split("<fim_middle>")
        assert "    value = " in b.text or b.prefix_tokens < 6
        if b.suffix_tokens:
            assert LONG_SUFFIX.startswith(b.text.split("<fim_suffix>")[1].split("<fim_middle>")[0]) or order is \
                FimOrder.SPM
        assert len(middle) == 2
    # a budget that cannot hold the sentinels is an error, never an overshoot
    with pytest.raises(pr.BudgetError, match="alone exceed"):
        build_prompt(parts, s, tok, 2)


def test_without_budgets_the_parts_are_whole(tok):
    parts = PromptParts(LONG_PREFIX, LONG_SUFFIX, COMMENTS, CHUNKS, "proj", "src/run.py")
    s = PromptSettings(PromptFormat.FIM, ContextPlacement.COMMENTS, template=fim.builtin("starcoder"),
                       crossfile_max_tokens=10_000)
    b = build_prompt(parts, s, tok, None)
    assert b.text == f"<fim_prefix>{COMMENTS}{LONG_PREFIX}<fim_suffix>{LONG_SUFFIX}<fim_middle>" and not b.truncated
    with pytest.raises(pr.BudgetError, match="tokenizer"):
        build_prompt(parts, PromptSettings(PromptFormat.FIM, template=fim.builtin("starcoder"), suffix_max_tokens=5),
                     None, None)


@pytest.mark.parametrize("placement", [ContextPlacement.NONE, ContextPlacement.COMMENTS])
def test_left_to_right_is_todays_prompt_byte_for_byte(tok, placement):
    parts = PromptParts(LONG_PREFIX, LONG_SUFFIX, COMMENTS, CHUNKS, "proj", "src/run.py")
    for budget in (None, 50, 333):
        b = build_prompt(parts, PromptSettings(PromptFormat.LTR, placement), tok, budget)
        today = pr.assemble(LONG_PREFIX, COMMENTS if placement is ContextPlacement.COMMENTS else None, tok, budget)
        assert b.text == today.text


def test_left_to_right_repo_files(tok):
    parts = PromptParts(LONG_PREFIX, LONG_SUFFIX, COMMENTS, CHUNKS, "proj", "src/run.py")
    s = PromptSettings(PromptFormat.LTR, ContextPlacement.REPO_FILES, template=fim.builtin("starcoder2"),
                       crossfile_max_tokens=10_000)
    b = build_prompt(parts, s, tok, None)
    assert b.text == ("<repo_name>proj<file_sep>src/util.py\n" + CHUNKS[0][1] + "<file_sep>src/b.py\n" + CHUNKS[1][1]
                      + "<file_sep>src/run.py\n" + LONG_PREFIX)
    assert tok.count(build_prompt(parts, s, tok, 120).text) <= 120


# ---------------------------------------------------------------------------------------------- post-processing


def test_rules_are_named_ordered_and_recorded():
    assert parse_rules("statement_end,end_of_middle") == (Rule.END_OF_MIDDLE, Rule.STATEMENT_END)
    assert parse_rules("none") == () and parse_rules("") == ()
    with pytest.raises(ValueError, match="unknown post-processing rule"):
        parse_rules("end_of_middle,bogus")
    suffix = "\n    return value\n"
    raw = "helper(path,\n    strict=True)\n    return value\n<|endoftext|>junk"
    done = apply(raw, parse_rules("end_of_middle,suffix_repeat,statement_end"), ["<|endoftext|>"], suffix)
    assert done.text == "helper(path,\n    strict=True)" and done.applied == (Rule.END_OF_MIDDLE, Rule.SUFFIX_REPEAT,
                                                                           Rule.STATEMENT_END)
    assert apply("x = 1", parse_rules("end_of_middle"), ["<EOT>"]).applied == ()


def test_statement_end_and_suffix_repeat_edges():
    assert statement_end("foo(a,\n  b)\nnext()") == "foo(a,\n  b)"
    assert statement_end("\n\n  x = 1\ny") == "\n\n  x = 1"
    assert statement_end("open(") == "open("  # never closed: nothing to cut at
    # a short suffix line (a lone brace) never cuts; a longer one cuts where the completion starts repeating it
    assert suffix_repeat("a();\n}\n", "\n}\n") == "a();\n}\n"
    assert suffix_repeat("a();\n  return total;\n}", "\n  return total;\n}") == "a();\n"
    assert suffix_repeat("return total;", "return total;") == ""
    assert suffix_repeat("x", "") == "x"


def test_sentinels_inside_repository_code_are_recorded(tok):
    # untrusted code may hold a template's token text; a tokenizer reads it as the special token, so it is flagged
    parts = PromptParts("s = '<fim_middle>'\nx = ", "\ny = '<|endoftext|>'\n", None, (), "proj", "a.py")
    s = PromptSettings(PromptFormat.FIM, ContextPlacement.NONE, template=fim.builtin("starcoder"))
    b = build_prompt(parts, s, tok, 200)
    assert b.sentinels_in_code == ("<fim_middle>", "<|endoftext|>")
    assert b.describe()["sentinels_in_code"] == ["<fim_middle>", "<|endoftext|>"]
    repo = PromptSettings(PromptFormat.FIM, ContextPlacement.REPO_FILES, template=fim.builtin("starcoder2"))
    assert build_prompt(PromptParts("x = ", "\n", None, CHUNKS, "proj", "a.py"), repo, tok, 200).sentinels_in_code == ()
    hostile = (("src/<file_sep>.py", "y = 1\n"),)
    assert build_prompt(PromptParts("x = ", "\n", None, hostile, "proj", "a.py"), repo, tok, 200).sentinels_in_code \
        == ("<file_sep>",)
    clean = build_prompt(PromptParts("x = ", "\ny = 1\n"), s, tok, 200)
    assert "sentinels_in_code" not in clean.describe() and clean.suffix == "\ny = 1\n"
