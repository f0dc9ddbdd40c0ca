"""``benchsmith generate`` for CrossCodeEval records in other prompt formats: the flags, the record's parts a
fill-in-the-middle or repository prompt reads, the chosen settings, and the post-processing of each completion
with what it did (the settings and rules are written beside each prediction as its ``metadata``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchsmith.evaluate.generation.command import GenerateOptions, Task


class InputError(ValueError):
    pass


def _field(obj: dict, name: str, kind: type, where: str, required: bool = True) -> Any:
    if name not in obj or obj[name] is None:
        if required:
            raise InputError(f"{where}: missing field {name!r}")
        return None
    value = obj[name]
    if not isinstance(value, kind):
        raise InputError(f"{where}: field {name!r} must be {kind.__name__}, got {type(value).__name__}")
    return value


def add_format_arguments(p: argparse.ArgumentParser) -> None:
    f = p.add_argument_group("prompt format (CrossCodeEval records; any of these records settings per prediction)")
    f.add_argument("--prompt-format", choices=["ltr", "fim"],
                   help="ltr: left-to-right (today's prompt); fim: fill-in-the-middle with the suffix")
    f.add_argument("--fim-template", help="model family (starcoder, starcoder2, codellama, deepseek-coder, "
                   "qwen2.5-coder, codestral, granite), auto (from the tokenizer's special tokens; default), "
                   "or a template FILE.json")
    f.add_argument("--fim-order", choices=["psm", "spm"], default="psm",
                   help="prefix-suffix-middle (default) or suffix-prefix-middle")
    f.add_argument("--context-placement", choices=["none", "comments", "repo-files"],
                   help="cross-file context: none, comments before the prefix (--crossfile-context), or the "
                        "retrieved chunks as repository files in the template's repository format")
    f.add_argument("--postprocess", metavar="RULES",
                   help="comma-separated: end_of_middle, suffix_repeat, statement_end, or none (default: all "
                        "three for fim, none for ltr)")


def prompt_parts(obj: dict, prompt: str, text: str | None, where: str):
    from benchsmith.evaluate.generation.layout import PromptParts

    chunks: list[tuple[str, str]] = []
    ctx = obj.get("crossfile_context")
    for k, item in enumerate((_field(ctx, "list", list, where + " crossfile_context", required=False) or [])
                             if isinstance(ctx, dict) else []):
        at = f"{where} crossfile_context.list[{k}]"
        if not isinstance(item, dict):
            raise InputError(f"{at}: must be an object with filename and retrieved_chunk")
        chunks.append((_field(item, "filename", str, at), _field(item, "retrieved_chunk", str, at)))
    meta = obj["metadata"]
    return PromptParts(prefix=prompt, suffix=_field(obj, "right_context", str, where, required=False) or "",
                       crossfile_text=text, chunks=tuple(chunks),
                       repository=_field(meta, "repository", str, where + " metadata", required=False) or "",
                       path=_field(meta, "file", str, where + " metadata", required=False) or "")


def postprocess(task: Task, built, texts: list[str], opts: GenerateOptions, budget: int | None,
                records: list[dict] | None) -> list[str]:
    """The rules of ``opts.postprocess`` on each sample (identically for every backend), with what they did."""
    from benchsmith.evaluate.generation.postprocess import apply

    settings = opts.prompt
    ends = settings.template.end_tokens if settings.template is not None else ()
    suffix = built.suffix  # what the model saw after the cursor ("" left-to-right: it saw no suffix)
    out = []
    for text in texts:
        done = apply(text, opts.postprocess, ends, suffix)
        out.append(done.text)
        if records is not None:
            post: dict[str, Any] = {"rules": [r.value for r in opts.postprocess],
                                    "applied": [r.value for r in done.applied]}
            if done.applied:
                post["raw"] = text  # the backend's text, so the score can be traced to what the model wrote
            records.append({"model": opts.model, **settings.describe(), "max_prompt_tokens": budget,
                            "max_new_tokens": opts.max_new_tokens, **built.describe(), "postprocess": post})
    return out


def prompt_settings(args: argparse.Namespace, opts: GenerateOptions, backend) -> None:
    """Fill ``opts.prompt``/``opts.postprocess`` from the prompt-format flags (left alone when none is given)."""
    chosen = (args.prompt_format, args.context_placement, args.fim_template, args.postprocess, args.suffix_max_tokens)
    if all(v is None for v in chosen):
        return
    from benchsmith.evaluate.generation.fim import FimOrder, load_template, tokenizer_special_tokens
    from benchsmith.evaluate.generation.layout import ContextPlacement, PromptFormat, PromptSettings
    from benchsmith.evaluate.generation.postprocess import ORDER, parse_rules

    fmt = PromptFormat(args.prompt_format or "ltr")
    placement = ContextPlacement(args.context_placement or ("comments" if args.crossfile_context else "none"))
    template = None
    if fmt is PromptFormat.FIM or placement is ContextPlacement.REPO_FILES or args.fim_template:
        spec = args.fim_template or "auto"
        tok = backend.tokenizer()
        specials = tokenizer_special_tokens(tok.tok) if tok is not None and hasattr(tok, "tok") else []
        if spec == "auto" and not specials:
            raise ValueError("--fim-template auto reads the tokenizer's special tokens, and this backend has no "
                             "tokenizer; name the family (--fim-template starcoder ...) or give --tokenizer")
        template = load_template(spec, specials)
    if args.suffix_max_tokens is not None and backend.tokenizer() is None:
        raise ValueError("--suffix-max-tokens needs the model's tokenizer; this backend has none (give --tokenizer)")
    opts.model = args.model
    opts.prompt = PromptSettings(format=fmt, placement=placement, order=FimOrder(args.fim_order), template=template,
                                 crossfile_max_tokens=opts.crossfile_max_tokens,
                                 suffix_max_tokens=args.suffix_max_tokens)
    default_rules = ",".join(r.value for r in ORDER) if fmt is PromptFormat.FIM else "none"
    opts.postprocess = parse_rules(args.postprocess if args.postprocess is not None else default_rules)


