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

from dataclasses import dataclass, field
from typing import Iterable

from benchsmith.evaluate.cceval.scoring import Mode, score_example
from benchsmith.evaluate.cceval.common import COMPAT_LANGUAGES
from benchsmith.records import Language
from benchsmith.builders.cceval.records import CompletionExample

MODES = (Mode.COMPAT, Mode.DEFAULT)
SCORER_FAILED = "<scorer failed: "


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

    @property
    def failed(self) -> bool:
        """The scorer raised on the text (``kept`` names the error) rather than scoring it."""
        return self.kept.startswith(SCORER_FAILED)


def self_scores(prompt: str, groundtruth: str, language: Language) -> list[SelfScore]:
    """The groundtruth scored as its own prediction, in every mode that applies to ``language``.  A scorer that
    fails on the text (hostile input) scores it 0: such an example is unscorable too, and one bad file must not
    cost its repository's shard."""
    out = []
    for mode in modes_for(language):
        try:
            s = score_example("self", prompt, groundtruth, groundtruth, language, mode)
        except (ValueError, RecursionError, MemoryError, UnicodeError) as exc:
            out.append(SelfScore(mode, 0, 0.0, f"{SCORER_FAILED}{type(exc).__name__}>"))
            continue
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


KEEP_IDS = 20  # violating task ids listed per mode


@dataclass
class ModeTally:
    """Sums over the examples of one split (or shard) in one mode; shards' tallies add up exactly."""

    examples: int = 0
    em_sum: int = 0
    es_sum: float = 0.0
    violations: int = 0
    violating: list[str] = field(default_factory=list)  # the first task ids that violate, for the report
    # examples that declare this mode in ``metadata.unscorable_modes`` and fall short in it (``--cursor released``
    # keeps the released benchmark's own; counted in the means, never a violation)
    as_released: int = 0

    def add(self, task_id: str, s: SelfScore, keep_ids: int = KEEP_IDS, declared: bool = False) -> None:
        self.examples += 1
        self.em_sum += s.em
        self.es_sum += s.es
        if s.ok:
            return
        if declared:
            self.as_released += 1
            return
        self.violations += 1
        if len(self.violating) < keep_ids:
            self.violating.append(task_id)

    def merge(self, other: "ModeTally", keep_ids: int = KEEP_IDS) -> None:
        self.examples += other.examples
        self.em_sum += other.em_sum
        self.es_sum += other.es_sum
        self.violations += other.violations
        self.violating.extend(other.violating[: max(0, keep_ids - len(self.violating))])
        self.as_released += other.as_released

    def raw(self) -> dict:
        out = {"examples": self.examples, "em_sum": self.em_sum, "es_sum": self.es_sum,
               "violations": self.violations, "violating": list(self.violating)}
        if self.as_released:
            out["as_released"] = self.as_released
        return out

    @classmethod
    def from_raw(cls, d: dict) -> "ModeTally":
        return cls(int(d["examples"]), int(d["em_sum"]), float(d["es_sum"]), int(d["violations"]),
                   list(d.get("violating", [])), int(d.get("as_released", 0)))

    def figures(self) -> dict:
        n = self.examples
        out = {"examples": n,
               "em": round(100 * self.em_sum / n, 2) if n else 100.0,
               "es": round(self.es_sum / n, 2) if n else 100.0,
               "violations": self.violations}
        if self.as_released:
            out["unscorable_as_released"] = self.as_released
        if self.violating:
            out["violating"] = list(self.violating)
        return out


def declared_modes(record: dict) -> frozenset[str]:
    """The modes a CrossCodeEval dict declares its groundtruth unscorable in (``metadata.unscorable_modes``)."""
    return frozenset(record.get("metadata", {}).get("unscorable_modes") or ())


class SelfConsistency:
    """The tallies of groundtruths scored against themselves in every mode of ``language``: the one loop behind
    the shard's self-check, ``tally`` and the audit."""

    def __init__(self, language: Language) -> None:
        self.language = language
        self.tallies = {mode: ModeTally() for mode in modes_for(language)}

    def add(self, task_id: str, prompt: str, groundtruth: str, declared: frozenset[str] = frozenset(),
            scores: list[SelfScore] | None = None) -> None:
        """``scores``: what the scorability filter already computed for this groundtruth (scored here otherwise);
        ``declared``: the modes the example declares it falls short in (``metadata.unscorable_modes``)."""
        for s in scores if scores is not None else self_scores(prompt, groundtruth, self.language):
            self.tallies[s.mode].add(task_id, s, declared=s.mode.value in declared)

    def add_example(self, ex: CompletionExample) -> None:
        """An example a shard writes, with the scores the filter gave it (none under ``--keep-unscorable``)."""
        self.add(ex.metadata.task_id, ex.prompt, ex.groundtruth, frozenset(ex.metadata.unscorable_modes or ()),
                 ex.self_scores)


def tally(records: Iterable[dict], language: Language) -> dict[Mode, ModeTally]:
    """Each record's groundtruth (CrossCodeEval dicts) scored against itself in every mode of ``language``."""
    check = SelfConsistency(language)
    for rec in records:
        check.add(rec.get("metadata", {}).get("task_id", ""), rec["prompt"], rec["groundtruth"], declared_modes(rec))
    return check.tallies


def raw_tallies(tallies: dict[Mode, ModeTally]) -> dict:
    """JSON form for a shard's stats.json (sums, so shards merge exactly)."""
    return {mode.value: t.raw() for mode, t in tallies.items()}


def merge_raw(parts: Iterable[dict], language: Language) -> dict[Mode, ModeTally]:
    tallies = {mode: ModeTally() for mode in modes_for(language)}
    for part in parts:
        for mode, t in tallies.items():
            if mode.value in part:
                t.merge(ModeTally.from_raw(part[mode.value]))
    return tallies


def figures(tallies: dict[Mode, ModeTally]) -> dict:
    """``{"compat": {examples, em, es, violations} | None, "default": {...}}``: mean EM/ES of the groundtruths scored
    against themselves and how many fall short (zero expected); ``compat`` is None for a language the released
    scorer does not know."""
    compat = tallies.get(Mode.COMPAT)
    return {"compat": compat.figures() if compat is not None else None,
            "default": tallies[Mode.DEFAULT].figures()}


def self_consistency(records: Iterable[dict], language: Language) -> dict:
    """``figures`` of ``records``."""
    return figures(tally(records, language))
