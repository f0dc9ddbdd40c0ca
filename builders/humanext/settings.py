"""From one pair to its prompt variants, setting by setting.

Per pair (S = ``samples``, N = ``num_auxiliary``, P = the configured perturbations):

* ``direct``: 1 variant, the target's signature alone.
* ``irrelevant``: S variants, each with a different random pool function (never the pair's own auxiliary, nor
  one that defines a name the pair uses).
* ``oracle``: the human auxiliary; one variant per perturbation in P, S of them for the random ones (``renamed``,
  ``dead_code``), 1 for the others.
* ``step_by_step``: 2 records: stage 1 (the auxiliary's signature) and stage 2 (a template into which the model's
  auxiliary goes before the target's signature).
* ``multi_auxiliary``: S draws of N-1 distractors; for each draw, N variants with the relevant auxiliary at
  position 0..N-1 (the same distractors in the same order, so only the position changes); imports merged, sorted.

Randomness comes from ``random.Random`` seeded with a string of (seed, pair id, setting[, perturbation]), so a
variant's content does not depend on which other settings or pairs were built; the samples of one pair are
distinct draws (without replacement) from that one generator.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from benchsmith.evaluate.humanext.records import Perturbation, PromptVariant, Setting

from .perturb import RANDOM_PERTURBATIONS, AuxiliaryView, forbidden_names, perturb
from .prompts import AUXILIARY_MARKER, Formatter, Function
from .render import PairFormatError
from .sources import Pair, PoolFunction

ALL_SETTINGS: tuple[Setting, ...] = tuple(Setting)
ALL_PERTURBATIONS: tuple[Perturbation, ...] = tuple(Perturbation)


@dataclass(frozen=True)
class VariantConfig:
    settings: tuple[Setting, ...] = ALL_SETTINGS
    perturbations: tuple[Perturbation, ...] = ALL_PERTURBATIONS
    samples: int = 1
    num_auxiliary: int = 9
    seed: int = 0

    def __post_init__(self) -> None:
        if self.samples < 1:
            raise ValueError("--samples must be at least 1")
        if self.num_auxiliary < 2:
            raise ValueError("--num-auxiliary must be at least 2 (the relevant function and one distractor)")

    def pool_needed(self) -> int:
        """How many pool functions the settings draw for one pair (distractors, irrelevant functions)."""
        need = 0
        if Setting.IRRELEVANT in self.settings:
            need = max(need, self.samples)
        if Setting.MULTI_AUXILIARY in self.settings:
            need = max(need, self.num_auxiliary - 1)
        return need

    def expected_per_pair(self) -> dict[str, int]:
        """How many records each setting yields for one pair (what stats.json must show)."""
        out: dict[str, int] = {}
        for s in self.settings:
            if s is Setting.DIRECT:
                out[s.value] = 1
            elif s is Setting.IRRELEVANT:
                out[s.value] = self.samples
            elif s is Setting.ORACLE:
                out[s.value] = sum(self.samples if p in RANDOM_PERTURBATIONS else 1 for p in self.perturbations)
            elif s is Setting.STEP_BY_STEP:
                out[s.value] = 2
            elif s is Setting.MULTI_AUXILIARY:
                out[s.value] = self.samples * self.num_auxiliary
        return out


@dataclass
class PairContext:
    """What variant generation needs beyond the pair: the pool, rename candidates, the prompt formatter."""

    pool: Sequence[PoolFunction]
    rename_pool: Sequence[str]
    formatter: Formatter
    config: VariantConfig
    extra: dict = field(default_factory=dict)  # copied into every record's extra (e.g. reference_passes)


def task_id(pair_id: str, setting: Setting, perturbation: Perturbation, position: int | None, sample: int,
            stage: int | None = None) -> str:
    pos = "p-" if position is None else f"p{position}"
    tid = f"{pair_id}/{setting.value}/{perturbation.value}/{pos}/s{sample}"
    return tid if stage is None else f"{tid}/stage{stage}"


def _rng(config: VariantConfig, *parts: object) -> random.Random:
    return random.Random("|".join([str(config.seed), *map(str, parts)]))


def eligible_distractors(pair: Pair, pool: Sequence[PoolFunction]) -> list[PoolFunction]:
    """Pool functions that can stand next to this pair without touching anything it uses."""
    taken = forbidden_names(pair)
    return [f for f in pool if f.name != pair.auxiliary.name and not (f.defined_names & taken)]


def variants_for_pair(pair: Pair, ctx: PairContext) -> Iterator[PromptVariant]:
    cfg = ctx.config
    for setting in cfg.settings:
        if setting is Setting.DIRECT:
            yield _variant(pair, ctx, setting, Perturbation.NONE, [], pair.imports, None, 0)
        elif setting is Setting.IRRELEVANT:
            yield from _irrelevant(pair, ctx)
        elif setting is Setting.ORACLE:
            for kind in cfg.perturbations:
                for sample in range(cfg.samples if kind in RANDOM_PERTURBATIONS else 1):
                    view = perturb(pair, kind, _rng(cfg, pair.pair_id, setting.value, kind.value),
                                   ctx.rename_pool, sample)
                    yield _variant(pair, ctx, setting, kind, [_aux_function(pair, view)], pair.imports, None,
                                   sample, view=view)
        elif setting is Setting.STEP_BY_STEP:
            yield from _step_by_step(pair, ctx)
        elif setting is Setting.MULTI_AUXILIARY:
            yield from _multi(pair, ctx)


def _aux_function(pair: Pair, view: AuxiliaryView) -> Function:
    decl = pair.auxiliary.declaration(view.target_mapping)
    return Function(view.code, decl, view.docstring_text)


def _target_function(pair: Pair) -> Function:
    return Function(pair.target.signature(), pair.target.declaration(), pair.target.docstring_text)


def _pool_function(fn: PoolFunction) -> Function:
    import ast

    node = next(n for n in ast.parse(fn.source).body if getattr(n, "name", None) == fn.name)
    doc = ast.get_docstring(node)
    node.body = [ast.Pass()]
    node.decorator_list = []
    head = ast.unparse(node).split("\n")[0]  # a one-line quote for instructions only, never emitted code
    decl = head[len("def "):].rstrip(":")
    return Function(fn.source, decl, doc)


def _merged_imports(pair: Pair, extra: Sequence[PoolFunction]) -> tuple[str, ...]:
    lines = set(pair.imports)
    for f in extra:
        lines.update(f.imports)
    return tuple(sorted(lines))


def _sample_pool(pair: Pair, ctx: PairContext, k: int, rng: random.Random, setting: Setting) -> list[PoolFunction]:
    eligible = eligible_distractors(pair, ctx.pool)
    if len(eligible) < k:
        raise PairFormatError(pair.pair_id, "pool", f"{setting.value} needs {k} pool functions unrelated to this "
                              f"pair but only {len(eligible)} exist; use a larger --pool or fewer samples")
    return rng.sample(eligible, k)


def _irrelevant(pair: Pair, ctx: PairContext) -> Iterator[PromptVariant]:
    cfg = ctx.config
    picks = _sample_pool(pair, ctx, cfg.samples, _rng(cfg, pair.pair_id, Setting.IRRELEVANT.value), Setting.IRRELEVANT)
    for sample, fn in enumerate(picks):
        yield _variant(pair, ctx, Setting.IRRELEVANT, Perturbation.NONE, [_pool_function(fn)],
                       _merged_imports(pair, [fn]), None, sample, context_names=[fn.name],
                       pool_ids=[fn.task_id])


def _multi(pair: Pair, ctx: PairContext) -> Iterator[PromptVariant]:
    cfg = ctx.config
    n = cfg.num_auxiliary
    aux = perturb(pair, Perturbation.NONE, random.Random(0), ctx.rename_pool)
    for sample in range(cfg.samples):
        rng = _rng(cfg, pair.pair_id, Setting.MULTI_AUXILIARY.value, sample)
        distractors = _sample_pool(pair, ctx, n - 1, rng, Setting.MULTI_AUXILIARY)
        imports = _merged_imports(pair, distractors)
        for position in range(n):
            funcs = [_pool_function(f) for f in distractors]
            funcs.insert(position, _aux_function(pair, aux))
            names = [f.name for f in distractors]
            names.insert(position, pair.auxiliary.name)
            yield _variant(pair, ctx, Setting.MULTI_AUXILIARY, Perturbation.NONE, funcs, imports, position, sample,
                           view=aux, context_names=names, pool_ids=[f.task_id for f in distractors],
                           num_auxiliary=n)


def _step_by_step(pair: Pair, ctx: PairContext) -> Iterator[PromptVariant]:
    fmt = ctx.formatter
    aux = pair.auxiliary
    aux_fn = Function(aux.signature(), aux.declaration(), aux.docstring_text)
    stage1 = fmt.stage1(pair.imports, aux_fn)
    template, program_template = fmt.stage2(aux_fn, _target_function(pair))
    if template.count(AUXILIARY_MARKER) != 1:
        raise PairFormatError(pair.pair_id, "target_function", f"its text contains {AUXILIARY_MARKER}, the "
                              "step_by_step marker; the stage-2 template would be ambiguous")
    id1 = task_id(pair.pair_id, Setting.STEP_BY_STEP, Perturbation.NONE, None, 0, stage=1)
    id2 = task_id(pair.pair_id, Setting.STEP_BY_STEP, Perturbation.NONE, None, 0, stage=2)
    base_extra = {**ctx.extra, "prompt_style": fmt.style.value, "target_name": pair.target.name}
    yield PromptVariant(
        task_id=id1, pair_id=pair.pair_id, setting=Setting.STEP_BY_STEP, perturbation=Perturbation.NONE,
        prompt=stage1.prompt, stop=stage1.stop, entry_point=aux.name, auxiliary_name=aux.name, tests="",
        imports=list(pair.imports), sample_index=0, seed=ctx.config.seed, stage=1,
        extra={**base_extra, "program_prefix": stage1.program_prefix, "reference_completion": aux.body(),
               "test_entry": None, "stage2_task_id": id2},
    )
    yield PromptVariant(
        task_id=id2, pair_id=pair.pair_id, setting=Setting.STEP_BY_STEP, perturbation=Perturbation.NONE,
        prompt=template, stop=list(fmt.stop), entry_point=pair.target.name, auxiliary_name=aux.name,
        tests=pair.tests, imports=list(pair.imports), sample_index=0, seed=ctx.config.seed, stage=2,
        template=template,
        extra={**base_extra, "program_template": program_template, "reference_completion": pair.target.body(),
               "test_entry": pair.test_entry, "stage1_task_id": id1,
               "fill": "replace {auxiliary} in template and program_template with (stage-1 program_prefix + "
                       "its truncated completion).rstrip(); see benchsmith.builders.humanext.prompts.fill_auxiliary"},
    )


def _variant(pair: Pair, ctx: PairContext, setting: Setting, kind: Perturbation, context: list[Function],
             imports: Sequence[str], position: int | None, sample: int, view: AuxiliaryView | None = None,
             context_names: list[str] | None = None, pool_ids: list[str] | None = None,
             num_auxiliary: int | None = None) -> PromptVariant:
    mapping = view.target_mapping if view is not None else {}
    rendered = ctx.formatter.render(imports, context, _target_function(pair))
    aux_name = view.name if view is not None else pair.auxiliary.name
    if context_names is None:
        context_names = [aux_name] if view is not None else []
    extra = {
        **ctx.extra,
        "prompt_style": ctx.formatter.style.value,
        "target_name": pair.target.name,
        "program_prefix": rendered.program_prefix,
        "reference_completion": pair.target.body(mapping),
        "test_entry": pair.test_entry,
        "context_functions": context_names,
    }
    if pool_ids:
        extra["pool_task_ids"] = pool_ids
    if view is not None and view.info:
        extra["perturbation_info"] = view.info
    return PromptVariant(
        task_id=task_id(pair.pair_id, setting, kind, position, sample), pair_id=pair.pair_id, setting=setting,
        perturbation=kind, prompt=rendered.prompt, stop=rendered.stop, entry_point=pair.target.name,
        auxiliary_name=aux_name, tests=pair.tests, imports=list(imports), position=position,
        num_auxiliary=num_auxiliary, sample_index=sample, seed=ctx.config.seed, extra=extra,
    )
