"""Where an example's cursor goes in its line: right before the cross-file name (``--cursor name``) or where the
released CrossCodeEval puts it (``--cursor released``).

The released benchmark (measured with ``bench/released.py`` on the released repositories: a released groundtruth
found once in its repository, followed by a line end, marks a released cursor) places it per language:
- Python and C#: at the cross-file name (C#: the type or attribute name), as ``--cursor name`` does;
- Java: at the start of a token of the line, from its first token to the reference, whitespace staying in the
  prompt (``    double `` | ``hue = hct.getHue();``, ``return `` | ``MathUtils.lerp(...)``);
- TypeScript: at the end of a token of the line or at column 0, whitespace and indentation going to the
  groundtruth (``await`` | `` saveRequestMock(...)``, ```` | ``    const card = deps.sourceCard;``).
Which token looks random, with more weight on some kinds of places than a uniform draw gives;
``Analyzer.released_cursor`` holds each language's rule and the weight of each kind of place (``CursorPlace``),
fitted with ``bench/released.py --fit``.  The draw is seeded by the build's seed and the task id, so that builds are
byte-identical.  The released groundtruth of the brace languages runs to the end of the first line, from the
cursor's, whose last token ends a statement (``ReleasedCursor.line_end``, ``examples.line_end_cut``): every located
released groundtruth of Java, TypeScript and C# ends there.  A place is a candidate only where the cut from it ends
where the cut from the name ends, so ``prompt + groundtruth + right_context`` is still the file.
"""

from __future__ import annotations

import random
from typing import Callable, Iterator

from benchsmith.analyzers.base import Boundary, ReleasedCursor
from benchsmith.records import CursorPlace


def classify(line_prefix: str) -> CursorPlace:
    """The kind of place a cursor is at, from the text of its line before it."""
    if not line_prefix.strip():
        return CursorPlace.LINE_START
    if line_prefix.endswith("."):
        return CursorPlace.AFTER_DOT
    return CursorPlace.ELSEWHERE


def _line_tokens(tree, line_start: int, name: int) -> Iterator:
    """Non-comment leaves of ``tree`` that start on the line at ``line_start`` (byte offsets) and before or at
    ``name``; zero-width leaves (a missing token tree-sitter inserted) are no place."""
    node = tree.root_node.descendant_for_byte_range(line_start, name)
    while node is not None and node.start_byte > line_start and node.parent is not None:
        node = node.parent
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        if n.end_byte <= line_start or n.start_byte > name:
            continue
        if n.child_count == 0:
            if n.start_byte >= line_start and n.end_byte > n.start_byte and "comment" not in n.type:
                yield n
            continue
        stack.extend(reversed(n.children))


def candidate_places(rule: ReleasedCursor, tree, line_start: int, name: int) -> list[int]:
    """Byte offsets where ``rule`` may put the cursor of a reference whose name starts at byte ``name`` on the line
    starting at ``line_start``, in text order, the name's own place included; before any statement check."""
    if rule.boundary is Boundary.NAME:
        return [name]
    tokens = list(_line_tokens(tree, line_start, name))
    if rule.boundary is Boundary.TOKEN_START:
        places = {t.start_byte for t in tokens} | {name}
    else:  # the token before the name ends at the name's own place, or before the whitespace in front of it
        places = {line_start} | {t.end_byte for t in tokens if t.end_byte <= name}
    return sorted(p for p in places if line_start <= p <= name)


def choose_place(rule: ReleasedCursor, places: list[int], kind_of: Callable[[int], CursorPlace],
                 key: str) -> int:
    """One of ``places``, drawn with ``rule``'s weight for each place's kind, seeded by ``key``."""
    if len(places) == 1:
        return places[0]
    weights = [rule.weight(kind_of(p)) for p in places]
    if not any(w > 0 for w in weights):
        return places[-1]
    return random.Random(key).choices(places, weights=weights, k=1)[0]
