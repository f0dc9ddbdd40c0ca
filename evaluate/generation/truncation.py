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

_TAG = re.compile(r"[\w+#.-]*")
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


def _opening(line: str) -> tuple[str, str] | None:
    """(fence, tag) when ``line`` (without its newline) opens a fenced block: optional blanks, three or more
    backticks or tildes, optional blanks, the tag, anything."""
    body = line.lstrip(" \t")
    if not body.startswith(("```", "~~~")):
        return None
    run = len(body) - len(body.lstrip(body[0]))
    rest = body[run:].lstrip(" \t")
    tag = _TAG.match(rest)
    return body[:run], tag.group(0) if tag else ""


def _closes(line: str, fence: str) -> bool:
    body = line.strip(" \t")
    return len(body) >= len(fence) and body == fence[0] * len(body)


def code_blocks(text: str) -> list[tuple[str, str]]:
    """Fenced blocks as (language tag, code); an unterminated last fence runs to the end of the text.

    One pass over the lines, each looked at once (model output is untrusted: no pattern may scan a long run of
    blank lines once per line)."""
    blocks: list[tuple[str, str]] = []
    opened: tuple[str, str, int] | None = None  # fence, tag, where the code starts
    pos = 0
    while pos <= len(text):
        nl = text.find("\n", pos)
        end = len(text) if nl == -1 else nl
        line = text[pos:end]
        if opened is None:
            found = _opening(line) if nl != -1 else None  # an opening fence ends with its newline
            if found is not None:
                opened = (found[0], found[1].lower(), nl + 1)
        elif _closes(line, opened[0]):
            blocks.append((opened[1], text[opened[2]:pos]))
            opened = None
        if nl == -1:
            break
        pos = nl + 1
    if opened is not None:
        blocks.append((opened[1], text[opened[2]:]))
    return blocks


def extract_code(text: str, entry_point: str | None = None) -> str:
    """The Python code of an instruction-tuned answer.

    Preference: a Python-tagged (or untagged) block that defines ``entry_point``; else the first such block;
    else any block defining it; else the text itself (the model answered with bare code)."""
    blocks = code_blocks(text)
    if not blocks:
        return text
    python = [code for tag, code in blocks if tag in _PYTHON_TAGS]
    # blanks before `def` stay on its line: `^\s*` would rescan every following blank line from each line start
    defines = (re.compile(rf"^[^\S\n]*(async\s+)?def\s+{re.escape(entry_point)}\s*\(", re.MULTILINE)
               if entry_point else None)
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
