"""Limits beyond rlimits: the sandbox's private memory cgroup directory (``benchsmith.confine``'s, when the machine
has one) and the paths hidden from programs."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from benchsmith import runner
from benchsmith.confine.capabilities import cgroup_layout
from benchsmith.confine.cgroup_tree import PrivateCgroups


CGROUP_PREFIX = "benchsmith-sbx-"
_CGROUPS_LOCK = threading.Lock()
_CGROUPS: list = []  # [PrivateCgroups | None, why-not] once probed


def memory_cgroups() -> PrivateCgroups | None:
    """This process's private memory cgroup directory (probed and created once; removed at exit), or None."""
    with _CGROUPS_LOCK:
        if not _CGROUPS:
            cg, why = PrivateCgroups.create(cgroup_layout(), CGROUP_PREFIX)
            _CGROUPS[:] = [cg, why]
            if cg is not None:
                import atexit

                atexit.register(cg.close)
        return _CGROUPS[0]


def cgroup_note() -> str:
    memory_cgroups()
    return _CGROUPS[1]


def default_hidden_paths() -> list[str]:
    """What a sandboxed program must never read: benchsmith's own package and data directories (wherever it is
    installed), the project tree it runs from, and the workspace's shared data (HumanExtension releases ...)."""
    import benchsmith

    out = [Path(benchsmith.__file__).resolve().parent]
    for mod in ("benchsmith.evaluate", "benchsmith.builders", "benchsmith.analyzers"):
        try:
            spec = __import__(mod, fromlist=["_"])
            out.append(Path(spec.__file__).resolve().parent)
        except Exception:  # noqa: BLE001 - an absent optional part hides nothing
            continue
    root = runner.repo_root()
    out += [root, root.parent / "shared"]
    if os.environ.get("BENCHSMITH_SHARED_DATA"):
        out.append(Path(os.environ["BENCHSMITH_SHARED_DATA"]))
    return [str(p) for p in out]
