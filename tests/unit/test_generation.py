"""Backend-independent parts of generation: requests, stop truncation, the registry, the request cache, prompt
budgets (with a real byte-level BPE tokenizer trained here)."""

from __future__ import annotations

import pytest

from benchsmith.evaluate.generation import base as g
from benchsmith.evaluate.generation import prompting as pr
from benchsmith.evaluate.generation.truncation import truncate

tokenizers = pytest.importorskip("tokenizers", reason="the transformers extra (tokenizers) is not installed")
transformers = pytest.importorskip("transformers", reason="the transformers extra is not installed")


@pytest.fixture(scope="module")
def tok():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    lines = ["def add(a, b):", "    return a + b", "import os", "class Stack:", "    self.items = []",
             "x = compute(value)  # éèü ünïcödé", "for i in range(10):", "    print(i)"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<eos>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    bpe.train_from_iterator(lines * 3, trainer=trainer)
    return pr.HFTokenizer(PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<eos>"))


# ---------------------------------------------------------------------------------------------------- requests


def test_request_validates_and_normalises_stop():
    r = g.GenerationRequest("x", stop=["\n", "", "END"])  # type: ignore[arg-type]
    assert r.stop == ("\n", "END") and hash(r)  # a JSON list became a hashable tuple without empty stops
    for bad in (dict(max_new_tokens=0), dict(n=0), dict(temperature=-1), dict(top_p=0), dict(top_p=1.5)):
        with pytest.raises(ValueError):
            g.GenerationRequest("x", **bad)


def test_truncate_cuts_at_earliest_stop():
    # the backends cut with the same function the HumanExtension scorer uses (one stop-sequence cutter)
    assert truncate("a = 1\nb = 2\ndef f", ["\ndef", "\n"]) == "a = 1"
    assert truncate("return x", ["\nclass"]) == "return x"
    assert truncate("abc", []) == "abc"
    assert truncate("a\nb", (s for s in ["", "\n"])) == "a"  # any iterable of stops; empty ones ignored


def test_group_by_sampling_keeps_first_appearance_order():
    a, b = g.GenerationRequest("1"), g.GenerationRequest("2", temperature=0.5, seed=1)
    assert g.group_by_sampling([a, b, a, b, a]) == [[0, 2, 4], [1, 3]]


def test_unknown_backend_lists_the_choices():
    with pytest.raises(ValueError, match="hf, openai, vllm"):
        g.create_backend("nope", "m")


def test_missing_library_error_names_the_pip_command():
    with pytest.raises(g.BackendUnavailable, match=r"pip install 'benchsmith\[vllm\]'"):
        g.require("benchsmith_no_such_module_xyz", "vllm", "pip install 'benchsmith[vllm]'")


def test_vllm_backend_without_vllm_says_how_to_install():
    pytest.importorskip("benchsmith.evaluate.generation.vllm")
    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(g.BackendUnavailable, match="pip install"):
            g.create_backend("vllm", "some/model")
    else:
        pytest.skip("vllm is installed here; the missing-library message cannot be observed")


# ------------------------------------------------------------------------------------------------------- cache


class EchoBackend(g.GenerationBackend):
    """Stands for a model: completes a prompt with its reverse (deterministic), counting the prompts it sees."""

    name = "echo"

    def __init__(self) -> None:
        self.seen: list[str] = []

    @property
    def model_id(self) -> str:
        return "echo-v1"

    def generate(self, requests):
        self.seen.extend(r.prompt for r in requests)
        return [g.GenerationResult(texts=[r.prompt[::-1]] * r.n) for r in requests]


def test_cache_serves_greedy_requests_and_sends_only_misses(tmp_path):
    inner = EchoBackend()
    cached = g.CachedBackend(inner, g.RequestCache(tmp_path / "c"))
    first = cached.generate([g.GenerationRequest("abc"), g.GenerationRequest("xyz")])
    assert [r.texts for r in first] == [["cba"], ["zyx"]] and inner.seen == ["abc", "xyz"]
    again = cached.generate([g.GenerationRequest("xyz"), g.GenerationRequest("new"), g.GenerationRequest("abc")])
    assert [r.texts for r in again] == [["zyx"], ["wen"], ["cba"]]
    assert inner.seen == ["abc", "xyz", "new"]  # only the miss reached the model
    assert [r.cached for r in again] == [True, False, True]
    cached.close()
    # persistent: a new process (new cache object) still hits
    inner2 = EchoBackend()
    reopened = g.CachedBackend(inner2, g.RequestCache(tmp_path / "c"))
    assert reopened.generate([g.GenerationRequest("abc")])[0].texts == ["cba"] and inner2.seen == []


def test_cache_key_depends_on_everything_that_changes_the_output(tmp_path):
    base = g.GenerationRequest("p", max_new_tokens=10, stop=("\n",))
    k = g.RequestCache.key("hf", "m", base)
    variants = [g.GenerationRequest("q", max_new_tokens=10, stop=("\n",)),
                g.GenerationRequest("p", max_new_tokens=11, stop=("\n",)),
                g.GenerationRequest("p", max_new_tokens=10, stop=()),
                g.GenerationRequest("p", max_new_tokens=10, stop=("\n",), n=2)]
    assert len({k, *(g.RequestCache.key("hf", "m", v) for v in variants)}) == 5
    assert g.RequestCache.key("hf", "m2", base) != k and g.RequestCache.key("vllm", "m", base) != k
    # a greedy completion does not depend on seed or top_p: same key
    assert g.RequestCache.key("hf", "m", g.GenerationRequest("p", max_new_tokens=10, stop=("\n",), seed=3,
                                                             top_p=0.5)) == k


def test_sampled_requests_are_never_cached(tmp_path):
    inner = EchoBackend()
    cached = g.CachedBackend(inner, g.RequestCache(tmp_path))
    req = g.GenerationRequest("abc", temperature=0.8, seed=1)
    cached.generate([req])
    cached.generate([req])
    assert inner.seen == ["abc", "abc"] and len(cached.cache) == 0


def test_file_fingerprint_changes_when_weights_change(tmp_path):
    (tmp_path / "model.bin").write_bytes(b"1234")
    before = g.file_fingerprint(tmp_path)
    (tmp_path / "model.bin").write_bytes(b"123456")
    assert g.file_fingerprint(tmp_path) != before
    assert g.file_fingerprint("org/hub-name") == "org/hub-name"


# ------------------------------------------------------------------------------------------------ prompt budget


def test_truncate_left_keeps_the_end_within_budget(tok):
    text = "import os\n" + "".join(f"x{i} = compute(value)\n" for i in range(40)) + "    return a + b"
    total = tok.count(text)
    for budget in (1, 7, 50, total - 1):
        cut = pr.truncate_left(text, budget, tok)
        assert text.endswith(cut) and tok.count(cut) <= budget
        assert tok.count(cut) >= budget - 2  # a boundary may cost a token, never more
    assert pr.truncate_left(text, total, tok) == text and pr.truncate_left(text, 0, tok) == ""


def test_truncate_right_keeps_the_start_within_budget(tok):
    text = "# file a.py\n" + "".join(f"def f{i}(): return {i}\n" for i in range(30))
    for budget in (3, 20, 60):
        cut = pr.truncate_right(text, budget, tok)
        assert text.startswith(cut) and budget - 2 <= tok.count(cut) <= budget


def test_truncation_never_splits_a_character(tok):
    text = "x = 'ünïcödé ünïcödé ünïcödé éèü'\n" * 5
    for budget in range(1, tok.count(text)):
        cut = pr.truncate_left(text, budget, tok)
        assert "\ufffd" not in cut and text.endswith(cut)


def test_assemble_follows_crosscodeeval_budgeting(tok):
    cfc = "# Here are some relevant code fragments from other files of the repo:\n" + "".join(
        f"# def helper_{i}(a, b): return a + b\n" for i in range(40))
    prompt = "import os\n" + "".join(f"v{i} = compute(value)\n" for i in range(60)) + "result = "
    out = pr.assemble(prompt, cfc, tok, max_prompt_tokens=200, crossfile_max_tokens=64)
    # the context is a right-cut prefix of the cross-file text, the rest a left-cut suffix of the prompt
    assert out.crossfile_tokens is not None and out.crossfile_tokens <= 64
    cfc_part, body = out.crossfile, out.infile
    assert out.text == cfc_part + body and cfc_part.endswith("\n")
    assert cfc.startswith(cfc_part) or cfc.startswith(cfc_part[:-1])  # a newline is added when the cut needs one
    assert tok.count(cfc_part) == out.crossfile_tokens and 60 <= out.crossfile_tokens <= 64
    assert prompt.endswith(body) and body.endswith("result = ")
    total = tok.count(out.text)
    assert 195 <= total <= 200 and out.truncated  # the in-file prompt got what the context left over
    # no budget: the prompt is whole, the context still capped at its own budget
    whole = pr.assemble(prompt, cfc, tok, max_prompt_tokens=None, crossfile_max_tokens=64)
    assert whole.text.endswith(prompt) and whole.text.startswith(cfc_part)
    # in-file only
    assert pr.assemble(prompt, None, tok, 50).text == pr.truncate_left(prompt, 50, tok)


def test_assemble_small_context_leaves_room_for_the_prompt(tok):
    prompt = "".join(f"v{i} = compute(value)\n" for i in range(60))
    out = pr.assemble(prompt, "# short\n", tok, max_prompt_tokens=100, crossfile_max_tokens=512)
    assert out.text.startswith("# short\n") and 96 <= tok.count(out.text) <= 100


def test_assemble_without_tokenizer(tok):
    assert pr.assemble("b", "a", None, None).text == "a\nb"
    with pytest.raises(pr.BudgetError, match="--tokenizer"):
        pr.assemble("b", "a", None, 100)
    with pytest.raises(pr.BudgetError, match="max-new-tokens"):
        pr.assemble("b", "a", tok, 0)


@pytest.mark.parametrize("base", [["generate", "--model", "m", "--input", "in", "--output", "out"],
                                  ["screen", "--model", "m", "--input", "in"]])
def test_model_backend_flag_and_its_deprecated_alias_agree(base):
    from benchsmith.cli import build_parser

    new = build_parser().parse_args([*base, "--model-backend", "openai"])
    old = build_parser().parse_args([*base, "--backend", "openai"])
    assert new.model_backend == old.model_backend == "openai"
    assert build_parser().parse_args(base).model_backend == "hf"
