"""The HumanExtension build: pairs -> validation -> variants -> files and a report.

Output, under ``DIR/humanext/``:

* ``variants.jsonl``: every prompt variant, one :class:`benchsmith.evaluate.humanext.records.PromptVariant` per line, in pair
  order, then setting, perturbation, sample, position.  One file for all settings (filter on ``setting``);
  ``task_id`` = ``<pair_id>/<setting>/<perturbation>/p<position or ->/s<sample>[/stage<1|2>]``.
* ``pairs.jsonl``: the pairs as :class:`benchsmith.evaluate.humanext.records.FunctionPair` (``extra.reference_passes``).
* ``invalid_pairs.jsonl``: pairs whose reference fails its own tests, with the failing assertion, the line in
  the tests, what the reference returned (or the exception).
* ``excluded.jsonl``: every pair or variant the build dropped, as an :class:`benchsmith.records.Exclusion`
  (stage ``validation``, reason ``reference_fails_tests``; see :mod:`.steps`), counted per reason in
  ``stats.json`` ``dropped``.
* ``stats.json``: counts (pairs, variants by setting and perturbation, auxiliary usage of the human targets,
  no-op perturbations, the variant check, drops per reason) and the configuration.
* with ``--format hf`` / ``parquet``: ``hf/`` (``datasets.load_from_disk``) and ``variants.parquet``
  (:func:`.table.write_variant_table`); there the ``extra`` column is a JSON string so the schema
  stays flat and fixed.

How a scorer runs a variant (see also :mod:`.prompts`)::

    program = extra["program_prefix"] + completion + "\\n" + tests    # tests end with their own check call
                                                                    # (extra["test_entry"], e.g. test_check())

For base-model prompts ``extra["program_prefix"] == prompt``, so ``prompt + completion + "\\n" + tests`` is the
program.  ``extra["reference_completion"]`` is the human target's body rendered for this variant (renamed
auxiliary included): ``--check-variants`` runs every variant's program with it, which must pass.
Step-by-step stage 2 records carry ``template`` and ``extra["program_template"]``; fill both with
:func:`benchsmith.evaluate.humanext.program.fill_auxiliary` and the stage-1 program_prefix + completion first.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from benchsmith import layout
from benchsmith.evaluate.humanext.style import AuxUsage, auxiliary_usage
from benchsmith.export import OutputFormat
from benchsmith.evaluate.humanext.program import assemble_program, program_prefix
from benchsmith.jsonio import write_json, write_jsonl
from benchsmith.pipeline import DropLedger
from benchsmith.evaluate.humanext.records import PromptVariant, Setting

from .prompts import Formatter, PromptStyle, load_tokenizer
from .settings import PairContext, VariantConfig
from .sources import Pair, load_pairs, load_pool
from .steps import CheckVariants, RenderVariants, ValidatePairs
from .table import write_variant_table
from .validate import PairCheck, run_batched


FORMATS = tuple(f.value for f in OutputFormat)
CHECK_BATCH = 64  # programs per sandboxed process in --check-variants


@dataclass
class BuildOptions:
    output: Path
    pairs: str | None = None  # None = the embedded demo set
    config: VariantConfig = field(default_factory=VariantConfig)
    pool: str = "auto"
    style: PromptStyle = PromptStyle.BASE
    tokenizer: str | None = None
    keep_invalid: bool = False
    check_variants: bool = False
    formats: tuple[str, ...] = ("jsonl",)
    timeout: float = 10.0
    workers: int | None = None
    progress: bool = True


@dataclass
class BuildResult:
    out_dir: Path
    pairs: list[Pair]
    checks: list[PairCheck]
    variants: list[PromptVariant]
    stats: dict[str, Any]
    variant_failures: list[dict[str, Any]]
    ledger: DropLedger = field(default_factory=DropLedger)

    @property
    def invalid(self) -> list[PairCheck]:
        return [c for c in self.checks if not c.passed]


def build(opts: BuildOptions) -> BuildResult:
    for fmt in opts.formats:
        if fmt not in FORMATS:
            raise ValueError(f"--format {fmt}: unknown (choose from {', '.join(FORMATS)})")
    from benchsmith.evaluate.sandbox import Sandbox

    source, pairs = load_pairs(opts.pairs)
    if not pairs:
        raise ValueError(f"--pairs {source.spec}: no pairs")
    usage = collections.Counter(auxiliary_usage(p.target.code(), p.auxiliary.name).value for p in pairs)
    # the pool is checked before any sandboxed run: too small for the settings asked, nothing could be built
    pool_desc, pool = load_pool(opts.pool, pairs)
    needed = opts.config.pool_needed()
    if len(pool) < needed:
        raise ValueError(f"--pool {opts.pool}: the settings need {needed} pool functions, {pool_desc} has "
                         f"{len(pool)}; use a larger --pool or fewer samples")

    sandbox = Sandbox(timeout=opts.timeout, workers=opts.workers)
    ledger = DropLedger()
    validation = ValidatePairs(sandbox, opts.keep_invalid, opts.progress, ledger)
    chosen = list(validation(pairs))
    checks = validation.checks
    passed = {c.pair_id for c in checks if c.passed}

    rename_pool = sorted({f.name for f in pool})
    tokenizer = load_tokenizer(opts.tokenizer) if opts.tokenizer else None
    formatter = Formatter(opts.style, tokenizer)

    def context(pair: Pair) -> PairContext:
        return PairContext(pool, rename_pool, formatter, opts.config,
                           extra={"reference_passes": pair.pair_id in passed})

    rendering = RenderVariants(context, ledger)
    variants: list[PromptVariant] = list(rendering(_progress(chosen, "rendering variants", opts.progress)))
    rendered = {v.pair_id for v in variants}
    if chosen and not rendered:
        first = next((e for e in ledger.exclusions if e.stage == rendering.stage), None)
        raise ValueError("no pair could be rendered" + (f"; the first, {first.item_id}: {first.detail}" if first else ""))
    chosen = [p for p in chosen if p.pair_id in rendered]

    failures: list[dict[str, Any]] = []
    if opts.check_variants:
        checking = CheckVariants(lambda vs: check_variants(vs, chosen, sandbox, progress=opts.progress), ledger)
        variants = list(checking(variants))
        failures = checking.failures

    out_dir = Path(opts.output) / layout.HUMANEXT_DIR
    stats = _stats(source, pool_desc, len(pool), opts, pairs, checks, chosen, variants, usage, failures)
    stats["dropped"] = dict(sorted(ledger.dropped.items()))
    _write(out_dir, opts, pairs, passed, checks, variants, stats, failures, ledger)
    return BuildResult(out_dir, pairs, checks, variants, stats, failures, ledger)


def variant_program(variant: PromptVariant, completion: str, stage1: PromptVariant | None = None,
                    stage1_completion: str | None = None) -> str:
    """The executable program for ``completion`` of ``variant`` (what the scorer and --check-variants run)."""
    prefix = program_prefix(variant, stage1, stage1_completion)
    return assemble_program(prefix, completion, variant.tests).text


def check_variants(variants: Sequence[PromptVariant], pairs: Sequence[Pair], sandbox,
                   progress: bool = False) -> list[dict[str, Any]]:
    """Run every variant's program with the human reference completion; return the ones that fail.

    ``direct`` and ``irrelevant`` prompts lack the auxiliary the human reference calls, so their check program
    defines it after the completion (the tests call the target only after everything is defined).
    """
    by_id = {v.task_id: v for v in variants}
    aux_code = {p.pair_id: p.auxiliary.code() for p in pairs}
    groups: dict[str, list[tuple[PromptVariant, str]]] = {}
    for v in variants:
        stage1 = by_id.get(v.extra.get("stage1_task_id", "")) if v.stage == 2 else None
        s1_completion = stage1.extra["reference_completion"] if stage1 is not None else None
        completion = v.extra["reference_completion"]
        if v.setting in (Setting.DIRECT, Setting.IRRELEVANT):
            completion = completion + "\n\n" + aux_code[v.pair_id] + "\n"
        groups.setdefault(v.pair_id, []).append((v, variant_program(v, completion, stage1, s1_completion)))
    # several pairs per sandboxed process: process start-up, not the programs, is what costs
    batches: list[list[tuple[PromptVariant, str]]] = [[]]
    for group in groups.values():
        if batches[-1] and len(batches[-1]) + len(group) > CHECK_BATCH:
            batches.append([])
        batches[-1].extend(group)
    verdicts = run_batched([[prog for _, prog in b] for b in batches], sandbox, progress=progress)
    return [
        {"task_id": v.task_id, "pair_id": v.pair_id, "error": err}
        for batch, errs in zip(batches, verdicts)
        for (v, _), err in zip(batch, errs)
        if err is not None
    ]


# -------------------------------------------------------------------------------------------------------------


def _progress(items: Sequence[Any], label: str, enabled: bool):
    if not enabled:
        yield from items
        return
    from rich.progress import track

    yield from track(items, description=label)


def _stats(source, pool_desc: str, pool_size: int, opts: BuildOptions, pairs: list[Pair], checks: list[PairCheck],
           chosen: list[Pair], variants: list[PromptVariant], usage: collections.Counter,
           failures: list[dict[str, Any]]) -> dict[str, Any]:
    cfg = opts.config
    by_setting = collections.Counter(v.setting.value for v in variants)
    by_pert = collections.Counter(v.perturbation.value for v in variants)
    by_both = collections.Counter(f"{v.setting.value}/{v.perturbation.value}" for v in variants)
    noops = collections.Counter(v.perturbation.value for v in variants
                                if v.extra.get("perturbation_info", {}).get("noop"))
    invalid = [c for c in checks if not c.passed]
    return {
        "source": {"spec": source.spec, "resolved": source.description},
        "pool": {"source": pool_desc, "size": pool_size},
        "config": {
            "settings": [s.value for s in cfg.settings],
            "perturbations": [p.value for p in cfg.perturbations],
            "samples": cfg.samples,
            "num_auxiliary": cfg.num_auxiliary,
            "seed": cfg.seed,
            "prompt_style": opts.style.value,
            "tokenizer": opts.tokenizer,
            "keep_invalid": opts.keep_invalid,
        },
        "pairs": {"total": len(pairs), "valid": len(pairs) - len(invalid), "invalid": len(invalid),
                  "written": len(chosen)},
        "invalid_pairs": [{"pair_id": c.pair_id, "target_name": c.target_name} for c in invalid],
        "auxiliary_usage": {u.value: usage.get(u.value, 0) for u in AuxUsage},
        "expected_per_pair": cfg.expected_per_pair(),
        "variants": {
            "total": len(variants),
            "by_setting": dict(sorted(by_setting.items())),
            "by_perturbation": dict(sorted(by_pert.items())),
            "by_setting_and_perturbation": dict(sorted(by_both.items())),
            "noop_perturbations": dict(sorted(noops.items())),
        },
        "variant_check": {"run": opts.check_variants, "failed": len(failures),
                          "failed_task_ids": [f["task_id"] for f in failures]},
    }


def _write(out_dir: Path, opts: BuildOptions, pairs: list[Pair], passed: set[str], checks: list[PairCheck],
           variants: list[PromptVariant], stats: dict[str, Any], failures: list[dict[str, Any]],
           ledger: DropLedger) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    if OutputFormat.JSONL.value in opts.formats:
        write_jsonl(out_dir / layout.VARIANTS_FILE, variants)
    records = []
    for p in pairs:
        rec = p.to_record()
        rec.extra["reference_passes"] = p.pair_id in passed
        records.append(rec)
    write_jsonl(out_dir / layout.PAIRS_FILE, records)
    write_jsonl(out_dir / layout.INVALID_PAIRS_FILE, [c.to_dict() for c in checks if not c.passed])
    write_jsonl(out_dir / layout.EXCLUDED_FILE, ledger.exclusions)
    if opts.check_variants:
        write_jsonl(out_dir / layout.VARIANT_CHECK_FILE, failures)
    write_variant_table(out_dir, variants, opts.formats)
    write_json(out_dir / layout.STATS_FILE, stats)


def write_report(result: BuildResult, console=None) -> None:
    """A readable summary: pairs, invalid pairs with their failing assertion, variants per setting."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    st = result.stats
    p = st["pairs"]
    console.print(f"[bold]HumanExtension build[/bold] from {st['source']['resolved']} -> {result.out_dir}")
    console.print(f"pairs: {p['total']} loaded, {p['valid']} pass their tests, {p['invalid']} fail, "
                  f"{p['written']} written; pool: {st['pool']['source']} ({st['pool']['size']} functions)")
    usage = st["auxiliary_usage"]
    console.print(f"human targets: {usage['calls']} call the auxiliary (black-box), {usage['references_only']} "
                  f"only reference it, {usage['not_used']} do not use it")
    if result.invalid:
        t = Table(title="pairs whose reference fails its own tests")
        for col in ("pair", "target", "failing assertion", "reference returned / error"):
            t.add_column(col, overflow="fold")
        for c in result.invalid:
            t.add_row(c.pair_id, c.target_name, c.assertion or "-", c.returned if c.returned is not None
                      else (c.error or "-"))
        console.print(t)
    t = Table(title=f"variants ({st['variants']['total']})")
    t.add_column("setting / perturbation")
    t.add_column("variants", justify="right")
    for key, n in st["variants"]["by_setting_and_perturbation"].items():
        t.add_row(key, str(n))
    console.print(t)
    vc = st["variant_check"]
    if vc["run"]:
        console.print(f"variant check (program_prefix + human reference + tests): {vc['failed']} failed")
