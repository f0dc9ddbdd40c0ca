"""TypeScript analyzer: batched (one tsc over the original tree + one over a tree where every file is stubbed) vs
one tsc process per file (the tree with only that file stubbed), on rxjs's sources (251 files, npm tarball).

Targets (issue 3): batched >= 5x faster than per-file, and within 1.5x of two plain whole-tree tsc runs.  The
original compile runs our checker script (issue 27: the same diagnostics, plus the names the type checker
resolves); its cost beside one plain tsc run is printed too.

The per-file baseline is timed on a seeded sample of the files with project imports and extrapolated to all of
them (every per-file run compiles the whole tree, so its cost hardly depends on which file is stubbed); pass
``--sample 0`` to run it on every file (tens of minutes).  The refs the per-file runs find for the sampled files
are compared with the batched refs of the same files, so the speed-up is not bought with different results.

    .venv/bin/python bench/analyzer_typescript.py [--sample 8] [--repo DIR]
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchsmith.analyzers.base import AnalysisResult
from benchsmith.analyzers.typescript import TypeScriptAnalyzer
from benchsmith.files import snapshot, write_tree
from benchsmith.sources import extract_archive

CACHE = Path.home() / ".cache" / "benchsmith-tests"
TARBALL = ("rxjs@7.8.2", "rxjs-7.8.2.tgz")


def rxjs_src(tmp: Path) -> Path:
    archive = CACHE / TARBALL[1]
    if not archive.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(CACHE), TARBALL[0]], check=True,
                       timeout=300)
    root = Path(extract_archive(archive, tmp / "rxjs"))
    return root / "src" if (root / "src").is_dir() else root / "package" / "src"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", type=Path, help="a TypeScript source tree (default: rxjs 7.8.2 src from npm)")
    ap.add_argument("--sample", type=int, default=8, help="files timed for the per-file baseline (0 = all)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    console = Console()
    analyzer = TypeScriptAnalyzer()
    tmp = Path(tempfile.mkdtemp(prefix="bench-ts-"))
    try:
        repo = args.repo or rxjs_src(tmp)
        snap = snapshot(repo, analyzer.extensions, tmp / "snap", repo_name=repo.name)
        snap.configs = analyzer.read_configs(repo)
        analyzer.tool_versions()  # cached: not part of any timing below
        console.print(f"[bold]{repo}[/]: {len(snap.files)} files, TypeScript {analyzer.tool_versions().get('typescript')}")

        # 1. two plain whole-tree tsc runs over the original tree (the floor any two-compile design pays)
        plan = analyzer.plan(snap, tmp / "plan", AnalysisResult())
        assert plan is not None, "no file imports another: nothing to measure"
        files = sorted(plan.files)
        t0 = time.perf_counter()
        for i in range(2):
            out = analyzer.compile(snap.root, files, tmp / "plain", f"plain{i}", plan.path_config)
            assert out.messages is not None, out.detail
        plain = time.perf_counter() - t0
        # 1b. the original compile as the analyzer runs it: our checker script, which also resolves every name of
        # the TypeScript files (issue 27); the same diagnostics as tsc's
        walk = analyzer._walk(plan)
        t0 = time.perf_counter()
        checked = analyzer.compile(snap.root, files, tmp / "plain", "checker", plan.path_config, walk)
        checker_cost = time.perf_counter() - t0
        assert checked.messages is not None, checked.detail
        assert walk is None or checked.messages == out.messages, "checker.js and tsc disagree about the diagnostics"

        # 2. batched: the whole analyzer (parse, stub, write the stubbed tree, two compiles, diff)
        t0 = time.perf_counter()
        result = analyzer.analyze(snap, tmp / "batched")
        batched = time.perf_counter() - t0
        assert not [e for e in result.exclusions if e.item_id == snap.name], result.exclusions

        # 3. per file: one original compile, then one compile per file with only that file stubbed
        plan = analyzer.plan(snap, tmp / "plan", AnalysisResult())
        candidates = sorted(plan.stubbed)
        sample = candidates if args.sample <= 0 else sorted(random.Random(args.seed).sample(
            candidates, min(args.sample, len(candidates))))
        scratch = tmp / "perfile-tree"
        write_tree(scratch, {p: i.text for p, i in plan.files.items()})
        t0 = time.perf_counter()
        before = analyzer.compile(snap.root, files, tmp / "perfile", "original", plan.path_config)
        original_cost = time.perf_counter() - t0
        per_file_times: list[float] = []
        per_file_refs = []
        for path in sample:
            t0 = time.perf_counter()
            (scratch / path).write_text(plan.stubbed[path].text, encoding="utf-8", newline="")
            after = analyzer.compile(scratch, files, tmp / "perfile", "one", plan.path_config)
            (scratch / path).write_text(plan.files[path].text, encoding="utf-8", newline="")
            one, scratch_result = replace(plan, stubbed={path: plan.stubbed[path]}), AnalysisResult()
            refs = [ref for found in analyzer.diff(one, before.messages, after.messages, scratch_result)
                    if (ref := analyzer.attribute(one, found, scratch_result)) is not None]
            per_file_times.append(time.perf_counter() - t0)
            per_file_refs += refs
        mean = sum(per_file_times) / len(per_file_times)
        per_file = original_cost + mean * len(candidates)

        key = lambda r: (r.file, r.line, r.column, r.symbol, r.defining_file)  # noqa: E731
        batched_sample = {key(r) for r in result.refs if r.file in set(sample)}
        single = {key(r) for r in per_file_refs}
        agree = len(batched_sample & single)

        table = Table(title=f"TypeScript analyzer on {repo.name} ({len(snap.files)} files, "
                            f"{len(candidates)} with project imports)")
        table.add_column("approach")
        table.add_column("tsc runs", justify="right")
        table.add_column("seconds", justify="right")
        table.add_column("vs batched", justify="right")
        table.add_row("two plain whole-tree tsc runs", "2", f"{plain:.1f}", f"{plain / batched:.2f}x")
        table.add_row("batched analyzer (this module)", "2", f"{batched:.1f}", "1.00x")
        table.add_row(f"one tsc per file (extrapolated from {len(sample)})", str(1 + len(candidates)),
                      f"{per_file:.1f}", f"{per_file / batched:.1f}x")
        console.print(table)
        speedup, overhead = per_file / batched, batched / plain
        console.print(f"original compile: tsc CLI {plain / 2:.1f}s, checker.js {checker_cost:.1f}s "
                      f"({checker_cost / (plain / 2):.2f}x; {len(checked.checked)} names resolved in "
                      f"{len(walk or ())} files)")
        console.print(f"per-file run: {mean:.2f}s mean over {len(sample)} files (original compile {original_cost:.1f}s)")
        console.print(f"refs: batched {len(result.refs)} in total; on the {len(sample)} sampled files batched "
                      f"{len(batched_sample)}, per-file {len(single)}, identical {agree}")
        ok1, ok2 = speedup >= 5, overhead <= 1.5
        console.print(f"target: batched >= 5x faster than per-file: {speedup:.1f}x "
                      f"[{'green' if ok1 else 'red'}]{'PASS' if ok1 else 'FAIL'}[/]")
        console.print(f"target: batched within 1.5x of two plain tsc runs: {overhead:.2f}x "
                      f"[{'green' if ok2 else 'red'}]{'PASS' if ok2 else 'FAIL'}[/]")
        return 0 if ok1 and ok2 else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
