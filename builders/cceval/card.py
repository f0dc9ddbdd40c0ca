"""The dataset card (``DIR/README.md``) written for every build.

Everything comes from the files on disk -- ``DIR/<lang>/line_completion*.jsonl``, ``stats.json`` (``dropped``
{reason: count}, ``per_repository``, ``tool_versions``) and ``excluded.jsonl`` -- plus the command and toolchain
versions handed in.  Figures are PNGs drawn with matplotlib's Agg canvas without a creation stamp, so the same
build gives the same card and the same figure bytes.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Sequence

from benchsmith import layout, toolchain_lock
from benchsmith.families import is_language_dir
from benchsmith.jsonio import AtomicWriter, read_jsonl
from benchsmith.layout import FIGURES_DIR
from benchsmith.builders.cceval.card_sources import cost_section, sources_section
from benchsmith.repobuild.cost import COST_FILE
# Packages whose versions every card lists (the toolchains themselves come in ``tool_versions``; the tree-sitter
# grammar of every registered analyzer is added by ``grammar_packages()``).
_PACKAGES = ("benchsmith", "tree-sitter", "scipy", "rank-bm25", "sentence-transformers", "transformers", "datasets")


@dataclass
class LanguageStats:
    language: str
    settings: dict[str, int] = field(default_factory=dict)  # file stem -> examples
    repositories: dict[str, int] = field(default_factory=dict)  # repository -> examples
    per_repository: list[dict] = field(default_factory=list)  # stats.json rows
    dropped: dict[str, int] = field(default_factory=dict)
    stages: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # reason -> stages
    groundtruth_chars: list[int] = field(default_factory=list)
    prompt_lines: list[int] = field(default_factory=list)
    tool_versions: dict[str, str] = field(default_factory=dict)
    audit: dict | None = None  # <lang>/audit.json (builders/cceval/audit.py), when present
    screens_profile: str | None = None  # stats.json "screens"."profile"
    cursor: str | None = None  # stats.json "cursor" (--cursor)
    reference_kinds: dict[str, int] = field(default_factory=dict)  # stats.json: kept examples per ReferenceKind
    cursor_places: dict[str, int] = field(default_factory=dict)  # stats.json: kept examples per CursorPlace
    cut_off: dict | None = None  # stats.json "cut_off": --created-after / --released-after
    cost: dict | None = None  # <lang>/cost.json: the construction cost per repository and in total


def _language_dirs(root: Path) -> list[Path]:
    return sorted(
        p for p in root.iterdir()
        if is_language_dir(p) and (any(p.glob(layout.SPLIT_GLOB)) or (p / layout.STATS_FILE).is_file())
    )


def collect(root: Path) -> list[LanguageStats]:
    out = []
    for lang_dir in _language_dirs(root):
        st = LanguageStats(lang_dir.name)
        files = layout.split_files(lang_dir)
        for path in files:
            st.settings[path.stem] = sum(1 for _ in read_jsonl(path))
        # Prompts and groundtruths are the same in every setting: read them once, from the base file if present.
        main = lang_dir / layout.SPLIT_FILE
        main = main if main.is_file() else (files[0] if files else None)
        if main is not None:
            for rec in read_jsonl(main):
                repo = str(rec.get("metadata", {}).get("repository", "?"))
                st.repositories[repo] = st.repositories.get(repo, 0) + 1
                st.groundtruth_chars.append(len(rec.get("groundtruth", "")))
                st.prompt_lines.append(rec.get("prompt", "").count("\n") + 1)
        stats_path = lang_dir / layout.STATS_FILE
        excluded = lang_dir / layout.EXCLUDED_FILE
        counted: Counter[str] = Counter()
        if excluded.is_file():
            for rec in read_jsonl(excluded):
                reason = str(rec.get("reason", "?"))
                counted[reason] += 1
                st.stages[reason].add(str(rec.get("stage", "?")))
        if stats_path.is_file():
            stats = json.loads(stats_path.read_text(encoding="utf-8"))
            st.dropped = {str(k): int(v) for k, v in stats.get("dropped", {}).items()}
            st.per_repository = list(stats.get("per_repository", []))
            st.tool_versions = {str(k): str(v) for k, v in stats.get("tool_versions", {}).items()}
            st.screens_profile = (stats.get("screens") or {}).get("profile")
            st.cursor = stats.get("cursor")
            st.reference_kinds = {str(k): int(v) for k, v in (stats.get("reference_kinds") or {}).items()}
            st.cursor_places = {str(k): int(v) for k, v in (stats.get("cursor_places") or {}).items()}
            st.cut_off = stats.get("cut_off")
        else:
            st.dropped = dict(counted)
        cost = lang_dir / COST_FILE
        if cost.is_file():
            st.cost = json.loads(cost.read_text(encoding="utf-8"))
        audit = lang_dir / layout.AUDIT_FILE
        if audit.is_file():
            st.audit = json.loads(audit.read_text(encoding="utf-8"))
        out.append(st)
    return out


def grammar_packages() -> list[str]:
    """The distributions of every registered analyzer's tree-sitter grammar (``tree_sitter_c_sharp`` ->
    ``tree-sitter-c-sharp``), so a card names the grammar of each language, not only the original four."""
    from benchsmith.analyzers import registry

    owners = metadata.packages_distributions()
    return sorted({(owners.get(cls.grammar_module) or [cls.grammar_module.replace("_", "-")])[0]
                   for cls in registry().values()})


def package_versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in (*_PACKAGES, *grammar_packages()):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], right_from: int = 1) -> list[str]:
    def cell(v: object) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "| " + " | ".join("---" if i < right_from else "---:" for i in range(len(header))) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return lines


def _quantiles(values: list[int]) -> tuple[str, str, str, str]:
    if not values:
        return ("-", "-", "-", "-")
    v = sorted(values)
    pick = lambda q: v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]  # noqa: E731 - nearest rank
    return (f"{sum(v) / len(v):.1f}", str(pick(0.5)), str(pick(0.9)), str(v[-1]))


def draw_histogram(path: Path, title: str, xlabel: str, series: dict[str, list[int]]) -> None:
    """A deterministic PNG: Agg canvas, fixed size and bins, no software/date metadata."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    values = [x for xs in series.values() for x in xs]
    if values:
        edges = np.histogram_bin_edges(np.asarray(values, dtype=float), bins=min(40, max(5, len(set(values)))))
        for name, xs in series.items():
            if xs:
                ax.hist(xs, bins=edges, histtype="step", linewidth=1.5, label=f"{name} (n={len(xs)})")
        ax.legend(loc="upper right")
    else:
        ax.text(0.5, 0.5, "no examples", ha="center", va="center", transform=ax.transAxes)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("examples")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format="png", metadata={"Software": None})
    os.replace(tmp, path)


