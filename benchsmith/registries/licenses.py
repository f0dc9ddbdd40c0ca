"""A registry's declared licence, normalised to an SPDX expression where it can be.

What a registry says is free text written by the package's author (PyPI's ``license`` is sometimes the whole
licence text): an SPDX expression is accepted only when every identifier in it is one this module knows, common
spellings (``Apache 2.0``, ``MIT License``, ``BSD``) are mapped only where they name one licence without doubt,
and anything else normalises to None (the filters then read the licence file, as for any other source)."""

from __future__ import annotations

import re

# SPDX identifiers this module accepts, by their lower-case spelling.
_SPDX_IDS = {i.lower(): i for i in (
    "MIT", "MIT-0", "Apache-2.0", "Apache-1.1", "BSD-2-Clause", "BSD-3-Clause", "0BSD", "ISC", "Unlicense", "Zlib",
    "PSF-2.0", "Python-2.0", "BSL-1.0", "CC0-1.0", "BlueOak-1.0.0", "X11", "UPL-1.0", "MPL-2.0", "EPL-1.0",
    "EPL-2.0", "LGPL-2.1-only", "LGPL-2.1-or-later", "LGPL-3.0-only", "LGPL-3.0-or-later", "GPL-2.0-only",
    "GPL-2.0-or-later", "GPL-3.0-only", "GPL-3.0-or-later", "AGPL-3.0-only", "AGPL-3.0-or-later", "CC-BY-4.0",
    "Artistic-2.0", "LGPL-2.1", "LGPL-3.0", "GPL-2.0", "GPL-3.0", "AGPL-3.0", "WTFPL", "HPND", "Unicode-3.0")}

# Licences whose terms let a benchmark carry the code (the repository filter's permissive set, in SPDX terms).
PERMISSIVE_SPDX = frozenset({"MIT", "MIT-0", "Apache-2.0", "Apache-1.1", "BSD-2-Clause", "BSD-3-Clause", "0BSD",
                             "ISC", "Unlicense", "Zlib", "PSF-2.0", "Python-2.0", "BSL-1.0", "CC0-1.0",
                             "BlueOak-1.0.0", "X11", "UPL-1.0", "HPND"})

# Free-text spellings that name exactly one licence (lower case, punctuation squeezed to single spaces).
_ALIASES = {
    "mit": "MIT", "mit license": "MIT", "the mit license": "MIT", "mit licence": "MIT", "expat": "MIT",
    "apache 2": "Apache-2.0", "apache 2 0": "Apache-2.0", "apache2": "Apache-2.0", "apache license 2 0": "Apache-2.0",
    "apache license version 2 0": "Apache-2.0", "apache software license 2 0": "Apache-2.0", "asl 2 0": "Apache-2.0",
    "bsd 3 clause": "BSD-3-Clause", "3 clause bsd": "BSD-3-Clause", "new bsd": "BSD-3-Clause",
    "bsd 3 clause license": "BSD-3-Clause", "modified bsd": "BSD-3-Clause", "new bsd license": "BSD-3-Clause",
    "bsd 2 clause": "BSD-2-Clause", "simplified bsd": "BSD-2-Clause", "2 clause bsd": "BSD-2-Clause",
    "isc": "ISC", "isc license": "ISC", "unlicense": "Unlicense", "the unlicense": "Unlicense",
    "zlib": "Zlib", "psf": "PSF-2.0", "psfl": "PSF-2.0", "python software foundation license": "PSF-2.0",
    "mpl 2 0": "MPL-2.0", "mozilla public license 2 0": "MPL-2.0", "cc0": "CC0-1.0", "public domain cc0": "CC0-1.0",
    "gplv2": "GPL-2.0-only", "gplv3": "GPL-3.0-only", "lgplv3": "LGPL-3.0-only", "agplv3": "AGPL-3.0-only",
    "boost software license 1 0": "BSL-1.0",
}

