"""How close is a benchsmith build to the released CrossCodeEval?  Builds released repositories at their commits and
compares the examples with the released ones, per language.

    python bench/released.py --checkouts /tmp/rel [--data ../shared/data/released-cceval] [--langs java,typescript]

``--checkouts DIR`` holds one work tree per released repository, named as its ``released_repository`` column in
``dev_repos.tsv`` (``<owner>-<name>-<commit>``) and checked out at that commit (the search tool's ``fetch`` brings
the repositories; tests and CI cannot, so this is a bench, never a test).  Each language's repositories are built
twice, with ``--cursor name`` and ``--cursor released`` (``--screens none``, no retrieval).

Released examples come from two places: the full released examples of ``<lang>.jsonl`` (file and prompt known),
and the groundtruth-only check of the data's README (a released groundtruth found at exactly one place of the
language's files, followed by a line end, marks a released example there, with its cursor).

Printed per language: released examples found at the same cursor with the identical groundtruth, under each rule;
on the same line with the same end; the share of each cursor place (``CursorPlace``) in the released examples and
in each build; the reference kinds of the build; and for the released examples not found, why: an exclusion
recorded on that line, or never a candidate.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchsmith.builders.cceval.cursor import classify  # noqa: E402
from benchsmith.builders.cceval.records import CursorRule

EXTENSIONS = {"python": (".py",), "java": (".java",), "typescript": (".ts", ".tsx"), "csharp": (".cs",)}


@dataclass(frozen=True)
class Site:
    """A released example located in its repository: file, cursor and end as character offsets."""

    repository: str
    file: str
    cursor: int
    end: int
    line: int  # 0-based line of the cursor
    place: str


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


def _place(text: str, cursor: int) -> str:
    return classify(text[text.rfind("\n", 0, cursor) + 1:cursor]).value


def read_sources(root: Path, lang: str) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            if name.endswith(EXTENSIONS[lang]):
                path = Path(dirpath) / name
                try:
                    # as the builder reads it: universal newlines, no byte-order mark
                    out[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8").removeprefix("\ufeff")
                except (UnicodeDecodeError, OSError):
                    continue
    return out


def released_sites(data: Path, lang: str, repos: dict[str, dict[str, str]]) -> dict[tuple, Site]:
    """Every released example of ``lang`` that can be placed in the checked-out repositories."""
    sites: dict[tuple, Site] = {}

    def add(repo: str, file: str, cursor: int, gt: str) -> None:
        text = repos[repo][file]
        site = Site(repo, file, cursor, cursor + len(gt), _line(text, cursor), _place(text, cursor))
        sites.setdefault((repo, file, cursor), site)

    full = data / f"{lang}.jsonl"
    for raw in full.read_text(encoding="utf-8").splitlines() if full.exists() else ():
        ex = json.loads(raw)
        meta = ex["metadata"]
        repo, file = meta["repository"], meta["file"]
        if repo in repos and file in repos[repo] and repos[repo][file].startswith(ex["prompt"] + ex["groundtruth"]):
            add(repo, file, len(ex["prompt"]), ex["groundtruth"])
    groundtruths = json.loads((data / f"groundtruths_{lang}.json").read_text(encoding="utf-8"))["groundtruths"]
    for gt in sorted(set(groundtruths)):
        if len(gt.strip()) < 4:
            continue
        hits = []
        for repo, files in repos.items():
            for file, text in files.items():
                at = text.find(gt)
                while at != -1 and len(hits) < 2:
                    end = at + len(gt)
                    if end == len(text) or text[end] in "\r\n":
                        hits.append((repo, file, at))
                    at = text.find(gt, at + 1)
        if len(hits) == 1:
            add(*hits[0], gt)
    return sites


def build(lang: str, checkouts: list[Path], rule: CursorRule, out: Path, seed: int) -> Path:
    cmd = [str(Path(sys.executable).with_name("build-ccEval")), "--lang", lang, "--screens", "none",
           "--retrievers", "none", "--format", "jsonl", "--no-card", "--quiet", "--cursor", rule.value,
           "--seed", str(seed), "--timeout", "3600", "--output", str(out)]
    for c in checkouts:
        cmd += ["--repo", str(c)]
    subprocess.run(cmd, check=True)
    return out / lang


def _examples(split: Path) -> list[dict]:
    path = split / "line_completion.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def _exclusions(split: Path) -> list[dict]:
    path = split / "excluded.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def _share(counter: Counter) -> str:
    total = sum(counter.values()) or 1
    return ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in sorted(counter.items()))


def compare(lang: str, sites: dict[tuple, Site], split: Path, repos: dict[str, dict[str, str]]) -> dict:
    """Released sites against one build's examples."""
    exact = same_end = 0
    by_line: dict[tuple, list[tuple[int, int]]] = {}
    places: Counter = Counter()
    kinds: Counter = Counter()
    found_kinds: Counter = Counter()
    cursors = {}
    for ex in _examples(split):
        meta = ex["metadata"]
        repo, file = meta["repository"], meta["file"]
        cursor = len(ex["prompt"])
        end = cursor + len(ex["groundtruth"])
        cursors[(repo, file, cursor)] = (end, meta.get("reference_kind", ""))
        line = _line(repos[repo][file], cursor) if repo in repos and file in repos[repo] else -1
        by_line.setdefault((repo, file, line), []).append((cursor, end))
        places[meta.get("cursor_place", "")] += 1
        kinds[meta.get("reference_kind", "")] += 1
    excluded_lines: dict[tuple, Counter] = {}
    for e in _exclusions(split):
        parts = e["item_id"].split("/", 2)
        if len(parts) < 3 or ":" not in parts[2]:
            continue
        file_line = parts[2].rsplit(":", 2)
        if len(file_line) != 3 or not file_line[1].isdigit():
            continue
        excluded_lines.setdefault((e.get("repository"), file_line[0], int(file_line[1]) - 1), Counter())[e["reason"]] += 1
    why: Counter = Counter()
    missing: list[tuple[Site, str]] = []
    for key, site in sites.items():
        hit = cursors.get(key)
        if hit is not None and hit[0] == site.end:
            exact += 1
            found_kinds[hit[1]] += 1
        if any(end == site.end for _, end in by_line.get((site.repository, site.file, site.line), ())):
            same_end += 1
        elif hit is None:
            reasons = excluded_lines.get((site.repository, site.file, site.line))
            reason = f"excluded: {reasons.most_common(1)[0][0]}" if reasons else "never a candidate"
            why[reason] += 1
            missing.append((site, reason))
    return {"exact": exact, "same_line_end": same_end, "places": places, "kinds": kinds,
            "found_kinds": found_kinds, "why": why, "examples": sum(places.values()), "missing": missing}


