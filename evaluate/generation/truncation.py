"""Cut model outputs down to the code that belongs to the prompt.

* Completion models continue the prompt: the completion is cut at the earliest of the variant's stop sequences,
  searched from the end of the prompt (a completion that repeats the prompt has it removed first, so a stop
  sequence inside the prompt never counts).
* Instruction-tuned models answer in prose with fenced code: :func:`extract_code` takes the ```python block
  (the one that defines the entry point when there are several).
"""

from __future__ import annotations

import re
from typing import Iterable

_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w+#.-]*)[^\n]*\n", re.MULTILINE)
_PYTHON_TAGS = {"", "python", "py", "python3", "py3"}


def strip_prompt(completion: str, prompt: str | None) -> str:
    """Remove an echoed prompt (some servers return prompt + completion)."""
    if prompt and completion.startswith(prompt):
        return completion[len(prompt):]
    return completion


def truncate(completion: str, stop: Iterable[str], prompt: str | None = None) -> str:
    """The completion up to (not including) the earliest stop sequence; positions count from the prompt's end."""
    text = strip_prompt(completion, prompt)
    cut = len(text)
    for seq in stop:
        if not seq:
            continue
        idx = text.find(seq)
        if idx != -1 and idx < cut:
            cut = idx
    return text[:cut]


def code_blocks(text: str) -> list[tuple[str, str]]:
    """Fenced blocks as (language tag, code); an unterminated last fence runs to the end of the text."""
    blocks: list[tuple[str, str]] = []
    pos = 0
    while True:
        m = _FENCE.search(text, pos)
        if m is None:
            return blocks
        fence, tag = m.group(1), m.group(2).lower()
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        end = close.search(text, m.end())
        if end is None:
            blocks.append((tag, text[m.end():]))
            return blocks
        blocks.append((tag, text[m.end():end.start()]))
        pos = end.end()


def extract_code(text: str, entry_point: str | None = None) -> str:
    """The Python code of an instruction-tuned answer.

    Preference: a Python-tagged (or untagged) block that defines ``entry_point``; else the first such block;
    else any block defining it; else the text itself (the model answered with bare code)."""
    blocks = code_blocks(text)
    if not blocks:
        return text
    python = [code for tag, code in blocks if tag in _PYTHON_TAGS]
    defines = re.compile(rf"^\s*(async\s+)?def\s+{re.escape(entry_point)}\s*\(", re.MULTILINE) if entry_point else None
    if defines is not None:
        for code in python + [code for _, code in blocks]:
            if defines.search(code):
                return code
    if python:
        return python[0]
    return blocks[0][1]


def defines_function(code: str, name: str) -> bool:
    """Does ``code`` define ``name`` at top level (column 0)?"""
    return re.search(rf"^(async\s+)?def\s+{re.escape(name)}\s*\(", code, re.MULTILINE) is not None


def remove_function(source: str, name: str) -> str:
    """``source`` without the last top-level ``def name(...)`` and what follows it up to the next top-level
    statement: used to replace the prompt's stub of the target by an instruction model's full definition."""
    matches = list(re.finditer(rf"^(async\s+)?def\s+{re.escape(name)}\s*\(", source, re.MULTILINE))
    if not matches:
        return source
    start = matches[-1].start()
    # decorators directly above belong to the function
    while True:
        prev = source.rfind("\n", 0, max(start - 1, 0))
        line = source[prev + 1:start - 1] if start > 0 else ""
        if start > 0 and line.lstrip().startswith("@") and not line.startswith((" ", "\t")):
            start = prev + 1
        else:
            break
    nxt = re.compile(r"^(?=[^\s#])", re.MULTILINE)
    body_start = source.find("\n", matches[-1].end())
    end_match = nxt.search(source, body_start + 1) if body_start != -1 else None
    end = end_match.start() if end_match else len(source)
    return source[:start] + source[end:]
