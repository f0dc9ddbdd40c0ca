"""Example filters, each with a named reason (datatrove style: ``check`` returns None or (reason, detail))."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.pipeline import Filter
from benchsmith.records import CompletionExample, Reason, Stage


@dataclass(frozen=True)
class ExampleFilterConfig:
    min_tokens: int = 3  # groundtruth lexical tokens (tree-sitter leaves, comments excluded), as the paper's 3-30
    max_tokens: int = 30
    min_prompt_lines: int = 5  # non-empty lines before the cursor
    dedup: bool = True
    leakage: bool = True
    scorable: bool = True  # drop what the scorers can never give full marks (off only to measure the problem)


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
    unscorable example never takes a scorable twin with it."""

    stage = Stage.EXAMPLE_FILTER

    def check(self, ex: CompletionExample):
        from benchsmith.builders.cceval import scorability

        bad = scorability.unscorable(ex.prompt, ex.groundtruth, scorability.example_language(ex))
        if bad is not None:
            return Reason.UNSCORABLE_GROUNDTRUTH, scorability.describe(bad, ex.groundtruth)
        return None


def default_filters(cfg: ExampleFilterConfig, counter) -> list[Filter]:
    steps: list[Filter] = [GroundtruthLength(cfg, counter), PromptLength(cfg, counter)]
    if cfg.scorable:
        steps.append(ScorableGroundtruth(counter))
    if cfg.leakage:
        steps.append(GroundtruthInPrompt(counter))
    if cfg.dedup:
        steps.append(DuplicateGroundtruth(counter))
    return steps
