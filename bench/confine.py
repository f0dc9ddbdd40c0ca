"""What toolchain confinement costs: each analyzer on a real package, confined (the default) and unconfined
(``AnalyzerOptions(confine=False)``), alternating runs, medians reported.  Also the fixed cost of one confined
start (a trivial program through ``runner.run(confine=...)`` vs unconfined).

  python    werkzeug 3.0.3 sdist (the bench/analyzer.py package)
  java      JPype 1.7.1 sdist (bench/analyzer_java.py)
  go        the fixture module tests/fixtures/go (no network needed)
  typescript / csharp: the fixtures under tests/fixtures

    python bench/confine.py [--lang python,java,go,typescript,csharp] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import fetch_sdist  # noqa: E402

SOURCES = {
    "python": ("sdist", ("werkzeug==3.0.3", "werkzeug-3.0.3.tar.gz")),
    "java": ("sdist", ("JPype1==1.7.1", "jpype1-1.7.1.tar.gz")),
    "go": ("dir", ROOT / "tests" / "fixtures" / "go"),
    "typescript": ("dir", ROOT / "tests" / "fixtures" / "typescript" / "project"),
    "csharp": ("dir", ROOT / "tests" / "fixtures" / "csharp"),
}


def _source(lang: str, tmp: Path) -> Path:
    from benchsmith.records import RepoSpec
    from benchsmith.sources import materialise

    kind, what = SOURCES[lang]
    if kind == "sdist":
        return materialise(RepoSpec(str(fetch_sdist(*what))), tmp / "src").path
    return Path(what)


def bench_lang(lang: str, repeat: int) -> dict:
    from benchsmith.analyzers import AnalyzerOptions, get_analyzer
    from benchsmith.files import snapshot

    tmp = Path(tempfile.mkdtemp(prefix=f"bench-confine-{lang}-"))
    try:
        src = _source(lang, tmp)
        times: dict[bool, list[float]] = {True: [], False: []}
        refs: dict[bool, int] = {}
        for i in range(repeat):
            for on in (True, False):
                analyzer = get_analyzer(lang, AnalyzerOptions(confine=on))
                snap = snapshot(src, analyzer.extensions, tmp / f"tree-{i}-{on}", repo_name=lang)
                snap.configs = analyzer.read_configs(src)
                work = tmp / f"work-{i}-{on}"
                work.mkdir()
                if i == 0 and hasattr(analyzer, "_driver_dir"):
                    analyzer._driver_dir(tmp / "driver")  # one-off per JDK, outside the timing
                t0 = time.perf_counter()
                result = analyzer.analyze(snap, work)
                times[on].append(time.perf_counter() - t0)
                refs[on] = len(result.refs)
        on, off = statistics.median(times[True]), statistics.median(times[False])
        return {"language": lang, "files": len(snap.files), "refs_confined": refs[True], "refs_unconfined": refs[False],
                "confined_s": on, "unconfined_s": off, "overhead": on / off - 1}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def bench_start(repeat: int = 20) -> dict:
    from benchsmith import confine, runner

    argv = [sys.executable, "-I", "-S", "-c", "pass"]
    conf = confine.Confinement(read=tuple(confine.python_paths()))
    res = {}
    for name, kw in (("confined", {"confine": conf}), ("unconfined", {})):
        ts = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            r = runner.run(argv, timeout=60, **kw)
            ts.append(time.perf_counter() - t0)
            assert r.returncode == 0, r.stderr
        res[name] = statistics.median(ts)
    return res


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lang", default="python,java,go,typescript,csharp")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    from benchsmith import runner

    print(runner.probe_confinement().describe())
    start = bench_start()
    print(f"one trivial program: confined {start['confined'] * 1000:.0f} ms, unconfined "
          f"{start['unconfined'] * 1000:.0f} ms (fixed cost {1000 * (start['confined'] - start['unconfined']):.0f} ms "
          "per toolchain run)")
    for lang in [x.strip() for x in args.lang.split(",") if x.strip()]:
        try:
            r = bench_lang(lang, args.repeat)
        except Exception as exc:  # noqa: BLE001 - a missing toolchain skips its row
            print(f"{lang}: skipped ({type(exc).__name__}: {exc})")
            continue
        same = "same refs" if r["refs_confined"] == r["refs_unconfined"] else "REFS DIFFER"
        print(f"{lang:<10} files {r['files']:>4}  confined {r['confined_s']:6.2f}s  unconfined {r['unconfined_s']:6.2f}s"
              f"  overhead {100 * r['overhead']:+5.1f}%  refs {r['refs_confined']} ({same})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
