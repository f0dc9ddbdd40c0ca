"""A repository's own pylint pragmas, made inert in the copies we lint.

``# pylint: skip-file``, ``disable=no-member``, ``disable-all``, ``disable-next``, ``enable`` ... are inline
configuration: they would silence, in both trees alike, the very messages the diff is made of, so a repository
could remove its own examples (or all of them) without anyone noticing.  pylint reads a pragma only from a
comment token matching ``\\bpylint:`` (``pylint.utils.pragma_parser.OPTION_RGX``), so replacing that colon in
comments turns every pragma into plain text while every line and byte offset stays where it was.
"""

from __future__ import annotations

import io
import re
import tokenize

_PRAGMA = re.compile(r"\bpylint:")
_INERT = "pylint;"  # same length, no pragma: positions of everything after it are unchanged


def neutralise(text: str) -> str:
    """``text`` with the pylint pragmas of its comments made inert (same length, same lines); a text that does
    not tokenize is returned as is (pylint cannot read its pragmas either: it reports the file instead)."""
    if "pylint:" not in text:
        return text
    lines = io.StringIO(text).readlines()  # the lines tokenize numbers, each with its ending
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and "pylint:" in tok.string:
                at = starts[tok.start[0] - 1] + tok.start[1]
                spans += [(at + m.start(), at + m.end()) for m in _PRAGMA.finditer(tok.string)]
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    if not spans:
        return text
    out = list(text)
    for start, end in spans:
        out[start:end] = list(_INERT)
    return "".join(out)
