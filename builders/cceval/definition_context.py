"""The definition oracle: a retrieval variant whose cross-file context is the definition each example needs
(``metadata.definition``), read from its file, instead of chunks a retriever ranked.  It bounds what retrieval
could give (``line_completion_oracle_definition.jsonl``, with ``--definition-context``)."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from benchsmith.files import SourceFile
from benchsmith.layout import variant_stem
from benchsmith.builders.cceval.records import CompletionExample, CrossFileContext, RetrievedChunk

KEY = variant_stem("oracle", "definition")


def definition_chunk(files: dict[str, SourceFile], definition: dict, max_lines: int) -> tuple[RetrievedChunk, list[int]] | None:
    """The definition's lines (at most ``max_lines``, from its first) as one chunk, with its [first, last] line."""
    src = files.get(definition.get("file", ""))
    if src is None:
        return None
    lines = src.text.split("\n")
    first = definition["start_line"]
    last = min(definition["end_line"], first + max_lines - 1, len(lines) - 1)
    if not 0 <= first <= last:
        return None
    text = "\n".join(lines[first:last + 1])
    return RetrievedChunk(retrieved_chunk=text, filename=src.path, score=1.0), [first, last]


def with_definitions(examples: Sequence[CompletionExample], files: Sequence[SourceFile], render,
                     max_lines: int) -> dict[str, list[CompletionExample]]:
    """``{KEY: copies of examples}`` with the definition as their cross-file context (empty where none is known);
    ``render(chunks)`` writes the context's text as the other variants do."""
    by_path = {f.path: f for f in files}
    out = []
    for ex in examples:
        got = definition_chunk(by_path, ex.metadata.definition, max_lines) if ex.metadata.definition else None
        chunks, spans = ([got[0]], [got[1]]) if got is not None else ([], [])
        meta = dataclasses.replace(ex.metadata, retrieved_lines=spans)
        out.append(dataclasses.replace(ex, crossfile_context=CrossFileContext(text=render(chunks), list=chunks),
                                       metadata=meta))
    return {KEY: out}
