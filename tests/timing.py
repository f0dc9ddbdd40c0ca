"""How long tests wait for work a busy machine slows down: one factor for the whole suite.

A test's wall-clock budget (a build's or a run's timeout that must not fire, an upper bound on how long something
took) is ``scaled(seconds)``: the seconds it needs on an idle machine times ``BENCHSMITH_TEST_TIME_SCALE``
(default 4: other builds beside the suite on two cores made 3-second budgets miss).  A timeout a test *wants* to
fire stays small: load only makes it fire sooner relative to the work."""

from __future__ import annotations

import os

DEFAULT_SCALE = 4.0


def time_scale() -> float:
    raw = os.environ.get("BENCHSMITH_TEST_TIME_SCALE", "")
    try:
        value = float(raw) if raw else DEFAULT_SCALE
    except ValueError:
        raise ValueError(f"BENCHSMITH_TEST_TIME_SCALE={raw!r}: expected a number such as 4") from None
    if not value >= 1:  # a factor below 1 would tighten budgets written for an idle machine (and NaN is refused)
        raise ValueError(f"BENCHSMITH_TEST_TIME_SCALE={raw!r}: expected a number of at least 1")
    return value


def scaled(seconds: float) -> float:
    """``seconds`` (what the work needs on an idle machine) times the suite's time factor."""
    return seconds * time_scale()