# Trove classifiers (``License :: OSI Approved :: ...``) that name one licence and its version.
_CLASSIFIERS = {
    "MIT License": "MIT", "MIT No Attribution License (MIT-0)": "MIT-0", "ISC License (ISCL)": "ISC",
    "Apache Software License": None, "BSD License": None,  # no version or clause count: not one licence
    "The Unlicense (Unlicense)": "Unlicense", "zlib/libpng License": "Zlib",
    "Python Software Foundation License": "PSF-2.0", "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0",
    "Boost Software License 1.0 (BSL-1.0)": "BSL-1.0", "Universal Permissive License (UPL)": "UPL-1.0",
    "GNU General Public License v3 (GPLv3)": "GPL-3.0-only", "GNU General Public License v2 (GPLv2)": "GPL-2.0-only",
    "GNU Affero General Public License v3": "AGPL-3.0-only",
    "GNU Lesser General Public License v3 (LGPLv3)": "LGPL-3.0-only",
    "GNU Lesser General Public License v2 or later (LGPLv2+)": "LGPL-2.1-or-later",
    "Eclipse Public License 2.0 (EPL-2.0)": "EPL-2.0", "Apache Software License 2.0": "Apache-2.0",
    "CC0 1.0 Universal (CC0 1.0) Public Domain Dedication": "CC0-1.0",
}

_TOKEN_RE = re.compile(r"\(|\)|[A-Za-z0-9.+-]+")
MAX_EXPRESSION_CHARS = 200


def spdx_expression(text: str | None) -> str | None:
    """``text`` as an SPDX expression of known identifiers (case fixed: ``mit OR apache-2.0`` -> ``MIT OR
    Apache-2.0``), or None.  Parentheses must balance; ``WITH`` exceptions are kept verbatim when well formed."""
    if not text or len(text) > MAX_EXPRESSION_CHARS:
        return None
    tokens = _TOKEN_RE.findall(text)
    if "".join(tokens) != re.sub(r"\s+", "", text):
        return None  # characters outside the expression grammar
    out, depth, expect_id, after_with = [], 0, True, False
    for tok in tokens:
        upper = tok.upper()
        if tok == "(" and expect_id:
            depth += 1
            out.append(tok)
        elif tok == ")" and not expect_id and depth:
            depth -= 1
            out.append(tok)
        elif upper in ("AND", "OR", "WITH") and not expect_id:
            out.append(upper)
            expect_id, after_with = True, upper == "WITH"
        elif expect_id and tok not in "()":
            if after_with:
                out.append(tok)
            else:
                ident = _SPDX_IDS.get(tok.lower().removesuffix("+"))
                if ident is None:
                    return None
                out.append(ident + ("+" if tok.endswith("+") else ""))
            expect_id, after_with = False, False
        else:
            return None
    if depth or expect_id:
        return None
    return " ".join(out).replace("( ", "(").replace(" )", ")")


def normalise(declared: str | None, classifiers: list[str] | None = None) -> str | None:
    """An SPDX expression for what a registry declares: an expression, then a known spelling, then a single
    licence classifier; None when none of them names a licence without doubt."""
    expr = spdx_expression(declared)
    if expr:
        return expr
    if declared and len(declared) <= MAX_EXPRESSION_CHARS and not set("()") & set(declared):
        # a spelling, not a broken expression (``(MIT`` is no licence without doubt)
        key = " ".join(re.sub(r"[^a-z0-9]+", " ", declared.lower()).split())
        if key in _ALIASES:
            return _ALIASES[key]
    named = {_CLASSIFIERS.get(c.rsplit(" :: ", 1)[-1]) for c in classifiers or () if c.startswith("License ::")}
    named.discard(None)
    return named.pop() if len(named) == 1 else None


def is_permissive(expression: str | None) -> bool | None:
    """Whether the code may be used under a permissive licence: an ``OR`` lets the user pick any alternative, an
    ``AND`` needs every part permissive.  None when there is no expression to judge."""
    if not expression:
        return None
    if " WITH " in expression:
        return False  # an exception changes the terms; judged by hand, not here

    def judge(expr: str) -> bool:
        expr = expr.strip()
        while expr.startswith("(") and _closing(expr, 0) == len(expr) - 1:
            expr = expr[1:-1].strip()
        for op, combine in ((" OR ", any), (" AND ", all)):
            parts = _split_top(expr, op)
            if len(parts) > 1:
                return combine(judge(p) for p in parts)
        return expr.removesuffix("+") in PERMISSIVE_SPDX

    return judge(expression)


def _closing(expr: str, start: int) -> int:
    depth = 0
    for i in range(start, len(expr)):
        depth += {"(": 1, ")": -1}.get(expr[i], 0)
        if depth == 0:
            return i
    return -1


def _split_top(expr: str, op: str) -> list[str]:
    parts, depth, last, i = [], 0, 0, 0
    while i < len(expr):
        c = expr[i]
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0 and expr.startswith(op, i):
            parts.append(expr[last:i])
            i += len(op)
            last = i
            continue
        i += 1
    parts.append(expr[last:])
    return parts
