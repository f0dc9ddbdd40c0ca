"""Parts several analyzers share: text insertions that map back to the original, tree walking, trivia skipping,
the analyzers' cache directory and the UTF-8 locale JVM and mono need.  (Text positions are in
``benchsmith.text_positions``; the tree-sitter factory in ``benchsmith.treesitter``.)"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable


@dataclass
class Insertions:
    """Text added to a file at original character offsets (stubs); maps stubbed offsets back to the original."""

    points: list[tuple[int, int]] = field(default_factory=list)  # (original offset, inserted length), sorted

    def to_original(self, stubbed: int) -> int | None:
        shift = 0
        for at, length in self.points:
            start = at + shift
            if stubbed < start:
                break
            if stubbed < start + length:
                return None  # inside a stub: a diagnostic about our own text
            shift += length
        return stubbed - shift

    def to_stubbed(self, original: int) -> int:
        """An original offset in the stubbed text (text inserted at an offset comes before the character there)."""
        return original + sum(length for at, length in self.points if at <= original)


def apply_insertions(text: str, inserts: Iterable[tuple[int, str]]) -> tuple[str, Insertions]:
    parts: list[str] = []
    last = 0
    ins = Insertions()
    for at, s in sorted(inserts, key=lambda x: x[0]):
        parts.append(text[last:at])
        parts.append(s)
        ins.points.append((at, len(s)))
        last = at
    parts.append(text[last:])
    return "".join(parts), ins


def tree_has_errors(root) -> bool:
    return bool(root.has_error)


def walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


_SKIP_WS_COMMENTS = re.compile(r"(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)


def skip_trivia(text: str, at: int) -> int:
    """The first offset at or after ``at`` that is not whitespace or a comment."""
    return _SKIP_WS_COMMENTS.match(text, at).end()


def cache_dir() -> Path:
    base = os.environ.get("BENCHSMITH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "benchsmith")
    return Path(base)


def utf8_env() -> dict[str, str]:
    # Non-ASCII file names only round-trip through the JVM/mono when the process locale is UTF-8.
    return {"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
