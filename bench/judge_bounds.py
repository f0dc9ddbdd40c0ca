"""What hostile model output costs the HumanExtension scorer's own process (issue 22), before and after.

Each row times one class on this machine, single-threaded, in the parent (the sandboxed run is not timed):

* code extraction of a completion of blank lines inside a fence (the former ``^\\s*`` pattern rescanned every
  following blank line from each line start);
* decoding a forged record: a set of ints that all hash to 0 (the former decoder built it: quadratic);
* a lambda that rebuilds a large set per element (now charged one step per element and refused);
* a sum of unit fractions whose denominator grows with every term (now refused past 2**16 bits);
* style classification of a 100k-term expression (the former classifier raised RecursionError: no report);
* the CrossCodeEval scorer's Python statement cut on 30k blank lines after an unfinished statement;
* output held by ``score humanext`` for programs that print megabytes: before, every run's stdout/stderr until
  judging; now each run is judged as it ends and only a 64 KiB tail of stderr is kept.

    .venv/bin/python bench/judge_bounds.py [--former] [--programs 24]

``--former`` also times the former algorithms (the extraction alone takes tens of seconds); for the sum of
fractions, which the judge did not accept before, the unguarded builtin ``sum``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
import time
import tracemalloc


def timed(fn) -> tuple[float, object]:
    start = time.process_time()
    try:
        out = fn()
    except Exception as exc:  # noqa: BLE001 - what it raised is the result
        out = f"{type(exc).__name__}: {str(exc)[:80]}"
    return time.process_time() - start, out


def former_extract(text: str, entry: str) -> bool:
    return re.search(rf"^\s*(async\s+)?def\s+{re.escape(entry)}\s*\(", text, re.MULTILINE) is not None


def main(argv: list[str] | None = None) -> int:
    from benchsmith.evaluate.generation.truncation import extract_code
    from benchsmith.evaluate.humanext import judge_values as JV
    from benchsmith.evaluate.humanext.style import classify_source

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--former", action="store_true", help="also time the former algorithms")
    ap.add_argument("--programs", type=int, default=24, help="programs printing 3 MiB each, for the held output")
    args = ap.parse_args(argv)
    rows: list[tuple[str, float, float | None, object]] = []

    blank = "```python\n" + "\n" * 30_000 + "```\n"
    now, _ = timed(lambda: extract_code(blank, "f"))
    before = timed(lambda: former_extract(blank[10:-4], "f"))[0] if args.former else None
    rows.append(("extract_code, 30 KB of blank lines", now, before, "same blocks"))

    values = [k * (2 ** 61 - 1) for k in range(1, 38_000)]  # a 1 MB record: the per-value limit
    record = json.loads(json.dumps({"set": values}))
    now, out = timed(lambda: JV.decode(record))
    before = timed(lambda: set(values))[0] if args.former else None
    rows.append(("decode a set of 37,999 colliding ints", now, before, out))

    big = list(range(20_000))
    expr = ast.parse("all(map(lambda x: x in set(_bs_call_0), _bs_call_0))", mode="eval").body
    now, out = timed(lambda: JV.SafeEval({0: big}.__getitem__).eval(expr))
    rows.append(("set() of 20k elements per element", now, None, out))

    import fractions

    primes = [p for p in range(2, 500_000) if all(p % d for d in range(2, int(p ** 0.5) + 1))][:38_000]
    unit_fractions = [fractions.Fraction(1, p) for p in primes]
    expr = ast.parse("sum(_bs_call_0) == 1", mode="eval").body
    now, out = timed(lambda: JV.SafeEval({0: unit_fractions}.__getitem__).eval(expr))
    before = timed(lambda: sum(unit_fractions))[0] if args.former else None
    rows.append(("sum of 1/p over 38,000 primes", now, before, out))

    deep = "def f(x):\n    return " + "+".join(["x"] * 100_000) + "\n"
    now, out = timed(lambda: classify_source(deep, "f", "g").style.value)
    rows.append(("style of a 100k-term expression", now, None, out))

    from benchsmith.evaluate.cceval.scoring import Language, Mode, score_example

    for mode in Mode:  # the CrossCodeEval scorer's Python statement cut (before: 16-25 s default, >10 min compat)
        completion = "join(\n" + "\n" * 30_000
        now, out = timed(lambda: score_example("t", "import os\ny = os.path.", "join(x)\n", completion,
                                                Language.PYTHON, mode).es)
        rows.append((f"cceval {mode.value}, 30k blank lines", now, None, f"es {out}"))

    print(f"{'class':<42}{'now s':>8}{'former s':>10}   result")
    for name, now, before, out in rows:
        print(f"{name:<42}{now:>8.3f}{'' if before is None else f'{before:.3f}':>10}   {out}")
    held(args.programs)
    return 0


def held(n: int) -> None:
    """Peak Python memory of the scorer's results while n programs each print 3 MiB to stderr."""
    from benchsmith.evaluate.humanext.command import STDERR_KEEP
    from benchsmith.evaluate.sandbox import Sandbox

    program = "import sys\nsys.stderr.write('x' * (3 << 20))\n"
    for label, keep, reduce in (("every result held (former)", None, None),
                                ("judged as each ends, 64 KiB tail", STDERR_KEEP, lambda i, r: r.verdict.value)):
        with Sandbox(timeout=30, workers=2, output_cap=4 << 20, stderr_keep=keep) as sb:
            sb.run("pass")  # the fork server's start is not what is measured
            tracemalloc.start()
            out = sb.run_many([program] * n, reduce=reduce)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
        print(f"{n} programs x 3 MiB of stderr, {label:<34} peak {peak / 2**20:8.1f} MiB"
              f"   ({len(out)} results)")


if __name__ == "__main__":
    sys.exit(main())
