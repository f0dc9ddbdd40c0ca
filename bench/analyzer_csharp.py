"""C# (mcs): the batched analyzer vs one compiler process per file, and vs two plain whole-tree mcs runs.

On pythonnet 2.5.2's C# sources (PyPI sdist, 149 files), times
  batched        = CSharpAnalyzer.analyze with mcs (scan, one --parse pass, the shim rounds, one compile of the
                   original tree, one of the stubbed tree -- plus one more if stubs broke a declaration -- and the
                   diff),
  per-file       = for every file that gets stubs, one mcs process over the original tree and one over the tree
                   with only that file stubbed (mcs has no source path: a file only compiles with the whole
                   project), both with the final shim; measured on a sample of files and extrapolated unless --all,
  floor (plain)  = two plain mcs runs over the whole original and stubbed trees (no parse pass, no shim: mcs stops
                   at the first unresolved declaration and never reaches a method body, so this floor does less),
  floor (shim)   = two mcs runs over the final shimmed original and stubbed trees (the work that yields refs).
Targets: per-file / batched >= 10x, batched / floor <= 1.5x.

    python bench/analyzer_csharp.py [--sample N | --all]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CACHE = Path.home() / ".cache" / "benchsmith-tests"
SDIST = ("pythonnet==2.5.2", "pythonnet-2.5.2.tar.gz")


def fetch_sdist(spec: str, filename: str) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / filename
    if not path.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                        "-d", str(CACHE), spec], check=True)
    return path


def _rsp(path: Path, files, out: Path) -> Path:
    from benchsmith.analyzers.csharp import MCS_OPTIONS

    path.write_text("\n".join([*MCS_OPTIONS, f"-out:{out}", *(f'"{f}"' for f in files)]) + "\n")
    return path


def bench(sample: int | None = 12) -> dict:
    from benchsmith.analyzers import get_analyzer
    from benchsmith.analyzers.csharp import SHIM_FILE, Compiler
    from benchsmith.files import snapshot, write_tree
    from benchsmith.records import RepoSpec
    from benchsmith.runner import run
    from benchsmith.sources import materialise

    tmp = Path(tempfile.mkdtemp(prefix="bench-csharp-"))
    co = materialise(RepoSpec(str(fetch_sdist(*SDIST))), tmp)
    analyzer = get_analyzer("csharp")
    analyzer.compiler = Compiler.MCS
    snap = snapshot(co.path, analyzer.extensions, tmp / "tree", repo_name="pythonnet")

    work = tmp / "work"
    t0 = time.perf_counter()
    result = analyzer.analyze(snap, work)
    batched = time.perf_counter() - t0

    out = tmp / "out.dll"
    all_files = sorted(f.path for f in snap.files)
    write_tree(tmp / "plain-stubbed", {f.path: f.text for f in snap.files})
    write_tree(tmp / "plain-stubbed", {p: (work / "stubbed" / p).read_text(encoding="utf-8")
                                       for p in all_files if (work / "stubbed" / p).exists()})
    t0 = time.perf_counter()
    run(["mcs", f"@{_rsp(tmp / 'a.rsp', all_files, out)}"], cwd=snap.root, timeout=3600)
    run(["mcs", f"@{_rsp(tmp / 'b.rsp', all_files, out)}"], cwd=tmp / "plain-stubbed", timeout=3600)
    floor_plain = time.perf_counter() - t0

    shimmed = sorted(p.relative_to(work / "original").as_posix() for p in (work / "original").rglob("*.cs"))
    t0 = time.perf_counter()
    run(["mcs", f"@{_rsp(tmp / 'c.rsp', shimmed, out)}"], cwd=work / "original", timeout=3600)
    run(["mcs", f"@{_rsp(tmp / 'd.rsp', shimmed, out)}"], cwd=work / "stubbed", timeout=3600)
    floor_shim = time.perf_counter() - t0

    # per-file: the shimmed original tree with one file at a time swapped for its stubbed version
    stubbed_paths = [p for p in shimmed if p != SHIM_FILE and
                     (work / "stubbed" / p).read_bytes() != (work / "original" / p).read_bytes()]
    chosen = stubbed_paths if not sample else stubbed_paths[:: max(1, len(stubbed_paths) // sample)][:sample]
    one = tmp / "one"
    write_tree(one, {p: (work / "original" / p).read_text(encoding="utf-8") for p in shimmed})
    rsp = _rsp(tmp / "e.rsp", shimmed, out)
    t0 = time.perf_counter()
    for p in chosen:
        run(["mcs", f"@{rsp}"], cwd=work / "original", timeout=3600)
        write_tree(one, {p: (work / "stubbed" / p).read_text(encoding="utf-8")})
        run(["mcs", f"@{rsp}"], cwd=one, timeout=3600)
        write_tree(one, {p: (work / "original" / p).read_text(encoding="utf-8")})
    measured = time.perf_counter() - t0
    per_file = measured * len(stubbed_paths) / max(1, len(chosen))
    return {"language": "csharp", "files": len(snap.files), "files_with_stubs": len(stubbed_paths),
            "refs": len(result.refs), "batched_s": batched, "per_file_s": per_file, "floor_s": floor_shim,
            "floor_plain_s": floor_plain, "speedup_vs_per_file": per_file / batched,
            "batched_over_floor": batched / floor_shim, "batched_over_plain_floor": batched / floor_plain,
            "per_file_measured_files": len(chosen), "shim_rounds": result.stats.get("shim_rounds"),
            "targets": "per-file/batched >= 10x, batched/floor <= 1.5x"}


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
