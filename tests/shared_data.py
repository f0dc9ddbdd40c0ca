"""Where the project's shared reference data lives (never copied into the repository).

The checkout normally sits next to ``shared/`` (``<repo>/../shared/data``); a clone elsewhere finds it through
``$BENCHSMITH_SHARED_DATA`` or the workplace's fixed location.  Tests that need it skip, saying where they looked."""

from __future__ import annotations

import os
from pathlib import Path

_CANDIDATES = [
    os.environ.get("BENCHSMITH_SHARED_DATA"),
    str(Path(__file__).resolve().parents[1].parent / "shared" / "data"),
    "/work/shared/data",
]


def shared_data(relative: str) -> Path:
    """The first existing ``<candidate>/<relative>``; else the first candidate's path (for the skip message)."""
    paths = [Path(c) / relative for c in _CANDIDATES if c]
    for p in paths:
        if p.exists():
            return p
    return paths[0]
