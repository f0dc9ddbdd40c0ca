"""Prompt assembly under a token budget, the way CrossCodeEval's evaluation does it.

CrossCodeEval (``scripts/eval.py``, model type ``codelm_cfc``; ``scripts/vllm_inference.py`` does the same with
text) gives the cross-file context its own budget (``cfc_seq_length``, 512 tokens by default) and cuts it on the
RIGHT (its first chunks are the best-ranked ones), then gives the in-file prompt whatever the context did not use of
the total prompt budget (``max_seq_length - gen_length``) and cuts it on the LEFT (the code next to the cursor
matters most).  The model sees ``crossfile + prompt``.

We follow that, with one difference in mechanics: instead of decoding token ids back to text (lossy for byte-level
tokenizers that split a UTF-8 character), we cut the original string at a token boundary using the tokenizer's
character offsets, then re-count; if re-tokenising the cut string yields more tokens than the budget (merges can
change at the new edge) we drop one more token and try again, so the budget is a guarantee, not an estimate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchsmith.evaluate.generation.base import Tokenizer

CCEVAL_CROSSFILE_MAX_TOKENS = 512  # CrossCodeEval's default cfc_seq_length


class BudgetError(ValueError):
    pass


class HFTokenizer:
    """Adapter: a Hugging Face tokenizer -> ``Tokenizer`` (character spans of tokens, special tokens excluded)."""

    def __init__(self, tok: Any) -> None:
        self.tok = tok
        self.fast = bool(getattr(tok, "is_fast", False))

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        if not text:
            return []
        if self.fast:
            enc = self.tok(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
            return [(int(a), int(b)) for a, b in enc["offset_mapping"]]
        # slow tokenizers have no offsets: rebuild them from cumulative detokenised lengths
        tokens = self.tok.tokenize(text)
        spans, prev = [], 0
        for i in range(len(tokens)):
            end = min(len(text), len(self.tok.convert_tokens_to_string(tokens[: i + 1])))
            spans.append((prev, max(prev, end)))
            prev = max(prev, end)
        return spans

    def count(self, text: str) -> int:
        return len(self.token_spans(text))


def count_tokens(tokenizer: Tokenizer, text: str) -> int:
    return len(tokenizer.token_spans(text))


def truncate_left(text: str, budget: int, tokenizer: Tokenizer) -> str:
    """Keep at most ``budget`` tokens from the END of ``text`` (cut at a token boundary)."""
    if budget <= 0:
        return ""
    spans = tokenizer.token_spans(text)
    drop = len(spans) - budget
    while drop > 0:
        # keep everything after the last dropped token (this keeps whitespace a trimmed offset left out)
        cut = text[spans[drop - 1][1]:]
        if len(tokenizer.token_spans(cut)) <= budget:
            return cut
        drop += 1
        if drop > len(spans):
            return ""
    return text


def truncate_right(text: str, budget: int, tokenizer: Tokenizer) -> str:
    """Keep at most ``budget`` tokens from the START of ``text`` (cut at a token boundary)."""
    if budget <= 0:
        return ""
    spans = tokenizer.token_spans(text)
    keep = min(budget, len(spans))
    if keep == len(spans):
        return text
    while keep > 0:
        cut = text[: spans[keep - 1][1]]
        if len(tokenizer.token_spans(cut)) <= budget:
            return cut
        keep -= 1
    return ""


@dataclass
class AssembledPrompt:
    text: str  # == crossfile + infile
    crossfile: str = ""  # the kept cross-file context, with the newline that separates it from the code
    infile: str = ""
    infile_tokens: int | None = None
    crossfile_tokens: int | None = None
    truncated: bool = False


def assemble(prompt: str, crossfile_text: str | None, tokenizer: Tokenizer | None, max_prompt_tokens: int | None,
             crossfile_max_tokens: int = CCEVAL_CROSSFILE_MAX_TOKENS) -> AssembledPrompt:
    """``crossfile_text`` (right-cut to its budget) + ``prompt`` (left-cut to what is left of the total budget).

    ``crossfile_text=None`` is the in-file-only setting.  ``max_prompt_tokens=None`` means no budget (the whole
    text is used; the cross-file budget still applies when a tokenizer is available).
    """
    cfc = crossfile_text or ""
    if tokenizer is None:
        if max_prompt_tokens is not None:
            raise BudgetError("a prompt token budget needs the model's tokenizer; this backend has none "
                              "(give --tokenizer PATH, or drop --max-prompt-tokens)")
        head = _join(cfc, "")
        return AssembledPrompt(text=head + prompt, crossfile=head, infile=prompt)
    if max_prompt_tokens is not None and max_prompt_tokens < 1:
        raise BudgetError(f"the prompt budget is {max_prompt_tokens} tokens; raise --max-prompt-tokens or lower "
                          "--max-new-tokens")
    truncated = False
    if cfc:
        cfc_budget = crossfile_max_tokens if max_prompt_tokens is None else min(crossfile_max_tokens,
                                                                                 max_prompt_tokens)
        cut = truncate_right(cfc, cfc_budget, tokenizer)
        if cut and count_tokens(tokenizer, _join(cut, "")) > cfc_budget:  # the separating newline counts too
            cut = truncate_right(cfc, cfc_budget - 1, tokenizer)
        truncated |= cut != cfc
        cfc = cut
    head = _join(cfc, "")  # the context plus the separating newline, if it needs one
    head_tokens = count_tokens(tokenizer, head) if head else 0
    body = prompt
    if max_prompt_tokens is not None:
        allowed = max_prompt_tokens - head_tokens
        body = truncate_left(prompt, allowed, tokenizer)
        # tokens can merge across the join; re-count the whole and give up one more token if that overshot
        while body and count_tokens(tokenizer, head + body) > max_prompt_tokens:
            allowed -= 1
            body = truncate_left(prompt, allowed, tokenizer)
        truncated |= body != prompt
    return AssembledPrompt(text=head + body, crossfile=head, infile=body, infile_tokens=count_tokens(tokenizer, body),
                           crossfile_tokens=head_tokens, truncated=truncated)


def _join(crossfile: str, prompt: str) -> str:
    if not crossfile:
        return prompt
    # CrossCodeEval's text contexts end with a newline; add one only when missing, so code never runs together
    return crossfile + ("" if crossfile.endswith("\n") else "\n") + prompt
