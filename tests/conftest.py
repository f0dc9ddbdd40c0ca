from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
CACHE = Path(os.environ.get("BENCHSMITH_TEST_CACHE", Path.home() / ".cache" / "benchsmith-tests"))

# Fixture repositories are data the analyzers read, never tests of ours (one has a `test_app.py` on purpose).
collect_ignore_glob = ["fixtures/*"]
# the sandboxes the hostile-program tests share (``sandbox``, ``strict``; a module's own fixture of the same name
# wins)
pytest_plugins = ["tests.hostile.sandboxes"]


def _download(kind: str, spec: str, filename: str) -> Path:
    """Fetch a real package (PyPI sdist or npm tarball) once into the test cache."""
    CACHE.mkdir(parents=True, exist_ok=True)
    target = CACHE / filename
    if target.exists():
        return target
    if kind == "pypi":
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps", "-d", str(CACHE), spec]
    else:
        cmd = ["npm", "pack", "--silent", "--pack-destination", str(CACHE), spec]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if res.returncode != 0 or not target.exists():
        pytest.skip(f"could not download {spec} ({kind} registry unreachable?): {res.stderr.strip()[-300:]}")
    return target


@pytest.fixture(scope="session")
def download():
    return _download
