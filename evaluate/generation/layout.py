"""Prompt formats (left-to-right, fill-in-the-middle) and where the cross-file context goes, under three budgets.

Left-to-right with the context as comments (or no context) is exactly ``prompting.assemble``: today's prompts,
byte for byte.  Every other layout renders ``context``, ``prefix`` and ``suffix`` through one function and budgets
them the way ``assemble`` does, with a third part:

* the cross-file context is cut on the RIGHT to ``crossfile_max_tokens`` (its first chunks rank best);
* the suffix is cut on the RIGHT to ``suffix_max_tokens`` (the code right after the cursor matters most);
* the prefix gets what is left of the total budget and is cut on the LEFT.

Cuts are token-exact (``prompting.truncate_left``/``truncate_right``) and the whole rendered prompt is re-counted,
giving up one more prefix token while it overshoots, so ``max_prompt_tokens`` is a guarantee: if the template's
sentinels, the context and the suffix alone do not fit, the context shrinks first, then the suffix.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable

from benchsmith.evaluate.generation.base import Tokenizer
from benchsmith.evaluate.generation.fim import FimOrder, FimTemplate, TemplateError
from benchsmith.evaluate.generation.prompting import (
    CCEVAL_CROSSFILE_MAX_TOKENS,
    BudgetError,
    _join,
    assemble,
    count_tokens,
    truncate_left,
    truncate_right,
)


class PromptFormat(str, enum.Enum):
    LTR = "ltr"  # left-to-right: the model continues the prefix
    FIM = "fim"  # fill-in-the-middle: prefix and suffix around the hole


class ContextPlacement(str, enum.Enum):
    NONE = "none"
    COMMENTS = "comments"  # crossfile_context.text before the prefix (CrossCodeEval's)
    REPO_FILES = "repo-files"  # each retrieved chunk as a file of the repository in the family's format


@dataclass(frozen=True)
class PromptSettings:
    format: PromptFormat = PromptFormat.LTR
    placement: ContextPlacement = ContextPlacement.NONE
    order: FimOrder = FimOrder.PSM
    template: FimTemplate | None = None
    crossfile_max_tokens: int = CCEVAL_CROSSFILE_MAX_TOKENS
    suffix_max_tokens: int | None = None

    def __post_init__(self) -> None:
        if self.template is None and (self.format is PromptFormat.FIM
                                      or self.placement is ContextPlacement.REPO_FILES):
            raise TemplateError("fill-in-the-middle prompts and --context-placement repo-files need a template "
                                "(--fim-template NAME, auto or FILE.json)")
        if self.template is not None:
            if self.format is PromptFormat.FIM:
                self.template.pattern(self.order)  # refuses an order the family does not document
            if self.placement is ContextPlacement.REPO_FILES and not self.template.has_repo_format:
                raise TemplateError(f"the {self.template.name} template has no repository-level format; use "
                                    "--context-placement comments or none, or a template file with repo_header")
        if self.suffix_max_tokens is not None and self.suffix_max_tokens < 0:
            raise BudgetError(f"--suffix-max-tokens must be >= 0, got {self.suffix_max_tokens}")

    @property
    def is_legacy(self) -> bool:
        """Today's left-to-right prompt (``prompting.assemble``)."""
        return self.format is PromptFormat.LTR and self.placement is not ContextPlacement.REPO_FILES

    def describe(self) -> dict[str, Any]:
        """The settings that produced a prompt, for the predictions' metadata and the report's columns."""
        out: dict[str, Any] = {"prompt_format": self.format.value, "context_placement": self.placement.value,
                               "crossfile_max_tokens": self.crossfile_max_tokens}
        if self.format is PromptFormat.FIM:
            out["fim_order"] = self.order.value
            out["suffix_max_tokens"] = self.suffix_max_tokens
        if self.template is not None:
            out["fim_template"] = self.template.name
        return out


@dataclass(frozen=True)
class PromptParts:
    """What a CrossCodeEval record offers a prompt."""

    prefix: str  # ``prompt``: the in-file code before the cursor
    suffix: str = ""  # ``right_context``
    crossfile_text: str | None = None  # ``crossfile_context.text`` (comments)
    chunks: tuple[tuple[str, str], ...] = ()  # ``crossfile_context.list``: (filename, retrieved_chunk), best first
    repository: str = ""
    path: str = ""  # the file being completed


@dataclass(frozen=True)
class BuiltPrompt:
    text: str
    context_tokens: int | None = None
    prefix_tokens: int | None = None
    suffix_tokens: int | None = None
    total_tokens: int | None = None
    truncated: bool = False
    suffix: str = ""  # the suffix the model saw (after its cut)
    # template strings found inside the code or context: a tokenizer reads them as special tokens, so the model
    # saw a different layout than intended (recorded, since repository code is untrusted and may hold them)
    sentinels_in_code: tuple[str, ...] = ()

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"prompt_tokens": {"context": self.context_tokens, "prefix": self.prefix_tokens,
                                                 "suffix": self.suffix_tokens, "total": self.total_tokens},
                               "truncated": self.truncated}
        if self.sentinels_in_code:
            out["sentinels_in_code"] = list(self.sentinels_in_code)
        return out


