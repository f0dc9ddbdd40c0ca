"""Blind cross-file precision per reference kind: a seeded sample of a built split for a labeller who sees only
what a reader of the repository sees, and the precision of their labels against what the build claims.

Every example a build writes claims that its groundtruth needs an API defined in another file of the repository
(PROTOCOL.md's q1, ``../shared/data/annotations``).  ``bench/cross_file_check.py`` checks that claim mechanically
against the build's own ``metadata.definition``; this script asks a labeller who never sees the claim.

    python bench/blind_precision.py sample --split OUT/<lang>/line_completion.jsonl [...] --checkouts DIR \\
        --out DIR [--per-kind 8] [--kinds type,heritage,...] [--seed 0]
    # label DIR/blind.jsonl: one JSON line per example, {"id", "crossfile": "yes"|"no"|"unsure",
    #   "definition": "file:line" | null, "why_not_crossfile": ..., "note": ...}, into DIR/labels.jsonl
    python bench/blind_precision.py score --out DIR

``blind.jsonl`` holds, per example, an opaque id, the repository's checkout, the file, the cursor's 1-based line,
that line with the cursor marked ``|`` and the groundtruth: never the kind, the symbol or the definition, which
stay in ``key.jsonl``.  Precision is yes / (yes + no); "unsure" is counted apart.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

NEW_KINDS = ("inherited_member", "type", "heritage", "attribute", "constructor", "module_member", "jsx")


def _cursor_line(example: dict) -> tuple[int, str]:
    prompt = example["prompt"]
    start = prompt.rfind("\n") + 1
    rest = example["groundtruth"] + example["right_context"]
    end = rest.find("\n")
    line = prompt[start:] + "|" + (rest if end < 0 else rest[:end])
    return prompt.count("\n") + 1, line


def sample(splits: list[Path], checkouts: Path, out: Path, per_kind: int, kinds: tuple[str, ...],
           seed: int) -> int:
    by_kind: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for split in splits:
        for raw in split.read_text(encoding="utf-8").splitlines():
            ex = json.loads(raw)
            meta = ex["metadata"]
            kind = meta.get("reference_kind") or "unknown"
            if kind in kinds:
                by_kind[(meta.get("language") or split.parent.name, kind)].append(ex)
    rng = random.Random(seed)
    picked: list[dict] = []
    for key in sorted(by_kind):
        pool = sorted(by_kind[key], key=lambda e: e["metadata"]["task_id"])
        picked += rng.sample(pool, min(per_kind, len(pool)))
    rng.shuffle(picked)  # the labeller meets kinds mixed, not in blocks
    out.mkdir(parents=True, exist_ok=True)
    with (out / "blind.jsonl").open("w", encoding="utf-8") as blind, \
            (out / "key.jsonl").open("w", encoding="utf-8") as key:
        for ex in picked:
            meta = ex["metadata"]
            ident = hashlib.sha256(meta["task_id"].encode()).hexdigest()[:10]
            line_no, line = _cursor_line(ex)
            blind.write(json.dumps({
                "id": ident, "checkout": str(checkouts / meta["repository"]), "file": meta["file"],
                "line": line_no, "cursor_line": line, "groundtruth": ex["groundtruth"],
            }, ensure_ascii=False) + "\n")
            key.write(json.dumps({
                "id": ident, "task_id": meta["task_id"], "language": meta.get("language"),
                "kind": meta.get("reference_kind"), "definition": meta.get("definition"),
            }, ensure_ascii=False) + "\n")
    counts = Counter((meta["language"], meta["reference_kind"]) for meta in (e["metadata"] for e in picked))
    for (lang, kind), n in sorted(counts.items()):
        print(f"{lang:11} {kind:17} {n:3d} of {len(by_kind[(lang, kind)])}")
    print(f"{len(picked)} examples to label in {out / 'blind.jsonl'}")
    return 0


def score(out: Path) -> int:
    key = {row["id"]: row for row in map(json.loads, (out / "key.jsonl").read_text(encoding="utf-8").splitlines())}
    labels = [json.loads(r) for r in (out / "labels.jsonl").read_text(encoding="utf-8").splitlines() if r.strip()]
    tally: dict[tuple[str, str], Counter] = defaultdict(Counter)
    misses: list[str] = []
    for lab in labels:
        k = key[lab["id"]]
        tally[(k["language"], k["kind"])][lab["crossfile"]] += 1
        if lab["crossfile"] != "yes":
            misses.append(f"{k['task_id']} [{k['kind']}] {lab['crossfile']}: {lab.get('why_not_crossfile') or ''} "
                          f"{(lab.get('note') or '')[:120]}")
    unlabelled = len(key) - len({lab["id"] for lab in labels})
    print(f"{'language':11} {'kind':17} {'yes':>4} {'no':>4} {'unsure':>6} {'precision':>9}")
    total: Counter = Counter()
    for (lang, kind), c in sorted(tally.items()):
        total.update(c)
        decided = c["yes"] + c["no"]
        print(f"{lang:11} {kind:17} {c['yes']:4d} {c['no']:4d} {c['unsure']:6d} "
              f"{100 * c['yes'] / max(decided, 1):8.1f}%")
    decided = total["yes"] + total["no"]
    print(f"{'all':29} {total['yes']:4d} {total['no']:4d} {total['unsure']:6d} "
          f"{100 * total['yes'] / max(decided, 1):8.1f}%")
    if unlabelled:
        print(f"{unlabelled} sampled examples have no label")
    for row in misses:
        print("  ", row)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--split", type=Path, nargs="+", required=True)
    s.add_argument("--checkouts", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--per-kind", type=int, default=8)
    s.add_argument("--kinds", default=",".join(NEW_KINDS))
    s.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("score")
    c.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    if args.cmd == "sample":
        return sample(args.split, args.checkouts, args.out, args.per_kind, tuple(args.kinds.split(",")), args.seed)
    return score(args.out)


if __name__ == "__main__":
    raise SystemExit(main())
