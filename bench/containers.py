"""Container path vs local path: how much a toolchain container costs.  Target: under 2x for a whole repository.

Measures, with the images already built (they are built first if missing; that time is not counted):

1. a whole-repository cross-file build (`benchsmith build cceval --lang python`, i.e. pylint over the original and
   the stubbed tree) on real PyPI sdists with `--toolchain-backend local` and with `--toolchain-backend <engine>`,
   and checks that both produce byte-identical examples;
2. pylint alone over the same tree (one run), local vs container;
3. the fixed cost of one container start: `<tool> --version` in every image vs on the host.

Run: `.venv/bin/python bench/containers.py [--runs 3] [--sdist requests==2.32.3 ...]`.  Needs an engine
(docker or podman); with CI's bootstrapped base, export BENCHSMITH_BASE_IMAGE as scripts/ci_containers.sh prints.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from benchsmith.containers import build_all, detect_engine
from benchsmith.runner import ToolchainBackend, ContainerSpec, Mount, repo_root, run

CACHE = Path(os.environ.get("BENCHSMITH_TEST_CACHE", Path.home() / ".cache" / "benchsmith-tests"))
DEFAULT_SDISTS = ("requests==2.32.3", "flask==3.0.3")
PYLINT_ARGS = ["--disable=all", "--enable=E0401,E0611,E1101,E0602", "--output-format=json", "--score=n",
               "--recursive=y", "--persistent=n", "."]
console = Console()


def fetch_sdist(spec: str) -> Path:
    name, ver = spec.split("==")
    target = CACHE / f"{name}-{ver}.tar.gz"
    if not target.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                        "-d", str(CACHE), spec], check=True)
    return target


def timed(fn, runs: int) -> tuple[float, object]:
    times, last = [], None
    for _ in range(runs):
        start = time.monotonic()
        last = fn()
        times.append(time.monotonic() - start)
    return statistics.median(times), last


def timed_pair(local, box, runs: int) -> tuple[float, object, float, object]:
    """Alternate the two paths run by run, so a busy machine slows both alike."""
    t_local, t_box, out_local, out_box = [], [], None, None
    for _ in range(runs):
        t, out_local = timed(local, 1)
        t_local.append(t)
        t, out_box = timed(box, 1)
        t_box.append(t)
    return statistics.median(t_local), out_local, statistics.median(t_box), out_box


def build_cceval(sdist: Path, out: Path, backend: str) -> bytes:
    shutil.rmtree(out, ignore_errors=True)
    cli = Path(sys.executable).with_name("benchsmith")
    subprocess.run([str(cli), "build", "cceval", "--lang", "python", "--repo", str(sdist), "--output", str(out),
                    "--retrievers", "none", "--no-card", "-q", "--workers", "1", "--toolchain-backend", backend],
                   check=True, capture_output=True)
    return (out / "python" / "line_completion.jsonl").read_bytes()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="median of this many runs per figure")
    parser.add_argument("--sdist", nargs="+", default=list(DEFAULT_SDISTS))
    parser.add_argument("--engine", choices=[ToolchainBackend.DOCKER.value, ToolchainBackend.PODMAN.value])
    args = parser.parse_args()
    engine = detect_engine(args.engine)
    if engine is None:
        console.print("no container engine answers; nothing to measure (docs/containers.md)")
        return 1
    with console.status("building missing images (not timed)"):
        tags = {name: item.tag for name, item in build_all(engine).items()}

    table = Table(title=f"container ({engine.value}) vs local, median of {args.runs}")
    for col in ("what", "local s", "container s", "ratio", "note"):
        table.add_column(col)
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="bench-containers-") as tmp:
        tmpdir = Path(tmp)
        for spec in args.sdist:
            sdist = fetch_sdist(spec)
            with console.status(f"{spec}: cross-file build, local and {engine.value}"):
                t_local, local_out, t_box, box_out = timed_pair(
                    lambda: build_cceval(sdist, tmpdir / "local", "local"),
                    lambda: build_cceval(sdist, tmpdir / "box", engine.value), args.runs)
            same = "identical examples" if local_out == box_out else "EXAMPLES DIFFER"
            n = len(local_out.splitlines())
            table.add_row(f"build cceval {spec}", f"{t_local:.2f}", f"{t_box:.2f}", f"{t_box / t_local:.2f}x",
                          f"{n} examples, {same}")
            worst = max(worst, t_box / t_local)

            src = tmpdir / "src"
            shutil.rmtree(src, ignore_errors=True)
            with tarfile.open(sdist) as tf:
                tf.extractall(src, filter="data")
            tree = next(src.iterdir())
            files = sum(1 for _ in tree.rglob("*.py"))
            with console.status(f"{spec}: one pylint run, local and {engine.value}"):
                box = ContainerSpec(engine=engine, image=tags["pylint"], mounts=(Mount(str(tree), "/src"),),
                                    workdir="/src")
                t_lp, _, t_bp, _ = timed_pair(
                    lambda: run([sys.executable, "-m", "pylint", *PYLINT_ARGS], cwd=tree, env={"PYTHONPATH": ""},
                                timeout=900),
                    lambda: run(["pylint", *PYLINT_ARGS], container=box, timeout=900), args.runs)
            table.add_row(f"pylint {spec}", f"{t_lp:.2f}", f"{t_bp:.2f}", f"{t_bp / t_lp:.2f}x", f"{files} .py files")

    local_tools = {"pylint": [sys.executable, "-m", "pylint", "--version"], "javac": ["javac", "-version"],
                   "tsc": [str(repo_root() / ".toolchains/node/node_modules/.bin/tsc"), "--version"],
                   "csharp": ["mcs", "--version"], "sandbox": [sys.executable, "-c", "pass"]}
    in_image = {"pylint": ["pylint", "--version"], "javac": ["javac", "-version"], "tsc": ["tsc", "--version"],
                "csharp": ["mcs", "--version"], "sandbox": ["python3", "-c", "pass"]}
    for name, argv in in_image.items():
        box = ContainerSpec(engine=engine, image=tags[name])
        local = local_tools[name]
        if shutil.which(local[0]) or Path(local[0]).is_file():
            t_local, _, t_box, res = timed_pair(lambda: run(local, timeout=120),
                                                lambda: run(argv, container=box, timeout=120), args.runs)
            cells = (f"{t_local:.2f}", f"{t_box:.2f}", f"+{t_box - t_local:.2f}s")
        else:
            t_box, res = timed(lambda: run(argv, container=box, timeout=120), args.runs)
            cells = ("-", f"{t_box:.2f}", "-")
        table.add_row(f"start: {' '.join(argv)}", *cells, "ok" if res.ok else f"exit {res.returncode}")
    console.print(table)
    verdict = "meets" if worst < 2.0 else "MISSES"
    console.print(f"whole-repository build, worst container/local ratio: {worst:.2f}x ({verdict} the < 2x target)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
