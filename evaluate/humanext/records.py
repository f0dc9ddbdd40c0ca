"""HumanExtension's records: a pair, and a prompt variant with its setting and perturbation.  They live on the
evaluation side because both the builder (``builders/humanext``) and the scorer read them, and the evaluation
packages never import a builder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchsmith.enums import StrEnum
from benchsmith.records import Record


@dataclass
class FunctionPair(Record):
    """One HumanExtension pair: an auxiliary function and a target function that can use it."""

    pair_id: str
    imports: list[str]  # import lines, e.g. "from typing import List"
    auxiliary_name: str
    auxiliary_source: str
    target_name: str
    target_signature: str  # def line + docstring, what the model sees
    target_reference: str  # full reference implementation of the target
    tests: str  # check(candidate) + call
    extra: dict[str, Any] = field(default_factory=dict)


class Setting(StrEnum):
    DIRECT = "direct"
    IRRELEVANT = "irrelevant"
    ORACLE = "oracle"
    STEP_BY_STEP = "step_by_step"
    MULTI_AUXILIARY = "multi_auxiliary"


class Perturbation(StrEnum):
    NONE = "none"
    RENAMED = "renamed"
    NO_DOCSTRING = "no_docstring"
    RENAMED_LOCALS = "renamed_locals"
    DOCSTRING_AS_COMMENTS = "docstring_as_comments"
    DEAD_CODE = "dead_code"


@dataclass
class PromptVariant(Record):
    task_id: str
    pair_id: str
    setting: Setting
    perturbation: Perturbation
    prompt: str
    stop: list[str]
    entry_point: str
    auxiliary_name: str
    tests: str
    imports: list[str]
    position: int | None = None
    num_auxiliary: int | None = None
    sample_index: int = 0
    seed: int | None = None
    stage: int | None = None  # step_by_step: 1 = write the auxiliary, 2 = template for the target
    template: str | None = None  # step_by_step stage 2: prompt with "{auxiliary}" to fill
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PromptVariant":
        rec = super().from_dict(data)
        rec.setting = Setting(rec.setting)
        rec.perturbation = Perturbation(rec.perturbation)
        return rec