def place_counts(lang: str, split: Path, repos: dict[str, dict[str, str]]) -> list[Counter]:
    """For every example of a ``--cursor name`` build: how many candidate places of each kind its line offers
    (the places ``--cursor released`` draws from, with the analyzer's boundary rule)."""
    from benchsmith.analyzers import analyzer_class
    from benchsmith.builders.cceval.cursor import candidate_places
    from benchsmith.builders.cceval.examples import groundtruth_cut

    cls = analyzer_class(lang)
    trees: dict[tuple, object] = {}
    out = []
    for ex in _examples(split):
        meta = ex["metadata"]
        text = repos.get(meta["repository"], {}).get(meta["file"])
        if text is None:
            continue
        data = text.encode("utf-8")
        key = (meta["repository"], meta["file"])
        if key not in trees:
            trees[key] = cls.parser_for(meta["file"]).parse(data)
        tree = trees[key]
        name = len(ex["prompt"].encode("utf-8"))
        end = name + len(ex["groundtruth"].encode("utf-8"))
        line_start = data.rfind(b"\n", 0, name) + 1
        kinds: Counter = Counter()
        for place in candidate_places(cls.released_cursor, tree, line_start, name):
            cut = groundtruth_cut(cls, tree, data, place) if place != name else None
            if place == name or (cut is not None and cut.end_byte == end):
                kinds[classify(data[line_start:place].decode("utf-8", "replace")).value] += 1
        out.append(kinds)
    return out


