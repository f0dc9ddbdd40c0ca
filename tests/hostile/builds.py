"""Hostile cases built through the real CLI (``build cceval``), and its JSON Lines outputs read back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.timing import scaled

REPO_ROOT = Path(__file__).resolve().parents[2]
CONTROL = REPO_ROOT / "samples" / "python" / "shoplib"


def cli(*args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    timeout = scaled(300) if timeout is None else timeout
    cmd = [sys.executable, "-m", "benchsmith.cli", "build", "cceval", "--retrievers", "none", "--no-card", "-q",
           *args]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)
    assert res.returncode == 0, f"build failed ({res.returncode}):\n{res.stdout[-3000:]}\n{res.stderr[-3000:]}"
    return res


def read(path: Path) -> list[dict]:
    # split at \n only: a JSON string may hold U+2028 or \x85 unescaped, which str.splitlines() breaks at
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
