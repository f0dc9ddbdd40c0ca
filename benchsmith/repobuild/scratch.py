"""Where a build works: its language folder, the scratch directory its repositories are extracted and analysed
in, and the progress files its workers publish."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from benchsmith.shards import SHARDS_DIR

if TYPE_CHECKING:
    from benchsmith.repobuild.config import RepoBuildConfig


def lang_dir(config: "RepoBuildConfig") -> Path:
    return Path(config.output) / config.language


def scratch_dir(config: "RepoBuildConfig") -> Path:
    """Where this build's repositories are extracted and analysed: one directory per output directory, so a
    killed run's leftovers (checkouts, stubbed trees) are found and removed by the next run of the same build;
    under the output directory (or ``workdir``), never at a name another user could plant (benchsmith.scratch)."""
    if not config.workdir:
        return lang_dir(config) / SHARDS_DIR / "scratch"
    key = hashlib.sha1(str(Path(config.output).resolve() / config.language).encode()).hexdigest()[:12]
    return Path(config.workdir) / f"benchsmith-build-{key}"


def progress_dir(config: "RepoBuildConfig") -> Path:
    return scratch_dir(config) / "progress"


def shard_dirname(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "._-@" else "_" for c in name)
    return f"{safe}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"
