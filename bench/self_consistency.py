"""Self-consistency of built splits: every example's groundtruth given as its own prediction, scored by the released
CrossCodeEval scorer (compat mode) and by benchsmith's default scorer.  A split that is scorable by construction
gets EM 100 / ES 100 in both.

    python bench/self_consistency.py                         # build the four reference splits before/after, print
    python bench/self_consistency.py --split out/typescript  # score splits built elsewhere (a dir or a .jsonl)

"before" builds with ``--first-reference-per-statement --keep-unscorable`` (the earlier selection, nothing dropped
for being unscorable), "after" with the defaults (every reference a candidate, unscorable groundtruths dropped).
Sources: werkzeug 3.0.3 (PyPI sdist), JPype1 1.5.0 (PyPI sdist), rxjs 7.8.1 (npm tarball), pythonnet 2.5.2 (PyPI
sdist), downloaded once into the test cache (bench/_common.py); with ``--languages javascript,go`` also axios 1.7.9
(npm) and hashicorp/hcl (the Debian package's Go sources).  TypeScript needs the pinned tsc
(``scripts/setup_toolchains.sh`` or ``BENCHSMITH_TSC``).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import CACHE, fetch_sdist  # noqa: E402  (needs ROOT on sys.path)

SOURCES = {
    "python": ("pypi", "werkzeug==3.0.3", "werkzeug-3.0.3.tar.gz"),
    "java": ("pypi", "JPype1==1.5.0", "JPype1-1.5.0.tar.gz"),
    "typescript": ("npm", "rxjs@7.8.1", "rxjs-7.8.1.tgz"),
    "csharp": ("pypi", "pythonnet==2.5.2", "pythonnet-2.5.2.tar.gz"),
    # not built by default (--languages javascript,go): the scorer's compat mode does not know them
    "javascript": ("npm", "axios@1.7.9", "axios-1.7.9.tgz"),
    "go": ("dir", "golang-github-hashicorp-hcl-dev (apt)", "/usr/share/gocode/src/github.com/hashicorp/hcl"),
}
DEFAULT_LANGUAGES = ("python", "java", "typescript", "csharp")
VARIANTS = {"before": ["--first-reference-per-statement", "--keep-unscorable"], "after": []}


def fetch(kind: str, spec: str, filename: str) -> Path:
    if kind == "dir":
        if not Path(filename).is_dir():
            raise SystemExit(f"{filename} missing: apt-get install {spec.split()[0]}")
        return Path(filename)
    if kind == "pypi":
        found = [p for p in CACHE.glob("*") if p.name.lower() == filename.lower()]
        return found[0] if found else fetch_sdist(spec, filename)
    path = CACHE / filename
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(CACHE), spec], check=True,
                       stdout=subprocess.DEVNULL)
    return path


def build(language: str, archive: Path, out: Path, extra: list[str]) -> Path:
    from benchsmith.cli import main

    rc = main(["build", "cceval", "--lang", language, "--repo", str(archive), "--output", str(out),
               "--retrievers", "none", "--workers", "1", "--quiet", "--no-card", *extra])
    if rc:
        raise SystemExit(f"build of {language} failed ({rc})")
    return out / language


def measure(split: Path, language: str | None = None) -> dict:
    """Scores one split (directory with line_completion.jsonl and stats.json, or the .jsonl itself)."""
    from benchsmith.builders.cceval.scorability import self_consistency
    from benchsmith.jsonio import read_jsonl
    from benchsmith.records import Language

    jsonl = split / "line_completion.jsonl" if split.is_dir() else split
    stats_path = jsonl.parent / "stats.json"
    stats = json.loads(stats_path.read_text()) if stats_path.exists() else {}
    records = list(read_jsonl(jsonl))
    lang = language or stats.get("language") or (records[0]["metadata"]["language"] if records else None)
    if lang is None:
        raise SystemExit(f"{split}: no language (give --language)")
    figures = self_consistency(records, Language(lang))
    dropped = stats.get("dropped", {})
    if dropped.get("toolchain_missing"):
        print(f"warning: {split}: the {lang} toolchain was missing (see excluded.jsonl)", file=sys.stderr)
    return {"language": lang, "examples": len(records), **figures,
            "unscorable_dropped": dropped.get("unscorable_groundtruth", 0),
            "same_statement_dropped": dropped.get("same_statement", 0)}


def _fmt(mode: dict | None) -> str:
    if mode is None:
        return f"{'n/a':>22}"
    return f"{mode['em']:7.2f} {mode['es']:7.2f} {mode['violations']:6d}"


def print_table(rows: list[tuple[str, dict]]) -> None:
    print(f"{'split':<24} {'lang':<11} {'examples':>8}  {'compat EM/ES/viol':>22}  {'default EM/ES/viol':>22}  "
          f"{'unscorable':>10} {'same_stmt':>9}")
    for label, r in rows:
        print(f"{label:<24} {r['language']:<11} {r['examples']:>8}  {_fmt(r['compat'])}  {_fmt(r['default'])}  "
              f"{r['unscorable_dropped']:>10} {r['same_statement_dropped']:>9}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", action="append", type=Path, default=[], help="score this split (dir or .jsonl)")
    ap.add_argument("--language", help="language of --split files without stats.json")
    ap.add_argument("--languages", default=",".join(DEFAULT_LANGUAGES),
                    help=f"languages to build (default: the four of the paper; known: {', '.join(SOURCES)})")
    ap.add_argument("--output", type=Path, help="where to build (default: a temporary directory)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args(argv)
    rows: list[tuple[str, dict]] = []
    if args.split:
        rows = [("/".join(p.resolve().parts[-2:])[-24:], measure(p, args.language)) for p in args.split]
    else:
        base = args.output or Path(tempfile.mkdtemp(prefix="self-consistency-"))
        for lang in [x.strip() for x in args.languages.split(",") if x.strip()]:
            archive = fetch(*SOURCES[lang])
            for variant, extra in VARIANTS.items():
                split = build(lang, archive, base / variant, extra)
                rows.append((f"{variant}: {SOURCES[lang][1]}"[:24], measure(split)))
        print(f"splits under {base}")
    print_table(rows)
    if args.json:
        args.json.write_text(json.dumps([{"split": label, **r} for label, r in rows], indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
