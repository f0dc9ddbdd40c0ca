"""``benchsmith audit SPLIT``: quality figures of a built cross-file completion split.

For ``SPLIT`` (a ``DIR/<lang>`` directory of ``build-ccEval``, its output directory with several languages, or a
``line_completion.jsonl``) it computes, from the examples alone:

- **screens**: the share of examples each model-free predictability screen would drop on its own, and each
  profile (``builders/cceval/screens.py``);
- **self-consistency**: each example's groundtruth scored as its own prediction with the released scorer
  (compat mode, for the languages it knows) and benchsmith's default scorer; anything below EM 100 / ES 100 is
  an example no model can get right, listed by task id;
- **concentration**: examples per repository and per API (the cross-file symbol, ``metadata.defining_file`` and
  ``metadata.symbol``), with the top one's share;
- **near-duplicate groundtruths**: groundtruths equal once whitespace and comments are ignored and every string
  and number literal is masked, across the whole split (the build's dedup is exact and per repository);
- **lengths**: groundtruth characters, tokens and lines, prompt lines (mean, median, p90, max).

It prints a table and writes the figures as JSON (``DIR/<lang>/audit.json`` by default), which the dataset card
shows.  The output is deterministic: the same split gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.builders.cceval.definition_recall import definition_recall
from benchsmith.jsonio import iter_jsonl, write_json
from benchsmith.layout import AUDIT_FILE, AUDIT_SUFFIX, SPLIT_FILE, STATS_FILE
from benchsmith.records import Language

TOP = 5  # rows listed for the largest repositories, APIs and duplicate groups
LISTED = 20  # task ids listed per self-consistency violation kind


class AuditError(ValueError):
    pass


@dataclass
class _Example:
    task_id: str
    prompt: str
    groundtruth: str
    right_context: str
    repository: str
    api: str
    unscorable_modes: frozenset[str] = frozenset()  # declared by a --cursor released build


def _load(path: Path) -> list[_Example]:
    out = []
    for line in iter_jsonl(path, error=AuditError):
        obj = line.obj
        where = f"{path}:{line.lineno}"
        meta = obj.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("task_id"), str):
            raise AuditError(f"{where}: missing metadata.task_id")
        for name in ("prompt", "groundtruth"):
            if not isinstance(obj.get(name), str):
                raise AuditError(f"{where}: field {name!r} must be a string")
        symbol = str(meta.get("symbol") or "")
        defining = meta.get("defining_file")
        api = f"{defining}:{symbol}" if defining and symbol else (symbol or "?")
        rc = obj.get("right_context")
        declared = meta.get("unscorable_modes")
        declared = frozenset(m for m in declared if isinstance(m, str)) if isinstance(declared, list) else frozenset()
        out.append(_Example(meta["task_id"], obj["prompt"], obj["groundtruth"], rc if isinstance(rc, str) else "",
                            str(meta.get("repository", "?")), api, declared))
    return out


def _language(path: Path, explicit: str | None) -> Language:
    try:
        if explicit:
            return Language.parse(explicit)
        for line in iter_jsonl(path, error=AuditError):
            meta = line.obj.get("metadata")
            lang = meta.get("language") if isinstance(meta, dict) else None
            if isinstance(lang, str) and lang:
                return Language.parse(lang)
            break
    except AuditError:
        raise
    except ValueError as exc:  # Language.parse: a language benchsmith does not know
        raise AuditError(f"{path}: {exc}") from None
    name = path.parent.name if path.name == SPLIT_FILE else path.stem
    try:
        return Language.parse(name)
    except ValueError:
        raise AuditError(f"{path}: cannot tell the language (no metadata.language); give --language") from None


def _share(k: int, n: int) -> float:
    return round(k / n, 4) if n else 0.0


def _stats(values: list[int]) -> dict[str, float | int]:
    if not values:
        return {"mean": 0, "median": 0, "p90": 0, "max": 0}
    v = sorted(values)
    pick = lambda q: v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]  # noqa: E731 - nearest rank, as the card
    return {"mean": round(sum(v) / len(v), 2), "median": pick(0.5), "p90": pick(0.9), "max": v[-1]}


def _screens(examples: list[_Example], language: Language) -> dict[str, Any]:
    from benchsmith.builders.cceval.screens import PROFILES, SCREENS, judge_all, profile_drops

    from benchsmith.builders.cceval.predictability import code_tokens, surprisal
    from benchsmith.builders.cceval.screen_text import FileKnowledge

    per_screen: Counter[str] = Counter()
    per_profile: Counter[str] = Counter()
    bits: list[float] = []
    for ex in examples:
        verdicts = judge_all(ex.prompt, ex.groundtruth, language.value, ex.right_context)
        b = surprisal(code_tokens(ex.groundtruth, language.value),
                      FileKnowledge.of(ex.prompt, language.value, ex.groundtruth + ex.right_context))
        if b is not None:
            bits.append(round(b, 3))
        for name, verdict in verdicts.items():
            per_screen[name.value] += verdict is not None
        for profile in PROFILES:
            per_profile[profile.value] += profile_drops(verdicts, profile) is not None
    n = len(examples)
    return {
        "screens": {name.value: {"reason": cls.reason.value, "drops": per_screen[name.value],
                                 "share": _share(per_screen[name.value], n)} for name, cls in SCREENS.items()},
        "profiles": {p.value: {"screens": [s.value for s in PROFILES[p]], "drops": per_profile[p.value],
                               "share": _share(per_profile[p.value], n)} for p in PROFILES},
        # the score of metadata.predictability: bits per groundtruth token under an n-gram model of the prompt
        "surprisal": {**_stats(bits), "p10": sorted(bits)[int(0.1 * (len(bits) - 1) + 0.5)] if bits else 0,
                      "histogram": {f"<={hi}" if hi else ">8": sum(1 for b in bits if lo < b <= (hi or 1e9))
                                    for lo, hi in ((-1, 2), (2, 4), (4, 6), (6, 8), (8, 0))}},
    }


def _self_consistency(examples: list[_Example], language: Language) -> dict[str, Any]:
    """Each groundtruth as its own prediction, through the loop the build's self-check uses."""
    from benchsmith.builders.cceval.scorability import SelfConsistency, figures

    check = SelfConsistency(language)
    for ex in examples:
        check.add(ex.task_id, ex.prompt, ex.groundtruth, ex.unscorable_modes)
    return _audit_figures(figures(check.tallies), language)