def build_prompt(parts: PromptParts, s: PromptSettings, tokenizer: Tokenizer | None,
                 max_prompt_tokens: int | None) -> BuiltPrompt:
    if s.is_legacy:
        ctx = parts.crossfile_text if s.placement is ContextPlacement.COMMENTS else None
        a = assemble(parts.prefix, ctx, tokenizer, max_prompt_tokens, s.crossfile_max_tokens)
        total = count_tokens(tokenizer, a.text) if tokenizer is not None else None
        return BuiltPrompt(a.text, a.crossfile_tokens, a.infile_tokens, None, total, a.truncated)
    render, raw_ctx, sep = _renderer(parts, s)
    suffix = parts.suffix if s.format is PromptFormat.FIM else ""
    # the code and names the prompt carries (not the rendered repository block, which holds sentinels by design)
    carried = [parts.prefix, suffix, parts.path, parts.repository]
    if s.placement is ContextPlacement.REPO_FILES:
        carried += [text for chunk in parts.chunks for text in chunk]
    else:
        carried.append(raw_ctx)
    found = _sentinels_in(s.template, tuple(carried))
    if tokenizer is None:
        if max_prompt_tokens is not None or s.suffix_max_tokens is not None:
            raise BudgetError("a token budget needs the model's tokenizer; this backend has none (give "
                              "--tokenizer PATH, or drop --max-prompt-tokens/--suffix-max-tokens)")
        ctx = _join(raw_ctx, "") if sep else raw_ctx
        return BuiltPrompt(render(ctx, parts.prefix, suffix), suffix=suffix, sentinels_in_code=found)
    if max_prompt_tokens is not None and max_prompt_tokens < 1:
        raise BudgetError(f"the prompt budget is {max_prompt_tokens} tokens; raise --max-prompt-tokens or lower "
                          "--max-new-tokens")

    def count(text: str) -> int:
        return count_tokens(tokenizer, text) if text else 0

    ctx_budget = s.crossfile_max_tokens if max_prompt_tokens is None else min(s.crossfile_max_tokens,
                                                                                max_prompt_tokens)
    ctx = _cut_context(raw_ctx, ctx_budget, sep, tokenizer)
    kept_suffix = suffix if s.suffix_max_tokens is None else truncate_right(suffix, s.suffix_max_tokens, tokenizer)
    prefix = parts.prefix
    if max_prompt_tokens is not None:
        # the skeleton (sentinels, context, suffix) must leave room: shrink the context, then the suffix
        while (over := count(render(ctx, "", kept_suffix)) - max_prompt_tokens) > 0:
            if ctx:
                ctx = _cut_context(raw_ctx, max(0, count(ctx) - over), sep, tokenizer)
            elif kept_suffix:
                kept_suffix = truncate_right(kept_suffix, max(0, count(kept_suffix) - over), tokenizer)
            else:
                raise BudgetError(f"the {s.template.name if s.template else ''} template's tokens alone exceed the "
                                  f"prompt budget of {max_prompt_tokens} tokens")
        allowed = max_prompt_tokens - count(render(ctx, "", kept_suffix))
        prefix = truncate_left(parts.prefix, allowed, tokenizer)
        # tokens can merge across the joins; re-count the whole and give up one more token if that overshot
        while prefix and count(render(ctx, prefix, kept_suffix)) > max_prompt_tokens:
            allowed -= 1
            prefix = truncate_left(parts.prefix, allowed, tokenizer)
    text = render(ctx, prefix, kept_suffix)
    truncated = ctx != (_join(raw_ctx, "") if sep else raw_ctx) or kept_suffix != suffix or prefix != parts.prefix
    return BuiltPrompt(text, count(ctx), count(prefix), count(kept_suffix), count(text), truncated, kept_suffix,
                       found)


def _sentinels_in(template: FimTemplate | None, texts: tuple[str, ...]) -> tuple[str, ...]:
    if template is None:
        return ()
    marks = sorted(set(template.sentinels) | set(template.end_tokens))
    return tuple(m for m in marks if any(m in t for t in texts))


def _cut_context(raw: str, budget: int, sep: bool, tokenizer: Tokenizer) -> str:
    """``raw`` cut on the right to ``budget`` tokens, counting the newline ``_join`` adds after comments."""
    if not raw:
        return ""
    cut = truncate_right(raw, budget, tokenizer)
    if not sep:
        return cut
    piece = _join(cut, "") if cut else ""
    if piece and count_tokens(tokenizer, piece) > budget:
        cut = truncate_right(raw, budget - 1, tokenizer)
        piece = _join(cut, "") if cut else ""
    return piece


def _renderer(parts: PromptParts, s: PromptSettings) -> tuple[Callable[[str, str, str], str], str, bool]:
    """(render(context, prefix, suffix), the uncut context, whether the context is joined by a newline)."""
    t = s.template
    if s.placement is ContextPlacement.REPO_FILES:
        assert t is not None
        raw = t.render_repo(parts.repository, parts.chunks)
        head, pre_head = t.current_file(parts.path)
        if s.format is PromptFormat.LTR:
            return (lambda c, p, x: c + head + pre_head + p), raw, False
        order = s.order
        return (lambda c, p, x: c + head + t.render_fim(order, pre_head + p, x)), raw, False
    raw = (parts.crossfile_text or "") if s.placement is ContextPlacement.COMMENTS else ""
    assert t is not None and s.format is PromptFormat.FIM
    order = s.order
    # the comments open the FIM prefix: the model reads them before the code, as in the left-to-right prompt
    return (lambda c, p, x: t.render_fim(order, c + p, x)), raw, True
