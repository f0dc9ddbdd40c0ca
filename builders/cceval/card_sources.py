"""The card's sections on where the code came from and what the split cost: per repository its source's dates
and licence (a registry source: the registry's version, release date, first release and declared licence), the
cut-off dates the build applied (``stats.json``), and the construction cost (wall time, CPU time of the build and
of the toolchains, examples per CPU-hour; ``<lang>/cost.json``)."""

from __future__ import annotations

from typing import Any


def _day(value: Any) -> str:
    return str(value)[:10] if value else "-"


def sources_section(langs: list) -> list[str]:
    from benchsmith.builders.cceval.card import _table

    lines = ["", "## Sources, dates and licences", ""]
    cut = {}
    for st in langs:
        for key, value in (st.cut_off or {}).items():
            if value:
                cut.setdefault(key, set()).add(value)
    if cut:
        said = {"created_after": "first release (registry) or first commit on or after",
                "released_after": "this version released on or after"}
        lines.append("Cut-off: " + "; ".join(f"{said.get(k, k)} {', '.join(sorted(v))}" for k, v in sorted(cut.items()))
                     + ". Every repository below passed it (the rest are in `excluded.jsonl`).")
    else:
        lines.append("Cut-off: none was applied (no --created-after or --released-after).")
    lines.append("")
    rows = []
    for st in langs:
        for r in st.per_repository:
            p = r.get("provenance") or {}
            if not p:
                continue
            rows.append([st.language, r.get("repository"), f"{p.get('registry')}:{p.get('name')}", p.get("version"),
                         _day(p.get("released")), _day(p.get("first_released")),
                         p.get("license_spdx") or f"({p.get('license_declared') or 'none declared'})",
                         str(p.get("digest", ""))[:19]])
    if rows:
        lines += _table(["language", "repository", "package", "version", "released", "first release", "licence",
                         "digest"], rows, right_from=8)
        lines += ["", "Dates and licences are the registry's (licence normalised to SPDX; in parentheses when it "
                  "names no licence without doubt); the artifact was checked against the digest shown."]
    else:
        lines.append("No repository came from a package registry; their dates are their git histories'.")
    return lines


def cost_section(langs: list) -> list[str]:
    from benchsmith.builders.cceval.card import _table

    rows = []
    for st in langs:
        cost = st.cost if isinstance(st.cost, dict) else {}
        for r in cost.get("per_repository") or ():
            if isinstance(r, dict) and isinstance(r.get("cost"), dict):
                rows.append([st.language, r.get("repository"), *_cost_cells(r["cost"])])
        if isinstance(cost.get("total"), dict):
            rows.append([st.language, "**total**", *_cost_cells(cost["total"])])
    if not rows:
        return []
    lines = ["", "## Construction cost", "",
             "Measured while each repository's shard was built (a resumed shard keeps its first cost): wall time, "
             "CPU time of benchsmith itself and of the toolchains it ran, and examples per CPU-hour of both "
             "(`<language>/cost.json`; measurements, so they differ between two fresh builds).", ""]
    return lines + _table(["language", "repository", "wall s", "build CPU s", "toolchain CPU s", "examples",
                           "examples / CPU-hour"], rows, right_from=2)


def _cost_cells(c: dict) -> list[Any]:
    rate = c.get("examples_per_cpu_hour")
    return [f"{c.get('wall_seconds', 0):.1f}", f"{c.get('build_cpu_seconds', 0):.1f}",
            f"{c.get('toolchain_cpu_seconds', 0):.1f}", c.get("examples", 0), "-" if rate is None else f"{rate:.1f}"]
