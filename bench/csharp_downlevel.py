"""The C# down-level pass on its own: what it costs next to the whole mcs analysis.

On pythonnet's runtime sources (PyPI sdist, 3.0.5 by default: C# 9-10, 148 files), medians of --repeat
interleaved rounds, CPU seconds of this process (``time.process_time``: the machine is shared, wall time follows
the load) and wall seconds:
  parse        = tree-sitter parse of every file (the analyzer does it anyway; the pass gets these trees);
  globals      = ``extract_global_usings`` over every file;
  downlevel    = ``downlevel(text, tree)`` over every file;
  reparse_full = a fresh tree-sitter parse of each rewritten text;
  reparse_inc  = ``DownlevelResult.reparse`` (incremental, from the original tree) of each rewritten text;
  analysis     = one ``CSharpAnalyzer.analyze`` of the same tree with mcs (wall; it runs mcs processes).
Target (issue 15): the pass (globals + downlevel + reparse_inc) <= 10% of the analysis.

    python bench/csharp_downlevel.py [--package pythonnet==3.0.5] [--repeat N] [--no-analysis]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fetch_sdist  # noqa: E402


def _timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c0, time.perf_counter() - w0, out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--package", default="pythonnet==3.0.5")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--no-analysis", action="store_true")
    args = p.parse_args()

    from tree_sitter import Parser

    from benchsmith.analyzers.csharp.downlevel import downlevel, extract_global_usings
    from benchsmith import treesitter
    from benchsmith.sources import extract_archive

    name, version = args.package.split("==")
    archive = fetch_sdist(args.package, f"{name}-{version}.tar.gz")
    work = Path(tempfile.mkdtemp(prefix="bench-downlevel-"))
    root = extract_archive(archive, work / "src")
    runtime = next(d for d in root.rglob("runtime") if d.is_dir() and d.parent.name == "src")
    files = sorted(runtime.rglob("*.cs"))
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
    parser = Parser(treesitter.language("tree_sitter_c_sharp"))

    rounds: dict[str, list[tuple[float, float]]] = {}
    results = None
    for _ in range(args.repeat):
        c, w, trees = _timed(lambda: [parser.parse(t.encode("utf-8")) for t in texts])
        rounds.setdefault("parse", []).append((c, w))
        c, w, _g = _timed(lambda: [extract_global_usings(t, tr) for t, tr in zip(texts, trees)])
        rounds.setdefault("globals", []).append((c, w))
        c, w, results = _timed(lambda: [downlevel(t, tr) for t, tr in zip(texts, trees)])
        rounds.setdefault("downlevel", []).append((c, w))
        changed = [(r, tr) for r, tr in zip(results, trees) if r.changed]
        c, w, _f = _timed(lambda: [parser.parse(r.text.encode("utf-8")) for r, _ in changed])
        rounds.setdefault("reparse_full", []).append((c, w))
        c, w, _i = _timed(lambda: [r.reparse(tr, parser) for r, tr in changed])
        rounds.setdefault("reparse_inc", []).append((c, w))

    med = {k: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v)) for k, v in rounds.items()}
    print(f"{args.package} {runtime.relative_to(root)}: {len(files)} files, "
          f"{sum(r.changed for r in results)} rewritten, {sum(len(r.edits) for r in results)} edits, "
          f"{sum(len(r.unsupported) for r in results)} unsupported")
    for k, (c, w) in med.items():
        print(f"  {k:13s} cpu {c:7.3f} s   wall {w:7.3f} s")
    pass_cpu = med["globals"][0] + med["downlevel"][0] + med["reparse_inc"][0]
    pass_wall = med["globals"][1] + med["downlevel"][1] + med["reparse_inc"][1]
    print(f"  pass (globals + downlevel + reparse_inc): cpu {pass_cpu:.3f} s, wall {pass_wall:.3f} s")
    if not args.no_analysis:
        from benchsmith.analyzers import get_analyzer
        from benchsmith.analyzers.csharp import Compiler
        from benchsmith.files import snapshot

        analyzer = get_analyzer("csharp")
        analyzer.compiler = Compiler.MCS
        snap = snapshot(runtime, analyzer.extensions, work / "snap", repo_name="runtime")
        _, wall, res = _timed(lambda: analyzer.analyze(snap, work / "analysis"))
        print(f"  analysis      wall {wall:7.3f} s  ({len(res.refs)} refs)")
        print(f"  pass / analysis (wall): {pass_wall / wall:.1%}   target <= 10%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
