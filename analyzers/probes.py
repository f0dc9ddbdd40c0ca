"""Toolchain version probes: ``javac -version``, ``go env GOVERSION``, ``mcs --version``, ``node --version``.

A probe runs the tool on no repository input, once per (executable, resolved path) per process, and never fails
a build: a missing or broken tool gives ``missing`` (an empty string where callers ask for that).  The versions
go into ``stats.json`` and the resume fingerprint, so they must be cheap and deterministic.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Mapping

from benchsmith.runner import ToolMissing, run


def probe_version(argv: tuple[str, ...], resolved: str, pattern: str | None = None, *,
                  env: Mapping[str, str] | None = None, inherit_env: bool = True, timeout: float = 60,
                  missing: str = "", fallback_chars: int = 0) -> str:
    """The version ``argv`` prints (stdout and stderr together): ``pattern``'s first group when given, else the
    stripped output.  ``resolved`` (the executable's real path) keys the cache, so a tool swapped on ``PATH`` is
    probed again.  ``missing`` when the tool cannot run; when ``pattern`` does not match, the first
    ``fallback_chars`` characters of the output (empty by default)."""
    return _probe(tuple(argv), resolved, pattern, tuple(sorted((env or {}).items())), inherit_env, timeout,
                  missing, fallback_chars)


@lru_cache(maxsize=None)
def _probe(argv, resolved, pattern, env, inherit_env, timeout, missing, fallback_chars) -> str:
    try:
        res = run(list(argv), timeout=timeout, env=dict(env) or None, inherit_env=inherit_env)
    except ToolMissing:
        return missing
    text = (res.stdout + res.stderr).strip()
    if pattern is None:
        return text
    m = re.search(pattern, text)
    return m.group(1) if m else text[:fallback_chars]