def _audit_figures(figures: dict[str, Any], language: Language) -> dict[str, Any]:
    """``scorability.figures`` in the audit's shape: per scorer mode, EM/ES, violations and the first violating
    task ids, or why the mode was skipped."""
    from benchsmith.evaluate.cceval.scoring import Mode

    out: dict[str, Any] = {}
    for mode, key in ((Mode.COMPAT, "compat"), (Mode.DEFAULT, "default")):
        f = figures.get(key)
        if f is None:
            out[mode.value] = {"skipped": f"the released scorer does not know {language.value}"}
            continue
        out[mode.value] = {"em": f["em"], "es": f["es"], "violations": f["violations"],
                           "violating_task_ids": list(f.get("violating", []))[:LISTED]}
        if f.get("unscorable_as_released"):
            out[mode.value]["unscorable_as_released"] = f["unscorable_as_released"]
    return out


def _concentration(examples: list[_Example]) -> dict[str, Any]:
    n = len(examples)
    result: dict[str, Any] = {}
    for key, counts in (("repository", Counter(ex.repository for ex in examples)),
                        ("api", Counter(ex.api for ex in examples))):
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        result[f"{key}_count"] = len(counts)
        result[f"top_{key}"] = top[0][0] if top else None
        result[f"top_{key}_share"] = _share(top[0][1], n) if top else 0.0
        result[f"top_{key}s"] = [[name, c, _share(c, n)] for name, c in top[:TOP]]
    return result


