"""Batched analyzer vs one toolchain process per file, and vs the floor of two plain whole-tree runs.

Python: on a real PyPI sdist with 100+ Python files (werkzeug 3.0.3, 138 files), times
  batched  = the analyzer (stubbing, two whole-tree pylint runs, diff),
  per-file = the naive reading of the paper: for every file with project imports, one pylint process on the
             original file and one on its stubbed version,
  floor    = two plain pylint runs over the whole tree with the same settings.
Targets: per-file / batched >= 8x, batched / floor <= 1.5x.
The other languages live in bench/analyzer_<lang>.py and are run from here when present.

    python bench/analyzer.py [--lang python,java,typescript,csharp] [--max-files N]
"""

from __future__ import annotations

import argparse
import importlib
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import fetch_sdist  # noqa: E402  (needs ROOT on sys.path)
PY_SDIST = ("werkzeug==3.0.3", "werkzeug-3.0.3.tar.gz")  # 138 Python files


def bench_python(max_files: int | None, per_file_sample: int = 24) -> dict:
    from benchsmith.analyzers import get_analyzer
    from benchsmith.analyzers.python import ModuleIndex, stub_file
    from benchsmith.analyzers.python.toolchain import write_rcfile
    from benchsmith.files import snapshot, write_tree
    from benchsmith.records import RepoSpec
    from benchsmith.runner import run
    from benchsmith.sources import materialise

    tmp = Path(tempfile.mkdtemp(prefix="bench-analyzer-"))
    co = materialise(RepoSpec(str(fetch_sdist(*PY_SDIST))), tmp)
    analyzer = get_analyzer("python")
    snap = snapshot(co.path, analyzer.extensions, tmp / "tree", repo_name="rich")
    if max_files:
        snap.files = snap.files[:max_files]
    n_files = len(snap.files)

    work = tmp / "work"
    work.mkdir()
    t0 = time.perf_counter()
    result = analyzer.analyze(snap, work)
    batched = time.perf_counter() - t0

    rc = write_rcfile(tmp / "rc")
    env = {"PYLINTRC": str(rc), "PYLINTHOME": str(tmp / "home")}
    base = [sys.executable, "-m", "pylint", "--rcfile", str(rc), "--output-format=json2", "--jobs=1", "--score=n"]

    t0 = time.perf_counter()
    run(base + ["--recursive=y", "."], cwd=snap.root, env=env)
    run(base + ["--recursive=y", "."], cwd=work / "stubbed", env=env)
    floor = time.perf_counter() - t0

    index = ModuleIndex(snap.files)
    stubs_of = {f.path: stub_file(f, index) for f in snap.files}
    stubbed_files = [f for f in snap.files if stubs_of[f.path] is not None]
    one = work / "one"  # the original tree, with one file at a time swapped for its stubbed version
    shutil.copytree(snap.root, one)
    # One pylint process per file is slow by design: time a seeded sample and extrapolate (--per-file-sample 0
    # runs every file).
    sample = stubbed_files
    if per_file_sample and per_file_sample < len(stubbed_files):
        sample = random.Random(0).sample(stubbed_files, per_file_sample)
    t0 = time.perf_counter()
    for f in sample:
        run(base + [f.path], cwd=snap.root, env=env)
        write_tree(one, {f.path: stubs_of[f.path].stubbed_text})
        run(base + [f.path], cwd=one, env=env)
        write_tree(one, {f.path: f.text})
    per_file = (time.perf_counter() - t0) * len(stubbed_files) / max(1, len(sample))
    return {"language": "python", "files": n_files, "files_with_project_imports": len(stubbed_files),
            "refs": len(result.refs), "per_file_sampled": len(sample), "batched_s": batched, "per_file_s": per_file, "floor_s": floor,
            "speedup_vs_per_file": per_file / batched, "batched_over_floor": batched / floor,
            "targets": "per-file/batched >= 8x, batched/floor <= 1.5x"}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lang", default="python,java,typescript,csharp")
    p.add_argument("--max-files", type=int)
    p.add_argument("--per-file-sample", type=int, default=24, help="files timed for the per-file estimate (0 = all)")
    args = p.parse_args()
    rows = []
    for lang in [x.strip() for x in args.lang.split(",") if x.strip()]:
        if lang == "python":
            rows.append(bench_python(args.max_files, args.per_file_sample))
            continue
        try:
            mod = importlib.import_module(f"bench.analyzer_{lang}")
        except ModuleNotFoundError:
            print(f"{lang}: bench/analyzer_{lang}.py not present, skipped")
            continue
        if hasattr(mod, "bench"):
            rows.append(mod.bench())
        else:  # a bench with its own command line prints its own table
            mod.main([])

    from rich.console import Console
    from rich.table import Table

    table = Table(title="batched analyzer vs per-file and vs the two-run floor")
    for col in ("language", "files", "refs", "batched s", "per-file s", "floor s", "per-file/batched",
                "batched/floor"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(r["language"], str(r["files"]), str(r.get("refs", "")), f"{r['batched_s']:.1f}",
                      f"{r['per_file_s']:.1f}", f"{r['floor_s']:.1f}", f"{r['speedup_vs_per_file']:.1f}x",
                      f"{r['batched_over_floor']:.2f}x")
    Console().print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
