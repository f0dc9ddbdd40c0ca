"""``benchsmith score humanext``: execute HumanExtension predictions in the sandbox and report.

Inputs: ``--variants`` (the builder's ``variants.jsonl``, or a directory holding it) and one or more
``--predictions`` files (``{"task_id", "pred"}`` per line; several lines for a task are several samples; one file
per model, named by ``--model-name`` or the file stem).  Every prediction must name a known task and every scored
task needs predictions; anything else is an error naming the file, line and task id.

For each sample the program is ``program_prefix + completion + "\\n" + tests + "\\n"`` (the builder's contract,
:mod:`benchsmith.evaluate.humanext.program`), where the completion is cut at the variant's stop sequences; a
step_by_step stage-2 sample k is built on stage-1 sample k of the same model.  Stage-1 records (which write the
auxiliary) have no tests of their own and are not scored.  Verdicts are benchsmith's (``judge``): the tests'
candidate calls run in the sandbox behind a trusted harness, which sends back what the candidate returned as plain
data, and the assertions are evaluated here; the program never sees the expected values, and what it prints or how
it exits decides nothing.  Tests of a shape the judge does not parse fall back to the exit-status path (exit 0
*and* a marker printed after the tests); ``results.json`` counts both (``judging``).

Outputs in ``--output``: ``results.json`` (pass@k per setting, perturbation, position and implementation style,
per model), ``samples.jsonl`` (one line per sample: verdict, style), ``report.md`` and PNG figures.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchsmith.evaluate.humanext.inputs import (CODE_BLOCK_MODES, ReportInputError, load_predictions,
                                                 load_variants, model_names)
from benchsmith.layout import RESULTS_FILE, SAMPLES_FILE
from benchsmith.evaluate.humanext.passk import parse_ks
from benchsmith.evaluate.humanext.plan import Plan, execute, plan_model, scored_variants
from benchsmith.evaluate.humanext.results import model_results


# stderr kept per run (its tail: a traceback, MemoryError); each run is judged as it ends and its output
# dropped, so the scorer holds at most workers x (output_cap + STDERR_KEEP) of output at any time
STDERR_KEEP = 64 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variants", required=True, type=Path,
                        help="variants.jsonl from `benchsmith build humanext` (or the directory holding it)")
    parser.add_argument("--predictions", required=True, type=Path, action="append",
                        help='JSONL of {"task_id", "pred"} (several lines per task = samples); repeat for several '
                             "models")
    parser.add_argument("--model-name", action="append", default=None,
                        help="name of the model of the matching --predictions (default: the file stem)")
    parser.add_argument("--output", required=True, type=Path, help="report directory")
    parser.add_argument("--k", default="1,10", help="pass@k values (comma-separated; reported where n >= k)")
    parser.add_argument("--workers", type=int, default=None, help="parallel sandboxed programs (default: CPUs)")
    # --backend is the deprecated spelling: it means a toolchain or a model in other commands
    parser.add_argument("--sandbox", "--backend", dest="sandbox", choices=["local", "container"], default="local",
                        help="local: namespaces + throwaway uid + rlimits; container: the sandbox image "
                             "(--backend: deprecated alias)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per program (wall clock)")
    parser.add_argument("--memory-mb", type=int, default=1024, help="address-space limit per program")
    parser.add_argument("--code-blocks", choices=CODE_BLOCK_MODES, default="auto",
                        help="take ```python blocks from chat answers: auto = when a block defines the target")
    parser.add_argument("--include-invalid", action="store_true",
                        help="also score pairs whose human reference fails its own tests (reference_passes=false)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(stderr=True, quiet=getattr(args, "quiet", False))
    from benchsmith.evaluate.sandbox import SandboxUnavailable

    try:
        report = score(args, console)
    except ReportInputError as exc:
        print(f"benchsmith score humanext: {exc}", file=sys.stderr)
        return 2
    except SandboxUnavailable as exc:
        print(f"benchsmith score humanext: the sandbox cannot run here: {exc} (try --sandbox container)",
              file=sys.stderr)
        return 3
    console.print(f"wrote {report}")
    return 0


def score(args: argparse.Namespace, console=None) -> Path:
    from benchsmith.jsonio import write_json, write_jsonl

    from benchsmith.evaluate.sandbox import Sandbox

    try:
        ks = parse_ks(args.k)
    except ValueError as exc:
        raise ReportInputError(str(exc)) from None
    variants = load_variants(args.variants)
    by_id = {v.task_id: v for v in variants}
    scored, dropped = scored_variants(variants, args.include_invalid)
    if not scored:
        raise ReportInputError(f"{args.variants}: no scorable variants (all stage-1 or invalid pairs)")
    names = model_names(args.predictions, args.model_name)
    known = set(by_id)
    plan = Plan()
    for path, name in zip(args.predictions, names):
        preds = load_predictions(path, name, known)
        plan_model(plan, preds, scored, by_id, args.code_blocks)
    # nothing the programs could use to pass without computing: the variants (tests, references), the
    # predictions and the report directory are hidden inside the sandbox along with benchsmith's own files
    hidden = [args.variants, args.output, *args.predictions]
    # room on the results channel for return values of a few MB (judge.RECORD_LIMIT each); prints beyond it
    # still end the run as output_limit
    sandbox = Sandbox(backend=args.sandbox, timeout=args.timeout, memory_mb=args.memory_mb, workers=args.workers,
                      hide=hidden, output_cap=4 * 1024 * 1024, stderr_keep=STDERR_KEEP)
    try:
        if console is not None:
            console.print(f"executing {len(plan.programs)} distinct programs for {len(plan.samples)} samples "
                          f"({sandbox.isolation.describe()})")
        samples = execute(plan, sandbox, progress=not getattr(args, "quiet", False))
        isolation = sandbox.isolation.describe()
    finally:
        sandbox.close()
    per_model = {name: model_results([s for s in samples if s.model == name], ks) for name in names}
    results = {
        "k": ks,
        "models": per_model,
        "variants": {"scored": len(scored), "excluded_invalid_pairs": dropped, "total": len(variants)},
        "judging": plan.judging(),
        "sandbox": {"backend": args.sandbox, "isolation": isolation, "timeout_s": args.timeout,
                    "memory_mb": args.memory_mb},
        "problem_unit": "pair (samples of all variants of a pair within a group are pooled)",
    }
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / RESULTS_FILE, results)
    write_jsonl(out / SAMPLES_FILE, [s.to_dict() for s in samples])
    from benchsmith.evaluate.humanext.report import write_report

    return write_report(out, results, ks)
