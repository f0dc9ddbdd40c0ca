"""``benchsmith generate``: completions for a built split, one ``{"task_id", "pred"}`` line per sample.

Input records are either CrossCodeEval examples (``prompt``, ``groundtruth``, ``right_context``,
``metadata.task_id``, optional ``crossfile_context.text``) or HumanExtension variants (``task_id``, ``prompt``,
``stop``).  With ``--crossfile-context`` a CrossCodeEval prompt is the cross-file context followed by the in-file
prompt, budgeted as CrossCodeEval does (see ``benchsmith.evaluate.generation.prompting``).  ``--prompt-format fim``
and ``--context-placement`` choose other layouts (``layout``, ``fim``, ``postprocess``; flags in ``formats``), and
then each prediction line carries the settings that made it as ``metadata``.  HumanExtension step_by_step
stage-2 records are filled with the model's own stage-1 auxiliary (sample j with sample j) after stage 1 ran.

Output order is deterministic: input order, then sample index.  The file is written atomically at the end; with
``--cache DIR`` greedy completions are stored as they finish, so an interrupted run resumes for free.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from benchsmith.evaluate.generation.base import GenerationRequest, backend_names
from benchsmith.evaluate.generation.formats import (
    InputError,
    _field,
    add_format_arguments,
    postprocess,
    prompt_parts,
    prompt_settings,
)

CHUNK = 64  # requests per backend call: progress granularity, and how much work the cache saves on a crash


@dataclass
class Task:
    task_id: str
    prompt: str
    crossfile_text: str | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    template: str | None = None  # step_by_step stage 2
    stage1_task_id: str | None = None
    program_prefix: str | None = None  # step_by_step stage 1: the code the completion continues
    where: str = ""
    parts: Any = None  # CrossCodeEval records: layout.PromptParts (prefix, suffix, retrieved files)


def parse_task(obj: dict, where: str) -> Task:
    """One input record -> Task; errors name ``file:line`` and the field."""
    if isinstance(obj.get("metadata"), dict) and "task_id" in obj["metadata"]:  # CrossCodeEval schema
        task_id = _field(obj["metadata"], "task_id", str, where + " metadata")
        prompt = _field(obj, "prompt", str, where)
        ctx = obj.get("crossfile_context")
        text = None
        if ctx is not None:
            if not isinstance(ctx, dict):
                raise InputError(f"{where}: field 'crossfile_context' must be an object")
            text = _field(ctx, "text", str, where + " crossfile_context", required=False)
        try:
            parts: Any = prompt_parts(obj, prompt, text, where)
        except InputError as exc:
            # only fill-in-the-middle and repository prompts read these fields; a left-to-right run stays as it was
            parts = exc
        return Task(task_id, prompt, crossfile_text=text, where=where, parts=parts)
    task_id = _field(obj, "task_id", str, where)
    prompt = _field(obj, "prompt", str, where)
    stop = _field(obj, "stop", list, where, required=False) or []
    if not all(isinstance(s, str) for s in stop):
        raise InputError(f"{where}: field 'stop' must be a list of strings")
    seed = obj.get("seed")
    if seed is not None and not isinstance(seed, int):
        raise InputError(f"{where}: field 'seed' must be an integer")
    extra = obj.get("extra") if isinstance(obj.get("extra"), dict) else {}
    template = obj.get("template") if obj.get("stage") == 2 else None
    if template is not None and not isinstance(template, str):
        raise InputError(f"{where}: field 'template' must be a string")
    stage1 = extra.get("stage1_task_id") if template is not None else None
    if template is not None and not isinstance(stage1, str):
        raise InputError(f"{where}: a step_by_step stage-2 record needs extra.stage1_task_id")
    prefix = extra.get("program_prefix") if obj.get("stage") == 1 else None
    return Task(task_id, prompt, stop=tuple(stop), seed=seed, template=template, stage1_task_id=stage1,
                program_prefix=prefix if isinstance(prefix, str) else None, where=where)


def read_tasks(path: str | Path) -> list[Task]:
    from benchsmith.jsonio import iter_jsonl

    tasks: list[Task] = []
    try:
        for line in iter_jsonl(path):
            tasks.append(parse_task(line.obj, f"{path}:{line.lineno}"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason}); re-encode the file as UTF-8") from None
    return tasks


# -------------------------------------------------------------------------------------------------- generation


@dataclass
class GenerateOptions:
    max_new_tokens: int = 50
    temperature: float = 0.0
    top_p: float = 0.95
    n: int = 1
    seed: int | None = None
    crossfile_context: bool = False
    max_prompt_tokens: int | None = None
    crossfile_max_tokens: int = 512
    extra_stop: tuple[str, ...] = ()
    # CrossCodeEval records: a layout.PromptSettings chosen on the command line (None: today's prompt, nothing
    # recorded) and the post-processing rules (postprocess.Rule) applied to every completion
    prompt: Any = None
    postprocess: tuple = ()
    model: str = ""  # --model as given, recorded beside each prediction with the settings


def prompt_budget(backend, opts: GenerateOptions) -> int | None:
    """The prompt's token budget: ``--max-prompt-tokens``, else the model's window minus the new tokens."""
    if opts.max_prompt_tokens is not None:
        return opts.max_prompt_tokens
    window = backend.context_window()
    if window is None or backend.tokenizer() is None:
        return None
    return window - opts.max_new_tokens


def generate_tasks(backend, tasks: Sequence[Task], opts: GenerateOptions,
                   advance: Callable[[int], None] | None = None,
                   metadata: dict[int, list[dict]] | None = None) -> dict[int, list[str]]:
    """Completions for every task (index -> n texts).  Stage-2 step_by_step tasks run after their stage 1.

    With ``opts.prompt`` set, CrossCodeEval prompts follow its layout, completions pass ``opts.postprocess``, and
    ``metadata`` (when given) receives, per task index, one record per sample of how its prediction was made."""
    from benchsmith.evaluate.generation.prompting import assemble

    tokenizer = backend.tokenizer()
    budget = prompt_budget(backend, opts)
    by_id = {t.task_id: i for i, t in enumerate(tasks)}
    out: dict[int, list[str]] = {}
    built: dict[int, Any] = {}

    def request(task: Task, prompt: str, n: int, seed: int | None) -> GenerationRequest:
        if opts.prompt is not None and task.parts is not None and task.template is None:
            from benchsmith.evaluate.generation.layout import build_prompt

            if isinstance(task.parts, InputError):
                raise task.parts
            b = built[id(task)] = build_prompt(task.parts, opts.prompt, tokenizer, budget)
            return GenerationRequest(prompt=b.text, max_new_tokens=opts.max_new_tokens, temperature=opts.temperature,
                                     top_p=opts.top_p, n=n, seed=seed, stop=tuple(task.stop) + opts.extra_stop)
        ctx = task.crossfile_text if opts.crossfile_context else None
        text = assemble(prompt, ctx, tokenizer, budget, opts.crossfile_max_tokens).text
        return GenerationRequest(prompt=text, max_new_tokens=opts.max_new_tokens, temperature=opts.temperature,
                                 top_p=opts.top_p, n=n, seed=seed, stop=tuple(task.stop) + opts.extra_stop)

    def run(indices: list[int], reqs: list[GenerationRequest]) -> list[list[str]]:
        texts: list[list[str]] = []
        for start in range(0, len(reqs), CHUNK):
            part = reqs[start:start + CHUNK]
            texts.extend(r.texts for r in backend.generate(part))
            if advance is not None:
                advance(len(part))
        return texts

    seed_of = (lambda t: opts.seed if opts.seed is not None else (t.seed if t.seed is not None else 0))
    first = [i for i, t in enumerate(tasks) if t.template is None]
    reqs = [request(tasks[i], tasks[i].prompt, opts.n, seed_of(tasks[i])) for i in first]
    for i, texts in zip(first, run(first, reqs)):
        out[i] = texts
        b = built.get(id(tasks[i]))
        if b is not None:
            out[i] = postprocess(tasks[i], b, texts, opts, budget,
                                 metadata.setdefault(i, []) if metadata is not None else None)

    second = [i for i, t in enumerate(tasks) if t.template is not None]
    if second:
        from benchsmith.evaluate.humanext.program import fill_auxiliary

        owners, reqs2 = [], []
        for i in second:
            t = tasks[i]
            j1 = by_id.get(t.stage1_task_id or "")
            if j1 is None:
                raise InputError(f"{t.where}: its stage-1 record {t.stage1_task_id!r} is not in the input")
            prefix = tasks[j1].program_prefix or ""
            for k, aux in enumerate(out[j1]):
                owners.append(i)
                # sample k of stage 2 builds on sample k of stage 1; each is one draw (n=1)
                reqs2.append(request(t, fill_auxiliary(t.template or "", prefix + aux), 1, seed_of(t) + k))
        for i, texts in zip(owners, run(owners, reqs2)):
            out.setdefault(i, []).extend(texts)
    return out


def write_predictions(path: str | Path, tasks: Sequence[Task], preds: dict[int, list[str]],
                      metadata: dict[int, list[dict]] | None = None) -> int:
    from benchsmith.jsonio import AtomicWriter

    n = 0
    with AtomicWriter(path) as w:
        for i, task in enumerate(tasks):
            meta = (metadata or {}).get(i) or []
            for k, text in enumerate(preds[i]):
                rec: dict[str, Any] = {"task_id": task.task_id, "pred": text}
                if k < len(meta):
                    rec["metadata"] = meta[k]
                w.write_record(rec)
                n += 1
    return n


# -------------------------------------------------------------------------------------------------------- CLI


def add_backend_arguments(p: argparse.ArgumentParser, default_backend: str = "hf") -> None:
    """Options shared by ``generate`` and ``screen``: which model, where, how."""
    g = p.add_argument_group("model")
    # --backend is the deprecated spelling: it means a toolchain or a sandbox in other commands
    g.add_argument("--model-backend", "--backend", dest="model_backend", default=default_backend,
                   choices=backend_names(),
                   help=f"vllm (GPU), hf (transformers, CPU or GPU), openai (HTTP /v1/completions); "
                        f"default {default_backend} (--backend: deprecated alias)")
    g.add_argument("--batch-size", type=int, default=8, help="prompts per forward pass (hf) or per HTTP call")
    g.add_argument("--cache", metavar="DIR", help="cache greedy completions in DIR (reruns are free)")
    g.add_argument("--device", help="hf: cpu, cuda, cuda:1 ... (default: cuda if available)")
    g.add_argument("--dtype", help="hf/vllm: auto, float32, float16, bfloat16")
    g.add_argument("--gguf-file", help="hf: the .gguf file name inside --model (or give the .gguf path as --model)")
    g.add_argument("--tokenizer", help="tokenizer path/name (openai: needed for prompt budgets)")
    g.add_argument("--trust-remote-code", action="store_true", help="let transformers/vLLM run the model repo's code")
    g.add_argument("--tensor-parallel-size", type=int, default=1, help="vllm: GPUs per model")
    g.add_argument("--no-prefix-caching", action="store_true", help="vllm: disable automatic prefix caching")
    g.add_argument("--max-model-len", type=int, help="vllm: context length to allocate")
    g.add_argument("--base-url", help="openai: server URL (default $OPENAI_BASE_URL or http://localhost:8000/v1)")
    g.add_argument("--context-window", type=int, help="openai: the model's context length, for prompt budgets")
    g.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def open_backend(args: argparse.Namespace):
    from benchsmith.evaluate.generation.base import CachedBackend, RequestCache, create_backend

    backend = create_backend(
        args.model_backend, args.model, batch_size=args.batch_size, device=args.device, dtype=args.dtype,
        gguf_file=args.gguf_file, tokenizer=args.tokenizer, trust_remote_code=args.trust_remote_code or None,
        tensor_parallel_size=args.tensor_parallel_size, enable_prefix_caching=not args.no_prefix_caching,
        max_model_len=args.max_model_len, base_url=args.base_url, context_window=args.context_window,
        seed=getattr(args, "seed", None))
    if args.cache:
        backend = CachedBackend(backend, RequestCache(args.cache))
    return backend


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="hub name, local directory, or .gguf file")
    p.add_argument("--input", required=True, metavar="PROMPTS.jsonl", help="a built split (CrossCodeEval records "
                   "or HumanExtension variants)")
    p.add_argument("--output", required=True, metavar="PREDS.jsonl")
    p.add_argument("--crossfile-context", action="store_true",
                   help="prepend crossfile_context.text to CrossCodeEval prompts (CrossCodeEval's budgeting)")
    s = p.add_argument_group("decoding")
    s.add_argument("--max-new-tokens", type=int, default=50, help="default 50, as CrossCodeEval")
    s.add_argument("--temperature", type=float, default=0.0, help="0 = greedy (default)")
    s.add_argument("--top-p", type=float, default=0.95, help="nucleus sampling (ignored when greedy)")
    s.add_argument("--n", type=int, default=1, help="samples per task")
    s.add_argument("--seed", type=int, help="sampling seed (default: the record's seed, else 0)")
    s.add_argument("--stop", action="append", default=[], help="extra stop sequence (repeatable)")
    b = p.add_argument_group("prompt budget")
    b.add_argument("--max-prompt-tokens", type=int,
                   help="total prompt tokens (default: the model's context window minus --max-new-tokens)")
    b.add_argument("--crossfile-max-tokens", type=int, default=512,
                   help="tokens for the cross-file context, cut on the right (default 512, as CrossCodeEval)")
    b.add_argument("--suffix-max-tokens", type=int,
                   help="fim: tokens for the suffix (right_context), cut on the right (default: no own budget)")
    add_format_arguments(p)
    add_backend_arguments(p)


def run(args: argparse.Namespace) -> int:
    from benchsmith.evaluate.generation.base import BackendUnavailable, GenerationError
    from benchsmith.evaluate.generation.prompting import BudgetError
    from benchsmith.jsonio import JsonlError

    try:
        tasks = read_tasks(args.input)
        opts = GenerateOptions(max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=args.top_p,
                               n=args.n, seed=args.seed, crossfile_context=args.crossfile_context,
                               max_prompt_tokens=args.max_prompt_tokens,
                               crossfile_max_tokens=args.crossfile_max_tokens, extra_stop=tuple(args.stop))
        GenerationRequest(prompt="", max_new_tokens=opts.max_new_tokens, temperature=opts.temperature,
                          top_p=opts.top_p, n=opts.n)  # validates the decoding options before loading a model
        backend = open_backend(args)
        try:
            prompt_settings(args, opts, backend)
        except ValueError:
            backend.close()
            raise
    except (InputError, JsonlError, ValueError, BackendUnavailable, GenerationError, FileNotFoundError) as exc:
        print(f"benchsmith generate: {exc}", file=sys.stderr)
        return 2
    try:
        total = sum(opts.n if t.template is not None else 1 for t in tasks)
        with _progress(args.quiet, total, f"{args.model_backend}:{Path(args.model).name}") as advance:
            metadata: dict[int, list[dict]] = {}
            preds = generate_tasks(backend, tasks, opts, advance, metadata)
        written = write_predictions(args.output, tasks, preds, metadata)
    except (InputError, BudgetError, GenerationError) as exc:
        print(f"benchsmith generate: {exc}", file=sys.stderr)
        return 1
    finally:
        backend.close()
    _report(args, backend, len(tasks), written)
    return 0


def _report(args, backend, tasks: int, written: int) -> None:
    from rich.console import Console

    cache = getattr(backend, "cache", None)
    extra = f" (cache: {cache.hits} hits, {cache.misses} new)" if cache is not None else ""
    Console(stderr=True, quiet=args.quiet).print(f"{tasks} tasks -> {written} predictions in {args.output}{extra}")


class _progress:
    """A rich progress bar counting requests (no-op when quiet); yields the ``advance`` callback."""

    def __init__(self, quiet: bool, total: int, label: str) -> None:
        self.quiet, self.total, self.label = quiet, total, label
        self.bar = None

    def __enter__(self) -> Callable[[int], None]:
        if self.quiet:
            return lambda k: None
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.bar = Progress(TextColumn(f"[bold]{self.label}[/]"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), transient=False)
        self.bar.start()
        task = self.bar.add_task("generate", total=self.total)
        return lambda k: self.bar.update(task, advance=k)

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.stop()
