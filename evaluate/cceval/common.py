"""Pieces shared by both CrossCodeEval scoring modes: languages, keyword lists, tree-sitter parsers, per-example
score records and the aggregation into ``results.json`` numbers."""

from __future__ import annotations

import enum
import functools
from dataclasses import asdict, dataclass
from importlib import resources
from typing import Iterable, Sequence

# Every language with an analyzer (a unit test keeps it equal to the registry); default mode scores all of them,
# compat mode only COMPAT_LANGUAGES.
from benchsmith.records import Language

# The released scorer (amazon-science/cceval eval_metric.py) only has keyword lists and rules for these.
COMPAT_LANGUAGES = frozenset({Language.PYTHON, Language.JAVA, Language.TYPESCRIPT, Language.CSHARP})


# Python prefixes (ending at a newline after new non-blank text) parsed to find the first statement: each parse reads the
# whole prompt, so an unbounded number would make a long hostile completion quadratic.  A first statement spanning
# more lines than this is treated as having no valid prefix.
PREFIX_TRIES = 256


def require_compat_language(language: Language) -> None:
    """Compat mode reproduces a scorer that never knew other languages: refuse rather than invent its numbers."""
    if language not in COMPAT_LANGUAGES:
        known = ", ".join(sorted(m.value for m in COMPAT_LANGUAGES))
        raise ValueError(
            f"compat-cceval mode reproduces the released CrossCodeEval scorer, which only knows {known}; "
            f"score {language.value} in the default mode (drop --compat)"
        )


class Mode(str, enum.Enum):
    # Reproduces amazon-science/cceval scripts/eval_metric.py @25f9cab exactly, quirks included.
    COMPAT = "compat-cceval"
    # benchsmith's corrected scorer: tree-sitter statements/comments/identifiers, rapidfuzz edit similarity.
    DEFAULT = "default"


class EditSim(str, enum.Enum):
    # What ``es`` means; written to results.json so numbers from the two modes are never confused.
    DIFFLIB_FUZZ_RATIO = (
        "fuzzywuzzy-0.18 fuzz.ratio semantics: round-half-even(100 * difflib.SequenceMatcher(None, pred, target, "
        "autojunk=True).ratio()) on stripped strings; equal -> 100, one empty -> 0"
    )
    RAPIDFUZZ_RATIO = (
        "rapidfuzz.fuzz.ratio(pred, target) on stripped strings: 100 * (1 - Indel distance / (len(pred) + "
        "len(target))), unrounded float; two empty strings -> 100"
    )


