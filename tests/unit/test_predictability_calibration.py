"""The calibration of the screens profiles (bench/annotations.py): a rung of the ladder is chosen on the other
repositories only, and the held-out figures are those of the rung chosen without the repository measured."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from benchsmith.builders.cceval.screens import SCREENS, ScreenName

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_annotations", ROOT / "bench" / "annotations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_annotations", module)
    spec.loader.exec_module(module)
    return module


def _row(repo: str, predictable: bool, fired: tuple[ScreenName, ...] = (), bits: float | None = 9.0):
    ann = {"_repo": repo, "_set": "s", "language": "java", "predictable_in_file": "yes" if predictable else "no"}
    return ann, {name: (object() if name in fired else None) for name in SCREENS}, bits


def test_the_least_aggressive_rung_within_the_target_is_chosen_and_strict_keeps_its_floor():
    b = _bench()
    # 10 non-predictable kept by everything; 2 predictable that only the imported-vocabulary screen catches
    rows = [_row("r", False) for _ in range(10)] + [_row("r", True, (ScreenName.IMPORTED_VOCABULARY,))
                                                     for _ in range(2)]
    assert b._pick(rows, "default")[0] == "+analogy+imported"
    rows.append(_row("r", True, (ScreenName.VOCABULARY,)))  # the first rung catches this one too
    assert b._pick(rows, "default")[0] == "+analogy+imported"
    for screen in (ScreenName.COPY, ScreenName.ANALOGY):  # the four pattern classes are the first rung
        only = [_row("r", False) for _ in range(10)] + [_row("r", True, (screen,))]
        assert b._pick(only, "default")[0] == "copy+vocabulary+echo+analogy"
    # strict: the most aggressive rung that keeps the floor; surprisal <= 3 or first_name would throw away half the good ones
    rows = [_row("r", False, bits=3.0) for _ in range(5)] + [_row("r", False, (ScreenName.FIRST_NAME,))
                                                              for _ in range(5)]
    assert b._pick(rows, "strict")[0] == "+analogy+imported, surprisal<=2.0"


def test_cross_validation_never_chooses_on_the_repository_it_measures(capsys):
    b = _bench()
    # repository "a" alone would need the imported rung; the others are clean under the first rung
    rows = [_row("a", False) for _ in range(5)] + [_row("a", True, (ScreenName.IMPORTED_VOCABULARY,))
                                                   for _ in range(5)]
    rows += [_row(r, False) for r in ("b", "c") for _ in range(10)]
    out = b._cross_validate(rows, [("all", lambda a: True)])
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if x.strip().startswith("a "))
    assert "copy+vocabulary+echo+analogy " in line  # chosen on b and c, which do not need more
    assert out["default"]["pooled"]["all"]["pred_among_kept"] == 5 / 30
    assert out["default"]["chosen_on_all"] == "+analogy+imported"