def near_duplicate_key(groundtruth: str, language: str) -> str:
    from benchsmith.builders.cceval.screens import Tok, groundtruth_tokens

    return " ".join("<lit>" if t.kind in (Tok.STRING, Tok.NUMBER) else t.text
                    for t in groundtruth_tokens(groundtruth, language))


def _near_duplicates(examples: list[_Example], language: Language) -> dict[str, Any]:
    groups: dict[str, list[_Example]] = {}
    for ex in examples:
        groups.setdefault(near_duplicate_key(ex.groundtruth, language.value), []).append(ex)
    dup = sorted(((k, g) for k, g in groups.items() if len(g) > 1), key=lambda kg: (-len(kg[1]), kg[0]))
    in_groups = sum(len(g) for _, g in dup)
    return {
        "definition": "groundtruths equal with whitespace and comments ignored and string/number literals masked",
        "groups": len(dup),
        "examples_in_groups": in_groups,
        "share": _share(in_groups, len(examples)),
        "largest": [{"groundtruth": g[0].groundtruth, "examples": len(g),
                     "repositories": len({ex.repository for ex in g})} for _, g in dup[:TOP]],
    }


def _lengths(examples: list[_Example], language: Language) -> dict[str, Any]:
    from benchsmith.builders.cceval.screens import groundtruth_tokens

    return {
        "groundtruth_chars": _stats([len(ex.groundtruth) for ex in examples]),
        "groundtruth_tokens": _stats([len(groundtruth_tokens(ex.groundtruth, language.value)) for ex in examples]),
        "groundtruth_lines": _stats([ex.groundtruth.count("\n") + 1 for ex in examples]),
        "prompt_lines": _stats([ex.prompt.count("\n") + 1 for ex in examples]),
    }


def audit_split(path: str | Path, language: str | None = None, reuse_stats: bool = False) -> dict[str, Any]:
    """The audit of one split file (``line_completion.jsonl`` or any file in its schema).  With ``reuse_stats``
    (the build's own views, ``derived.write_derived``) the self-consistency of a split the build just wrote is
    taken from its stats.json, where the shards summed the scores the scorability filter gave each example."""
    path = Path(path)
    if not path.is_file():
        raise AuditError(f"{path}: no such split file")
    lang = _language(path, language)
    examples = _load(path)
    known = _stats_self_consistency(path, lang, len(examples)) if reuse_stats else None
    return {
        "split": path.name,
        "language": lang.value,
        "examples": len(examples),
        **_screens(examples, lang),
        "self_consistency": known if known is not None else _self_consistency(examples, lang),
        "concentration": _concentration(examples),
        "near_duplicates": _near_duplicates(examples, lang),
        "lengths": _lengths(examples, lang),
        "definition_recall": definition_recall(path, AuditError),
    }


def split_files(target: str | Path) -> list[Path]:
    """The split files ``target`` names: a file itself, ``DIR/line_completion.jsonl``, or one per language
    directory of a build's output directory."""
    target = Path(target)
    if target.is_file():
        return [target]
    if not target.is_dir():
        raise AuditError(f"{target}: no such file or directory")
    if (target / SPLIT_FILE).is_file():
        return [target / SPLIT_FILE]
    found = sorted(d / SPLIT_FILE for d in target.iterdir() if d.is_dir() and (d / SPLIT_FILE).is_file())
    if not found:
        raise AuditError(f"{target}: holds no {SPLIT_FILE} (nor <lang>/{SPLIT_FILE}); build a split first")
    return found


def audit_path(split: Path) -> Path:
    """Where the audit of ``split`` is written: ``audit.json`` beside ``line_completion.jsonl``, else
    ``<name>.audit.json``."""
    return split.parent / AUDIT_FILE if split.name == SPLIT_FILE else split.with_name(f"{split.stem}{AUDIT_SUFFIX}")


