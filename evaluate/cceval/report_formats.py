"""``benchsmith report formats``: one split, one model, several prompt formats side by side.

Each predictions file (from ``benchsmith generate --prompt-format ... --context-placement ...``) is scored by the
same scorer as ``benchsmith score cceval`` and becomes one column: EM, ES and identifier F1, with the settings
read from its predictions' ``metadata`` (format, FIM order and template, context placement, budgets, the
post-processing rules and how many predictions each rule shortened).  A file without metadata is a left-to-right
run of an older ``generate`` (its placement is not recorded, so the column says so).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.evaluate.cceval.command import ScoreInputError, load_predictions, load_tasks, score_all
from benchsmith.evaluate.cceval.common import Mode, aggregate

SETTING_KEYS = ("model", "prompt_format", "fim_order", "fim_template", "context_placement", "max_prompt_tokens",
                "crossfile_max_tokens", "suffix_max_tokens", "max_new_tokens")
UNRECORDED = "unrecorded"


@dataclass
class Column:
    predictions: str
    settings: dict[str, Any]
    scores: dict[str, Any]
    rules: list[str] = field(default_factory=list)
    applied: dict[str, int] = field(default_factory=dict)  # rule -> predictions it changed
    truncated: int = 0  # prompts cut to their budgets

    @property
    def label(self) -> str:
        s = self.settings
        fmt = s.get("prompt_format", f"ltr ({UNRECORDED})")
        if fmt == "fim":
            fmt = f"fim-{s.get('fim_order')} ({s.get('fim_template')})"
        return f"{fmt} / {s.get('context_placement', UNRECORDED)}"

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "predictions": self.predictions, "settings": self.settings,
                "postprocess": {"rules": self.rules, "applied": self.applied}, "truncated_prompts": self.truncated,
                "em": self.scores["em"], "es": self.scores["es"], "id_f1": self.scores["id_f1"],
                "total": self.scores["total"]}


def settings_of(path: Path) -> tuple[dict[str, Any], list[str], dict[str, int], int]:
    """The settings every line of ``path`` shares (a key whose value differs between lines reads ``mixed``),
    the rules, how often each rule applied, and how many prompts were truncated."""
    seen: dict[str, set[str]] = {}
    values: dict[str, Any] = {}
    rules: list[str] = []
    applied: Counter[str] = Counter()
    truncated = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            meta = json.loads(line).get("metadata")
            if not isinstance(meta, dict):
                continue
            for key in SETTING_KEYS:
                if key in meta:
                    seen.setdefault(key, set()).add(json.dumps(meta[key]))
                    values[key] = meta[key]
            post = meta.get("postprocess") if isinstance(meta.get("postprocess"), dict) else {}
            rules = [r for r in post.get("rules", []) if isinstance(r, str)] or rules
            applied.update(r for r in post.get("applied", []) if isinstance(r, str))
            truncated += bool(meta.get("truncated"))
    settings = {k: (values[k] if len(seen[k]) == 1 else "mixed") for k in SETTING_KEYS if k in seen}
    return settings, rules, dict(sorted(applied.items())), truncated


def build_columns(prompts: Path, predictions: list[Path], mode: Mode, language: str | None = None) -> list[Column]:
    tasks = load_tasks(prompts, language)
    columns = []
    for path in predictions:
        preds = load_predictions(path, tasks)
        scores = aggregate(score_all(tasks, preds, mode, progress=False))
        settings, rules, applied, truncated = settings_of(path)
        columns.append(Column(str(path), settings, scores, rules, applied, truncated))
    return columns


def markdown(columns: list[Column], prompts: Path, mode: Mode) -> str:
    head = ["metric"] + [c.label for c in columns]
    rows = [[m] + [f"{c.scores[m]:.2f}" for c in columns] for m in ("em", "es", "id_f1")]
    rows.append(["tasks"] + [str(c.scores["total"]) for c in columns])
    for key in SETTING_KEYS:
        rows.append([key] + [str(c.settings.get(key, "-")) for c in columns])
    rows.append(["postprocess"] + [", ".join(f"{r} ({c.applied.get(r, 0)})" for r in c.rules) or "none"
                                   for c in columns])
    rows.append(["truncated prompts"] + [str(c.truncated) for c in columns])
    rows.append(["predictions"] + [c.predictions for c in columns])
    models = sorted({str(c.settings["model"]) for c in columns if "model" in c.settings})
    warn = [f"Warning: the columns come from {len(models)} models ({', '.join(models)}); the table compares "
            "prompt formats only for one model.", ""] if len(models) > 1 else []
    lines = [f"# Prompt formats on {prompts} ({mode.value} scorer)", "", *warn,
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompts", required=True, type=Path, help="the built split the predictions answer")
    parser.add_argument("--predictions", required=True, type=Path, nargs="+",
                        help="one predictions file per prompt format / context placement (one model)")
    parser.add_argument("--output", required=True, type=Path, help="directory for formats.json and formats.md")
    parser.add_argument("--language", help="language of records without metadata.language")
    parser.add_argument("--compat", action="store_true", help="the released scorer's numbers (Python only)")


def run(args: argparse.Namespace) -> int:
    from benchsmith.jsonio import write_json

    mode = Mode.COMPAT if args.compat else Mode.DEFAULT
    try:
        columns = build_columns(args.prompts, list(args.predictions), mode, args.language)
    except (ScoreInputError, ValueError, OSError) as exc:
        print(f"benchsmith report formats: error: {exc}", file=sys.stderr)
        return 2
    args.output.mkdir(parents=True, exist_ok=True)
    text = markdown(columns, args.prompts, mode)
    (args.output / "formats.md").write_text(text, encoding="utf-8")
    write_json(args.output / "formats.json", {"prompts": str(args.prompts), "mode": mode.value,
                                              "columns": [c.to_dict() for c in columns]})
    print(text, end="")
    return 0