@functools.lru_cache(maxsize=None)
def keywords(language: Language) -> frozenset[str]:
    """Keyword set from ``benchsmith/data/keywords/<language>.txt`` (same word sets as the released scorer, which
    has them for ``COMPAT_LANGUAGES`` only)."""
    require_compat_language(language)
    text = resources.files("benchsmith").joinpath("data", "keywords", f"{language.value}.txt").read_text("utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip())


def analyzer_class(language: Language):
    """The analyzer class of ``language``: it declares the tree-sitter grammar and statement rules scoring uses."""
    from benchsmith.analyzers import registry

    reg = registry()
    if language.value not in reg:
        raise ValueError(f"no analyzer registered for {language.value!r} (known: {', '.join(sorted(reg))}); "
                         "the scorer takes its grammar from the language's analyzer class")
    return reg[language.value]


@functools.lru_cache(maxsize=None)
def ts_language(language: Language):
    """The tree-sitter ``Language`` of the analyzer's grammar wheel (imported lazily); TypeScript is scored with
    the plain TypeScript grammar, as CrossCodeEval did."""
    return analyzer_class(language).ts_language()


@functools.lru_cache(maxsize=None)
def grammar_distribution(module: str) -> str:
    """The installed distribution providing grammar module ``module`` (``tree_sitter_c_sharp`` ->
    ``tree-sitter-c-sharp``)."""
    from importlib.metadata import packages_distributions

    found = packages_distributions().get(module)
    return found[0] if found else module.replace("_", "-")


def grammar_versions() -> dict[str, str]:
    """``{distribution: version}`` of tree-sitter and of the grammar of every registered analyzer."""
    from importlib.metadata import PackageNotFoundError, version

    from benchsmith.analyzers import registry

    dists = ["tree-sitter"] + sorted({grammar_distribution(cls.grammar_module) for cls in registry().values()})
    out: dict[str, str] = {}
    for d in dists:
        try:
            out[d] = version(d)
        except PackageNotFoundError:
            out[d] = "not installed"
    return out


def parser(language: Language):
    """The shared tree-sitter parser (``benchsmith.treesitter``) of ``ts_language(language)``'s grammar."""
    return analyzer_class(language).parser_for()


@dataclass
class ExampleScore:
    """One scored (task, sample). ``id_*`` are ``int`` 0 when the denominator is 0, exactly as the released
    scorer writes them (json shows ``0`` rather than ``0.0``)."""

    task_id: str
    pred: str  # truncated prediction, comments removed
    target: str  # groundtruth, comments removed (and, in default mode, truncated the same way)
    pred_ids: list[str]
    target_ids: list[str]
    em: int
    es: float
    id_em: int
    id_precision: float | int
    id_recall: float | int
    id_f1: float | int
    pred_postprocessed: str = ""  # statement-truncated prediction before comment removal (diagnostic)
    sample: int = 0  # index of this sample among the task's predictions (file order)

    def detailed(self, with_sample: bool) -> dict:
        row = {
            "task_id": self.task_id,
            "em": self.em,
            "es": self.es,
            "id_em": self.id_em,
            "id_precision": self.id_precision,
            "id_recall": self.id_recall,
            "id_f1": self.id_f1,
        }
        if with_sample:
            row["sample"] = self.sample
        return row

    def truncated(self, with_sample: bool) -> dict:
        row = {
            "task_id": self.task_id,
            "pred": self.pred,
            "target": self.target,
            "pred_ids": self.pred_ids,
            "target_ids": self.target_ids,
        }
        if with_sample:
            row["sample"] = self.sample
        return row

    def to_dict(self) -> dict:
        return asdict(self)


def exact_match(pred: str, target: str) -> int:
    """1 when the non-empty stripped lines are equal (released definition, used by both modes)."""
    pred_lines = [line.strip() for line in pred.split("\n") if line.strip()]
    gt_lines = [line.strip() for line in target.split("\n") if line.strip()]
    return int(pred_lines == gt_lines)


def identifier_match(pred_ids: Sequence[str], target_ids: Sequence[str]) -> tuple[int, float | int, float | int, float | int]:
    """(id_em, precision, recall, f1). id_em compares the lists (order, duplicates); P/R/F1 use sets. A zero
    denominator gives int 0, as the released scorer does."""
    id_em = int(list(pred_ids) == list(target_ids))
    p, t = set(pred_ids), set(target_ids)
    tp = len(p & t)
    fp = len(p - t)
    fn = len(t - p)
    precision = tp / (tp + fp) if (tp + fp) != 0 else 0
    recall = tp / (tp + fn) if (tp + fn) != 0 else 0
    f1 = 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) != 0 else 0
    return id_em, precision, recall, f1


METRICS = ("em", "es", "id_em", "id_precision", "id_recall", "id_f1")
# em/id_* are fractions reported as percentages; es is already on a 0..100 scale.
_PERCENT = {"em": True, "es": False, "id_em": True, "id_precision": True, "id_recall": True, "id_f1": True}


def aggregate(scores: Iterable[ExampleScore]) -> dict:
    """``results.json`` numbers. With one sample per task this is the released formula (mean over examples,
    x100 except es, rounded to 2 decimals). With several samples per task, each task first gets the mean of
    its samples, so every task weighs the same whatever its sample count; ``total`` counts tasks and
    ``samples`` counts scored predictions."""
    per_task: dict[str, list[ExampleScore]] = {}
    for s in scores:
        per_task.setdefault(s.task_id, []).append(s)
    n_tasks = len(per_task)
    n_samples = sum(len(v) for v in per_task.values())
    out: dict = {}
    for m in METRICS:
        if n_tasks == 0:
            out[m] = 0.0
            continue
        if n_samples == n_tasks:
            # Summed in file order exactly like the released code (sum of the values as they are).
            total = sum(getattr(v[0], m) for v in per_task.values())
        else:
            total = sum(sum(getattr(s, m) for s in v) / len(v) for v in per_task.values())
        mean = total / n_tasks
        out[m] = round(mean * 100, 2) if _PERCENT[m] else round(mean, 2)
    out["total"] = n_tasks
    if n_samples != n_tasks:
        out["samples"] = n_samples
    return out
