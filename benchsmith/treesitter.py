"""The one tree-sitter factory: a ``Language`` and a ``Parser`` per grammar wheel function, built once per process.

Grammar wheels (``tree_sitter_python``, ``tree_sitter_typescript`` ...) are imported lazily, on first use, so a
command that never parses never pays for them.  Parsers are reused: callers parse whole texts and keep no parser
state between calls.
"""

from __future__ import annotations

import importlib
from functools import lru_cache


def language(module: str, function: str = "language"):
    """The tree-sitter ``Language`` that ``module.function()`` returns (a grammar wheel's capsule)."""
    return _language(module, function)


def parser(module: str, function: str = "language"):
    """A ``Parser`` for ``language(module, function)``."""
    return _parser(module, function)


def query(module: str, source: str, function: str = "language"):
    """A compiled ``Query`` over ``language(module, function)``."""
    return _query(module, source, function)


# The caches take every argument positionally, so ``parser("m")`` and ``parser("m", "language")`` are one entry
# (lru_cache keys a defaulted and a passed argument differently).
@lru_cache(maxsize=None)
def _language(module: str, function: str):
    from tree_sitter import Language

    return Language(getattr(importlib.import_module(module), function)())


@lru_cache(maxsize=None)
def _parser(module: str, function: str):
    from tree_sitter import Parser

    return Parser(_language(module, function))


@lru_cache(maxsize=None)
def _query(module: str, source: str, function: str):
    from tree_sitter import Query

    return Query(_language(module, function), source)


def query_of_patterns(module: str, patterns: tuple[str, ...], function: str = "language"):
    """One ``Query`` of the ``patterns`` this grammar version knows: another version may lack a node kind, field
    or token, and then only the rule behind that pattern sees nothing.  All of them compile at once in the usual
    case; each is tried alone only when they do not (a compile costs about 10 ms whatever its size)."""
    return _query_of_patterns(module, tuple(patterns), function)


@lru_cache(maxsize=None)
def _query_of_patterns(module: str, patterns: tuple[str, ...], function: str):
    from tree_sitter import Query

    lang = _language(module, function)
    try:
        return Query(lang, " ".join(patterns))
    except Exception:  # noqa: BLE001 - tree_sitter raises QueryError subclasses
        pass
    known = []
    for pattern in patterns:
        try:
            Query(lang, pattern)
        except Exception:  # noqa: BLE001
            continue
        known.append(pattern)
    return Query(lang, " ".join(known))
