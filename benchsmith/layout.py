"""Where builds and evaluation runs put their files: the one place their names are spelled.

A build's output ``DIR``::

    DIR/README.md                       the dataset card (CrossCodeEval)
    DIR/figures/                        the card's figures
    DIR/hf/, DIR/parquet/<group>/       HF ``datasets`` (save_to_disk) and parquet views of every JSONL split
    DIR/<lang>/line_completion.jsonl    a CrossCodeEval split; line_completion_{rg1,oracle}_<retriever>.jsonl beside
    DIR/<lang>/excluded.jsonl           every dropped item with its reason
    DIR/<lang>/stats.json, audit.json   counts per stage and reason; the split's audit
    DIR/humanext/variants.jsonl, ...    the HumanExtension build (see ``HUMANEXT_FILES``)

An evaluation run's output directory holds ``results.json`` plus the per-item files named below.
"""

from __future__ import annotations

from pathlib import Path

# ------------------------------------------------------------------------------------------------ a split
SPLIT_STEM = "line_completion"
SPLIT_FILE = f"{SPLIT_STEM}.jsonl"
SPLIT_GLOB = f"{SPLIT_STEM}*.jsonl"  # the split and its retrieval variants
VARIANT_GLOB = f"{SPLIT_STEM}_*.jsonl"  # the retrieval variants alone
EXCLUDED_FILE = "excluded.jsonl"
STATS_FILE = "stats.json"
AUDIT_FILE = "audit.json"
AUDIT_SUFFIX = ".audit.json"  # the audit of a split file other than line_completion.jsonl: <stem>.audit.json

# ------------------------------------------------------------------------------------------------ a build's DIR
CARD_FILE = "README.md"
FIGURES_DIR = "figures"
HF_DIR = "hf"
PARQUET_DIR = "parquet"
PARQUET_SUFFIX = ".parquet"
HUMANEXT_DIR = "humanext"  # the HumanExtension family's folder (builders/humanext/family.py)

# ------------------------------------------------------------------------------------------------ DIR/humanext/
VARIANTS_FILE = "variants.jsonl"
PAIRS_FILE = "pairs.jsonl"
INVALID_PAIRS_FILE = "invalid_pairs.jsonl"
VARIANT_CHECK_FILE = "variant_check_failures.jsonl"
VARIANTS_PARQUET = "variants.parquet"
HUMANEXT_HF_DIR = HF_DIR  # DIR/humanext/hf: the variants alone, with a flat fixed schema

# ------------------------------------------------------------------------------------------------ an evaluation run
RESULTS_FILE = "results.json"
DETAILED_RESULTS_FILE = "detailed_results.jsonl"  # score cceval: one row per example
TRUNCATED_PREDICTIONS_FILE = "prediction_truncated.jsonl"  # score cceval: predictions cut at the statement
SAMPLES_FILE = "samples.jsonl"  # score humanext: one row per executed completion
REPORT_FILE = "report.md"  # report humanext


def variant_stem(setting: str, retriever: str) -> str:
    """The file stem of a retrieval variant: ``line_completion_<setting>_<retriever>``."""
    return f"{SPLIT_STEM}_{setting}_{retriever}"


def split_files(language_dir: Path) -> list[Path]:
    """The split and its retrieval variants in ``language_dir``, in a stable order."""
    return sorted(language_dir.glob(SPLIT_GLOB))
