"""Retrievers that rank a repository's chunks against queries: BM25 (``rank_bm25.BM25Okapi``'s figures, from a
sparse term-count matrix built once per repository), Jaccard, and dense cosine similarity with a local embedding
model.

BM25: each group of examples that share a file shares its candidate set, so BM25Okapi's corpus statistics are
recomputed for that candidate set exactly as BM25Okapi would (document frequencies, average length, idf with the
``epsilon * average idf`` floor for terms in more than half of the chunks) with a few sparse operations, and all
of the group's queries are scored with one sparse product.  Rankings equal BM25Okapi's."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from benchsmith.builders.cceval.retrieval_chunks import Chunk, RepoChunks

if TYPE_CHECKING:
    from benchsmith.builders.cceval.retrieval import RetrievalConfig


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

    tokenized_queries = True  # ``score`` takes token lists

    @classmethod
    def for_repo(cls, repo: RepoChunks, config: RetrievalConfig, encoder: DenseEncoder | None = None) -> "BM25Index":
        return cls(repo.tokens, config.bm25_k1, config.bm25_b, config.bm25_epsilon)

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

    tokenized_queries = True

    @classmethod
    def for_repo(cls, repo: RepoChunks, config: RetrievalConfig, encoder: DenseEncoder | None = None) -> "JaccardIndex":
        return cls(repo.tokens)

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
    tokenized_queries = False  # ``score`` takes the query texts

    @classmethod
    def for_repo(cls, repo: RepoChunks, config: RetrievalConfig, encoder: DenseEncoder | None = None) -> "DenseIndex":
        """``encoder`` reuses a loaded model across repositories; without it, one per process and settings."""
        return cls(repo.chunks, encoder or _cached_encoder(config))

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
