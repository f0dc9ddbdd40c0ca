"""The whole fill-in-the-middle path -- prompt assembly, generation, post-processing, scoring, the report across
formats -- on every backend: transformers with a tiny model whose tokenizer has StarCoder2's FIM tokens, the HTTP
backend against a local server, and vLLM where it is installed with a GPU (skipped, with the reason, otherwise)."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("torch", reason="the transformers extra (torch) is not installed")
pytest.importorskip("transformers", reason="the transformers extra is not installed")

from benchsmith.cli import main  # noqa: E402
from benchsmith.evaluate.generation import fim  # noqa: E402
from benchsmith.evaluate.generation.base import GenerationRequest, create_backend  # noqa: E402
from benchsmith.evaluate.generation.layout import (  # noqa: E402
    ContextPlacement,
    PromptFormat,
    PromptParts,
    PromptSettings,
    build_prompt,
)
from benchsmith.evaluate.generation.postprocess import ORDER, apply  # noqa: E402
from benchsmith.evaluate.generation.tiny_model import build_tiny_model  # noqa: E402
from tests.completion_server import CompletionServer, prompts_of  # noqa: E402

GT = [f"helper_{i}(path, strict=True)" for i in range(3)]
SUFFIX = "\n    return value\n\n\ndef other():\n    pass\n"


def record(i: int) -> dict:
    chunk = f"def helper_{i}(path, strict=False):\n    return os.path.normpath(path)\n"
    return {
        "prompt": f"import os\nfrom util import helper_{i}\n\n\ndef run_{i}(path):\n    value = ",
        "groundtruth": GT[i], "right_context": SUFFIX,
        "metadata": {"task_id": f"proj/src/run_{i}.py:6", "repository": "proj", "file": f"src/run_{i}.py",
                     "context_start_lineno": 0, "groundtruth_start_lineno": 5, "right_context_start_lineno": 6,
                     "language": "python"},
        "crossfile_context": {"text": "# the below code fragment can be found in:\n# src/util.py\n"
                                      + "".join("# " + ln + "\n" for ln in chunk.splitlines()),
                              "list": [{"retrieved_chunk": chunk, "filename": "src/util.py", "score": 1.0}]},
    }


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    # a little training makes completions look like code lines, so the statement rule has newlines to cut
    return build_tiny_model(tmp_path_factory.mktemp("tiny-fim"), seed=5, train_steps=60,
                            special_tokens=fim.builtin("starcoder2").sentinels)


@pytest.fixture
def split(tmp_path):
    path = tmp_path / "line_completion.jsonl"
    path.write_text("".join(json.dumps(record(i)) + "\n" for i in range(3)), encoding="utf-8")
    return path


def _read(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_hf_fim_repo_files_end_to_end(model_dir, split, tmp_path):
    out = tmp_path / "preds.jsonl"
    rc = main(["generate", "--model-backend", "hf", "--model", str(model_dir), "--input", str(split), "--output",
               str(out), "--prompt-format", "fim", "--context-placement", "repo-files", "--suffix-max-tokens", "9",
               "--crossfile-max-tokens", "30", "--max-prompt-tokens", "90", "--max-new-tokens", "10",
               "--device", "cpu", "-q"])
    assert rc == 0
    preds = _read(out)
    assert [p["task_id"] for p in preds] == [f"proj/src/run_{i}.py:6" for i in range(3)]
    meta = preds[0]["metadata"]
    # auto read StarCoder2 (the richest family whose sentinels the tokenizer holds); defaults recorded
    assert meta["fim_template"] == "starcoder2" and meta["prompt_format"] == "fim"
    assert meta["context_placement"] == "repo-files" and meta["fim_order"] == "psm"
    assert meta["postprocess"]["rules"] == [r.value for r in ORDER]
    assert meta["prompt_tokens"]["total"] <= 90 and meta["prompt_tokens"]["suffix"] <= 9
    assert meta["prompt_tokens"]["context"] <= 30
    assert "sentinels_in_code" not in meta  # the repository block's own sentinels are not the code's
    # the CLI's predictions are the backend's completions of the same prompts, post-processed by the same rules
    backend = create_backend("hf", str(model_dir), device="cpu")
    settings = PromptSettings(PromptFormat.FIM, ContextPlacement.REPO_FILES, template=fim.builtin("starcoder2"),
                              crossfile_max_tokens=30, suffix_max_tokens=9)
    for i, p in enumerate(preds):
        r = record(i)
        parts = PromptParts(r["prompt"], SUFFIX, r["crossfile_context"]["text"],
                            (("src/util.py", r["crossfile_context"]["list"][0]["retrieved_chunk"]),), "proj",
                            f"src/run_{i}.py")
        b = build_prompt(parts, settings, backend.tokenizer(), 90)
        assert b.text.startswith("<repo_name>proj<file_sep>src/util.py\n") and "<fim_middle>" in b.text
        raw = backend.generate([GenerationRequest(b.text, max_new_tokens=10)])[0].texts[0]
        done = apply(raw, ORDER, settings.template.end_tokens, b.suffix)
        assert p["pred"] == done.text and p["metadata"]["postprocess"]["applied"] == [r.value for r in done.applied]
        if done.applied:
            assert p["metadata"]["postprocess"]["raw"] == raw
    backend.close()
    # the same scorer whatever the format
    assert main(["score", "cceval", "--prompts", str(split), "--predictions", str(out), "--output",
                 str(tmp_path / "scores")]) == 0
    assert json.loads((tmp_path / "scores" / "results.json").read_text())["total"] == 3


def test_left_to_right_stays_byte_identical(model_dir, split, tmp_path):
    common = ["generate", "--model-backend", "hf", "--model", str(model_dir), "--input", str(split),
              "--crossfile-context", "--max-new-tokens", "6", "--max-prompt-tokens", "80", "--device", "cpu", "-q"]
    assert main(common + ["--output", str(tmp_path / "today.jsonl")]) == 0
    assert main(common + ["--output", str(tmp_path / "ltr.jsonl"), "--prompt-format", "ltr",
                          "--context-placement", "comments"]) == 0
    today, ltr = _read(tmp_path / "today.jsonl"), _read(tmp_path / "ltr.jsonl")
    assert all(set(p) == {"task_id", "pred"} for p in today)  # no new flag: the file is today's, byte for byte
    assert [(p["task_id"], p["pred"]) for p in ltr] == [(p["task_id"], p["pred"]) for p in today]
    assert ltr[0]["metadata"]["prompt_format"] == "ltr" and ltr[0]["metadata"]["postprocess"]["rules"] == []


# ------------------------------------------------------------------------------------------------ HTTP backend


class ScriptedServer(CompletionServer):
    """A ``/v1/completions`` server whose 'model' fills the hole the way FIM models misbehave: the right middle
    followed by the end-of-middle token and junk, or by a rewrite of the suffix; left-to-right it answers wrong."""

    def __init__(self) -> None:
        self.prompts: list[str] = []
        super().__init__(self.respond)

    def respond(self, path: str, body: dict) -> tuple[int, dict]:
        prompts = prompts_of(body)
        self.prompts.extend(prompts)
        return 200, {"choices": [{"index": k, "text": self.answer(p), "finish_reason": "length"}
                                 for k, p in enumerate(prompts)]}

    @staticmethod
    def answer(prompt: str) -> str:
        m = re.search(r"def run_(\d+)\(path\):\n    value = <fim_suffix>\n    return value", prompt)
        if m is None or not prompt.endswith("<fim_middle>"):
            return "helper()\nnext_line()"
        gt = GT[int(m.group(1))]
        if prompt.startswith("<repo_name>proj<file_sep>src/util.py\ndef helper_"):
            return gt + "\n    return value\n\n\ndef other():"
        return gt + "<|endoftext|>\nprint('junk')"


@pytest.fixture
def server():
    with ScriptedServer() as s:
        yield s


def test_http_backend_formats_and_report(model_dir, split, tmp_path, server):
    base = ["generate", "--model-backend", "openai", "--model", "m", "--base-url", server.url, "--input", str(split),
            "--tokenizer", str(model_dir), "--max-prompt-tokens", "200", "-q"]
    runs = {"ltr": ["--prompt-format", "ltr", "--context-placement", "comments"],
            "fim": ["--prompt-format", "fim", "--fim-template", "starcoder2", "--context-placement", "none"],
            "repo": ["--prompt-format", "fim", "--fim-template", "starcoder2", "--context-placement", "repo-files"]}
    for name, flags in runs.items():
        assert main(base + flags + ["--output", str(tmp_path / f"{name}.jsonl")]) == 0
    fim_preds, repo_preds = _read(tmp_path / "fim.jsonl"), _read(tmp_path / "repo.jsonl")
    assert [p["pred"] for p in fim_preds] == GT and [p["pred"] for p in repo_preds] == GT
    assert fim_preds[0]["metadata"]["postprocess"]["applied"] == ["end_of_middle"]
    assert repo_preds[0]["metadata"]["postprocess"]["applied"] == ["suffix_repeat", "statement_end"]
    assert repo_preds[0]["metadata"]["postprocess"]["raw"].startswith(GT[0] + "\n    return value")
    # the repository prompt as StarCoder2 documents it, the file being completed after the retrieved one
    assert any(p.startswith("<repo_name>proj<file_sep>src/util.py\n") and "<file_sep><fim_prefix>src/run_0.py\n"
               in p for p in server.prompts)
    out = tmp_path / "report"
    assert main(["report", "formats", "--prompts", str(split), "--predictions", *(str(tmp_path / f"{n}.jsonl")
                                                                                  for n in runs),
                 "--output", str(out)]) == 0
    cols = json.loads((out / "formats.json").read_text())["columns"]
    assert [c["label"] for c in cols] == ["ltr / comments", "fim-psm (starcoder2) / none",
                                          "fim-psm (starcoder2) / repo-files"]
    assert [c["em"] for c in cols] == [0.0, 100.0, 100.0]
    assert all(c["settings"]["model"] == "m" for c in cols) and "Warning" not in (out / "formats.md").read_text()
    assert cols[2]["postprocess"]["applied"] == {"statement_end": 3, "suffix_repeat": 3}
    assert "| em | 0.00 | 100.00 | 100.00 |" in (out / "formats.md").read_text()


def test_humanext_records_are_unaffected_by_format_flags(server, tmp_path):
    rows = [{"task_id": "he/0", "prompt": "def f(x):\n", "stop": ["\ndef"]}]
    (tmp_path / "he.jsonl").write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    assert main(["generate", "--model-backend", "openai", "--model", "m", "--base-url", server.url, "--input",
                 str(tmp_path / "he.jsonl"), "--output", str(tmp_path / "o.jsonl"), "--prompt-format", "fim",
                 "--fim-template", "starcoder", "-q"]) == 0
    assert server.prompts == ["def f(x):\n"]
    assert _read(tmp_path / "o.jsonl") == [{"task_id": "he/0", "pred": "helper()\nnext_line()"}]


def test_auto_template_without_a_tokenizer_is_a_clear_error(server, split, tmp_path, capsys):
    rc = main(["generate", "--model-backend", "openai", "--model", "m", "--base-url", server.url, "--input",
               str(split), "--output", str(tmp_path / "o.jsonl"), "--prompt-format", "fim", "-q"])
    assert rc == 2 and "--fim-template auto" in capsys.readouterr().err and server.prompts == []


def test_vllm_fim_end_to_end(model_dir, split, tmp_path):
    pytest.importorskip("vllm", reason="vLLM is not installed here (pip install 'benchsmith[vllm]', CUDA GPU)")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("vLLM needs a CUDA GPU; none here")
    out = tmp_path / "preds.jsonl"
    assert main(["generate", "--model-backend", "vllm", "--model", str(model_dir), "--input", str(split),
                 "--output", str(out), "--prompt-format", "fim", "--context-placement", "repo-files",
                 "--max-prompt-tokens", "90", "--max-new-tokens", "10", "-q"]) == 0
    preds = _read(out)
    assert len(preds) == 3 and all(p["metadata"]["prompt_tokens"]["total"] <= 90 for p in preds)
    assert main(["score", "cceval", "--prompts", str(split), "--predictions", str(out), "--output",
                 str(tmp_path / "scores")]) == 0


def test_report_flags_mixed_models_and_refuses_incomplete_files(split, tmp_path, capsys):
    def write(name, model, n=3):
        rows = [{"task_id": record(i)["metadata"]["task_id"], "pred": GT[i] if model == "a" else "x",
                 "metadata": {"model": model, "prompt_format": "fim", "fim_order": "spm", "fim_template": "codestral",
                              "context_placement": "none", "postprocess": {"rules": [], "applied": []}}}
                for i in range(n)]
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return str(tmp_path / name)

    out = tmp_path / "r"
    assert main(["report", "formats", "--prompts", str(split), "--predictions", write("a.jsonl", "a"),
                 write("b.jsonl", "b"), "--output", str(out)]) == 0
    text = (out / "formats.md").read_text()
    assert "from 2 models (a, b)" in text and "| em | 100.00 | 0.00 |" in text
    assert "fim-spm (codestral) / none" in text
    assert main(["report", "formats", "--prompts", str(split), "--predictions", write("c.jsonl", "a", n=2),
                 "--output", str(out)]) == 2
    assert "no prediction for 1 of 3 tasks" in capsys.readouterr().err


@pytest.mark.parametrize("flags,message", [
    (["--fim-template", "codellama", "--context-placement", "repo-files"], "no repository-level format"),
    (["--fim-template", "starcoder", "--postprocess", "bogus"], "unknown post-processing rule"),
    (["--fim-template", "qwen2.5-coder", "--fim-order", "spm"], "no SPM format"),
    (["--fim-template", "starcoder", "--suffix-max-tokens", "5"], "needs the model's tokenizer"),
])
def test_bad_format_flags_are_refused_before_any_request(server, split, tmp_path, capsys, flags, message):
    rc = main(["generate", "--model-backend", "openai", "--model", "m", "--base-url", server.url, "--input",
               str(split), "--output", str(tmp_path / "o.jsonl"), "--prompt-format", "fim", "-q", *flags])
    assert rc == 2 and message in capsys.readouterr().err and server.prompts == []
    assert not (tmp_path / "o.jsonl").exists()


def test_a_malformed_retrieved_chunk_names_file_and_line(server, tmp_path, capsys):
    bad = record(0)
    bad["crossfile_context"]["list"] = [{"filename": 3, "retrieved_chunk": "x"}]
    (tmp_path / "s.jsonl").write_text(json.dumps(record(1)) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    args = ["generate", "--model-backend", "openai", "--model", "m", "--base-url", server.url, "--input",
            str(tmp_path / "s.jsonl"), "--output", str(tmp_path / "o.jsonl"), "-q"]
    assert main(args) == 0  # left-to-right never reads the list: today's behaviour
    assert main(args + ["--prompt-format", "fim", "--fim-template", "starcoder2", "--context-placement",
                        "repo-files"]) == 1
    assert "s.jsonl:2 crossfile_context.list[0]: field 'filename' must be str" in capsys.readouterr().err