def fit_weights(counts: list[Counter], target: Counter) -> dict[str, float]:
    """Weights per kind of place such that drawing each example's cursor with them gives, over all examples, the
    target shares (multiplicative updates; the largest weight is 1)."""
    total = sum(target.values()) or 1
    share = {k: v / total for k, v in target.items()}
    weights = {k: 1.0 for k in share}
    for _ in range(500):
        expected: Counter = Counter()
        for kinds in counts:
            z = sum(weights.get(k, 0.0) * n for k, n in kinds.items())
            for k, n in kinds.items():
                if z > 0:
                    expected[k] += weights.get(k, 0.0) * n / z
        n = len(counts) or 1
        for k in weights:
            if expected[k] > 0:
                weights[k] *= (share[k] / (expected[k] / n)) ** 0.5
    top = max(weights.values()) or 1.0
    return {k: round(w / top, 3) for k, w in sorted(weights.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkouts", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "released-cceval")
    ap.add_argument("--repos", type=Path, help="a TSV like dev_repos.tsv (default: the data's dev_repos.tsv)")
    ap.add_argument("--langs", default="python,java,typescript,csharp")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--work", type=Path, help="where the builds go (default: a fresh temporary directory)")
    ap.add_argument("--fit", action="store_true",
                    help="also print the weights per kind of place (Analyzer.released_cursor) that make the "
                         "--cursor released build's shares those of the released examples")
    ap.add_argument("--list-missing", action="store_true",
                    help="print each released example not found on a line with the same end: file, line, why, "
                         "and the released line with its cursor marked |")
    args = ap.parse_args(argv)
    rows = list(csv.DictReader((args.repos or args.data / "dev_repos.tsv").open(encoding="utf-8"), delimiter="\t"))
    work = args.work or Path(tempfile.mkdtemp(prefix="benchsmith-released-"))
    for lang in args.langs.split(","):
        names = [r["released_repository"] for r in rows if r["language"] == lang]
        checkouts = [args.checkouts / n for n in names if (args.checkouts / n).is_dir()]
        if not checkouts:
            print(f"{lang}: no checkout under {args.checkouts} (expected {', '.join(names)})")
            continue
        repos = {c.name: read_sources(c, lang) for c in checkouts}
        sites = released_sites(args.data, lang, repos)
        print(f"\n== {lang}: {len(sites)} released examples located in {len(checkouts)} repositories")
        print(f"   released cursor places: {_share(Counter(s.place for s in sites.values()))}")
        for rule in CursorRule:
            split = build(lang, checkouts, rule, work / f"{lang}-{rule.value}", args.seed)
            r = compare(lang, sites, split, repos)
            n = len(sites) or 1
            print(f"   --cursor {rule.value}: {r['examples']} examples; same cursor + identical groundtruth "
                  f"{r['exact']}/{len(sites)} ({100 * r['exact'] / n:.0f}%); same line + same end "
                  f"{r['same_line_end']}/{len(sites)} ({100 * r['same_line_end'] / n:.0f}%)")
            print(f"      cursor places: {_share(r['places'])}")
            print(f"      kinds: {_share(r['kinds'])}; of the exact matches: {_share(r['found_kinds'])}")
            print(f"      not on a line with the same end: {dict(r['why'].most_common())}")
            if args.list_missing and rule is CursorRule.RELEASED:
                for site, reason in r["missing"]:
                    text = repos[site.repository][site.file]
                    start = text.rfind("\n", 0, site.cursor) + 1
                    shown = (text[start:site.cursor] + "|" + text[site.cursor:site.end]).strip()[:160]
                    print(f"        {site.repository[:24]} {site.file}:{site.line + 1} [{reason}] {shown!r}")
            if args.fit and rule is CursorRule.NAME:
                fitted = fit_weights(place_counts(lang, split, repos), Counter(s.place for s in sites.values()))
                print(f"      fitted released_cursor weights: {fitted}")
    print(f"\nbuilds under {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
