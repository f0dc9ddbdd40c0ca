"""What every per-repository build is given: the repositories, where the output goes, how toolchains run and how
the work is spread.  A family's own options extend it (``builders/cceval/config.BuildConfig``)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from benchsmith.confine import DEFAULT_MEMORY_MB
from benchsmith.executors import ExecutorKind
from benchsmith.files import FileLimits
from benchsmith.records import RepoSpec
from benchsmith.runner import ToolchainBackend
from benchsmith.sources import RepoFilterConfig

# Where or how fast a shard is computed, never what it holds: left out of the fingerprint.
NOT_CONTENT = ("output", "repos", "workers", "executor", "ray_address", "force", "workdir")


@dataclass
class RepoBuildConfig:
    language: str
    output: str
    repos: list[RepoSpec] = field(default_factory=list)
    repo_filters: RepoFilterConfig = RepoFilterConfig()
    file_limits: FileLimits = FileLimits()
    backend: ToolchainBackend = ToolchainBackend.LOCAL
    timeout: float = 900.0
    toolchain_memory_mb: int = DEFAULT_MEMORY_MB  # each toolchain run's whole process tree
    allow_unconfined: bool = False  # run toolchains unconfined where the machine cannot confine them
    seed: int = 0
    workers: int | None = None
    executor: ExecutorKind = ExecutorKind.LOCAL
    ray_address: str | None = None
    force: bool = False
    workdir: str | None = None

    def fingerprint(self) -> str:
        """What determines a shard's content (not where or how fast it is computed), a family's options too."""
        keep = {k: v for k, v in jsonable(dataclasses.asdict(self)).items() if k not in NOT_CONTENT}
        return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]


def jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    if hasattr(obj, "value") and not isinstance(obj, (int, float, str)):
        return obj.value
    return obj
