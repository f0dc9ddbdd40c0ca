"""The HumanExtension build: pairs -> validation -> variants -> files and a report.

Output, under ``DIR/humanext/``:

* ``variants.jsonl``: every prompt variant, one :class:`benchsmith.records.PromptVariant` per line, in pair
  order, then setting, perturbation, sample, position.  One file for all settings (filter on ``setting``);
  ``task_id`` = ``<pair_id>/<setting>/<perturbation>/p<position or ->/s<sample>[/stage<1|2>]``.
* ``pairs.jsonl``: the pairs as :class:`benchsmith.records.FunctionPair` (``extra.reference_passes``).
* ``invalid_pairs.jsonl``: pairs whose reference fails its own tests, with the failing assertion, the line in
  the tests, what the reference returned (or the exception).
* ``stats.json``: counts (pairs, variants by setting and perturbation, auxiliary usage of the human targets,
  no-op perturbations, the variant check) and the configuration.
* with ``--format hf`` / ``parquet``: ``hf/`` (``datasets.load_from_disk``) and ``variants.parquet``; there the
  ``extra`` column is a JSON string so the schema stays flat and fixed.

How a scorer runs a variant (see also :mod:`.prompts`)::

    program = extra["program_prefix"] + completion + "\\n" + tests    # tests end with their own check call
                                                                    # (extra["test_entry"], e.g. test_check())

For base-model prompts ``extra["program_prefix"] == prompt``, so ``prompt + completion + "\\n" + tests`` is the
program.  ``extra["reference_completion"]`` is the human target's body rendered for this variant (renamed
auxiliary included): ``--check-variants`` runs every variant's program with it, which must pass.
Step-by-step stage 2 records carry ``template`` and ``extra["program_template"]``; fill both with
:func:`benchsmith.humanext_program.fill_auxiliary` and the stage-1 program_prefix + completion first.
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from benchsmith.evaluate.humanext.style import AuxUsage, auxiliary_usage
from benchsmith.humanext_program import assemble_program, program_prefix
from benchsmith.jsonio import write_json, write_jsonl
from benchsmith.records import PromptVariant, Setting

from .perturb import PerturbationError
from .prompts import Formatter, PromptStyle, load_tokenizer
from .render import PairFormatError
from .settings import PairContext, VariantConfig, variants_for_pair
from .sources import Pair, load_pairs, load_pool
from .validate import PairCheck, run_batched, validate_pairs


FORMATS = ("jsonl", "hf", "parquet")
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

    sandbox = Sandbox(timeout=opts.timeout, workers=opts.workers)
    checks = validate_pairs(pairs, sandbox, progress=opts.progress)
    passed = {c.pair_id for c in checks if c.passed}
    chosen = [p for p in pairs if p.pair_id in passed or opts.keep_invalid]

    pool_desc, pool = load_pool(opts.pool, pairs)
    rename_pool = sorted({f.name for f in pool})
    tokenizer = load_tokenizer(opts.tokenizer) if opts.tokenizer else None
    formatter = Formatter(opts.style, tokenizer)

    variants: list[PromptVariant] = []
    seen: dict[str, str] = {}
    for pair in _progress(chosen, "rendering variants", opts.progress):
        ctx = PairContext(pool, rename_pool, formatter, opts.config,
                          extra={"reference_passes": pair.pair_id in passed})
        try:
            produced = list(variants_for_pair(pair, ctx))
        except PerturbationError as exc:
            raise PairFormatError(pair.pair_id, "auxiliary_function", str(exc)) from None
        for v in produced:
            if v.task_id in seen:
                raise PairFormatError(pair.pair_id, "task_id", f"duplicate task id {v.task_id!r} (also from "
                                      f"{seen[v.task_id]}); pair ids must be unique")
            seen[v.task_id] = pair.pair_id
        variants.extend(produced)

    failures: list[dict[str, Any]] = []
    if opts.check_variants:
        failures = check_variants(variants, chosen, sandbox, progress=opts.progress)
        bad = {f["task_id"] for f in failures}
        # a variant whose own reference fails is a rendering bug or a clashing distractor: never ship it
        variants = [v for v in variants if v.task_id not in bad or not v.extra.get("reference_passes")]

    out_dir = Path(opts.output) / "humanext"
    stats = _stats(source, pool_desc, len(pool), opts, pairs, checks, chosen, variants, usage, failures)
    _write(out_dir, opts, pairs, passed, checks, variants, stats, failures)
    return BuildResult(out_dir, pairs, checks, variants, stats, failures)


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
           variants: list[PromptVariant], stats: dict[str, Any], failures: list[dict[str, Any]]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    if "jsonl" in opts.formats:
        write_jsonl(out_dir / "variants.jsonl", variants)
    records = []
    for p in pairs:
        rec = p.to_record()
        rec.extra["reference_passes"] = p.pair_id in passed
        records.append(rec)
    write_jsonl(out_dir / "pairs.jsonl", records)
    write_jsonl(out_dir / "invalid_pairs.jsonl", [c.to_dict() for c in checks if not c.passed])
    if opts.check_variants:
        write_jsonl(out_dir / "variant_check_failures.jsonl", failures)
    rows = [_flat_row(v) for v in variants]
    if "parquet" in opts.formats:
        _write_parquet(out_dir / "variants.parquet", rows)
    if "hf" in opts.formats:
        _write_hf(out_dir / "hf", rows)
    write_json(out_dir / "stats.json", stats)


def _flat_row(v: PromptVariant) -> dict[str, Any]:
    row = v.to_dict()
    row["extra"] = json.dumps(row["extra"], ensure_ascii=False, sort_keys=True)
    return row


def _arrow_schema():
    import pyarrow as pa  # lazy: the hf extra

    s, i = pa.string(), pa.int32()
    return pa.schema([
        ("task_id", s), ("pair_id", s), ("setting", s), ("perturbation", s), ("prompt", s), ("stop", pa.list_(s)),
        ("entry_point", s), ("auxiliary_name", s), ("tests", s), ("imports", pa.list_(s)), ("position", i),
        ("num_auxiliary", i), ("sample_index", i), ("seed", pa.int64()), ("stage", i), ("template", s),
        ("extra", s),
    ])


def _write_parquet(path: Path, rows: list[dict[str, Any]]) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError("--format parquet needs pyarrow: pip install 'benchsmith[hf]'") from exc
    table = pa.Table.from_pylist(rows, schema=_arrow_schema())
    fd, tmp = tempfile.mkstemp(prefix=".variants.", suffix=".parquet", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _write_hf(path: Path, rows: list[dict[str, Any]]) -> None:
    try:
        import datasets
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise RuntimeError("--format hf needs datasets: pip install 'benchsmith[hf]'") from exc
    import pyarrow as pa

    table = pa.Table.from_pylist(rows, schema=_arrow_schema())
    # A fingerprint derived from the content (datasets would draw a random one for in-memory data), so the
    # same build writes the same state.json.
    digest = hashlib.sha256()
    for row in rows:
        digest.update(json.dumps(row, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    ds = datasets.Dataset(table, fingerprint=digest.hexdigest()[:16])
    tmp = Path(tempfile.mkdtemp(prefix=".hf.", dir=path.parent))
    bars = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # our own progress display is rich; keep stderr readable
    try:
        ds.save_to_disk(str(tmp / "data"))
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp / "data", path)
    finally:
        if bars:
            datasets.enable_progress_bars()
        shutil.rmtree(tmp, ignore_errors=True)


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
