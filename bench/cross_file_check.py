"""A mechanical check of cross-file precision per reference kind: for each example of a built split, is the API
its groundtruth needs defined in ANOTHER file of the repository?  (The blind annotations answer the same question
by hand; this one can run on every example of every kind.)

An example passes when ``metadata.definition`` names a file of the repository other than the example's own, its
line range exists there, and the symbol's name occurs in those lines.  An example without a definition, or whose
definition fails one of these, is listed with why.

    python bench/cross_file_check.py --split OUT/<lang>/line_completion.jsonl --checkouts DIR [--show 20]

``--checkouts DIR`` holds one work tree per repository, named as the examples' ``metadata.repository`` (as
``bench/released.py --checkouts`` does).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.invariants import definition_problem  # noqa: E402  (the split invariant's own check)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", type=Path, required=True, nargs="+")
    ap.add_argument("--checkouts", type=Path, required=True)
    ap.add_argument("--show", type=int, default=10, help="failures listed per kind")
    args = ap.parse_args(argv)
    total: Counter = Counter()
    passed: Counter = Counter()
    why: dict[str, Counter] = {}
    shown: dict[str, list[str]] = {}
    for split in args.split:
        for line in split.read_text(encoding="utf-8").splitlines():
            ex = json.loads(line)
            meta = ex["metadata"]
            kind = meta.get("reference_kind") or "unknown"
            total[kind] += 1
            verdict = definition_problem(meta, args.checkouts / meta["repository"])
            if verdict is None:
                passed[kind] += 1
                continue
            why.setdefault(kind, Counter())[verdict] += 1
            if len(shown.setdefault(kind, [])) < args.show:
                shown[kind].append(f"{meta['task_id']}: {verdict}: {ex['groundtruth'][:60]!r}")
    print(f"{'kind':18} {'examples':>8} {'defined in another file':>24}")
    for kind in sorted(total):
        print(f"{kind:18} {total[kind]:8d} {passed[kind]:12d} ({100 * passed[kind] / total[kind]:5.1f}%)")
    n, p = sum(total.values()), sum(passed.values())
    print(f"{'all':18} {n:8d} {p:12d} ({100 * p / max(n, 1):5.1f}%)")
    for kind in sorted(why):
        print(f"\n{kind}: {dict(why[kind].most_common())}")
        for row in shown[kind]:
            print(f"   {row}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