def render(root: Path, langs: list[LanguageStats], command: Sequence[str], tool_versions: dict[str, str]) -> str:
    total = sum(max(st.settings.values(), default=0) for st in langs)
    lines = [
        "---",
        "pretty_name: Cross-file code completion benchmark (CrossCodeEval format)",
        "tags:", "- code", "- code-completion", "- crosscodeeval",
        "task_categories:", "- text-generation",
        "---",
        "",
        "# Cross-file code completion benchmark",
        "",
        f"Built by benchsmith in the CrossCodeEval format: {total} examples in {len(langs)} language(s). "
        "Each example's groundtruth uses a name defined in another file of its repository.",
        "Files are drop-in for the original CrossCodeEval scripts: `<language>/line_completion.jsonl` has no "
        "cross-file context; `line_completion_rg1_<retriever>.jsonl` retrieves with the last lines of the prompt, "
        "`line_completion_oracle_<retriever>.jsonl` with the last lines of prompt + groundtruth.",
        "",
        "## Examples per language and setting",
        "",
    ]
    settings = sorted({s for st in langs for s in st.settings}, key=lambda s: (s != layout.SPLIT_STEM, s))
    lines += _table(["language", *settings], [[st.language, *[st.settings.get(s, "-") for s in settings]]
                                              for st in langs])
    lines += ["", "## Examples per repository", ""]
    rows = []
    for st in langs:
        info = {r.get("repository"): r for r in st.per_repository}
        for repo in sorted(set(st.repositories) | set(info)):
            r = info.get(repo, {})
            rows.append([st.language, repo, st.repositories.get(repo, 0), r.get("files", "-"), r.get("excluded", "-"),
                         r.get("status", "-")])
    lines += _table(["language", "repository", "examples", "files", "excluded", "status"], rows, right_from=2)
    lines += ["", "## Exclusions by reason", "",
              "Every dropped repository, file or candidate example is recorded with its reason in "
              "`<language>/excluded.jsonl`; counts from `<language>/stats.json`.", ""]
    reasons = sorted({r for st in langs for r in st.dropped}, key=lambda r: (-sum(st.dropped.get(r, 0) for st in langs), r))
    if reasons:
        rows = []
        for reason in reasons:
            stages = sorted({s for st in langs for s in st.stages.get(reason, set())})
            counts = [st.dropped.get(reason, 0) for st in langs]
            rows.append([reason, ", ".join(stages) or "-", *counts, sum(counts)])
        lines += _table(["reason", "stage", *[st.language for st in langs], "total"], rows, right_from=2)
    else:
        lines.append("Nothing was excluded.")
    lines += sources_section(langs) + cost_section(langs)
    lines += _uses_section(langs)
    lines += _audit_section(langs)
    lines += ["", "## Lengths", ""]
    rows = []
    for st in langs:
        rows.append([st.language, "groundtruth (characters)", *_quantiles(st.groundtruth_chars)])
        rows.append([st.language, "prompt (lines)", *_quantiles(st.prompt_lines)])
        for key, label in (("groundtruth_tokens", "groundtruth (tokens)"), ("groundtruth_lines", "groundtruth (lines)")):
            q = (st.audit or {}).get("lengths", {}).get(key)
            if q:
                rows.append([st.language, label, f"{float(q['mean']):.1f}", q["median"], q["p90"], q["max"]])
    lines += _table(["language", "length", "mean", "median", "p90", "max"], rows, right_from=2)
    lines += ["", f"![groundtruth length]({FIGURES_DIR}/groundtruth_length.png)", "",
              f"![prompt length]({FIGURES_DIR}/prompt_length.png)", ""]
    versions = {**package_versions()}
    for st in langs:
        versions.update(st.tool_versions)
    versions.update({str(k): str(v) for k, v in tool_versions.items()})
    lines += ["## How it was built", "", "```bash", shlex.join(list(command)) or "(command not recorded)", "```", "",
              # the versions that decide which examples exist, checked against the lock the set-up installs
              f"Toolchains: {toolchain_lock.check(versions).summary()}", "", "Versions:", ""]
    lines += _table(["tool", "version"], sorted(versions.items()), right_from=2)
    lines += ["", "## Schema", "",
              "`prompt`, `groundtruth`, `right_context`: strings; `metadata`: `task_id`, `repository`, `file`, "
              "`context_start_lineno`, `groundtruth_start_lineno`, `right_context_start_lineno` (+ benchsmith extras "
              "such as `symbol`, `defining_file`, `reference_kind`, `definition`, `cursor_place`); `crossfile_context`: `text` (the retrieved chunks behind line "
              "comments) and `list` of `{retrieved_chunk, filename, score}`.",
              "",
              "Licenses: each example is code from its repository and keeps that repository's license.", ""]
    return "\n".join(lines)


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


