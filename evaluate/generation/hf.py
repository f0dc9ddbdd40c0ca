"""transformers backend: any local directory, hub name or ``.gguf`` file; CPU or GPU; batched with left padding.

Requests are grouped by decoding parameters, sorted by prompt length inside a group (less padding), and run
``batch_size`` prompts at a time.  Prompts are left-padded with an attention mask, so a batched greedy completion
equals the one-by-one completion (tests check this).  Stop sequences end a row as soon as its decoded text holds
one (a per-row stopping criterion; a batch ends when every row has stopped) and are cut off afterwards.

Sampling (``temperature > 0``) seeds torch's global generator once per request group with the request seed, so
the same inputs, batch size and seed give the same samples.  Greedy ``n > 1`` returns ``n`` copies of the one
greedy completion (sampling n times with temperature 0 would only repeat it at n times the cost).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Sequence

from benchsmith.evaluate.generation.base import (
    GenerationBackend,
    GenerationError,
    GenerationRequest,
    GenerationResult,
    chunks,
    file_fingerprint,
    group_by_sampling,
    require,
)
from benchsmith.evaluate.generation.truncation import truncate
from benchsmith.evaluate.generation.prompting import HFTokenizer

log = logging.getLogger(__name__)
PIP = "pip install 'benchsmith[transformers]'  (torch: pip install torch, a CPU or CUDA build)"


def _split_gguf(model: str, gguf_file: str | None) -> tuple[str, str | None]:
    """``path/to/model.gguf`` -> (``path/to``, ``model.gguf``); transformers wants the directory and the name."""
    p = Path(model)
    if gguf_file is None and p.suffix.lower() == ".gguf":
        if not p.is_file():
            raise FileNotFoundError(f"GGUF file {model} does not exist")
        return str(p.parent), p.name
    return model, gguf_file


def gguf_cache_root() -> Path | None:
    """Where converted GGUF models are kept: ``$BENCHSMITH_GGUF_CACHE`` (``off`` disables), else
    ``~/.cache/benchsmith/gguf``."""
    import os

    value = os.environ.get("BENCHSMITH_GGUF_CACHE", "")
    if value.lower() in ("off", "0", "no", "none"):
        return None
    return Path(value) if value else Path.home() / ".cache" / "benchsmith" / "gguf"


def _converted_gguf(path: Path, fingerprint: str, trust_remote_code: bool) -> Path | None:
    """A transformers directory holding the GGUF model dequantised (float32) and its tokenizer, made once.

    Reading a GGUF file with transformers parses its metadata in Python several times (config, tokenizer,
    weights) and dequantises every tensor: about a minute for a 135M model on a busy CPU.  The converted copy
    loads in seconds and gives the same weights, so every later process (screen after generate, tests, the demo)
    skips that work.  Keyed by the file's path, size and mtime; written to a temporary directory and renamed.
    """
    import hashlib
    import shutil
    import tempfile

    import transformers

    root = gguf_cache_root()
    if root is None:
        return None
    target = root / hashlib.sha256(fingerprint.encode()).hexdigest()[:20]
    if (target / ".complete").is_file():
        return target
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".convert-", dir=root))
    except OSError as exc:
        log.warning("cannot cache the converted GGUF model under %s (%s); loading it directly", root, exc)
        return None
    try:
        kw = {"gguf_file": path.name, "trust_remote_code": trust_remote_code}
        tok = transformers.AutoTokenizer.from_pretrained(str(path.parent), **kw)
        model = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), **kw)
        tok.save_pretrained(tmp)
        # transformers marks a GGUF-loaded model as "quantized" although its tensors are plain dequantised
        # floats, and then refuses save_pretrained; drop that marker (the weights are what we save)
        if getattr(model, "hf_quantizer", None) is not None:
            model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        (tmp / ".complete").write_text(f"{path}\n", encoding="utf-8")
        try:
            tmp.rename(target)
        except OSError:  # another process finished first: use theirs
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


class HFBackend(GenerationBackend):
    name = "hf"

    def __init__(self, model: str, batch_size: int = 8, device: str | None = None, dtype: str | None = None,
                 gguf_file: str | None = None, trust_remote_code: bool = False, tokenizer: str | None = None,
                 progress: Any = None) -> None:
        self.torch = require("torch", "hf", PIP)
        transformers = require("transformers", "hf", PIP)
        self.model_name = model
        self.batch_size = max(1, int(batch_size))
        self.progress = progress
        self.stats = {"batches": 0, "prompts": 0, "generated_tokens": 0}
        # our own rich progress bar replaces transformers' per-load bars
        transformers.utils.logging.disable_progress_bar()
        location, gguf = _split_gguf(model, gguf_file)
        if gguf is not None:
            require("gguf", "hf (GGUF files)", "pip install gguf accelerate")
        self._fingerprint = file_fingerprint(Path(location) / gguf if gguf else location)
        if gguf and tokenizer is None:
            converted = _converted_gguf(Path(location) / gguf, self._fingerprint, trust_remote_code)
            if converted is not None:
                location, gguf = str(converted), None
        torch = self.torch
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        torch_dtype = self._dtype(dtype)
        kw: dict[str, Any] = {"trust_remote_code": trust_remote_code}
        if gguf:
            kw["gguf_file"] = gguf
        major = int(transformers.__version__.split(".")[0])
        dtype_kw = {"dtype": torch_dtype} if major >= 5 else {"torch_dtype": torch_dtype}
        self._load_kw = {**kw, **dtype_kw}
        self._location = location
        try:
            tok_src = tokenizer or location
            tok_kw = dict(kw) if tokenizer is None else {"trust_remote_code": trust_remote_code}
            self.tok = transformers.AutoTokenizer.from_pretrained(tok_src, **tok_kw)
            self.config = transformers.AutoConfig.from_pretrained(location, **kw)
        except (OSError, ValueError) as exc:
            raise GenerationError(f"could not load model {model!r} with transformers: {exc}\n"
                                  "give a local model directory, a .gguf file, or a hub name reachable from here") \
                from None
        self._model = None
        self.tok.padding_side = "left"
        self.pad_id = self.tok.pad_token_id
        if self.pad_id is None:
            self.pad_id = self.tok.eos_token_id if self.tok.eos_token_id is not None else 0
        eos = getattr(self.config, "eos_token_id", None)
        if eos is None:
            eos = self.tok.eos_token_id
        self.eos_ids = set(eos if isinstance(eos, list) else ([eos] if eos is not None else []))
        self._warned_truncation = False

    @property
    def model(self):
        """The weights, loaded on first use: a rerun served entirely from the cache never loads them."""
        if self._model is None:
            import transformers

            try:
                model = transformers.AutoModelForCausalLM.from_pretrained(self._location, **self._load_kw)
            except (OSError, ValueError) as exc:
                raise GenerationError(f"could not load model {self.model_name!r} with transformers: {exc}") from None
            model.to(self.device)
            model.eval()
            gen_eos = model.generation_config.eos_token_id
            if gen_eos is not None:
                self.eos_ids |= set(gen_eos if isinstance(gen_eos, list) else [gen_eos])
            self._model = model
        return self._model

    def _dtype(self, dtype: str | None):
        torch = self.torch
        if dtype in (None, "auto"):
            if self.device.startswith("cuda"):
                return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
            return torch.float32  # half precision on CPU is slow and changes greedy outputs
        try:
            return {"float32": torch.float32, "fp32": torch.float32, "float16": torch.float16,
                    "fp16": torch.float16, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16}[dtype]
        except KeyError:
            raise ValueError(f"unknown dtype {dtype!r}; use auto, float32, float16 or bfloat16") from None

    @property
    def model_id(self) -> str:
        return self._fingerprint

    def tokenizer(self) -> HFTokenizer:
        return HFTokenizer(self.tok)

    def context_window(self) -> int | None:
        cfg = self.config
        for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
            value = getattr(cfg, attr, None)
            if isinstance(value, int) and value > 0:
                return value
        value = getattr(self.tok, "model_max_length", None)
        return value if isinstance(value, int) and 0 < value < 10**7 else None

    # ------------------------------------------------------------------------------------------------ generate

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        results: list[GenerationResult | None] = [None] * len(requests)
        encoded = [self._encode(r) for r in requests]
        for group in group_by_sampling(requests):
            req = requests[group[0]]
            if req.seed is not None and not req.greedy:
                self.torch.manual_seed(req.seed)
            # longest first: similar lengths share a batch (less padding); stable, so ties keep input order
            order = sorted(group, key=lambda i: -len(encoded[i]))
            for batch in chunks(order, self.batch_size):
                for i, res in zip(batch, self._run_batch(req, [encoded[i] for i in batch])):
                    results[i] = res
                if self.progress is not None:
                    self.progress(len(batch))
        return results  # type: ignore[return-value]

    def _encode(self, req: GenerationRequest) -> list[int]:
        ids = self.tok(req.prompt, add_special_tokens=True, verbose=False)["input_ids"]
        if not ids:  # an empty prompt: start from BOS (or EOS) so the model has something to condition on
            start = self.tok.bos_token_id if self.tok.bos_token_id is not None else self.tok.eos_token_id
            ids = [start if start is not None else 0]
        window = self.context_window()
        if window is not None and len(ids) + req.max_new_tokens > window:
            keep = max(1, window - req.max_new_tokens)
            if not self._warned_truncation:
                log.warning("a prompt of %d tokens does not fit the %d-token context with %d new tokens; keeping "
                            "its last %d tokens (set --max-prompt-tokens to budget prompts explicitly)",
                            len(ids), window, req.max_new_tokens, keep)
                self._warned_truncation = True
            ids = ids[-keep:]
        return ids

    def _run_batch(self, req: GenerationRequest, rows: list[list[int]]) -> list[GenerationResult]:
        torch = self.torch
        from transformers import GenerationConfig, StoppingCriteriaList

        width = max(len(r) for r in rows)
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        attention = torch.zeros((len(rows), width), dtype=torch.long)
        for k, ids in enumerate(rows):
            input_ids[k, width - len(ids):] = torch.tensor(ids, dtype=torch.long)
            attention[k, width - len(ids):] = 1
        input_ids, attention = input_ids.to(self.device), attention.to(self.device)
        sample = not req.greedy
        n_seq = req.n if sample else 1
        cfg_kw: dict[str, Any] = dict(max_new_tokens=req.max_new_tokens, do_sample=sample,
                                      num_return_sequences=n_seq, pad_token_id=self.pad_id,
                                      eos_token_id=sorted(self.eos_ids) or None)
        if sample:
            cfg_kw.update(temperature=req.temperature, top_p=req.top_p, top_k=0)
        else:
            cfg_kw.update(temperature=None, top_p=None, top_k=None)
        gen_cfg = GenerationConfig(**cfg_kw)
        criteria = StoppingCriteriaList([_stop_strings(self.tok, req.stop, width)]) if req.stop else None
        with torch.inference_mode():
            out = self.model.generate(input_ids=input_ids, attention_mask=attention, generation_config=gen_cfg,
                                      stopping_criteria=criteria)
        gen = out[:, width:].tolist()
        self.stats["batches"] += 1
        self.stats["prompts"] += len(rows)
        texts, counts = [], []
        for row in gen:
            used = self._used_length(row)
            counts.append(used)
            texts.append(truncate(self.tok.decode(row[:used], skip_special_tokens=True), req.stop))
        self.stats["generated_tokens"] += sum(counts)
        results = []
        for k in range(len(rows)):
            own = slice(k * n_seq, (k + 1) * n_seq)
            samples = texts[own] if sample else texts[k:k + 1] * req.n
            tokens = sum(counts[own]) if sample else counts[k] * req.n
            results.append(GenerationResult(texts=list(samples), prompt_tokens=len(rows[k]),
                                            completion_tokens=tokens))
        return results

    def _used_length(self, row: list[int]) -> int:
        """Generated tokens up to and including the first EOS (what follows is padding of a finished row)."""
        for j, t in enumerate(row):
            if t in self.eos_ids:
                return j + 1
        # a row stopped by a stop string is padded with pad_id (which may not be an EOS id)
        end = len(row)
        while end > 0 and row[end - 1] == self.pad_id and self.pad_id not in self.eos_ids:
            end -= 1
        return end

    def close(self) -> None:
        self._model = None
        if self.device.startswith("cuda"):
            self.torch.cuda.empty_cache()


def _stop_strings(tok: Any, stops: Sequence[str], prompt_width: int):
    """Per-row stopping criterion: a row is done once its generated text contains a stop sequence.

    The whole generated text is decoded each step (not a tail of tokens): SentencePiece decoders drop the leading
    space of the first token, so decoding a tail could hide a stop sequence that starts with a space.
    """
    import torch
    from transformers import StoppingCriteria

    class StopStrings(StoppingCriteria):
        def __call__(self, input_ids, scores, **kwargs):
            texts = tok.batch_decode(input_ids[:, prompt_width:], skip_special_tokens=True)
            return torch.tensor([any(s in t for s in stops) for t in texts], dtype=torch.bool,
                                device=input_ids.device)

    return StopStrings()
