"""OpenAI-compatible ``/v1/completions`` over HTTP (vLLM's server, TGI, llama.cpp server, OpenAI itself).

Requests with the same decoding parameters are sent ``batch_size`` prompts per call (the endpoint takes a list
of prompts and returns ``n`` choices per prompt, ``choices[i].index = prompt_index * n + sample``).  Transient
failures (connection errors, timeouts, 408/409/429/5xx) are retried with exponential backoff; any other status is
an error naming the status and the server's message.  Stop sequences are sent (the API takes at most 4) and also
applied locally, so every stop in the record is honoured.

The base URL comes from ``--base-url`` or ``OPENAI_BASE_URL`` (default ``http://localhost:8000/v1``); the key, if
the server wants one, from ``OPENAI_API_KEY``.
"""

from __future__ import annotations

import os
import time
from typing import Any, Sequence

from benchsmith.evaluate.generation.base import (
    GenerationBackend,
    GenerationError,
    GenerationRequest,
    GenerationResult,
    chunks,
    group_by_sampling,
    require,
)
from benchsmith.evaluate.generation.truncation import truncate

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504}
MAX_API_STOPS = 4


class OpenAIBackend(GenerationBackend):
    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None, batch_size: int = 16,
                 timeout: float = 120.0, max_retries: int = 5, backoff: float = 1.0, tokenizer: str | None = None,
                 context_window: int | None = None, progress: Any = None) -> None:
        self.requests = require("requests", "openai", "pip install 'benchsmith[openai]'")
        self.model_name = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "http://localhost:8000/v1").rstrip("/")
        if not self.base_url.endswith("/v1"):
            self.base_url += "/v1"
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.batch_size = max(1, int(batch_size))
        self.timeout = timeout
        self.max_retries = max(0, int(max_retries))
        self.backoff = backoff
        self.progress = progress
        self._window = context_window
        self._tokenizer_path = tokenizer
        self._tokenizer = None
        self.session = self.requests.Session()
        self.stats = {"calls": 0, "completions": 0, "retries": 0, "generated_tokens": 0}

    @property
    def model_id(self) -> str:
        return f"{self.base_url}#{self.model_name}"

    def tokenizer(self):
        """A local tokenizer (``--tokenizer PATH``) for prompt budgets; the HTTP API itself cannot tokenize."""
        if self._tokenizer_path is None:
            return None
        if self._tokenizer is None:
            transformers = require("transformers", "openai (--tokenizer)", "pip install 'benchsmith[transformers]'")
            from benchsmith.evaluate.generation.prompting import HFTokenizer

            self._tokenizer = HFTokenizer(transformers.AutoTokenizer.from_pretrained(self._tokenizer_path))
        return self._tokenizer

    def context_window(self) -> int | None:
        return self._window

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        results: list[GenerationResult | None] = [None] * len(requests)
        for group in group_by_sampling(requests):
            req = requests[group[0]]
            for batch in chunks(group, self.batch_size):
                choices = self._post(req, [requests[i].prompt for i in batch])
                for k, i in enumerate(batch):
                    results[i] = GenerationResult(texts=[truncate(c, req.stop)
                                                         for c in choices[k * req.n:(k + 1) * req.n]])
                if self.progress is not None:
                    self.progress(len(batch))
        return results  # type: ignore[return-value]

    def _payload(self, req: GenerationRequest, prompts: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model_name, "prompt": prompts, "max_tokens": req.max_new_tokens,
                                "temperature": req.temperature, "top_p": req.top_p, "n": req.n}
        if req.seed is not None:
            body["seed"] = req.seed
        if req.stop:
            body["stop"] = list(req.stop[:MAX_API_STOPS])
        return body

    def _post(self, req: GenerationRequest, prompts: list[str]) -> list[str]:
        url = f"{self.base_url}/completions"
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = self._payload(req, prompts)
        exc_types = (self.requests.ConnectionError, self.requests.Timeout)
        last = ""
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.stats["retries"] += 1
                time.sleep(self.backoff * 2 ** (attempt - 1))
            try:
                resp = self.session.post(url, json=body, headers=headers, timeout=self.timeout)
            except exc_types as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if resp.status_code in RETRY_STATUS:
                last = f"HTTP {resp.status_code}: {resp.text[:300]}"
                continue
            if resp.status_code != 200:
                raise GenerationError(f"{url} answered HTTP {resp.status_code}: {resp.text[:500]}")
            return self._parse(resp, len(prompts) * req.n, url)
        raise GenerationError(f"{url}: giving up after {self.max_retries + 1} attempts; last error: {last}")

    def _parse(self, resp: Any, expected: int, url: str) -> list[str]:
        try:
            data = resp.json()
            choices = data["choices"]
            texts: list[str | None] = [None] * expected
            for pos, choice in enumerate(choices):
                index = choice.get("index", pos)
                if not isinstance(index, int) or not 0 <= index < expected:
                    raise ValueError(f"choice index {index!r} out of range 0..{expected - 1}")
                texts[index] = choice["text"] if isinstance(choice["text"], str) else str(choice["text"])
        except (ValueError, KeyError, TypeError) as exc:
            raise GenerationError(f"{url}: malformed completion response ({exc}): {resp.text[:300]}") from None
        missing = [i for i, t in enumerate(texts) if t is None]
        if missing:
            raise GenerationError(f"{url}: the response has {len(choices)} choices, expected {expected} "
                                  f"(missing indices {missing[:5]})")
        self.stats["calls"] += 1
        self.stats["completions"] += expected
        usage = data.get("usage") or {}
        if isinstance(usage.get("completion_tokens"), int):
            self.stats["generated_tokens"] += usage["completion_tokens"]
        return texts  # type: ignore[return-value]

    def close(self) -> None:
        self.session.close()
