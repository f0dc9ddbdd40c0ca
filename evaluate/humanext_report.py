"""``benchsmith score humanext``: execute HumanExtension predictions in the sandbox and report.

Inputs: ``--variants`` (the builder's ``variants.jsonl``, or a directory holding it) and one or more
``--predictions`` files (``{"task_id", "pred"}`` per line; several lines for a task are several samples; one file
per model, named by ``--model-name`` or the file stem).  Every prediction must name a known task and every scored
task needs predictions; anything else is an error naming the file, line and task id.

For each sample the program is ``program_prefix + completion + "\\n" + tests`` (the builder's contract, see
``benchsmith.builders.humanext.prompts``), where the completion is cut at the variant's stop sequences; a
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
import hashlib
import math
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from benchsmith.records import Perturbation, PromptVariant, Setting

from benchsmith.evaluate.judge import TestPlan, harness_program, judge, try_plan
from benchsmith.evaluate.passk import PassAtK, aggregate, parse_ks
from benchsmith.evaluate.predictions import Prediction, Wording, read_predictions
from benchsmith.evaluate.style import Style, classify_source
from benchsmith.evaluate.generation.truncation import defines_function, extract_code, remove_function, strip_prompt, truncate

SETTING_ORDER = [Setting.DIRECT, Setting.IRRELEVANT, Setting.ORACLE, Setting.STEP_BY_STEP, Setting.MULTI_AUXILIARY]
SETTING_LABEL = {
    Setting.DIRECT: "Direct",
    Setting.IRRELEVANT: "Irrelevant",
    Setting.ORACLE: "Oracle",
    Setting.STEP_BY_STEP: "Step-by-step",
    Setting.MULTI_AUXILIARY: "Multi-aux",
}
CODE_BLOCK_MODES = ("auto", "never", "always")


class ReportInputError(ValueError):
    """Bad variants/predictions input; the message names the file, line, task id and what to fix."""


# ------------------------------------------------------------------------------------------------------ inputs


@dataclass
class ModelPredictions:
    name: str
    path: Path
    by_task: dict[str, list[Prediction]]


def variants_path(path: Path) -> Path:
    if path.is_file():
        return path
    for cand in (path / "variants.jsonl", path / "humanext" / "variants.jsonl"):
        if cand.is_file():
            return cand
    raise ReportInputError(f"{path}: no variants.jsonl here (expected the file, or a directory holding it "
                           "or humanext/variants.jsonl as written by `benchsmith build humanext`)")


def load_variants(path: Path) -> list[PromptVariant]:
    from benchsmith.jsonio import iter_jsonl

    src = variants_path(path)
    out: list[PromptVariant] = []
    seen: dict[str, int] = {}
    for line in iter_jsonl(src, error=ReportInputError):
        lineno, obj = line.lineno, line.obj
        where = f"{src}:{lineno}"
        missing = [k for k in ("task_id", "pair_id", "setting", "prompt", "stop", "entry_point",
                               "auxiliary_name", "tests") if k not in obj]
        if missing:
            raise ReportInputError(f"{where}: variant {obj.get('task_id', '?')!r} lacks {', '.join(missing)}")
        try:
            v = PromptVariant.from_dict(obj)
        except (TypeError, ValueError) as exc:
            raise ReportInputError(f"{where}: variant {obj.get('task_id')!r}: {exc}") from None
        if not isinstance(v.stop, list) or not all(isinstance(s, str) for s in v.stop):
            raise ReportInputError(f"{where}: variant {v.task_id!r}: stop must be a list of strings")
        if v.task_id in seen:
            raise ReportInputError(f"{where}: duplicate task_id {v.task_id!r} (first on line {seen[v.task_id]})")
        seen[v.task_id] = lineno
        out.append(v)
    if not out:
        raise ReportInputError(f"{src}: no variants")
    return out


PREDICTION_WORDING = Wording(
    missing_task_id="missing or non-string task_id (a non-empty string)",
    missing_pred="task {task_id!r}: missing or non-string pred (no 'pred' key)",
    pred_not_str="task {task_id!r}: missing or non-string pred (got {type})",
    unknown_task="task {task_id!r} is not in the variants file (predictions for another build?)",
)


def load_predictions(path: Path, name: str, known: set[str]) -> ModelPredictions:
    by_task = read_predictions(path, known, PREDICTION_WORDING, ReportInputError)
    if not by_task:
        raise ReportInputError(f"{path}: no predictions")
    return ModelPredictions(name, path, by_task)


def model_names(paths: Sequence[Path], names: Sequence[str] | None) -> list[str]:
    names = list(names or [])
    if len(names) > len(paths):
        raise ReportInputError(f"{len(names)} --model-name for {len(paths)} --predictions files")
    out = names + [p.stem for p in paths[len(names):]]
    dup = [n for n, c in Counter(out).items() if c > 1]
    if dup:
        raise ReportInputError(f"model name {dup[0]!r} is used twice; give each file its own --model-name")
    return out


# ------------------------------------------------------------------------------------------------ programs


@dataclass(frozen=True)
class Assembled:
    program: str  # what runs
    source: str  # the code without tests (for the style)
    completion: str  # truncated / extracted completion


def _fill_auxiliary(template: str, auxiliary_code: str) -> str:
    from benchsmith.builders.humanext.prompts import fill_auxiliary

    return fill_auxiliary(template, auxiliary_code)


def completion_code(v: PromptVariant, raw: str, code_blocks: str) -> tuple[str, bool]:
    """(code, is_full_definition): the truncated completion, or an extracted fenced block.

    ``auto`` uses a fenced block only when one defines the entry point (a chat model that answered with prose
    and a whole function); otherwise the text continues the prompt and is cut at the stop sequences."""
    text = strip_prompt(raw, v.prompt)
    if code_blocks != "never":
        code = extract_code(text, v.entry_point)
        if code is not text and (code_blocks == "always" or defines_function(code, v.entry_point)):
            return code, defines_function(code, v.entry_point)
    return truncate(text, v.stop), False


def assemble(v: PromptVariant, raw: str, code_blocks: str = "auto",
             stage1: PromptVariant | None = None, stage1_raw: str | None = None) -> Assembled:
    if v.stage == 2:
        if stage1 is None or stage1_raw is None:
            raise ReportInputError(f"task {v.task_id!r}: a step_by_step stage-2 sample needs its stage-1 record "
                                   f"{v.extra.get('stage1_task_id')!r} and predictions for it")
        aux_code, _ = completion_code(stage1, stage1_raw, code_blocks)
        s1_prefix = stage1.extra.get("program_prefix", stage1.prompt)
        template = v.extra.get("program_template") or v.template or v.prompt
        prefix = _fill_auxiliary(template, s1_prefix + aux_code)
    else:
        prefix = v.extra.get("program_prefix", v.prompt)
    code, full = completion_code(v, raw, code_blocks)
    source = remove_function(prefix, v.entry_point) + code if full else prefix + code
    program = source + "\n" + v.tests + "\n"
    return Assembled(program=program, source=source, completion=code)


def with_marker(program: str, marker: str) -> str:
    """Append the print of ``marker``: reached only when the tests ran to the end."""
    return program + f"\nprint({marker!r})\n"


def sample_marker(model: str, task_id: str, index: int) -> str:
    """A per-sample token the model never saw: deterministic (same inputs -> same files), not guessable."""
    digest = hashlib.sha256(f"benchsmith|{model}|{task_id}|{index}".encode()).hexdigest()[:24]
    return f"__benchsmith_tests_done_{digest}__"


# ------------------------------------------------------------------------------------------------- scoring


@dataclass
class SampleResult:
    model: str
    task_id: str
    pair_id: str
    setting: Setting
    perturbation: Perturbation
    position: int | None
    sample: int
    verdict: str
    passed: bool
    style: Style
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model, "task_id": self.task_id, "pair_id": self.pair_id, "setting": self.setting.value,
            "perturbation": self.perturbation.value, "position": self.position, "sample": self.sample,
            "verdict": self.verdict, "passed": self.passed, "style": self.style.value, "detail": self.detail,
        }


@dataclass
class Plan:
    """Which programs to run for which samples: identical programs (greedy decoding repeats itself) run once.

    A program whose tests ``judge.plan_tests`` understands runs as the judge's harness (the candidate is called
    on each input, benchsmith compares); any other runs as before, passing when it exits 0 after printing the
    marker of the first sample that produced it (``markers``), and is counted in ``exit_status_reasons``."""

    programs: list[str] = field(default_factory=list)
    markers: list[str | None] = field(default_factory=list)
    test_plans: list[TestPlan | None] = field(default_factory=list)
    index: dict[str, int] = field(default_factory=dict)
    samples: list[tuple[SampleResult, int]] = field(default_factory=list)  # (result shell, program #)
    exit_status_reasons: Counter = field(default_factory=Counter)

    def add(self, result: SampleResult, program: str, marker: str, source: str | None = None,
            test_plan: TestPlan | None = None) -> None:
        if program not in self.index:
            self.index[program] = len(self.programs)
            if test_plan is not None and source is not None:
                self.programs.append(harness_program(source, test_plan))
                self.markers.append(None)
            else:
                self.programs.append(with_marker(program, marker))
                self.markers.append(marker)
            self.test_plans.append(test_plan)
        self.samples.append((result, self.index[program]))

    def judging(self) -> dict[str, Any]:
        judged = sum(self.test_plans[i] is not None for _, i in self.samples)
        return {"judged_in_parent": judged, "exit_status": len(self.samples) - judged,
                "exit_status_reasons": dict(sorted(self.exit_status_reasons.items()))}


def scored_variants(variants: Sequence[PromptVariant], include_invalid: bool) -> tuple[list[PromptVariant], int]:
    out, dropped = [], 0
    for v in variants:
        if v.stage == 1 or not v.tests.strip():
            continue
        if not include_invalid and v.extra.get("reference_passes") is False:
            dropped += 1
            continue
        out.append(v)
    return out, dropped


def plan_model(plan: Plan, model: ModelPredictions, variants: Sequence[PromptVariant],
               by_id: dict[str, PromptVariant], code_blocks: str) -> None:
    missing = [v.task_id for v in variants if v.task_id not in model.by_task]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise ReportInputError(f"{model.path}: no predictions for task {', '.join(map(repr, missing[:3]))}{more} "
                               f"(model {model.name!r}); every scored task needs at least one sample")
    test_plans: dict[str, tuple[TestPlan | None, str | None]] = {}
    for v in variants:
        if v.tests not in test_plans:
            test_plans[v.tests] = try_plan(v.tests, v.entry_point)
        test_plan, why = test_plans[v.tests]
        stage1 = None
        s1_preds: list[Prediction] = []
        if v.stage == 2:
            s1_id = v.extra.get("stage1_task_id", "")
            stage1 = by_id.get(s1_id)
            s1_preds = model.by_task.get(s1_id, []) if stage1 is not None else []
            if stage1 is None or len(s1_preds) < len(model.by_task[v.task_id]):
                raise ReportInputError(
                    f"{model.path}: task {v.task_id!r} has {len(model.by_task[v.task_id])} samples but its stage-1 "
                    f"task {s1_id!r} has {len(s1_preds)}; stage-2 sample k is built on stage-1 sample k")
        for k, pred in enumerate(model.by_task[v.task_id]):
            marker = sample_marker(model.name, v.task_id, k)
            try:
                asm = assemble(v, pred.pred, code_blocks, stage1, s1_preds[k].pred if stage1 else None)
            except ValueError as exc:
                raise ReportInputError(f"{model.path}:{pred.line}: task {v.task_id!r}: {exc}") from None
            style = classify_source(asm.source, v.entry_point, v.auxiliary_name).style
            shell = SampleResult(model=model.name, task_id=v.task_id, pair_id=v.pair_id, setting=v.setting,
                                 perturbation=v.perturbation, position=v.position, sample=k, verdict="",
                                 passed=False, style=style)
            plan.add(shell, asm.program, marker, asm.source, test_plan)
            if test_plan is None:
                plan.exit_status_reasons[why or "unknown"] += 1


def execute(plan: Plan, sandbox, progress: bool) -> list[SampleResult]:
    results = sandbox.run_many(plan.programs, progress=progress)
    out: list[SampleResult] = []
    for shell, idx in plan.samples:
        res = results[idx]
        test_plan = plan.test_plans[idx]
        if test_plan is not None:
            j = judge(test_plan, res)
            shell.verdict, shell.passed, shell.detail = j.verdict.value, j.passed, j.detail
        else:
            lines = res.stdout.rstrip("\n").splitlines()
            reached = bool(lines) and lines[-1] == plan.markers[idx]
            verdict, detail = res.verdict.value, res.detail
            if res.passed and not reached:
                verdict, detail = "failed", "exited with status 0 before the tests finished"
            shell.verdict, shell.passed, shell.detail = verdict, res.passed and reached, detail
        out.append(shell)
    return out


# ----------------------------------------------------------------------------------------------- aggregates


def _pk(row: dict[int, PassAtK]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in sorted(row.items()):
        out[f"pass@{k}"] = round(v.value, 6)
    if row:
        first = next(iter(row.values()))
        out["problems"] = first.problems
        out["n_min"] = first.n_min
    return out


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    if len(xs) < 3 or len(xs) != len(ys):
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if sx == 0 or sy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy)


def model_results(samples: Sequence[SampleResult], ks: Sequence[int]) -> dict[str, Any]:
    """All aggregates for one model.  A problem is a pair: the samples of all variants of a pair in a group
    are that pair's samples (so irrelevant/renamed variants with several draws count once per pair)."""
    settings = aggregate(((s.setting, s.pair_id, s.passed) for s in samples
                          if s.setting is not Setting.ORACLE or s.perturbation is Perturbation.NONE), ks)
    perturbations = aggregate(((s.perturbation, s.pair_id, s.passed) for s in samples
                               if s.setting is Setting.ORACLE), ks)
    multi = [s for s in samples if s.setting is Setting.MULTI_AUXILIARY and s.position is not None]
    positions = aggregate(((s.position, s.pair_id, s.passed) for s in multi), ks)
    out: dict[str, Any] = {
        "samples": len(samples),
        "verdicts": dict(sorted(Counter(s.verdict for s in samples).items())),
        "settings": {st.value: _pk(settings[st]) for st in SETTING_ORDER if st in settings},
        "perturbations": {p.value: _pk(perturbations[p]) for p in Perturbation if p in perturbations},
    }
    direct = settings.get(Setting.DIRECT, {}).get(1)
    rel: dict[str, float | None] = {}
    for st in SETTING_ORDER:
        if st in settings and 1 in settings[st] and st is not Setting.DIRECT:
            rel[st.value] = (round((settings[st][1].value - direct.value) / direct.value, 6)
                             if direct is not None and direct.value > 0 else None)
    out["relative_to_direct"] = rel
    pos_rows: dict[str, Any] = {}
    xs, ys = [], []
    for pos in sorted(positions):
        at = [s for s in multi if s.position == pos]
        bb = sum(s.style is Style.BLACK_BOX for s in at) / len(at)
        row = _pk(positions[pos])
        row["black_box_share"] = round(bb, 6)
        row["samples"] = len(at)
        pos_rows[str(pos)] = row
        if 1 in positions[pos]:
            xs.append(positions[pos][1].value)
            ys.append(bb)
    out["positions"] = pos_rows
    r = pearson(xs, ys)
    out["position_correlation"] = {"pearson_r": None if r is None else round(r, 6), "positions": len(xs),
                                   "between": "pass@1 and black-box share per position"}
    out["styles"] = _style_table(samples)
    out["styles_by_setting"] = {st.value: _style_table([s for s in samples if s.setting is st])
                                for st in SETTING_ORDER if any(s.setting is st for s in samples)}
    return out


