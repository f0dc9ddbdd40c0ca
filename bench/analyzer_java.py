"""Java: the batched analyzer vs one javac process per file, and vs two plain whole-tree javac runs.

On JPype's Java sources (PyPI sdist, 132 files), times
  batched  = JavaAnalyzer.analyze (scan + stubs, one javac analysis of the original tree, one of the stubbed tree,
             diff); the driver is compiled once beforehand (a one-off per JDK, cached) and reported apart,
  per-file = for every file that gets stubs, one javac process on the original file and one on its stubbed
             version, each resolving the rest of the project through -sourcepath (the cheapest correct per-file
             scheme); measured on a sample of files and extrapolated unless --all,
  floor    = two plain `javac` runs over the whole original and stubbed trees with the same options and JVM flags.
Targets: per-file / batched >= 10x, batched / floor <= 1.5x.

    python bench/analyzer_java.py [--sample N | --all]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import fetch_sdist  # noqa: E402  (needs ROOT on sys.path)
SDIST = ("JPype1==1.7.1", "jpype1-1.7.1.tar.gz")


def bench(sample: int | None = 12) -> dict:
    from benchsmith.analyzers import get_analyzer
    from benchsmith.analyzers.java import JAVAC_OPTIONS, JVM_OPTIONS, JavaIndex, plan_stubs, scan_java
    from benchsmith.files import snapshot, write_tree
    from benchsmith.records import RepoSpec
    from benchsmith.runner import run
    from benchsmith.sources import materialise

    tmp = Path(tempfile.mkdtemp(prefix="bench-java-"))
    co = materialise(RepoSpec(str(fetch_sdist(*SDIST))), tmp)
    analyzer = get_analyzer("java")
    snap = snapshot(co.path, analyzer.extensions, tmp / "tree", repo_name="jpype")
    snap.files = [f for f in snap.files if not f.path.endswith("module-info.java")]
    t0 = time.perf_counter()
    analyzer._driver_dir(tmp / "w0")
    driver_once = time.perf_counter() - t0

    work = tmp / "work"
    t0 = time.perf_counter()
    result = analyzer.analyze(snap, work)
    batched = time.perf_counter() - t0

    jflags = [f"-J{o}" for o in JVM_OPTIONS]
    plain = ["javac", *jflags, *JAVAC_OPTIONS, "-d", str(tmp / "classes"), "-sourcepath", str(tmp / "none"),
             "-cp", str(tmp / "none")]
    listfile = tmp / "all.txt"
    listfile.write_text("\n".join(f'"{f.path}"' for f in snap.files) + "\n")
    t0 = time.perf_counter()
    run(plain + [f"@{listfile}"], cwd=snap.root, timeout=3600)
    run(plain + [f"@{listfile}"], cwd=work / "stubbed", timeout=3600)
    floor = time.perf_counter() - t0

    infos = [scan_java(f) for f in snap.files]
    index = JavaIndex(infos)
    plans = [(f, plan_stubs(i, f.text, index)) for f, i in zip(snap.files, infos)]
    plans = [(f, p) for f, p in plans if p is not None]
    # source roots: each file's directory minus its package path
    roots = set()
    for f, info in zip(snap.files, infos):
        parent = str(Path(f.path).parent)
        pkg = info.package.replace(".", "/")
        if pkg and parent.endswith(pkg):
            parent = parent[: -len(pkg)].rstrip("/") or "."
        roots.add(str(snap.root / parent))
    sp = ":".join(sorted(roots))
    one = tmp / "one"
    chosen = plans if not sample else plans[:: max(1, len(plans) // sample)][:sample]
    per_file_cmd = ["javac", *jflags, *JAVAC_OPTIONS, "-d", str(tmp / "classes1"), "-sourcepath", sp,
                    "-cp", str(tmp / "none")]
    t0 = time.perf_counter()
    for f, p in chosen:
        run(per_file_cmd + [f.path], cwd=snap.root, timeout=3600)
        write_tree(one, {f.path: p.stubbed_text})
        run(per_file_cmd + [f.path], cwd=one, timeout=3600)
    measured = time.perf_counter() - t0
    per_file = measured * len(plans) / max(1, len(chosen))
    row = {"language": "java", "files": len(snap.files), "files_with_stubs": len(plans), "refs": len(result.refs),
           "batched_s": batched, "per_file_s": per_file, "floor_s": floor,
           "speedup_vs_per_file": per_file / batched, "batched_over_floor": batched / floor,
           "per_file_measured_files": len(chosen), "driver_compile_once_s": driver_once,
           "targets": "per-file/batched >= 10x, batched/floor <= 1.5x"}
    return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sample", type=int, default=12, help="files timed per-file (extrapolated to all)")
    p.add_argument("--all", action="store_true", help="time every file per-file (slow)")
    args = p.parse_args()
    row = bench(None if args.all else args.sample)
    for k, v in row.items():
        print(f"{k:>26}: {v:.2f}" if isinstance(v, float) else f"{k:>26}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
