"""What building a split cost, and where its code came from: per repository, the wall time, the CPU time of the
build itself (this process: snapshot, parsing, cutting, retrieval) and of the toolchains it ran (reaped child
processes: pylint, tsc, javac, mcs, go), and the registry release it was built from.  The cost is written to the
shard's ``cost.json`` when the shard is built, so a resumed build reports what the shard cost when it was made, and
gathered into ``<lang>/cost.json`` (per repository and the total) and the card.  Timings are measurements, different
for every fresh build of the same repositories: they have a file of their own, so that ``stats.json`` (like the
splits) stays byte-identical across builds."""

from __future__ import annotations

import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COST_FILE = "cost.json"


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


@dataclass
class CostMeter:
    """Started when a repository's task starts (one task per process at a time, so the differences are its own)."""

    wall: float
    cpu: float
    children: float

    @classmethod
    def start(cls) -> "CostMeter":
        return cls(time.monotonic(), time.process_time(), _children_cpu())

    def stop(self, examples: int) -> dict[str, Any]:
        build_cpu = max(0.0, time.process_time() - self.cpu)
        tool_cpu = max(0.0, _children_cpu() - self.children)
        return cost_row(time.monotonic() - self.wall, build_cpu, tool_cpu, examples)


def cost_row(wall: float, build_cpu: float, tool_cpu: float, examples: int) -> dict[str, Any]:
    cpu = build_cpu + tool_cpu
    return {"wall_seconds": round(wall, 3), "build_cpu_seconds": round(build_cpu, 3),
            "toolchain_cpu_seconds": round(tool_cpu, 3), "examples": examples,
            "examples_per_cpu_hour": round(examples * 3600 / cpu, 1) if cpu > 0 else None}


def total_cost(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The sum over the repositories whose shard recorded a cost (None when none did: shards built before it)."""
    costs = [r["cost"] for r in rows if isinstance(r.get("cost"), dict)]
    if not costs:
        return None
    total = cost_row(sum(c["wall_seconds"] for c in costs), sum(c["build_cpu_seconds"] for c in costs),
                     sum(c["toolchain_cpu_seconds"] for c in costs), sum(c["examples"] for c in costs))
    return {**total, "repositories_measured": len(costs)}


def write_cost(lang_dir: Path, shards: list[Path], shard_stats: list[dict[str, Any]]) -> dict[str, Any]:
    """``<lang>/cost.json`` from each shard's ``cost.json`` (absent for a shard that failed), in repository order."""
    import json

    from benchsmith.jsonio import write_json

    rows = []
    for shard, st in zip(shards, shard_stats):
        try:
            cost = json.loads((Path(shard) / COST_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            cost = None
        rows.append({"repository": st.get("repository"), "cost": cost if isinstance(cost, dict) else None})
    data = {"per_repository": rows, "total": total_cost(rows)}
    write_json(lang_dir / COST_FILE, data)
    return data


def provenance(checkout: Any) -> dict[str, Any] | None:
    """A registry source's release record (``RegistryRelease``), or None for other sources and failed checkouts."""
    release = getattr(checkout, "release", None)
    return release.to_dict() if release is not None else None


def cut_off(filters: Any) -> dict[str, str | None]:
    """The decontamination cut-offs a build applied (``--created-after``, ``--released-after``)."""
    return {"created_after": filters.created_after.isoformat() if filters.created_after else None,
            "released_after": filters.released_after.isoformat() if filters.released_after else None}
