"""The HumanExtension build's validation steps, dropping through the pipeline's one channel (``DropLedger``).

* ``ValidatePairs``: each pair's reference runs against its own tests in the sandbox; a pair whose reference fails
  is dropped as ``validation`` / ``reference_fails_tests`` (kept, flagged, with ``--keep-invalid``).
* ``RenderVariants``: each pair's prompt variants; a pair that one of them cannot be made for (a rename with no
  free name, a target holding the step-by-step marker, too few distractors unrelated to it) is dropped whole as
  ``render`` / ``pair_unrenderable``, so that every setting keeps the same pairs.
* ``CheckVariants`` (``--check-variants``): each variant's program runs with the human reference completion; a
  variant of a valid pair that fails is a rendering bug or a clashing distractor and is dropped with the same
  reason (variants of pairs kept with ``--keep-invalid`` fail by construction and stay).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Sequence

from benchsmith.pipeline import DropLedger, Step
from benchsmith.records import Reason, Stage
from benchsmith.evaluate.humanext.records import PromptVariant

from .perturb import PerturbationError
from .render import PairFormatError
from .settings import PairContext, variants_for_pair
from .sources import Pair
from .validate import PairCheck, validate_pairs


class ValidatePairs(Step[Pair]):
    stage = Stage.VALIDATION
    tally_kept = False  # the build's stats count pairs themselves ("pairs"); the ledger carries the drops

    def __init__(self, sandbox, keep_invalid: bool, progress: bool, counter: DropLedger) -> None:
        super().__init__(counter)
        self.sandbox, self.keep_invalid, self.progress = sandbox, keep_invalid, progress
        self.checks: list[PairCheck] = []

    def run(self, items: Iterable[Pair]) -> Iterator[Pair]:
        pairs = list(items)
        self.checks = validate_pairs(pairs, self.sandbox, progress=self.progress)
        for pair, check in zip(pairs, self.checks):
            if check.passed or self.keep_invalid:
                yield pair
            else:
                self.drop(pair.pair_id, Reason.REFERENCE_FAILS_TESTS, check.failure())


class RenderVariants(Step[Pair]):
    """Pairs in, their prompt variants out (all of a pair's, or none of them)."""

    stage = Stage.RENDER
    tally_kept = False

    def __init__(self, context: Callable[[Pair], PairContext], counter: DropLedger) -> None:
        super().__init__(counter)
        self.context = context

    def run(self, items: Iterable[Pair]) -> Iterator[PromptVariant]:  # type: ignore[override]
        seen: dict[str, str] = {}
        for pair in items:
            try:
                produced = list(variants_for_pair(pair, self.context(pair)))
            except (PerturbationError, PairFormatError) as exc:
                self.drop(pair.pair_id, Reason.PAIR_UNRENDERABLE, str(exc))
                continue
            for v in produced:
                if v.task_id in seen:  # unique pair ids make unique task ids: a rendering bug otherwise
                    raise RuntimeError(f"duplicate task id {v.task_id!r} from {pair.pair_id} and {seen[v.task_id]}")
                seen[v.task_id] = pair.pair_id
            yield from produced


class CheckVariants(Step[PromptVariant]):
    stage = Stage.VALIDATION
    tally_kept = False

    def __init__(self, check: Callable[[Sequence[PromptVariant]], list[dict[str, Any]]], counter: DropLedger) -> None:
        super().__init__(counter)
        self.check = check
        self.failures: list[dict[str, Any]] = []

    def run(self, items: Iterable[PromptVariant]) -> Iterator[PromptVariant]:
        variants = list(items)
        self.failures = self.check(variants)
        errors = {f["task_id"]: f["error"] for f in self.failures}
        for v in variants:
            if v.task_id in errors and v.extra.get("reference_passes"):
                self.drop(v.task_id, Reason.REFERENCE_FAILS_TESTS, f"variant check: {errors[v.task_id]}")
            else:
                yield v
