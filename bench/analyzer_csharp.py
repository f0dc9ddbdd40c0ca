"""C# (mcs): the batched analyzer vs one compiler process per file, and vs two plain whole-tree mcs runs; the cost
of the down-level pass.

On pythonnet's C# sources (PyPI sdist: 3.0.5 by default, C# 9-10, which mcs reads through the down-level pass;
``--package pythonnet==2.5.2`` for the C# 7 one), times (medians of --repeat runs)
  batched        = CSharpAnalyzer.analyze with mcs as shipped: the ``--parse`` pass beside the tree-sitter scan
                   (put off, and here never run, where tree-sitter reads every file and the first compile shows
                   that mcs parsed them all),
                   placeholder (shim) rounds whose original- and stubbed-tree compiles run side by side (2
                   processes), a stubbed recompile only when stubs stopped mcs before the bodies, and the diff;
  reference      = the same analyzer with ``parallel=1, predict=False``: every step in turn, placeholders and
                   stub blockers learnt from extra compiles (the algorithm before the speed work; a blocker
                   found that way costs its file every stub, where batched leaves out only the blocking stubs
                   and finds a superset);
  batched unconfined = the same without the toolchain confinement (throwaway uid, namespaces, minimal root,
                   cgroup: about 0.1-0.2 s per mcs run); the floors run mcs bare, so this is the like-for-like
                   figure and ``confinement_s`` what the security layer adds;
  floor (floor_s) = THE BASELINE: two mcs runs, one after the other, over the final shimmed original tree and the
                   final stubbed tree, same flags and the same placeholder file.  Any correct mcs approach has to
                   compile both trees with the placeholders at least once, so this is the minimum; it includes
                   neither the scan, the parse pass, the discovery of the placeholders nor the diff;
  floor (2 at once) = the same two runs side by side: the stricter comparison, since batched uses two processes;
  floor (plain)  = two mcs runs over the unshimmed original and stubbed trees (mcs stops at the first unresolved
                   declaration and never reaches a method body, so this does less than any useful analysis);
  per-file       = for every file that gets stubs, one mcs process over the shimmed original tree and one over the
                   tree with only that file stubbed (mcs has no source path: a file only compiles with the whole
                   project); timed on a sample of files and extrapolated unless --all.
  downlevel pass = ``csharp.copy.prepare`` with the pass (and the incremental re-parse of the rewritten files the
                   scan needs) minus without it (the preprocessor and the tree-sitter parse it needs are in both),
                   over all files, the median of 5 interleaved differences; measured in every round beside the
                   analysis, and its share is the median of the per-round shares; ``preprocess`` = the preprocessor
                   alone; ``downlevel_pass_first_call_s`` = what the first repository of a process pays on top
                   (the pass's queries compiled).
Targets: per-file / batched >= 10x, batched / floor <= 1.5x, downlevel pass / batched <= 10%.  The figures are
taken in interleaved rounds (batched, floors, reference, the pass, then again), and each ratio is the median of its
per-round ratios, so that a machine whose load changes during the run (2 shared cores here) skews no figure
against another.

Reference check: the refs of ``batched`` must equal those of ``reference`` or be a superset of them (exit status 1
otherwise).  Before the speed work the analyzer found 926 refs on pythonnet 2.5.2, ``refs_sha256`` 66b5ce4f026cacea.

    python bench/analyzer_csharp.py [--package pythonnet==3.0.5] [--repeat N] [--sample N | --all]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import fetch_sdist  # noqa: E402  (needs ROOT on sys.path)
PACKAGE = "pythonnet==3.0.5"
PASS_ROUNDS = 5  # prepare() with and without the pass, interleaved, per measurement (cheap: about 0.5 s)


def sdist(spec: str) -> tuple[str, str]:
    name, _, version = spec.partition("==")
    return spec, f"{name}-{version}.tar.gz"


OPTIONS: list[str] = []  # the analyzer's own mcs options (read from its response file), so the floors match it


def _rsp(path: Path, files, out: Path) -> Path:
    from benchsmith.analyzers.csharp.compile import MCS_OPTIONS

    options = OPTIONS or list(MCS_OPTIONS)
    path.write_text("\n".join([*options, f"-out:{out}", *(f'"{f}"' for f in files)]) + "\n")
    return path


def _timed(fn, repeat: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), value


def refs_digest(refs) -> str:
    return hashlib.sha256(json.dumps([r.to_dict() for r in refs], sort_keys=True).encode()).hexdigest()[:16]


def pass_cost(snap, repeat: int) -> dict[str, float]:
    """Seconds of the preprocessor alone, and of preparing the copies without and with the down-level pass: the
    pass is the median of ``repeat`` interleaved differences (two medians apart would not cancel the machine's
    load)."""
    from benchsmith.analyzers.csharp.copy import prepare
    from benchsmith.analyzers.csharp.preprocess import preprocess
    from benchsmith.analyzers.csharp.project import ProjectIndex

    files = {f.path: f.text for f in snap.files}
    index = ProjectIndex(snap.configs)
    pre, _ = _timed(lambda: [preprocess(t, index.settings(p).defines) for p, t in files.items()], repeat)
    without, with_pass, prepared = [], [], None
    for _ in range(repeat):
        t, _ = _timed(lambda: prepare(files, snap.configs, downlevel=False), 1)
        without.append(t)
        t, prepared = _timed(lambda: prepare(files, snap.configs, downlevel=True), 1)
        with_pass.append(t)
    diff = statistics.median(b - a for a, b in zip(without, with_pass))
    return {"preprocess_s": pre, "prepare_without_pass_s": statistics.median(without),
            "downlevel_pass_s": max(0.0, diff),
            "files_downleveled": prepared.stats["files_downleveled"],
            "downlevel_edits": prepared.stats["downlevel_edits"]}


def first_pass_s(snap) -> float:
    """The pass's one-off cost in a fresh process (its queries compiled, its modules imported): what the first
    repository of a build pays on top of ``downlevel_pass_s``."""
    code = ("import sys, time, json; sys.path.insert(0, sys.argv[1]);"
            "from benchsmith.analyzers.csharp.copy import prepare;"
            "files, configs = json.load(sys.stdin); prepare(files, configs, downlevel=False);"
            "t = time.perf_counter(); prepare(files, configs, downlevel=True); a = time.perf_counter() - t;"
            "t = time.perf_counter(); prepare(files, configs, downlevel=True); b = time.perf_counter() - t;"
            "print(a - b)")
    import subprocess

    data = json.dumps([{f.path: f.text for f in snap.files}, snap.configs])
    out = subprocess.run([sys.executable, "-c", code, str(ROOT)], input=data, capture_output=True, text=True,
                         check=True)
    return max(0.0, float(out.stdout.strip()))


def bench(sample: int | None = 12, repeat: int = 3, package: str = PACKAGE) -> dict:
    from benchsmith.analyzers import AnalyzerOptions, get_analyzer
    from benchsmith.analyzers.csharp import Compiler
    from benchsmith.analyzers.csharp.plan import SHIM_FILE
    from benchsmith.files import snapshot, write_tree
    from benchsmith.records import RepoSpec
    from benchsmith.runner import run
    from benchsmith.sources import materialise

    tmp = Path(tempfile.mkdtemp(prefix="bench-csharp-"))
    co = materialise(RepoSpec(str(fetch_sdist(*sdist(package)))), tmp)

    def analyzer(parallel: int, predict: bool, confine: bool = True):
        a = get_analyzer("csharp", AnalyzerOptions(confine=confine))
        a.compiler, a.parallel, a.predict = Compiler.MCS, parallel, predict
        return a

    fast = analyzer(2, True)
    unconfined = analyzer(2, True, confine=False)  # the same work without the confinement layer (floors run bare)
    snap = snapshot(co.path, fast.extensions, tmp / "tree", repo_name="pythonnet")
    snap.configs = fast.read_configs(co.path)  # as the builder does
    work = tmp / "work"
    fast.tool_versions()  # `mcs --version` is cached per process: keep it out of the first timed run
    result = fast.analyze(snap, work)  # the final trees the floors compile
    # the files the analyzer compiled (its response file; files mcs could not parse stay on disk, unlisted)
    lines = (work / "original.rsp").read_text(encoding="utf-8").splitlines()
    shimmed = sorted(line[1:-1] for line in lines if line[:1] in "\"'" and line)
    OPTIONS[:] = [line for line in lines if line.startswith("-") and not line.startswith("-out:")]
    c_rsp, d_rsp = _rsp(tmp / "c.rsp", shimmed, tmp / "c.dll"), _rsp(tmp / "d.rsp", shimmed, tmp / "d.dll")
    all_files = sorted(f.path for f in snap.files)
    write_tree(tmp / "plain-stubbed", {f.path: f.text for f in snap.files})
    write_tree(tmp / "plain-stubbed", {p: (work / "stubbed" / p).read_text(encoding="utf-8")
                                       for p in all_files if (work / "stubbed" / p).exists()})
    a_rsp, b_rsp = _rsp(tmp / "a.rsp", all_files, tmp / "a.dll"), _rsp(tmp / "b.rsp", all_files, tmp / "b.dll")

    def compile_original():
        return run(["mcs", f"@{c_rsp}"], cwd=work / "original", timeout=3600)

    def compile_stubbed():
        return run(["mcs", f"@{d_rsp}"], cwd=work / "stubbed", timeout=3600)

    def side_by_side():
        with ThreadPoolExecutor(2) as pool:
            for f in [pool.submit(compile_original), pool.submit(compile_stubbed)]:
                f.result()

    # Interleaved, so that a change in the machine's load hits every figure of a round alike; the ratios are
    # medians of the per-round ratios.
    rows: list[dict[str, float]] = []
    ref_result = None
    for _ in range(repeat):
        row = {}
        row["batched"], result = _timed(lambda: fast.analyze(snap, work), 1)
        row["batched_unconfined"], _ = _timed(lambda: unconfined.analyze(snap, tmp / "work-unconfined"), 1)
        row["floor"], _ = _timed(lambda: (compile_original(), compile_stubbed()), 1)
        row["floor_2"], _ = _timed(side_by_side, 1)
        row["plain"], _ = _timed(lambda: (run(["mcs", f"@{a_rsp}"], cwd=snap.root, timeout=3600),
                                          run(["mcs", f"@{b_rsp}"], cwd=tmp / "plain-stubbed", timeout=3600)), 1)
        row["reference"], ref_result = _timed(lambda: analyzer(1, False).analyze(snap, tmp / "work-reference"), 1)
        # the pass in the same round as the analysis it is a share of
        row["pass"] = pass_cost(snap, PASS_ROUNDS)["downlevel_pass_s"]
        rows.append(row)

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    def ratio(num: str, den: str) -> float:
        return statistics.median(r[num] / r[den] for r in rows)

    batched, reference, floor, floor_parallel, floor_plain = (med(k) for k in
                                                              ("batched", "reference", "floor", "floor_2", "plain"))
    got = {(r.file, r.line, r.column, r.symbol, r.defining_file) for r in result.refs}
    want = {(r.file, r.line, r.column, r.symbol, r.defining_file) for r in ref_result.refs}
    check = "identical" if got == want else "superset" if got > want else \
        f"LOST {len(want - got)} refs of the reference"
    out = tmp / "out.dll"

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
    cost = pass_cost(snap, max(PASS_ROUNDS, repeat))
    return {"language": "csharp", "package": package, "files": len(snap.files),
            "compiled_files": result.stats.get("compiled_files"), "files_with_stubs": len(stubbed_paths),
            "rounds (medians of)": repeat,
            "batched_s": batched, "reference_s": reference, "per_file_s": per_file,
            "floor_s": floor, "floor_2_at_once_s": floor_parallel, "floor_plain_s": floor_plain,
            "speedup_vs_per_file": per_file / batched,
            "batched_over_floor": ratio("batched", "floor"),
            "batched_unconfined_s": med("batched_unconfined"),
            "batched_unconfined_over_floor": ratio("batched_unconfined", "floor"),
            "confinement_s": statistics.median(r["batched"] - r["batched_unconfined"] for r in rows),
            "batched_over_floor_2_at_once": ratio("batched", "floor_2"),
            "batched_over_plain_floor": ratio("batched", "plain"),
            "speedup_vs_reference": ratio("reference", "batched"),
            "per_file_measured_files": len(chosen),
            "shim_rounds": result.stats.get("shim_rounds"),
            "stubbed_recompiles": result.stats.get("stubbed_recompiles"),
            "reference_shim_rounds": ref_result.stats.get("shim_rounds"),
            "reference_stubbed_recompiles": ref_result.stats.get("stubbed_recompiles"),
            "refs": len(result.refs), "reference_refs": len(ref_result.refs),
            "refs_sha256": refs_digest(result.refs), "refs_vs_reference": check,
            **cost, "downlevel_pass_share": ratio("pass", "batched"),
            "downlevel_pass_first_call_s": first_pass_s(snap),
            "preprocess_share": cost["preprocess_s"] / batched,
            "targets": "per-file/batched >= 10x, batched/floor <= 1.5x, downlevel pass/batched <= 0.10, "
                       "refs identical or a superset"}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sample", type=int, default=12, help="files timed per-file (extrapolated to all)")
    p.add_argument("--all", action="store_true", help="time every file per-file (slow)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each timed step; medians are reported")
    p.add_argument("--package", default=PACKAGE, help="the PyPI sdist analysed (name==version)")
    args = p.parse_args()
    row = bench(None if args.all else args.sample, max(1, args.repeat), args.package)
    for k, v in row.items():
        print(f"{k:>30}: {v:.2f}" if isinstance(v, float) else f"{k:>30}: {v}")
    return 0 if row["refs_vs_reference"] in ("identical", "superset") else 1


if __name__ == "__main__":
    raise SystemExit(main())
