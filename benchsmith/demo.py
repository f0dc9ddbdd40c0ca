"""``make demo``: build small splits from the bundled sample repositories and this project's own source tree,
then print what was built.  Everything runs offline."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from benchsmith.runner import repo_root

SAMPLES = repo_root() / "samples"


def _cceval(out: Path, quiet: bool) -> list[tuple[str, int, int]]:
    from benchsmith.analyzers import registry
    from benchsmith.cli import main

    rows = []
    for lang_dir in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        lang = lang_dir.name
        if lang not in registry():
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
        split = out / "cceval" / lang / "line_completion.jsonl"
        n = sum(1 for _ in open(split, encoding="utf-8")) if split.exists() else 0
        rows.append((lang, len(repos), n))
        if rc != 0:
            print(f"build-ccEval --lang {lang} exited {rc}", file=sys.stderr)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benchsmith-demo", description=__doc__)
    p.add_argument("--output", default="demo-out")
    p.add_argument("--quiet", action="store_true")
    args = p.parse_args(argv)
    out = Path(args.output)
    shutil.rmtree(out, ignore_errors=True)
    rows = _cceval(out, args.quiet)

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"benchsmith demo -> {out}/")
    for col in ("benchmark", "repositories / pairs", "examples"):
        table.add_column(col)
    for lang, repos, n in rows:
        table.add_row(f"CrossCodeEval {lang}", str(repos), str(n))
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
