"""The HumanExtension build's own view of its variants: ``variants.parquet`` and ``hf/`` with a flat fixed schema
(``extra`` as a JSON string), beside the generic views ``benchsmith.export`` writes of every JSONL file."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Sequence

from benchsmith import layout
from benchsmith.export import OutputFormat, parse_formats, quiet_datasets, require, staged_dir


def variant_row(variant) -> dict[str, Any]:
    """A ``PromptVariant`` as a flat row: ``extra`` becomes a JSON string so the schema stays fixed."""
    row = variant.to_dict()
    row["extra"] = json.dumps(row["extra"], ensure_ascii=False, sort_keys=True)
    return row


def variant_schema():
    pa = require("pyarrow", OutputFormat.PARQUET.value)
    s, i = pa.string(), pa.int32()
    return pa.schema([
        ("task_id", s), ("pair_id", s), ("setting", s), ("perturbation", s), ("prompt", s), ("stop", pa.list_(s)),
        ("entry_point", s), ("auxiliary_name", s), ("tests", s), ("imports", pa.list_(s)), ("position", i),
        ("num_auxiliary", i), ("sample_index", i), ("seed", pa.int64()), ("stage", i), ("template", s),
        ("extra", s),
    ])


def write_variant_table(out_dir: Path, variants: Sequence[Any], formats: Iterable[str]) -> None:
    """``out_dir/variants.parquet`` and/or ``out_dir/hf`` (one ``Dataset``) from the build's prompt variants."""
    kinds = parse_formats(formats)
    if OutputFormat.PARQUET not in kinds and OutputFormat.HF not in kinds:
        return
    rows = [variant_row(v) for v in variants]
    if OutputFormat.PARQUET in kinds:
        require("pyarrow", OutputFormat.PARQUET.value)
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = out_dir / layout.VARIANTS_PARQUET
        fd, tmp = tempfile.mkstemp(prefix=".variants.", suffix=layout.PARQUET_SUFFIX, dir=out_dir)
        os.close(fd)
        try:
            pq.write_table(pa.Table.from_pylist(rows, schema=variant_schema()), tmp)
            os.replace(tmp, path)
        finally:
            Path(tmp).unlink(missing_ok=True)
    if OutputFormat.HF in kinds:
        datasets = require("datasets", OutputFormat.HF.value)
        import pyarrow as pa

        # A fingerprint derived from the content (datasets would draw a random one for in-memory data), so the
        # same build writes the same state.json.
        digest = hashlib.sha256()
        for row in rows:
            digest.update(json.dumps(row, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        ds = datasets.Dataset(pa.Table.from_pylist(rows, schema=variant_schema()),
                              fingerprint=digest.hexdigest()[:16])
        with quiet_datasets(datasets), staged_dir(out_dir / layout.HUMANEXT_HF_DIR) as tmp:
            ds.save_to_disk(str(tmp))
