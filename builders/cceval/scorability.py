"""Scorable by construction: an exact copy of an example's groundtruth, given as the prediction, must get full
marks (EM 100, ES 100) from the released CrossCodeEval scorer (compat mode, for the languages it knows) and from
benchsmith's default scorer.  An example that fails this can never be solved, whatever the model.

Where the scorers and the groundtruth disagree, and what the builder does about it (decided per case):

- A statement end the default scorer knows and the cutter did not (TypeScript/JavaScript statements without
  ``;``, enum constants, C# ``case X:`` labels): cut consistently.  These are real statement ends, so the cutter
  ends the groundtruth there too (``Analyzer.statement_parents()`` is the one set both use).
- Brace languages, compat mode: the released scorer cuts a prediction after its first ``;``, ``{`` or ``}``
  *character*, so a groundtruth holding one inside a string, a template literal, an interpolation
  (``$"...{x}..."``, ``${x}``) or a comment before its real end can never match.  Cutting the groundtruth where
  the scorer cuts would leave a reference that ends mid-literal (``RaiseTypeError($"Cannot convert {``), which is
  no statement prefix anyone would write: drop (``unscorable_groundtruth``).
- Python, default mode: a multi-line groundtruth inside a bracket opened before the cursor (``x = (\\n
  Revision.query.filter(\\n ...\\n )``) is a statement the scorer cannot delimit in ``prompt + prediction``, so it
  keeps the first line only (``query.filter(``), an unbalanced fragment: drop.
- Python, compat mode: the released scorer cuts at the first line end whose prefix parses; a groundtruth is a
  logical line, so such a prefix would be an unclosed bracket or string, again no statement: drop.

``unscorable`` is the single test (both scorers, run for real), so a case not foreseen above is still caught and
named rather than shipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from benchsmith.evaluate.cceval_metrics import Mode, score_example
from benchsmith.evaluate.cceval_metrics_common import COMPAT_LANGUAGES
from benchsmith.records import CompletionExample, Language

MODES = (Mode.COMPAT, Mode.DEFAULT)


def modes_for(language: Language) -> tuple[Mode, ...]:
    """Compat mode only scores the released scorer's four languages."""
    return MODES if language in COMPAT_LANGUAGES else (Mode.DEFAULT,)


@dataclass(frozen=True)
class SelfScore:
    mode: Mode
    em: int  # 0/1
    es: float  # 0..100
    kept: str  # what the scorer kept of the prediction (before comment removal)

    @property
    def ok(self) -> bool:
        return self.em == 1 and self.es == 100


def self_scores(prompt: str, groundtruth: str, language: Language) -> list[SelfScore]:
    """The groundtruth scored as its own prediction, in every mode that applies to ``language``."""
    out = []
    for mode in modes_for(language):
        s = score_example("self", prompt, groundtruth, groundtruth, language, mode)
        out.append(SelfScore(mode, s.em, s.es, s.pred_postprocessed))
    return out


def unscorable(prompt: str, groundtruth: str, language: Language) -> SelfScore | None:
    """The first mode in which an exact copy of the groundtruth does not get full marks; None when none."""
    for s in self_scores(prompt, groundtruth, language):
        if not s.ok:
            return s
    return None


def example_language(ex: CompletionExample) -> Language:
    return Language(ex.metadata.language)


def describe(s: SelfScore, groundtruth: str) -> str:
    kept = s.kept if len(s.kept) <= 80 else s.kept[:77] + "..."
    return (f"{s.mode.value}: an exact copy of the groundtruth scores EM {100 * s.em} ES {s.es:g}; the scorer keeps "
            f"{kept!r} of its {len(groundtruth)} characters")


@dataclass
class ModeTally:
    examples: int = 0
    em_sum: int = 0
    es_sum: float = 0.0
    violations: int = 0
    violating: list[str] | None = None  # the first task ids that violate, for the report

    def add(self, task_id: str, s: SelfScore, keep_ids: int) -> None:
        self.examples += 1
        self.em_sum += s.em
        self.es_sum += s.es
        if not s.ok:
            self.violations += 1
            if self.violating is None:
                self.violating = []
            if len(self.violating) < keep_ids:
                self.violating.append(task_id)

    def to_dict(self) -> dict:
        n = self.examples
        out = {"examples": n,
               "em": round(100 * self.em_sum / n, 2) if n else 100.0,
               "es": round(self.es_sum / n, 2) if n else 100.0,
               "violations": self.violations}
        if self.violating:
            out["violating"] = self.violating
        return out


def self_consistency(records: Iterable[dict], language: Language, keep_ids: int = 20) -> dict:
    """``{"compat": {...} | None, "default": {...}}`` over split records (CrossCodeEval dicts): mean EM/ES of each
    example's groundtruth scored against itself, and how many examples fall short (zero expected).  ``compat`` is
    None for a language the released scorer does not know."""
    tallies = {mode: ModeTally() for mode in modes_for(language)}
    for rec in records:
        task_id = rec.get("metadata", {}).get("task_id", "")
        for s in self_scores(rec["prompt"], rec["groundtruth"], language):
            tallies[s.mode].add(task_id, s, keep_ids)
    compat = tallies.get(Mode.COMPAT)
    return {"compat": compat.to_dict() if compat is not None else None,
            "default": tallies[Mode.DEFAULT].to_dict()}
