"""The model-free predictability screens against blind annotations (``shared/data/annotations``).

For each annotated example (``file``, 0-based ``groundtruth_start_lineno``, ``groundtruth``) the prompt is the
file's text before the groundtruth, found on that line in the original file of the registry package its
``source`` names -- so the figures do not depend on how the cutter chooses cursors.  The script also builds the
annotated splits from the registries with ``--screens none`` (the paper's filters only) and reports how many
annotated examples the build reproduces (same file, line and groundtruth, and the same prompt).

Then, per screen (each on its own) and per profile, per language and overall:
``pred dropped`` = share of the annotated-predictable examples dropped, ``non kept`` = share of the
annotated-non-predictable examples kept, ``pred among kept`` = predictable share of what stays, and the
screen's precision (predictable share of what it drops).

    .venv/bin/python bench/annotations.py [--annotations PATH] [--builds DIR | --no-build] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench._common import CACHE, fetch_npm, fetch_sdist  # noqa: E402  (needs ROOT on sys.path)

from tests.shared_data import shared_data  # noqa: E402  (the same lookup the tests use)

DEFAULT_ANNOTATIONS = [shared_data("annotations/dev.jsonl"), shared_data("annotations/second.jsonl")]
LANGUAGES = ("python", "java", "typescript", "csharp")


@dataclass(frozen=True)
class Source:
    """``werkzeug==3.0.3 (PyPI sdist; paths relative to the unpacked werkzeug-3.0.3/)``"""

    spec: str
    registry: str  # pypi | npm
    root: str  # path inside the extracted archive that annotation paths are relative to

    @classmethod
    def parse(cls, text: str) -> "Source":
        m = re.match(r"\s*(\S+)\s*\((PyPI|npm)\b[^;]*;\s*paths relative to (?:the unpacked )?(\S+?)/?\)\s*$", text)
        if not m:
            raise ValueError(f"cannot read the annotation source {text!r}")
        return cls(m.group(1), m.group(2).lower(), m.group(3))

    def archive(self) -> Path:
        if self.registry == "npm":
            name, _, version = self.spec.rpartition("@")
            return fetch_npm(self.spec, f"{name.lstrip('@').replace('/', '-')}-{version}.tgz")
        name, _, version = self.spec.partition("==")
        return fetch_sdist(self.spec, f"{name}-{version}.tar.gz")


def extract(source: Source, work: Path) -> Path:
    from benchsmith.sources import extract_archive

    dest = work / re.sub(r"[^\w.=@-]", "_", source.spec)
    if not dest.is_dir():
        extract_archive(source.archive(), dest)
    root = dest / source.root
    if not root.is_dir():
        raise SystemExit(f"{source.spec}: {source.root} is not in the archive")
    return root


def locate(ann: dict, root: Path) -> tuple[str, str] | None:
    """The prompt of an annotated example -- the file's text before the groundtruth on its line -- and the text
    from there on (None if the groundtruth is not there)."""
    path = root / ann["file"]
    if not path.is_file():
        return None
    text = path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")
    lines = text.split("\n")
    lineno, gt = ann["groundtruth_start_lineno"], ann["groundtruth"]
    if not (0 <= lineno < len(lines)):
        return None
    start = sum(len(line) + 1 for line in lines[:lineno])
    line = lines[lineno]
    # The cursor sits right before a name: never inside another identifier.
    hits = [c for c in range(len(line) + 1) if text.startswith(gt, start + c)
            and (c == 0 or not (line[c - 1].isalnum() or line[c - 1] in "_$"))]
    return (text[: start + hits[-1]], text[start + hits[-1]:]) if hits else None


def build_split(language: str, root: Path, out: Path) -> Path:
    from benchsmith.cli import main

    split = out / language / "line_completion.jsonl"
    if not split.is_file():
        rc = main(["build", "cceval", "--lang", language, "--repo", str(root), "--output", str(out),
                   "--screens", "none", "--retrievers", "none", "--no-card", "-q"])
        if rc != 0:
            raise SystemExit(f"build of {language} failed ({rc})")
    return split


def _row(sub: list[tuple[dict, bool]]) -> dict:
    pred = [d for a, d in sub if a["predictable_in_file"] == "yes"]
    non = [d for a, d in sub if a["predictable_in_file"] != "yes"]
    dp, kn = sum(pred), sum(1 for d in non if not d)
    kp = len(pred) - dp
    dropped = dp + (len(non) - kn)
    return {"n": len(sub), "predictable": len(pred), "pred_dropped": dp / len(pred) if pred else 0.0,
            "non_kept": kn / len(non) if non else 0.0, "pred_among_kept": kp / (kp + kn) if kp + kn else 0.0,
            "precision": dp / dropped if dropped else None, "dropped": dropped}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--annotations", type=Path, nargs="+", default=DEFAULT_ANNOTATIONS,
                    help="annotated sets (default: both shared sets, calibrated together)")
    ap.add_argument("--work", type=Path, default=CACHE / "annotations", help="where sources are extracted")
    ap.add_argument("--builds", type=Path, help="build output directory (reused when it holds a split)")
    ap.add_argument("--no-build", action="store_true", help="skip building: measure from the original files only")
    ap.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = ap.parse_args(argv)

    from benchsmith.builders.cceval.screens import PROFILES, SCREENS, judge_all, predictability, profile_drops

    anns = []
    sets = [path.stem for path in args.annotations]
    for path in args.annotations:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                ann = json.loads(line)
                # the package a source names, its version aside: the unit of the held-out figures
                ann["_set"], ann["_repo"] = path.stem, re.split(r"==|@(?=[^@]*$)", ann["source"].split()[0])[0]
                anns.append(ann)
    args.work.mkdir(parents=True, exist_ok=True)
    roots: dict[str, Path] = {}
    for ann in anns:
        if ann["source"] not in roots:
            roots[ann["source"]] = extract(Source.parse(ann["source"]), args.work)
    langs = [lang for lang in LANGUAGES if any(a["language"] == lang for a in anns)]
    langs += sorted({a["language"] for a in anns} - set(langs))

    located = []
    for ann in anns:
        found = locate(ann, roots[ann["source"]])
        if found is None:
            print(f"not found in the original file: {ann['id']} {ann['file']}:{ann['groundtruth_start_lineno'] + 1}")
            continue
        located.append((ann, *found))
    print(f"located {len(located)}/{len(anns)} annotated examples in the original files")

    matched: dict[str, tuple[int, int]] = {}
    if not args.no_build:
        out = args.builds or Path(tempfile.mkdtemp(prefix="bench-annotations-"))
        for src in roots:  # one build per annotated source (a language can have several)
            lang_anns = [(a, p) for a, p, _ in located if a["source"] == src]
            if not lang_anns:
                continue
            lang, key = lang_anns[0][0]["language"], f"{lang_anns[0][0]['_repo']}/{lang_anns[0][0]['language']}"
            built = {}
            split = build_split(lang, roots[src], out / re.sub(r"[^\w.=@-]", "_", src.split()[0]))
            for line in split.read_text(encoding="utf-8").splitlines():
                ex = json.loads(line)
                m = ex["metadata"]
                built[(m["file"], m["groundtruth_start_lineno"], ex["groundtruth"])] = ex["prompt"]
            hits = sum(1 for a, p in lang_anns
                       if built.get((a["file"], a["groundtruth_start_lineno"], a["groundtruth"])) == p)
            matched[key] = (hits, len(lang_anns))
        print("reproduced by a build with --screens none (file, line, groundtruth and prompt): " + ", ".join(
            f"{lang} {h}/{n}" for lang, (h, n) in matched.items())
            + f"; total {sum(h for h, _ in matched.values())}/{sum(n for _, n in matched.values())}")

    # The rest of the file only lets one file's examples share an index; the screens never read past the cursor.
    verdicts = [(a, judge_all(p, a["groundtruth"], a["language"], rest[len(a["groundtruth"]):]),
                 predictability(p, a["groundtruth"], a["language"], rest[len(a["groundtruth"]):])["surprisal"])
                for a, p, rest in located]
    rules = [(f"screen {name.value}", lambda v, b, n=name: v[n] is not None) for name in SCREENS]
    rules += [(f"profile {p.value}", lambda v, b, p=p: profile_drops(v, p) is not None) for p in PROFILES]
    groups = [(f"set {s}", lambda a, s=s: a["_set"] == s) for s in sets] if len(sets) > 1 else []
    groups += [(lang, lambda a, lang=lang: a["language"] == lang) for lang in langs] + [("all", lambda a: True)]
    results = _table("each screen and profile on its own", rules, groups, verdicts)
    print("\nagainst the overall judgement (q4 `keep`): share of keep=yes kept / keep=no dropped, all languages")
    for label, rule in rules:
        yes = [rule(v, b) for a, v, b in verdicts if a.get("keep") == "yes"]
        no = [rule(v, b) for a, v, b in verdicts if a.get("keep") == "no"]
        if yes and no:
            print(f"{label:28s}{100 * (1 - sum(yes) / len(yes)):6.1f} /{100 * sum(no) / len(no):6.1f}")
    # held out: also each set's languages, so that a rule tuned to one set shows what it costs on the other
    held = _cross_validate(verdicts, groups + [(f"{s}/{lang}", lambda a, s=s, lang=lang: a["_set"] == s
                                                and a["language"] == lang) for s in sets if len(sets) > 1
                                               for lang in langs])
    counts = {lang: (sum(1 for a, _, _ in verdicts if a["language"] == lang and a["predictable_in_file"] == "yes"),
                     sum(1 for a, _, _ in verdicts if a["language"] == lang)) for lang in langs}
    print("\nannotated predictable: " + ", ".join(f"{lang} {p}/{n}" for lang, (p, n) in counts.items()))
    if args.json:
        args.json.write_text(json.dumps({"located": len(located), "annotated": len(anns),
                                         "reproduced_by_build": matched, "figures": results,
                                         "held_out": held}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


def _table(title: str, rules, groups, verdicts) -> dict[str, dict[str, dict]]:
    results: dict[str, dict[str, dict]] = {}
    for label, rule in rules:
        results[label] = {}
        for g, member in groups:
            sub = [(a, rule(v, b)) for a, v, b in verdicts if member(a)]
            if sub:
                results[label][g] = _row(sub)
    width = 24
    print(f"\n{title}; per cell: predictable dropped / non-predictable kept / predictable among kept")
    print(f"{'':28s}" + "".join(f"{g:>{width}s}" for g, _ in groups))
    for label, per in results.items():
        cells = [f"{'-':>{width}s}" if (r := per.get(g)) is None else
                 f"{100 * r['pred_dropped']:5.1f} /{100 * r['non_kept']:5.1f} /{100 * r['pred_among_kept']:5.1f}"
                 .rjust(width) for g, _ in groups]
        print(f"{label:28s}" + "".join(cells))
    return results


# Candidate profiles from the least to the most aggressive: each rung adds one general rule (or lowers the
# surprisal a groundtruth may have and still be dropped).  Cross-validation picks a rung per target on the other
# repositories, so no threshold below was tuned on the repository it is measured on.  The four pattern classes
# of the first rung (copy, vocabulary, echo, analogy: issue 25 names each) are the screens' design, not a choice
# left to the data: with the analogy a rung of its own, a held-out repository whose pattern is mostly sibling
# checks (JPype1: 20% predictable among kept) got a rung chosen on repositories that needed none.
_DEFAULT = ("copy", "vocabulary", "echo", "analogy")
LADDER: list[tuple[str, tuple[str, ...], float | None]] = [
    ("copy+vocabulary+echo+analogy", _DEFAULT, None),
    *[(f"+analogy, surprisal<={t}", _DEFAULT, t) for t in (2.0, 3.0)],
    ("+analogy+imported", (*_DEFAULT, "imported_vocabulary"), None),
    *[(f"+analogy+imported, surprisal<={t}", (*_DEFAULT, "imported_vocabulary"), t) for t in (2.0, 3.0, 3.5, 4.0, 5.0)],
    ("+analogy+imported+first_name", (*_DEFAULT, "imported_vocabulary", "first_name"), None),
]
TARGETS = {"default": (0.10, 0.85), "strict": (0.05, 0.60)}  # predictable among kept at most, non-predictable kept
# Figures measured on the repositories a rule was chosen on flatter it (the first default: 8% on the development
# set, about 20% on blind repositories), so a rung is chosen with room to spare: default the least aggressive one
# at most 0.8 x the target on the others; strict, which trades kept examples for purity, the most aggressive one
# that still keeps the target's share of non-predictable examples plus 5 points.
MARGIN, KEEP_MARGIN = 0.8, 0.05


def _drops(rung, v, bits) -> bool:
    _, names, max_bits = rung
    return any(v[n] is not None for n in v if n.value in names) or (
        max_bits is not None and bits is not None and bits <= max_bits)


def _pick(rows, profile: str):
    target, keep = TARGETS[profile]
    figures = [(rung, _row([(a, _drops(rung, v, b)) for a, v, b in rows])) for rung in LADDER]
    if profile == "strict":
        ok = [rung for rung, r in figures if r["non_kept"] >= keep + KEEP_MARGIN]
        return ok[-1] if ok else LADDER[0]
    return next((rung for rung, r in figures if r["pred_among_kept"] <= MARGIN * target), LADDER[-1])


def _cross_validate(verdicts, groups) -> dict:
    """Leave one repository out: choose each profile's rung on the others, measure it on the held-out one."""
    repos = sorted({a["_repo"] for a, _, _ in verdicts})
    out: dict = {}
    for profile, (target, keep) in TARGETS.items():
        decided = []
        print(f"\nheld out by repository, profile {profile} (target: <= {100 * target:.0f}% predictable among kept, "
              f">= {100 * keep:.0f}% of the non-predictable kept)")
        for repo in repos:
            rung = _pick([x for x in verdicts if x[0]["_repo"] != repo], profile)
            test = [x for x in verdicts if x[0]["_repo"] == repo]
            decided += [(a, _drops(rung, v, b)) for a, v, b in test]
            r = _row([(a, _drops(rung, v, b)) for a, v, b in test])
            print(f"  {repo:24s} rung {rung[0]:36s} {100 * r['pred_among_kept']:5.1f} /{100 * r['non_kept']:6.1f}")
        rows = {}
        for g, member in groups:
            sub = [(a, d) for a, d in decided if member(a)]
            rows[g] = r = _row(sub)
            print(f"  pooled {g:17s} predictable among kept {100 * r['pred_among_kept']:5.1f}%, non-predictable "
                  f"kept {100 * r['non_kept']:5.1f}%, kept {100 * (1 - r['dropped'] / r['n']):5.1f}%")
        chosen = _pick(verdicts, profile)
        print(f"  chosen on every repository: {chosen[0]}")
        out[profile] = {"pooled": rows, "chosen_on_all": chosen[0]}
    return out


if __name__ == "__main__":
    sys.exit(main())
