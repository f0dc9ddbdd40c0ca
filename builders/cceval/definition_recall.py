"""How often retrieval finds the definition an example needs: per retrieval variant of a split, the share of
examples with a known definition (``metadata.definition``) whose top-1 / top-5 retrieved chunks cover one of its
lines (``metadata.retrieved_lines``: each chunk's lines in its file).  Read by ``benchsmith audit`` and the card."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.jsonio import iter_jsonl
from benchsmith.layout import SPLIT_FILE

RANKS = (1, 5)


def definition_rank(example: dict[str, Any]) -> int | None:
    """1-based rank of the first retrieved chunk that overlaps the example's definition; None when none does."""
    meta = example.get("metadata") if isinstance(example.get("metadata"), dict) else {}
    definition = meta.get("definition")
    ctx = example.get("crossfile_context")
    if not isinstance(definition, dict) or not isinstance(ctx, dict) or not isinstance(ctx.get("list"), list):
        return None
    lines = meta.get("retrieved_lines")
    if not isinstance(lines, list):
        return None
    for rank, (chunk, span) in enumerate(zip(ctx["list"], lines), 1):
        if not isinstance(chunk, dict) or chunk.get("filename") != definition.get("file"):
            continue
        if isinstance(span, list) and len(span) == 2 and all(isinstance(x, int) for x in span) \
                and span[0] <= definition["end_line"] and definition["start_line"] <= span[1]:
            return rank
    return None


def variant_files(split: Path) -> list[Path]:
    """The retrieval variants beside a build's ``line_completion.jsonl`` (none for any other split file)."""
    if split.name != SPLIT_FILE:
        return []
    stem = Path(SPLIT_FILE).stem
    return sorted(p for p in split.parent.glob(f"{stem}_*.jsonl") if p.is_file())


def definition_recall(split: Path, error) -> dict[str, Any]:
    """``{variant: {"examples", "with_definition", "recall@1", "recall@5"}}`` for every retrieval variant."""
    out: dict[str, Any] = {}
    for path in variant_files(split):
        total = known = 0
        hits = {k: 0 for k in RANKS}
        for line in iter_jsonl(path, error=error):
            total += 1
            meta = line.obj.get("metadata")
            if not isinstance(meta, dict) or not isinstance(meta.get("definition"), dict):
                continue
            known += 1
            rank = definition_rank(line.obj)
            for k in RANKS:
                hits[k] += rank is not None and rank <= k
        name = path.stem.removeprefix(Path(SPLIT_FILE).stem + "_")
        out[name] = {"examples": total, "with_definition": known,
                     **{f"recall@{k}": round(hits[k] / known, 4) if known else None for k in RANKS}}
    return out