_SCREENS_TEXT = (
    "Model-free predictability screens (`--screens`, `builders/cceval/screens.py`) drop examples whose "
    "groundtruth the current file already gives away: `copy` (an in-file token copy predictor reproduces it, "
    "up to a third of its tokens, which occur before the cursor anyway), `vocabulary` (every name and literal "
    "of at most 5 of the groundtruth occurs before the cursor, imports aside), `echo` (its first name repeats "
    "or extends an enclosing line's name, e.g. `test_http_date` -> `http_date(...)`, and the rest occurs before "
    "the cursor), `analogy` (an earlier statement gives it with a consistent substitution the file explains); "
    "the strict profile adds `imported_vocabulary` (imports count) and `surprisal` (at most 4 bits per token "
    "under an n-gram model of the prompt). Every example's `metadata.predictability` holds its surprisal and "
    "every screen that fires on it. Profile `none` is the paper's filters only.")


def _shares(counts: dict[str, int]) -> str:
    total = sum(counts.values()) or 1
    return ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _uses_section(langs: list[LanguageStats]) -> list[str]:
    """What the examples test: the kinds of cross-file use, where the cursor sits, whether retrieval finds the
    definition each example needs."""
    lines = ["", "## Cross-file uses", "",
             "`metadata.reference_kind`: what kind of cross-file use the groundtruth needs; `metadata.definition`: "
             "where that API is defined; `--cursor name` puts the prompt's end right before the cross-file name, "
             "`--cursor released` where the released CrossCodeEval puts it in the line (`metadata.cursor_place`).", ""]
    rows = [[st.language, f"`{st.cursor or 'name'}`", _shares(st.reference_kinds) or "-",
             _shares(st.cursor_places) or "-"] for st in langs]
    lines += _table(["language", "cursor", "reference kinds", "cursor places"], rows, right_from=4)
    recall = [(st.language, name, r) for st in langs for name, r in ((st.audit or {}).get("definition_recall") or {}).items()
              if r.get("with_definition")]
    if recall:
        lines += ["", "How often the retrieved cross-file context covers the definition (recall@k of "
                      "`metadata.definition` among the top-k chunks):", ""]
        lines += _table(["language", "retrieval", "examples with a definition", "recall@1", "recall@5"],
                        [[lang, name, r["with_definition"], _pct(r["recall@1"]), _pct(r["recall@5"])]
                         for lang, name, r in recall], right_from=2)
    return lines


