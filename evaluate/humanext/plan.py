"""The execution plan of ``benchsmith score humanext``: each sample's program (assembled by the builder<->scorer
contract, :mod:`benchsmith.evaluate.humanext.program`), deduplicated across samples, judged or run in the sandbox."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from benchsmith.evaluate.generation.truncation import (defines_function, extract_code, remove_function,
                                                       strip_prompt, truncate)
from benchsmith.evaluate.humanext.inputs import ModelPredictions, ReportInputError
from benchsmith.evaluate.humanext.judge import TestPlan, bounded_text, harness_program, judge, try_plan
from benchsmith.evaluate.sandbox import ExecResult, Verdict
from benchsmith.evaluate.predictions import Prediction
from benchsmith.evaluate.humanext.style import Style, classify_source
from benchsmith.evaluate.humanext.program import assemble_program, program_prefix
from benchsmith.evaluate.humanext.records import Perturbation, PromptVariant, Setting


@dataclass(frozen=True)
class Assembled:
    program: str  # what runs
    source: str  # the code without tests (for the style)
    completion: str  # truncated / extracted completion


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
    stage1_code = None
    if v.stage == 2:
        if stage1 is None or stage1_raw is None:
            raise ReportInputError(f"task {v.task_id!r}: a step_by_step stage-2 sample needs its stage-1 record "
                                   f"{v.extra.get('stage1_task_id')!r} and predictions for it")
        stage1_code, _ = completion_code(stage1, stage1_raw, code_blocks)
    prefix = program_prefix(v, stage1, stage1_code)
    code, full = completion_code(v, raw, code_blocks)
    program = assemble_program(remove_function(prefix, v.entry_point) if full else prefix, code, v.tests)
    return Assembled(program=program.text, source=program.source, completion=code)


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


@dataclass(frozen=True)
class Outcome:
    """What is kept of one program's run: its verdict (the output itself is dropped as soon as it is judged)."""

    verdict: str
    passed: bool
    detail: str


def outcome(plan: Plan, idx: int, res: ExecResult) -> Outcome:
    test_plan = plan.test_plans[idx]
    if test_plan is not None:
        j = judge(test_plan, res)  # never raises: a broken judgment is a judge_error verdict
        return Outcome(j.verdict.value, j.passed, j.detail)
    try:
        lines = res.stdout.rstrip("\n").splitlines()
        reached = bool(lines) and lines[-1] == plan.markers[idx]
        verdict, detail = res.verdict.value, res.detail
        if res.passed and not reached:
            verdict, detail = Verdict.FAILED.value, "exited with status 0 before the tests finished"
        return Outcome(verdict, res.passed and reached, bounded_text(detail, 500))
    except Exception as exc:  # noqa: BLE001 - one sample must never lose the report
        why = f"judging failed: {type(exc).__name__}: {exc}"
        return Outcome(Verdict.JUDGE_ERROR.value, False, bounded_text(why, 500))


def execute(plan: Plan, sandbox, progress: bool) -> list[SampleResult]:
    """Run every distinct program and judge it as soon as it ends (in the sandbox's worker threads), so at most
    one output per worker is held at a time, whatever the number of samples."""
    outcomes: list[Outcome] = sandbox.run_many(plan.programs, progress=progress,
                                               reduce=lambda idx, res: outcome(plan, idx, res))
    out: list[SampleResult] = []
    for shell, idx in plan.samples:
        o = outcomes[idx]
        shell.verdict, shell.passed, shell.detail = o.verdict, o.passed, o.detail
        out.append(shell)
    return out
