"""Markdown report and figures for ``benchsmith score humanext`` (from ``results.json``'s content).

* Table 1 style: models as rows, settings as columns, pass@1 with the relative change against ``direct``;
* robustness: oracle pass@1 with the auxiliary as written vs renamed / without docstring (bar chart);
* position sweep: pass@1 and black-box share per position of the relevant auxiliary (line chart), with the
  Pearson correlation between the two;
* implementation style: share and pass@1 of black-box / reference / white-box targets.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from benchsmith.layout import REPORT_FILE

SETTINGS = [("direct", "Direct"), ("irrelevant", "Irrelevant"), ("oracle", "Oracle"),
            ("step_by_step", "Step-by-step"), ("multi_auxiliary", "Multi-aux")]
ROBUSTNESS = [("none", "Oracle"), ("renamed", "Renamed"), ("no_docstring", "No docstring"),
              ("renamed_locals", "Renamed locals"), ("docstring_as_comments", "Docstring as comments"),
              ("dead_code", "Dead code")]
STYLES = [("black_box", "Black-box"), ("reference", "Reference"), ("white_box", "White-box"),
          ("unparseable", "Unparseable")]


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _rel(x: float | None) -> str:
    return "" if x is None else f" ({'+' if x >= 0 else ''}{100 * x:.1f}%)"


def table1(models: dict[str, Any]) -> list[str]:
    present = [(key, label) for key, label in SETTINGS if any(key in m["settings"] for m in models.values())]
    lines = ["| Model | " + " | ".join(label for _, label in present) + " |",
             "|---|" + "---:|" * len(present)]
    for name, m in models.items():
        cells = []
        for key, _ in present:
            row = m["settings"].get(key)
            value = row.get("pass@1") if row else None
            rel = m["relative_to_direct"].get(key) if key != "direct" else None
            cells.append(_pct(value) + (_rel(rel) if value is not None else ""))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def passk_table(models: dict[str, Any], ks: Sequence[int]) -> list[str]:
    higher = [k for k in ks if k != 1]
    rows = []
    for name, m in models.items():
        for key, label in SETTINGS:
            row = m["settings"].get(key)
            if row and any(f"pass@{k}" in row for k in higher):
                rows.append(f"| {name} | {label} | " + " | ".join(_pct(row.get(f"pass@{k}")) for k in ks)
                            + f" | {row.get('n_min', '')} |")
    if not rows:
        return []
    return (["| Model | Setting | " + " | ".join(f"pass@{k}" for k in ks) + " | n |",
             "|---|---|" + "---:|" * (len(ks) + 1)] + rows)


def robustness_table(models: dict[str, Any]) -> list[str]:
    present = [(key, label) for key, label in ROBUSTNESS if any(key in m["perturbations"] for m in models.values())]
    if not present:
        return []
    lines = ["| Model | " + " | ".join(label for _, label in present) + " |", "|---|" + "---:|" * len(present)]
    for name, m in models.items():
        base = m["perturbations"].get("none", {}).get("pass@1")
        cells = []
        for key, _ in present:
            value = m["perturbations"].get(key, {}).get("pass@1")
            rel = None if key == "none" or value is None or not base else (value - base) / base
            cells.append(_pct(value) + _rel(rel))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def position_table(models: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for name, m in models.items():
        if not m["positions"]:
            continue
        positions = sorted(m["positions"], key=int)
        lines += [f"**{name}** (Pearson r between pass@1 and black-box share: "
                  f"{_fmt_r(m['position_correlation']['pearson_r'])}, {m['position_correlation']['positions']} "
                  "positions)", "",
                  "| Position | " + " | ".join(positions) + " |", "|---|" + "---:|" * len(positions),
                  "| pass@1 | " + " | ".join(_pct(m["positions"][p].get("pass@1")) for p in positions) + " |",
                  "| black-box share | " + " | ".join(_pct(m["positions"][p]["black_box_share"]) for p in positions)
                  + " |", ""]
    return lines


def style_table(models: dict[str, Any]) -> list[str]:
    lines = ["| Model | Style | Samples | Share | pass@1 |", "|---|---|---:|---:|---:|"]
    for name, m in models.items():
        for key, label in STYLES:
            row = m["styles"].get(key)
            if row:
                lines.append(f"| {name} | {label} | {row['samples']} | {_pct(row['share'])} | {_pct(row['pass@1'])} |")
    return lines


def _fmt_r(r: float | None) -> str:
    return "undefined" if r is None else f"{r:+.3f}"


# ------------------------------------------------------------------------------------------------- figures


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.hashsalt": "benchsmith", "figure.dpi": 100})
    return plt


def _save(fig, path: Path) -> None:
    # no timestamps or version strings in the file: same results -> same bytes
    fig.savefig(path, format="png", metadata={"Software": None})


def _pass_bars(models: dict[str, Any], section: str, present: list[tuple[str, str]], path: Path, *,
               figsize: tuple[float, float], title: str, label_rotation: float | None = None) -> None:
    """Grouped bars of pass@1 per key of ``section`` (``settings``, ``perturbations``), one bar per model."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=figsize)
    width = 0.8 / max(1, len(models))
    for i, (name, m) in enumerate(models.items()):
        xs = [j + i * width for j in range(len(present))]
        ys = [100 * (m[section].get(key, {}).get("pass@1") or 0.0) for key, _ in present]
        ax.bar(xs, ys, width=width, label=name)
    ax.set_xticks([j + width * (len(models) - 1) / 2 for j in range(len(present))])
    labels = [label for _, label in present]
    if label_rotation is None:
        ax.set_xticklabels(labels)
    else:
        ax.set_xticklabels(labels, rotation=label_rotation)
    ax.set_ylabel("pass@1 (%)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)


def robustness_figure(models: dict[str, Any], path: Path) -> bool:
    present = [(key, label) for key, label in ROBUSTNESS if any(key in m["perturbations"] for m in models.values())]
    if len(present) < 2:
        return False
    _pass_bars(models, "perturbations", present, path,
               figsize=(max(5.0, 1.6 * len(present) * max(1, len(models)) / 2 + 2), 3.6),
               title="Robustness of the oracle setting to perturbed auxiliaries", label_rotation=15)
    return True


def position_figure(models: dict[str, Any], path: Path) -> bool:
    with_pos = {n: m for n, m in models.items() if m["positions"]}
    if not with_pos:
        return False
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    ax2 = ax.twinx()
    for name, m in with_pos.items():
        positions = sorted(m["positions"], key=int)
        xs = [int(p) for p in positions]
        ax.plot(xs, [100 * (m["positions"][p].get("pass@1") or 0.0) for p in positions], marker="o",
                label=f"{name} pass@1")
        ax2.plot(xs, [100 * m["positions"][p]["black_box_share"] for p in positions], marker="x", linestyle="--",
                 label=f"{name} black-box share")
    ax.set_xlabel("position of the relevant auxiliary among the context functions")
    ax.set_ylabel("pass@1 (%)")
    ax2.set_ylabel("black-box share (%)")
    ax.set_title("Position sweep (multi-auxiliary)")
    handles = ax.get_legend_handles_labels()
    handles2 = ax2.get_legend_handles_labels()
    ax.legend(handles[0] + handles2[0], handles[1] + handles2[1], fontsize=7, loc="best")
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return True


def settings_figure(models: dict[str, Any], path: Path) -> bool:
    present = [(key, label) for key, label in SETTINGS if any(key in m["settings"] for m in models.values())]
    if not present:
        return False
    _pass_bars(models, "settings", present, path, figsize=(6.4, 3.6), title="pass@1 per setting")
    return True


# --------------------------------------------------------------------------------------------------- report


def write_report(out: Path, results: dict[str, Any], ks: Sequence[int]) -> Path:
    models = results["models"]
    figures = out / "figures"
    figures.mkdir(parents=True, exist_ok=True)
    md = ["# HumanExtension evaluation", ""]
    v = results["variants"]
    md += [f"Scored variants: {v['scored']} of {v['total']} (stage-1 records are not scored; "
           f"{v['excluded_invalid_pairs']} variants of pairs whose human reference fails were excluded).",
           f"Sandbox: {results['sandbox']['backend']} — {results['sandbox']['isolation']}.",
           f"Problem unit: {results['problem_unit']}.", ""]
    judging = results.get("judging")
    if judging:
        md[-1:-1] = [f"Verdicts: judged in the parent (candidate values compared by benchsmith): "
                     f"{judging['judged_in_parent']} samples; exit-status path (tests of another shape): "
                     f"{judging['exit_status']} samples."]
    md += ["## pass@1 per setting", "", "pass@1 in %, relative change against *direct* in parentheses.", ""]
    md += table1(models) + [""]
    if settings_figure(models, figures / "settings.png"):
        md += ["![pass@1 per setting](figures/settings.png)", ""]
    pk = passk_table(models, ks)
    if pk:
        md += ["## pass@k", ""] + pk + [""]
    rob = robustness_table(models)
    if rob:
        md += ["## Robustness (oracle setting)", "", "pass@1 in %, change against the unperturbed oracle.", ""]
        md += rob + [""]
        if robustness_figure(models, figures / "robustness.png"):
            md += ["![robustness](figures/robustness.png)", ""]
    pos = position_table(models)
    if pos:
        md += ["## Position of the relevant auxiliary (multi-auxiliary)", ""] + pos
        if position_figure(models, figures / "positions.png"):
            md += ["![position sweep](figures/positions.png)", ""]
    md += ["## Implementation style", "",
           "Black-box: the target calls the auxiliary; reference: it passes the auxiliary without calling it "
           "(e.g. `key=aux`); white-box: it re-implements it.", ""]
    md += style_table(models) + [""]
    md += ["## Verdicts", "", "| Model | " + " | ".join(["verdict", "samples"]) + " |", "|---|---|---:|"]
    for name, m in models.items():
        for verdict, count in m["verdicts"].items():
            md.append(f"| {name} | {verdict} | {count} |")
    md.append("")
    path = out / REPORT_FILE
    from benchsmith.jsonio import AtomicWriter

    with AtomicWriter(path) as w:
        w.write("\n".join(md))
    return path
