"""The numbers of ``results.json`` for one model: pass@k per setting, perturbation, position and implementation
style, and the correlation of pass rate with the auxiliary's position."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Sequence

from benchsmith.evaluate.humanext.inputs import SETTING_ORDER
from benchsmith.evaluate.humanext.passk import PassAtK, aggregate
from benchsmith.evaluate.humanext.plan import SampleResult
from benchsmith.evaluate.humanext.style import Style
from benchsmith.evaluate.humanext.records import Perturbation, Setting


def _pk(row: dict[int, PassAtK]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in sorted(row.items()):
        out[f"pass@{k}"] = round(v.value, 6)
    if row:
        first = next(iter(row.values()))
        out["problems"] = first.problems
        out["n_min"] = first.n_min
    return out


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    if len(xs) < 3 or len(xs) != len(ys):
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if sx == 0 or sy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy)


def model_results(samples: Sequence[SampleResult], ks: Sequence[int]) -> dict[str, Any]:
    """All aggregates for one model.  A problem is a pair: the samples of all variants of a pair in a group
    are that pair's samples (so irrelevant/renamed variants with several draws count once per pair)."""
    settings = aggregate(((s.setting, s.pair_id, s.passed) for s in samples
                          if s.setting is not Setting.ORACLE or s.perturbation is Perturbation.NONE), ks)
    perturbations = aggregate(((s.perturbation, s.pair_id, s.passed) for s in samples
                               if s.setting is Setting.ORACLE), ks)
    multi = [s for s in samples if s.setting is Setting.MULTI_AUXILIARY and s.position is not None]
    positions = aggregate(((s.position, s.pair_id, s.passed) for s in multi), ks)
    out: dict[str, Any] = {
        "samples": len(samples),
        "verdicts": dict(sorted(Counter(s.verdict for s in samples).items())),
        "settings": {st.value: _pk(settings[st]) for st in SETTING_ORDER if st in settings},
        "perturbations": {p.value: _pk(perturbations[p]) for p in Perturbation if p in perturbations},
    }
    direct = settings.get(Setting.DIRECT, {}).get(1)
    rel: dict[str, float | None] = {}
    for st in SETTING_ORDER:
        if st in settings and 1 in settings[st] and st is not Setting.DIRECT:
            rel[st.value] = (round((settings[st][1].value - direct.value) / direct.value, 6)
                             if direct is not None and direct.value > 0 else None)
    out["relative_to_direct"] = rel
    pos_rows: dict[str, Any] = {}
    xs, ys = [], []
    for pos in sorted(positions):
        at = [s for s in multi if s.position == pos]
        bb = sum(s.style is Style.BLACK_BOX for s in at) / len(at)
        row = _pk(positions[pos])
        row["black_box_share"] = round(bb, 6)
        row["samples"] = len(at)
        pos_rows[str(pos)] = row
        if 1 in positions[pos]:
            xs.append(positions[pos][1].value)
            ys.append(bb)
    out["positions"] = pos_rows
    r = pearson(xs, ys)
    out["position_correlation"] = {"pearson_r": None if r is None else round(r, 6), "positions": len(xs),
                                   "between": "pass@1 and black-box share per position"}
    out["styles"] = _style_table(samples)
    out["styles_by_setting"] = {st.value: _style_table([s for s in samples if s.setting is st])
                                for st in SETTING_ORDER if any(s.setting is st for s in samples)}
    return out


def _style_table(samples: Sequence[SampleResult]) -> dict[str, Any]:
    table = {}
    total = len(samples)
    for style in Style:
        of = [s for s in samples if s.style is style]
        if of:
            table[style.value] = {"samples": len(of), "share": round(len(of) / total, 6),
                                  "pass@1": round(sum(s.passed for s in of) / len(of), 6)}
    return table