def _style_table(samples: Sequence[SampleResult]) -> dict[str, Any]:
    table = {}
    total = len(samples)
    for style in Style:
        of = [s for s in samples if s.style is style]
        if of:
            table[style.value] = {"samples": len(of), "share": round(len(of) / total, 6),
                                  "pass@1": round(sum(s.passed for s in of) / len(of), 6)}
    return table


# ------------------------------------------------------------------------------------------------------- CLI


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
    parser.add_argument("--backend", choices=["local", "container"], default="local",
                        help="local: namespaces + throwaway uid + rlimits; container: the sandbox image")
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
        print(f"benchsmith score humanext: the sandbox cannot run here: {exc} (try --backend container)",
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
    sandbox = Sandbox(backend=args.backend, timeout=args.timeout, memory_mb=args.memory_mb, workers=args.workers,
                      hide=hidden, output_cap=4 * 1024 * 1024)
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
        "sandbox": {"backend": args.backend, "isolation": isolation, "timeout_s": args.timeout,
                    "memory_mb": args.memory_mb},
        "problem_unit": "pair (samples of all variants of a pair within a group are pooled)",
    }
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "results.json", results)
    write_jsonl(out / "samples.jsonl", [s.to_dict() for s in samples])
    from benchsmith.evaluate.report_humanext import write_report

    return write_report(out, results, ks)
