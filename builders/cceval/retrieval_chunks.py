"""Cut a repository's files into retrieval chunks: windows of non-empty lines (CrossCodeEval: 10, non-overlapping),
tokenized once per repository, and the candidate order of ``builders/cceval/retrieval.py`` (the files nearest to
the example's file first)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from benchsmith.builders.cceval.tokenize_code import tokenize
from benchsmith.files import SourceFile


# --------------------------------------------------------------------------------------------------- chunks


@dataclass(frozen=True)
class Chunk:
    filename: str
    index: int  # position among the file's chunks
    text: str
    lines: tuple[int, int] = (0, 0)  # 0-based first and last line of the file the chunk covers


def chunk_text(text: str, window: int, step: int) -> list[str]:
    """Windows of ``window`` non-empty lines every ``step`` lines; windows without a single token are dropped."""
    return [chunk for chunk, _ in _tokenized_chunks(text, window, step)]


def _tokenized_chunks(text: str, window: int, step: int) -> list[tuple[str, list[str]]]:
    return [(chunk, tokens) for chunk, tokens, _ in _numbered_chunks(text, window, step)]


def _numbered_chunks(text: str, window: int, step: int) -> list[tuple[str, list[str], tuple[int, int]]]:
    """The chunks with their tokens and the 0-based first and last line of the file they cover."""
    numbered = [(n, line) for n, line in enumerate(text.split("\n")) if line.strip()]
    out = []
    for start in range(0, len(numbered), step):
        window_lines = numbered[start : start + window]
        chunk = "\n".join(line for _, line in window_lines)
        tokens = tokenize(chunk)
        if tokens:
            out.append((chunk, tokens, (window_lines[0][0], window_lines[-1][0])))
    return out


def file_distance(a: str, b: str) -> int:
    """Directories to walk from one file to the other ('/'-separated repository paths)."""
    da, db = a.split("/")[:-1], b.split("/")[:-1]
    common = 0
    while common < min(len(da), len(db)) and da[common] == db[common]:
        common += 1
    return (len(da) - common) + (len(db) - common)


class RepoChunks:
    """Every chunk of a repository's files, tokenized once."""

    def __init__(self, files: Sequence[SourceFile], window: int, step: int) -> None:
        self.chunks: list[Chunk] = []
        self.tokens: list[list[str]] = []
        self.file_ranges: dict[str, tuple[int, int]] = {}
        for f in sorted(files, key=lambda f: f.path):
            if f.path in self.file_ranges:
                raise ValueError(f"file {f.path!r} is listed twice for retrieval")
            begin = len(self.chunks)
            for i, (text, tokens, lines) in enumerate(_numbered_chunks(f.text, window, step)):
                self.chunks.append(Chunk(f.path, i, text, lines))
                self.tokens.append(tokens)
            self.file_ranges[f.path] = (begin, len(self.chunks))

    def __len__(self) -> int:
        return len(self.chunks)

    def candidates(self, current_file: str, limit: int | None) -> np.ndarray:
        """Chunk ids of the other files, nearest files first (CrossCodeEval's order), at most ``limit``."""
        others = sorted(
            (file_distance(path, current_file), path) for path in self.file_ranges if path != current_file
        )
        ids: list[int] = []
        for _, path in others:
            begin, end = self.file_ranges[path]
            ids.extend(range(begin, end))
            if limit is not None and len(ids) >= limit:
                del ids[limit:]
                break
        return np.asarray(ids, dtype=np.int64)

    def next_chunk(self, chunk_id: int) -> int:
        """The chunk after ``chunk_id`` in its file, or ``chunk_id`` itself for a file's last chunk."""
        _, end = self.file_ranges[self.chunks[chunk_id].filename]
        return chunk_id + 1 if chunk_id + 1 < end else chunk_id
