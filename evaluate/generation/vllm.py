"""vLLM backend (CUDA GPU): all requests go to one ``LLM.generate`` call with a ``SamplingParams`` per request.

vLLM schedules the whole list itself (continuous batching), so ``batch_size`` is not used.  Prefix caching is on
by default: CrossCodeEval prompts of one file and HumanExtension variants of one pair share long prefixes.
"""

from __future__ import annotations

from typing import Any, Sequence

from benchsmith.evaluate.generation.base import (
    GenerationBackend,
    GenerationRequest,
    GenerationResult,
    file_fingerprint,
    require,
)
from benchsmith.evaluate.generation.truncation import truncate
from benchsmith.evaluate.generation.prompting import HFTokenizer

PIP = "pip install 'benchsmith[vllm]' (needs a CUDA GPU; see https://docs.vllm.ai for the build matching your CUDA)"


class VLLMBackend(GenerationBackend):
    name = "vllm"

    def __init__(self, model: str, tensor_parallel_size: int = 1, enable_prefix_caching: bool = True,
                 dtype: str | None = None, max_model_len: int | None = None, gpu_memory_utilization: float = 0.9,
                 seed: int | None = None, trust_remote_code: bool = False, tokenizer: str | None = None,
                 progress: Any = None) -> None:
        vllm = require("vllm", "vllm", PIP)
        self.vllm = vllm
        self.model_name = model
        self._fingerprint = file_fingerprint(model)
        self.progress = progress
        kw: dict[str, Any] = dict(model=model, tensor_parallel_size=tensor_parallel_size,
                                  enable_prefix_caching=enable_prefix_caching,
                                  gpu_memory_utilization=gpu_memory_utilization, trust_remote_code=trust_remote_code,
                                  seed=seed if seed is not None else 0)
        if dtype not in (None, "auto"):
            kw["dtype"] = dtype
        if max_model_len is not None:
            kw["max_model_len"] = max_model_len
        if tokenizer is not None:
            kw["tokenizer"] = tokenizer
        self.llm = vllm.LLM(**kw)
        self.stats = {"calls": 0, "prompts": 0, "generated_tokens": 0}

    @property
    def model_id(self) -> str:
        return self._fingerprint

    def tokenizer(self) -> HFTokenizer:
        return HFTokenizer(self.llm.get_tokenizer())

    def context_window(self) -> int | None:
        try:
            return int(self.llm.llm_engine.model_config.max_model_len)
        except AttributeError:  # engine internals move between vLLM releases
            return None

    def _params(self, req: GenerationRequest):
        kw: dict[str, Any] = dict(n=req.n, max_tokens=req.max_new_tokens, temperature=req.temperature,
                                  top_p=req.top_p if not req.greedy else 1.0, seed=req.seed,
                                  stop=list(req.stop) or None)
        return self.vllm.SamplingParams(**kw)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        if not requests:
            return []
        params = [self._params(r) for r in requests]
        outputs = self.llm.generate([r.prompt for r in requests], params, use_tqdm=self.progress is None)
        self.stats["calls"] += 1
        self.stats["prompts"] += len(requests)
        results = []
        for req, out in zip(requests, outputs):
            samples = sorted(out.outputs, key=lambda o: o.index)
            tokens = sum(len(o.token_ids) for o in samples)
            self.stats["generated_tokens"] += tokens
            texts = [truncate(o.text, req.stop) for o in samples]
            if req.greedy and len(texts) < req.n:  # some versions collapse greedy n>1 to one output
                texts = (texts * req.n)[: req.n]
            results.append(GenerationResult(texts=texts, prompt_tokens=len(out.prompt_token_ids or []),
                                            completion_tokens=tokens))
        if self.progress is not None:
            self.progress(len(requests))
        return results

    def close(self) -> None:
        self.llm = None
