"""Example filters, each with a named reason (datatrove style: ``check`` returns None or (reason, detail))."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.pipeline import Filter
from benchsmith.records import Reason, Stage
from benchsmith.builders.cceval.records import CompletionExample


@dataclass(frozen=True)
class ExampleFilterConfig:
    min_tokens: int = 3  # groundtruth lexical tokens (tree-sitter leaves, comments excluded), as the paper's 3-30
    max_tokens: int = 30
    min_prompt_lines: int = 5  # non-empty lines before the cursor
    dedup: bool = True
    leakage: bool = True
    scorable: bool = True  # drop what the scorers can never give full marks (off only to measure the problem)
    # --cursor released: keep what the scorers cannot give full marks, as the released benchmark has such
    # examples, declared in ``metadata.unscorable_modes`` (ScorableGroundtruth)
    as_released: bool = False


class GroundtruthLength(Filter[CompletionExample]):
    stage = Stage.EXAMPLE_FILTER

    def __init__(self, cfg: ExampleFilterConfig, counter=None) -> None:
        super().__init__(counter)
        self.cfg = cfg

    def check(self, ex: CompletionExample):
        n = ex.metadata.groundtruth_tokens
        if n is None:
            n = len(ex.groundtruth.split())
        if n < self.cfg.min_tokens:
            return Reason.GROUNDTRUTH_TOO_SHORT, f"{n} tokens < {self.cfg.min_tokens}"
        if n > self.cfg.max_tokens:
            return Reason.GROUNDTRUTH_TOO_LONG, f"{n} tokens > {self.cfg.max_tokens}"
        return None


class PromptLength(Filter[CompletionExample]):
    stage = Stage.EXAMPLE_FILTER

    def __init__(self, cfg: ExampleFilterConfig, counter=None) -> None:
        super().__init__(counter)
        self.cfg = cfg

    def check(self, ex: CompletionExample):
        n = sum(1 for line in ex.prompt.splitlines() if line.strip())
        if n < self.cfg.min_prompt_lines:
            return Reason.PROMPT_TOO_SHORT, f"{n} non-empty prompt lines < {self.cfg.min_prompt_lines}"
        return None


class DuplicateGroundtruth(Filter[CompletionExample]):
    """Within a repository, the first example (in file/position order) with a given groundtruth is kept."""

    stage = Stage.EXAMPLE_FILTER

    def __init__(self, counter=None) -> None:
        super().__init__(counter)
        self.seen: dict[tuple[str, str], str] = {}

    def check(self, ex: CompletionExample):
        key = (ex.metadata.repository, " ".join(ex.groundtruth.split()))
        first = self.seen.setdefault(key, ex.task_id)
        if first != ex.task_id:
            return Reason.DUPLICATE_GROUNDTRUTH, f"same groundtruth as {first}"
        return None


class GroundtruthInPrompt(Filter[CompletionExample]):
    """Leakage: the exact groundtruth already appears in the prompt, so copying solves it."""

    stage = Stage.EXAMPLE_FILTER

    def check(self, ex: CompletionExample):
        gt = ex.groundtruth.strip()
        if gt and gt in ex.prompt:
            return Reason.GROUNDTRUTH_IN_PROMPT, "groundtruth appears verbatim in the prompt"
        return None


class ScorableGroundtruth(Filter[CompletionExample]):
    """An exact copy of the groundtruth must score EM 100 / ES 100 in compat and default mode; the cases and why
    they are dropped rather than cut are in ``scorability``.  Before the dedup filter, so that dropping an
    unscorable example never takes a scorable twin with it.

    With ``as_released`` (``--cursor released``) such an example is kept and the modes it falls short in are
    declared in ``metadata.unscorable_modes``: the released groundtruths run to the end of the first line whose last
    token is ``;``/``{``/``}``, so the released benchmark holds ``return [S.ok, { p: f(x) }];``, which its own
    scorer cuts at the first ``{``, and object-literal lines running on to the next such line, which no scorer
    that ends a prediction at its statement can match; a build that is to reproduce the benchmark must hold them
    too.  The self-consistency figures count them apart from violations.  A scorer that failed on the text is
    never an exception."""

    stage = Stage.EXAMPLE_FILTER

    def __init__(self, counter=None, as_released: bool = False) -> None:
        super().__init__(counter)
        self.as_released = as_released

    def check(self, ex: CompletionExample):
        from benchsmith.builders.cceval import scorability

        scores = ex.self_scores = scorability.self_scores(ex.prompt, ex.groundtruth, scorability.example_language(ex))
        bad = [s for s in scores if not s.ok]
        if not bad:
            return None
        if self.as_released and not any(s.failed for s in bad):
            ex.metadata.unscorable_modes = [s.mode.value for s in bad]
            return None
        return Reason.UNSCORABLE_GROUNDTRUTH, scorability.describe(bad[0], ex.groundtruth)


def default_filters(cfg: ExampleFilterConfig, counter) -> list[Filter]:
    steps: list[Filter] = [GroundtruthLength(cfg, counter), PromptLength(cfg, counter)]
    if cfg.scorable:
        steps.append(ScorableGroundtruth(counter, cfg.as_released))
    if cfg.leakage:
        steps.append(GroundtruthInPrompt(counter))
    if cfg.dedup:
        steps.append(DuplicateGroundtruth(counter))
    return steps
