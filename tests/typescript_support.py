"""What the TypeScript and JavaScript analyzer tests share: the pinned compiler they need, and finding a reference."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def require_tsc(tsc: Path) -> None:
    """Fail (never skip) without the pinned TypeScript or node: both are set up by `make setup`."""
    if not tsc.is_file() or shutil.which("node") is None:
        pytest.fail(f"pinned TypeScript missing at {tsc} (or no node): run `bash scripts/setup_toolchains.sh "
                    ".toolchains`")


def ref_at(result, file: str, line1: int, symbol: str):
    """The reference of ``result`` at the 1-based line of ``file`` whose name is ``symbol`` (None when none)."""
    found = [r for r in result.refs if r.file == file and r.line == line1 - 1 and r.symbol == symbol]
    assert len(found) <= 1, found
    return found[0] if found else None
