"""The HumanExtension contract between the builder and the scorer: how one completion of one prompt variant
becomes the program that runs.  Both ``benchsmith build humanext`` (its reference check) and ``benchsmith score
humanext`` import it, so the two cannot drift apart::

    program = prefix + completion + "\\n" + variant.tests + "\\n"

``prefix`` is ``extra["program_prefix"]`` (for base-model prompts the prompt itself).  A step-by-step stage-2
variant holds a template instead (``extra["program_template"]``) with :data:`AUXILIARY_MARKER` where the model's
own auxiliary goes: the stage-1 program prefix plus the stage-1 completion.  ``tests`` already ends with the call
that runs it, so nothing else is appended.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.evaluate.humanext.records import PromptVariant

AUXILIARY_MARKER = "{auxiliary}"


def fill_auxiliary(template: str, auxiliary_code: str) -> str:
    """Stage 2 of step_by_step: put the model's auxiliary (stage-1 program_prefix + completion) into a template."""
    if template.count(AUXILIARY_MARKER) != 1:
        raise ValueError(f"a step_by_step template holds {AUXILIARY_MARKER} exactly once")
    return template.replace(AUXILIARY_MARKER, auxiliary_code.rstrip(), 1)


@dataclass(frozen=True)
class VariantProgram:
    source: str  # prefix + completion: the code without the tests (what the style classifier reads)
    tests: str

    @property
    def text(self) -> str:
        """What runs."""
        return self.source + "\n" + self.tests + "\n"


def program_prefix(variant: PromptVariant, stage1: PromptVariant | None = None,
                   stage1_completion: str | None = None) -> str:
    """The code the completion continues; a stage-2 variant needs its stage-1 variant and that one's completion."""
    if variant.stage != 2:
        return variant.extra.get("program_prefix", variant.prompt)
    if stage1 is None or stage1_completion is None:
        raise ValueError("a step_by_step stage-2 program needs its stage-1 variant and completion")
    template = variant.extra.get("program_template") or variant.template or variant.prompt
    return fill_auxiliary(template, stage1.extra.get("program_prefix", stage1.prompt) + stage1_completion)


def assemble_program(prefix: str, completion: str, tests: str) -> VariantProgram:
    return VariantProgram(source=prefix + completion, tests=tests)
