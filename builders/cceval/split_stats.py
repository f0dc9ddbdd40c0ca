"""Figures of a merged split for its stats.json: the screens applied, the share of each reference kind and cursor
place, and self-consistency (summed from the shards)."""

from __future__ import annotations

import json
from pathlib import Path

from benchsmith.builders.cceval.screens import PROFILES, SCREENS, ScreenProfile
from benchsmith.jsonio import read_jsonl
from benchsmith.layout import SPLIT_FILE
from benchsmith.shards import STATS_FILE


def example_shares(split: Path) -> dict:
    """How many kept examples each reference kind and each cursor place has (stats.json, the card)."""
    kinds: dict[str, int] = {}
    places: dict[str, int] = {}
    for ex in read_jsonl(split) if split.exists() else ():
        meta = ex.get("metadata", {})
        kind, place = meta.get("reference_kind") or "unknown", meta.get("cursor_place") or "unknown"
        kinds[kind] = kinds.get(kind, 0) + 1
        places[place] = places.get(place, 0) + 1
    return {"reference_kinds": dict(sorted(kinds.items())), "cursor_places": dict(sorted(places.items()))}


def screens_stats(profile) -> dict:
    names = PROFILES[ScreenProfile(profile)]
    return {"profile": ScreenProfile(profile).value,
            "applied": [{"screen": n.value, "reason": SCREENS[n].reason.value} for n in names]}


# The build's own final check: every kept example, its groundtruth given as the prediction, scored in compat and
# default mode (``scorability``); the violation counts go into stats.json and should be zero.  Each shard scores
# the split it writes (so a resumed build does not rescore finished repositories) and the merge adds the sums.

def shard_self_consistency(split: Path, language: str) -> dict:
    from benchsmith.builders.cceval import scorability
    from benchsmith.records import Language

    return scorability.raw_tallies(scorability.tally(read_jsonl(split), Language(language)))


def merged_self_consistency(shards: list[Path], language: str) -> dict:
    from benchsmith.builders.cceval import scorability
    from benchsmith.records import Language

    parts = []
    for shard in shards:
        part = json.loads((shard / STATS_FILE).read_text()).get("self_consistency")
        # a shard without the sums (a failed task's) is scored from its own split file
        parts.append(part if part is not None else shard_self_consistency(shard / SPLIT_FILE, language))
    return scorability.figures(scorability.merge_raw(parts, Language(language)))