def _audit_section(langs: list[LanguageStats]) -> list[str]:
    """The figures of ``benchsmith audit`` (``<lang>/audit.json``), as tables."""
    audited = [st for st in langs if st.audit]
    lines = ["", "## Audit", "", _SCREENS_TEXT, ""]
    profiles = [f"{st.language}: `{st.screens_profile}`" for st in langs if st.screens_profile]
    if profiles:
        lines += ["Screens profile applied by the build: " + ", ".join(profiles) + ".", ""]
    if not audited:
        return lines + ["No audit was computed (run `benchsmith audit DIR`)."]
    lines += ["Figures of `benchsmith audit` on the released files (`<language>/audit.json`). Self-consistency: "
              "each groundtruth scored as its own prediction (EM/ES 100 expected); near duplicates: groundtruths "
              "equal with whitespace ignored and literals masked; API: the cross-file symbol and its defining "
              "file.", ""]
    rows = []
    for st in audited:
        a = st.audit
        sc = a["self_consistency"]
        cell = lambda m: "-" if "skipped" in sc[m] else (  # noqa: E731
            f"{sc[m]['em']:.1f} / {sc[m]['es']:.1f} ({sc[m]['violations']}"
            + (f"; {sc[m]['unscorable_as_released']} as released" if sc[m].get("unscorable_as_released") else "")
            + ")")
        c, d = a["concentration"], a["near_duplicates"]
        rows.append([st.language, a["examples"], cell("compat-cceval"), cell("default"),
                     f"{_pct(c['top_repository_share'])} ({c['repository_count']})",
                     f"{_pct(c['top_api_share'])} `{c['top_api']}` ({c['api_count']})", _pct(d["share"])])
    lines += _table(["language", "examples", "self-consistency compat EM / ES (violations)",
                     "default EM / ES (violations)", "top repository (repositories)", "top API (APIs)",
                     "near-duplicate groundtruths"], rows, right_from=1)
    lines += ["", "Share of the released examples each screen (and profile) would still drop:", ""]
    names = list(audited[0].audit["screens"]) + [f"profile {p}" for p in audited[0].audit["profiles"]]
    rows = []
    for name in names:
        row = [name]
        for st in audited:
            a = st.audit
            entry = a["profiles"].get(name.removeprefix("profile ")) if name.startswith("profile ") else a["screens"].get(name)
            row.append(_pct(entry["share"]) if entry else "-")
        rows.append(row)
    lines += _table(["screen", *[st.language for st in audited]], rows)
    return lines


def write_card(out_dir: str | os.PathLike, command: list[str], tool_versions: dict) -> Path:
    """Write ``DIR/README.md`` and ``DIR/figures/*.png`` for the build in ``out_dir``; returns the card's path."""
    root = Path(out_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such output directory; build the benchmark first")
    langs = collect(root)
    draw_histogram(root / FIGURES_DIR / "groundtruth_length.png", "Groundtruth length", "characters",
                   {st.language: st.groundtruth_chars for st in langs})
    draw_histogram(root / FIGURES_DIR / "prompt_length.png", "Prompt length", "lines",
                   {st.language: st.prompt_lines for st in langs})
    card = root / layout.CARD_FILE
    with AtomicWriter(card) as w:
        w.write(render(root, langs, command, tool_versions or {}))
    return card