def _stats_self_consistency(split: Path, language: Language, n: int) -> dict[str, Any] | None:
    """``_self_consistency``'s figures from the stats.json beside ``line_completion.jsonl`` (None for another file,
    or when stats.json does not describe these ``n`` examples)."""
    if split.name != SPLIT_FILE:
        return None
    try:
        figures = json.loads((split.parent / STATS_FILE).read_text(encoding="utf-8"))["self_consistency"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(figures, dict) or not isinstance(figures.get("default"), dict) \
            or figures["default"].get("examples") != n:
        return None
    return _audit_figures(figures, language)


def write_audits(target: str | Path, language: str | None = None, reuse_stats: bool = False
                 ) -> list[tuple[Path, dict]]:
    out = []
    for split in split_files(target):
        report = audit_split(split, language, reuse_stats)
        dest = audit_path(split)
        write_json(dest, report)
        out.append((dest, report))
    return out


# ---------------------------------------------------------------------------------------------------- the table


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def print_report(report: dict, dest: Path | None = None, file=None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file or sys.stdout, width=110)  # sys.stdout of the moment, not of the import
    n = report["examples"]
    t = Table(title=f"audit of {report['language']} {report['split']}: {n} examples"
                    + (f" -> {dest}" if dest else ""))
    t.add_column("figure")
    t.add_column("value", justify="right")
    t.add_column("detail")
    for mode, sc in report["self_consistency"].items():
        if "skipped" in sc:
            t.add_row(f"self-consistency ({mode})", "-", sc["skipped"])
        else:
            t.add_row(f"self-consistency ({mode})", f"EM {sc['em']:.1f}  ES {sc['es']:.1f}",
                      f"{sc['violations']} violations" + (f": {', '.join(sc['violating_task_ids'][:3])}"
                                                         if sc["violations"] else "")
                      + (f"; {sc['unscorable_as_released']} declared unscorable as in the released benchmark"
                         if sc.get("unscorable_as_released") else ""))
    for name, s in report["screens"].items():
        t.add_row(f"screen {name}", _pct(s["share"]), f"{s['drops']} would drop ({s['reason']})")
    for name, p in report["profiles"].items():
        t.add_row(f"profile {name}", _pct(p["share"]), ", ".join(p["screens"]) or "paper filters only")
    if (sp := report.get("surprisal")) is not None:
        t.add_row("surprisal (bits/token)", f"{sp['median']}", f"p10 {sp['p10']}, p90 {sp['p90']}; "
                  + ", ".join(f"{k}: {v}" for k, v in sp["histogram"].items()))
    c = report["concentration"]
    t.add_row("top repository", _pct(c["top_repository_share"]), f"{c['top_repository']} (of {c['repository_count']})")
    t.add_row("top API", _pct(c["top_api_share"]), f"{c['top_api']} (of {c['api_count']})")
    d = report["near_duplicates"]
    t.add_row("near-duplicate groundtruths", _pct(d["share"]), f"{d['examples_in_groups']} examples in {d['groups']} groups")
    for name, s in report["lengths"].items():
        t.add_row(name.replace("_", " "), f"{s['median']}", f"mean {s['mean']}, p90 {s['p90']}, max {s['max']}")
    for name, r in report.get("definition_recall", {}).items():
        if r["with_definition"]:
            t.add_row(f"definition retrieved ({name})", f"@1 {_pct(r['recall@1'])}",
                      f"@5 {_pct(r['recall@5'])} of {r['with_definition']} examples with a known definition")
    console.print(t)


# ------------------------------------------------------------------------------------------------------ the CLI


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("split", metavar="SPLIT",
                   help="a built split: DIR/<lang>, the build's output DIR, or a line_completion*.jsonl file")
    p.add_argument("--language", help="the split's language when its records do not say (metadata.language)")
    p.add_argument("--quiet", "-q", action="store_true", help="write the JSON only")


def run(args: argparse.Namespace) -> int:
    try:
        results = write_audits(args.split, args.language)
    except AuditError as exc:
        print(f"benchsmith audit: {exc}", file=sys.stderr)
        return 2
    if not args.quiet:
        for dest, report in results:
            print_report(report, dest)
    return 0

