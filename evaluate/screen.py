"""The model predictability screen's rule and its model run: which examples a model completes from the in-file
prompt alone.

CrossCodeEval keeps only examples that need cross-file context; an example a code model gets exactly right
without it measures nothing about cross-file understanding.  ``predictable`` greedily completes each example's
in-file ``prompt`` (left-cut to the model's budget; no cross-file context) and returns an ``Exclusion`` for each
example whose completion matches the groundtruth.  Applying those drops to a finished split (its retrieval
variants, ``excluded.jsonl``, ``stats.json`` and every view derived from it) is the builder's job:
``benchsmith.builders.cceval.model_screen``, which is also the ``benchsmith screen`` command.

The match rule (``is_predictable``): let ``m`` be the number of lines of the groundtruth (trailing newlines
ignored; CrossCodeEval groundtruths are the rest of one statement, usually ``m = 1``).  Keep the first ``m`` lines
of the completion, i.e. cut it at the end of the statement's last line; remove trailing whitespace from every line
and surrounding whitespace from the whole; the example is predictable when the result equals the groundtruth
normalised the same way.  Single-line groundtruths are generated with stop sequence ``"\\n"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from benchsmith.records import Exclusion, Reason, Stage

REASON = Reason.PREDICTABLE_WITHOUT_CROSSFILE
RULE = ("first m lines of the greedy in-file completion (m = groundtruth lines), trailing whitespace per line and "
        "surrounding whitespace removed, equal to the groundtruth normalised the same way")
CHUNK = 64  # requests per backend call: the progress granularity


class ScreenError(ValueError):
    pass


# ------------------------------------------------------------------------------------------------------ the rule


def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.split("\n")).strip()


def groundtruth_lines(groundtruth: str) -> int:
    return max(1, len(groundtruth.rstrip("\n").split("\n")))


def cut_completion(completion: str, groundtruth: str) -> str:
    """The completion up to the end of the line where the groundtruth's statement ends."""
    return "\n".join(completion.split("\n")[: groundtruth_lines(groundtruth)])


def is_predictable(completion: str, groundtruth: str) -> bool:
    target = _normalise(groundtruth)
    return bool(target) and _normalise(cut_completion(completion, groundtruth)) == target


# ----------------------------------------------------------------------------------------------- the model run


@dataclass
class ScreenOptions:
    max_new_tokens: int = 50
    max_prompt_tokens: int | None = None
    model_label: str = ""
    backend_label: str = ""


@dataclass
class ScreenItem:
    """What the screen reads of one example."""

    task_id: str
    prompt: str
    groundtruth: str
    repository: str


def predictable(items: Sequence[ScreenItem], backend, opts: ScreenOptions,
                advance: Callable[[int], None] | None = None) -> list[Exclusion]:
    """Complete every item's in-file prompt with an open backend; one ``Exclusion`` per predictable item, in order."""
    from benchsmith.evaluate.generation.base import GenerationRequest
    from benchsmith.evaluate.generation.prompting import assemble

    tokenizer = backend.tokenizer()
    budget = opts.max_prompt_tokens
    if budget is None and tokenizer is not None and backend.context_window() is not None:
        budget = backend.context_window() - opts.max_new_tokens
    requests = []
    for e in items:
        text = assemble(e.prompt, None, tokenizer, budget).text
        stop = ("\n",) if groundtruth_lines(e.groundtruth) == 1 else ()
        requests.append(GenerationRequest(prompt=text, max_new_tokens=opts.max_new_tokens, stop=stop))
    completions: list[str] = []
    for start in range(0, len(requests), CHUNK):
        part = requests[start:start + CHUNK]
        completions.extend(r.texts[0] for r in backend.generate(part))
        if advance is not None:
            advance(len(part))

    new: list[Exclusion] = []
    for e, completion in zip(items, completions):
        if is_predictable(completion, e.groundtruth):
            shown = cut_completion(completion, e.groundtruth).strip()
            new.append(Exclusion(item_id=e.task_id, stage=Stage.SCREEN, reason=REASON, repository=e.repository,
                                 detail=f"{opts.backend_label}:{opts.model_label} completed it from the in-file "
                                        f"prompt alone: {shown[:200]!r}"))
    return new
