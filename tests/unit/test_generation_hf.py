"""The transformers backend, run for real on CPU with tiny random-weight models built here (Llama and GPT-2
configs, a byte-level BPE tokenizer trained on a few code lines), and the ``benchsmith generate`` command."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="the transformers extra (torch) is not installed")
pytest.importorskip("transformers", reason="the transformers extra is not installed")

from benchsmith.cli import main  # noqa: E402
from benchsmith.evaluate.generation.base import (  # noqa: E402
    CachedBackend,
    GenerationRequest,
    RequestCache,
    create_backend,
)
from benchsmith.evaluate.generation.tiny_model import build_tiny_model  # noqa: E402

PROMPTS = [
    "def add(a, b):\n",
    "import os\n",
    "class Stack:\n    def __init__(self):\n        self.items = []\n    def push(self, item):\n        self.",
    "x",
    "for i in range(10):\n    print(",
    "",  # an empty prompt still completes (from BOS)
]


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def model_dir(request, tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp(f"tiny-{request.param}"), arch=request.param, seed=7)


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama-cli"), arch="llama", seed=3)


def _texts(results):
    return [r.texts for r in results]


def test_batched_left_padded_greedy_equals_one_by_one(model_dir):
    backend = create_backend("hf", str(model_dir), batch_size=4, device="cpu")
    reqs = [GenerationRequest(p, max_new_tokens=16) for p in PROMPTS]
    batched = backend.generate(reqs)
    assert backend.stats["batches"] == 2  # 6 prompts, batch size 4
    backend.batch_size = 1
    single = backend.generate(reqs)
    assert _texts(batched) == _texts(single)
    assert all(len(r.texts) == 1 and r.texts[0] for r in batched)
    # the padding really was on the left: prompts of different lengths shared a batch
    assert len({r.prompt_tokens for r in batched}) > 2


def _ascii_window(text: str, start: int = 3, size: int = 3):
    for i in range(start, len(text) - size):
        w = text[i:i + size]
        if all(32 <= ord(c) < 127 for c in w):
            return w
    return None


def test_stop_sequences_end_generation_and_are_cut_off(llama_dir):
    backend = create_backend("hf", str(llama_dir), batch_size=3, device="cpu")
    free = backend.generate([GenerationRequest(p, max_new_tokens=40) for p in PROMPTS])
    checked = 0
    for prompt, res in zip(PROMPTS, free):
        text = res.texts[0]
        stop = _ascii_window(text)
        if stop is None:
            continue
        checked += 1
        expected = text[: text.find(stop)]
        stopped = backend.generate([GenerationRequest(prompt, max_new_tokens=40, stop=(stop, "\x00never"))])[0]
        assert stopped.texts == [expected]
        # generation really stopped early (the stop string ended the row), not just cut afterwards
        assert stopped.completion_tokens < res.completion_tokens
    assert checked >= 2


def test_stop_sequences_in_a_mixed_batch(llama_dir):
    backend = create_backend("hf", str(llama_dir), batch_size=8, device="cpu")
    free = backend.generate([GenerationRequest(p, max_new_tokens=30) for p in PROMPTS])
    stops = [_ascii_window(r.texts[0]) or "\x00never" for r in free]
    # one stop list for the whole batch: each row stops at the first of them it produces
    reqs = [GenerationRequest(p, max_new_tokens=30, stop=tuple(stops)) for p in PROMPTS]
    got = backend.generate(reqs)
    for res, full in zip(got, free):
        expected = full.texts[0]
        for s in stops:
            i = expected.find(s)
            if i >= 0:
                expected = expected[:i]
        assert res.texts == [expected]


def test_n_samples_and_seed_determinism(llama_dir):
    backend = create_backend("hf", str(llama_dir), batch_size=4, device="cpu")
    reqs = [GenerationRequest(p, max_new_tokens=12, temperature=2.0, top_p=1.0, n=3, seed=11) for p in PROMPTS[:3]]
    first = backend.generate(reqs)
    assert all(len(r.texts) == 3 for r in first)
    assert any(len(set(r.texts)) > 1 for r in first)  # n draws, not n copies
    again = create_backend("hf", str(llama_dir), batch_size=4, device="cpu").generate(reqs)
    assert _texts(first) == _texts(again)  # same seed, fresh process state -> same samples
    other = backend.generate([GenerationRequest(r.prompt, max_new_tokens=12, temperature=2.0, top_p=1.0, n=3,
                                                seed=12) for r in reqs])
    assert _texts(other) != _texts(first)
    # greedy n > 1: n copies of the greedy completion
    greedy = backend.generate([GenerationRequest(PROMPTS[0], max_new_tokens=8, n=2)])[0]
    assert len(greedy.texts) == 2 and greedy.texts[0] == greedy.texts[1]


def test_cache_hits_do_not_call_the_model(llama_dir, tmp_path):
    reqs = [GenerationRequest(p, max_new_tokens=10) for p in PROMPTS]
    inner = create_backend("hf", str(llama_dir), batch_size=4, device="cpu")
    first = CachedBackend(inner, RequestCache(tmp_path)).generate(reqs)
    assert inner.stats["prompts"] == len(PROMPTS)
    inner2 = create_backend("hf", str(llama_dir), batch_size=4, device="cpu")
    cached = CachedBackend(inner2, RequestCache(tmp_path))
    second = cached.generate(reqs)
    assert _texts(second) == _texts(first)
    assert inner2.stats["prompts"] == 0 and inner2._model is None  # weights never even loaded
    assert cached.cache.hits == len(PROMPTS)


def test_long_prompt_is_kept_within_the_context_window(llama_dir):
    backend = create_backend("hf", str(llama_dir), device="cpu")
    window = backend.context_window()
    assert window == 512
    long_prompt = "x = compute(value)\n" * 400  # far more tokens than the window
    res = backend.generate([GenerationRequest(long_prompt, max_new_tokens=8)])[0]
    assert res.prompt_tokens == window - 8 and len(res.texts[0]) > 0


# ------------------------------------------------------------------------------------------------------- CLI


def _cceval_record(tid, prompt, cfc):
    return {"prompt": prompt, "groundtruth": "items.append(item)", "right_context": "\n",
            "metadata": {"task_id": tid, "repository": "r", "file": "a.py", "context_start_lineno": 0,
                         "groundtruth_start_lineno": 5, "right_context_start_lineno": 6},
            "crossfile_context": {"text": cfc, "list": []}}


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _read(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_generate_cli_crossfile_context_and_budget(llama_dir, tmp_path):
    from benchsmith.evaluate.generation.prompting import assemble

    cfc = "# Here are some relevant code fragments from other files of the repo:\n" + "# def helper(a): pass\n" * 80
    rows = [_cceval_record(f"project/{i}", "import os\n" * (5 + 40 * i) + PROMPTS[2], cfc) for i in range(3)]
    _write(tmp_path / "in.jsonl", rows)
    out = tmp_path / "preds.jsonl"
    rc = main(["generate", "--backend", "hf", "--model", str(llama_dir), "--input", str(tmp_path / "in.jsonl"),
               "--output", str(out), "--crossfile-context", "--max-new-tokens", "12", "--max-prompt-tokens", "160",
               "--crossfile-max-tokens", "64", "--batch-size", "2", "--device", "cpu", "-q"])
    assert rc == 0
    preds = _read(out)
    assert [p["task_id"] for p in preds] == ["project/0", "project/1", "project/2"]
    # the CLI's completions are the backend's completions of CrossCodeEval-budgeted prompts
    backend = create_backend("hf", str(llama_dir), device="cpu")
    tok = backend.tokenizer()
    prompts = [assemble(r["prompt"], cfc, tok, 160, 64) for r in rows]
    assert all(tok.count(p.text) <= 160 and p.crossfile_tokens <= 64 for p in prompts)
    expected = backend.generate([GenerationRequest(p.text, max_new_tokens=12) for p in prompts])
    assert [p["pred"] for p in preds] == [r.texts[0] for r in expected]
    # without --crossfile-context the prompt is the in-file code only: different completions
    rc = main(["generate", "--backend", "hf", "--model", str(llama_dir), "--input", str(tmp_path / "in.jsonl"),
               "--output", str(tmp_path / "plain.jsonl"), "--max-new-tokens", "12", "--max-prompt-tokens", "160",
               "--device", "cpu", "-q"])
    assert rc == 0
    plain = backend.generate([GenerationRequest(assemble(r["prompt"], None, tok, 160).text, max_new_tokens=12)
                              for r in rows])
    assert [p["pred"] for p in _read(tmp_path / "plain.jsonl")] == [r.texts[0] for r in plain]


def test_generate_cli_humanext_n_samples_stop_and_step_by_step(llama_dir, tmp_path):
    rows = [
        {"task_id": "he/0/direct", "prompt": PROMPTS[0], "stop": ["\ndef", "\nclass"], "seed": 5},
        {"task_id": "he/0/sbs/stage1", "prompt": "def helper(x):\n", "stop": ["\ndef"], "stage": 1,
         "extra": {"program_prefix": "def helper(x):\n", "stage2_task_id": "he/0/sbs/stage2"}},
        {"task_id": "he/0/sbs/stage2", "prompt": "{auxiliary}\n\n\ndef target(y):\n", "stop": ["\ndef"],
         "stage": 2, "template": "{auxiliary}\n\n\ndef target(y):\n",
         "extra": {"stage1_task_id": "he/0/sbs/stage1"}},
    ]
    _write(tmp_path / "variants.jsonl", rows)
    out = tmp_path / "preds.jsonl"
    args = ["generate", "--backend", "hf", "--model", str(llama_dir), "--input", str(tmp_path / "variants.jsonl"),
            "--output", str(out), "--max-new-tokens", "10", "--temperature", "1.5", "--top-p", "1.0", "--n", "2",
            "--seed", "1", "--device", "cpu", "-q"]
    assert main(args) == 0
    preds = _read(out)
    assert [p["task_id"] for p in preds] == ["he/0/direct"] * 2 + ["he/0/sbs/stage1"] * 2 + ["he/0/sbs/stage2"] * 2
    assert all("\ndef" not in p["pred"] and "\nclass" not in p["pred"] for p in preds)
    first = out.read_bytes()
    assert main(args) == 0 and out.read_bytes() == first  # same inputs and seed: byte-identical output
    # stage 2, sample k, continues the template filled with stage 1's sample k
    backend = create_backend("hf", str(llama_dir), device="cpu")
    for k in range(2):
        aux = "def helper(x):\n" + preds[2 + k]["pred"]
        filled = "{auxiliary}\n\n\ndef target(y):\n".replace("{auxiliary}", aux.rstrip())
        res = backend.generate([GenerationRequest(filled, max_new_tokens=10, temperature=1.5, top_p=1.0, n=1,
                                                  seed=1 + k, stop=("\ndef",))])[0]
        assert preds[4 + k]["pred"] == res.texts[0]


def test_generate_cli_rejects_bad_input_with_file_and_line(llama_dir, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "a", "prompt": "x"}\n\n{"task_id": "b"}\n', encoding="utf-8")
    rc = main(["generate", "--backend", "hf", "--model", str(llama_dir), "--input", str(bad),
               "--output", str(tmp_path / "o.jsonl"), "-q"])
    assert rc == 2 and f"{bad}:3: missing field 'prompt'" in capsys.readouterr().err
    bad.write_text('{"task_id": "a", "prompt": "x", "stop": "\\n"}\n', encoding="utf-8")
    assert main(["generate", "--backend", "hf", "--model", str(llama_dir), "--input", str(bad),
                 "--output", str(tmp_path / "o.jsonl"), "-q"]) == 2
    assert "field 'stop' must be list" in capsys.readouterr().err
    bad.write_text('{"task_id": "a", "prompt": "x"}\n', encoding="utf-8")
    assert main(["generate", "--backend", "hf", "--model", str(tmp_path / "no-such-model"), "--input", str(bad),
                 "--output", str(tmp_path / "o.jsonl"), "-q"]) == 2
    assert "could not load model" in capsys.readouterr().err
    assert not (tmp_path / "o.jsonl").exists()
