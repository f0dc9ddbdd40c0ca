"""Build time and peak memory of ``benchsmith build cceval`` for 1, 4 and 16 real repositories, 1 and 2 workers.

The repositories are PyPI sdists of modest size (pinned versions, fetched once with pip into
``~/.cache/benchsmith-tests/sdists``).  Each build runs the real CLI in a fresh output directory; memory is the
peak of the summed RSS of the whole process tree (the build, its pool workers, pylint), sampled every 50 ms
with psutil, plus the largest single process seen.

Figures printed:
- speedup from 2 workers: time(1 worker) / time(2 workers), per repository count;
- peak-memory ratio between 16 repositories and 1 (target below 1.5).  The 1- and 4-repository sets are the
  largest sdists of the 16 (by Python source bytes), so the ratio shows growth with the *number* of
  repositories rather than with the size of the biggest one.  A single repository always runs inline (one
  process, whatever --workers says), so with 2 workers the 16/1 ratio also counts the second worker and its
  pylint; the 16/4 row compares runs with the same number of processes.

    .venv/bin/python bench/scale.py                 # all six builds (about 10 minutes on 2 cores)
    .venv/bin/python bench/scale.py --sets 1,4 --workers 1,2 --retrievers none
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

CACHE = Path(os.environ.get("BENCHSMITH_TEST_CACHE", Path.home() / ".cache" / "benchsmith-tests")) / "sdists"
# Small pure-Python projects whose modules import each other (so pylint and the example cutter have work).
SDISTS = [
    ("itsdangerous", "2.2.0"), ("MarkupSafe", "2.1.5"), ("idna", "3.7"), ("iniconfig", "2.0.0"),
    ("tomli", "2.0.1"), ("cachetools", "5.3.3"), ("humanize", "4.9.0"), ("blinker", "1.8.2"),
    ("jmespath", "1.0.1"), ("pathspec", "0.12.1"), ("wcwidth", "0.2.13"), ("python-dotenv", "1.0.1"),
    ("platformdirs", "4.2.2"), ("filelock", "3.15.4"), ("tenacity", "8.5.0"), ("zipp", "3.19.2"),
]
REPO_ROOT = Path(__file__).resolve().parents[1]


def _find(name: str, version: str) -> Path | None:
    want = {f"{name}-{version}.tar.gz".lower(), f"{name.replace('-', '_')}-{version}.tar.gz".lower()}
    for p in CACHE.glob("*.tar.gz"):
        if p.name.lower() in want:
            return p
    return None


def fetch() -> list[Path]:
    """The sdists, downloaded with pip where missing."""
    CACHE.mkdir(parents=True, exist_ok=True)
    missing = [f"{n}=={v}" for n, v in SDISTS if _find(n, v) is None]
    if missing:
        print(f"downloading {len(missing)} sdists into {CACHE} ...", flush=True)
        res = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                              "-d", str(CACHE), *missing], capture_output=True, text=True, timeout=900)
        if res.returncode != 0:
            raise SystemExit(f"pip download failed (is PyPI reachable?):\n{res.stderr[-2000:]}")
    paths = []
    for n, v in SDISTS:
        p = _find(n, v)
        if p is None:
            raise SystemExit(f"{n}=={v}: pip reported success but no sdist is in {CACHE}")
        paths.append(p)
    return paths


def source_bytes(archive: Path) -> int:
    with tarfile.open(archive) as tf:
        return sum(m.size for m in tf if m.isreg() and m.name.endswith(".py"))


@dataclass
class Run:
    repos: int
    workers: int
    seconds: float
    peak_tree: int  # bytes, summed RSS of the process tree
    peak_single: int  # bytes, the largest single process
    processes: int  # most processes alive at once
    examples: int


def measure(repos: list[Path], workers: int, retrievers: str, interval: float = 0.05) -> Run:
    import psutil

    out = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    argv = [sys.executable, "-m", "benchsmith.cli", "build", "cceval", "--lang", "python", "--output", str(out),
            "--no-card", "-q", "--workers", str(workers), "--retrievers", retrievers]
    for r in repos:
        argv += ["--repo", str(r)]
    try:
        start = time.monotonic()
        proc = subprocess.Popen(argv, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        root = psutil.Process(proc.pid)
        peak_tree = peak_single = most = 0
        while proc.poll() is None:
            total = 0
            try:
                members = [root, *root.children(recursive=True)]
            except psutil.Error:
                members = []
            for p in members:
                try:
                    rss = p.memory_info().rss
                except psutil.Error:
                    continue
                total += rss
                peak_single = max(peak_single, rss)
            peak_tree = max(peak_tree, total)
            most = max(most, len(members))
            time.sleep(interval)
        seconds = time.monotonic() - start
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.returncode != 0:
            raise SystemExit(f"build failed ({proc.returncode}): {err[-2000:]}")
        stats = json.loads((out / "python" / "stats.json").read_text())
        return Run(len(repos), workers, seconds, peak_tree, peak_single, most, stats["examples"])
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="1,4,16", help="repository counts (at most 16)")
    ap.add_argument("--workers", default="1,2", help="worker counts")
    ap.add_argument("--retrievers", default="bm25", help="as for the build (default bm25; 'none' is faster)")
    args = ap.parse_args(argv)
    sets = sorted({int(x) for x in args.sets.split(",")})
    workers = sorted({int(x) for x in args.workers.split(",")})
    if max(sets) > len(SDISTS):
        raise SystemExit(f"at most {len(SDISTS)} repositories")
    try:
        import psutil  # noqa: F401
    except ImportError:
        raise SystemExit("bench/scale.py needs psutil: .venv/bin/pip install psutil") from None
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    paths = fetch()
    # Largest first: every smaller set holds the biggest repositories of the larger ones.
    ordered = sorted(paths, key=lambda p: (-source_bytes(p), p.name))
    console = Console(width=None if sys.stdout.isatty() else 110)
    runs: list[Run] = []
    with Progress(console=console, transient=True) as bar:
        t = bar.add_task("builds", total=len(sets) * len(workers))
        for n in sets:
            for w in workers:
                bar.update(t, description=f"{n} repositories, {w} worker(s)")
                runs.append(measure(ordered[:n], w, args.retrievers))
                bar.advance(t)
    mib = 1024 * 1024
    table = Table(title=f"benchsmith build cceval (python, retrievers={args.retrievers}, {os.cpu_count()} CPUs)")
    for col in ("repos", "workers", "seconds", "peak MiB (tree)", "largest proc MiB", "procs", "examples"):
        table.add_column(col, justify="right")
    for r in runs:
        table.add_row(str(r.repos), str(r.workers), f"{r.seconds:.1f}", f"{r.peak_tree / mib:.0f}",
                      f"{r.peak_single / mib:.0f}", str(r.processes), str(r.examples))
    console.print(table)
    by = {(r.repos, r.workers): r for r in runs}
    summary = Table(title="figures")
    summary.add_column("figure")
    summary.add_column("value", justify="right")
    summary.add_column("target")
    if 1 in workers and 2 in workers:
        for n in sets:
            summary.add_row(f"speedup from 2 workers, {n} repositories",
                            f"{by[n, 1].seconds / by[n, 2].seconds:.2f}x", "")
    lo, hi = min(sets), max(sets)
    if lo != hi:
        for w in workers:
            ratio = by[hi, w].peak_tree / by[lo, w].peak_tree
            summary.add_row(f"peak memory {hi} / {lo} repositories, {w} worker(s)", f"{ratio:.2f}",
                            "< 1.5 " + ("ok" if ratio < 1.5 else "MISSED"))
        # With one repository a build runs inline (one process), whatever --workers says; from min(workers,
        # repositories) processes on, the count is what changes.  This row compares like with like.
        for w in workers:
            base = min((n for n in sets if n >= w and n != hi), default=None)
            if base is not None and base != lo:
                ratio = by[hi, w].peak_tree / by[base, w].peak_tree
                summary.add_row(f"peak memory {hi} / {base} repositories, {w} worker(s) (same process count)",
                                f"{ratio:.2f}", "< 1.5 " + ("ok" if ratio < 1.5 else "MISSED"))
    sizes = ", ".join(f"{p.name.removesuffix('.tar.gz')} ({source_bytes(p) // 1024} KiB)" for p in ordered[:max(sets)])
    console.print(summary)
    console.print(f"repositories, largest first: {sizes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
