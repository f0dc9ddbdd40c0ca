"""The suite's one time factor (tests/timing.py): a number of at least 1 from BENCHSMITH_TEST_TIME_SCALE."""

from __future__ import annotations

import pytest

from tests.timing import DEFAULT_SCALE, scaled, time_scale


def test_default_and_override(monkeypatch):
    monkeypatch.delenv("BENCHSMITH_TEST_TIME_SCALE", raising=False)
    assert time_scale() == DEFAULT_SCALE and DEFAULT_SCALE >= 2  # generous unless told otherwise
    assert scaled(3) == 3 * DEFAULT_SCALE
    monkeypatch.setenv("BENCHSMITH_TEST_TIME_SCALE", "10")
    assert scaled(1.5) == 15


@pytest.mark.parametrize("raw", ["fast", "0.5", "nan", "-3"])
def test_a_factor_that_would_tighten_or_is_no_number_is_refused(monkeypatch, raw):
    monkeypatch.setenv("BENCHSMITH_TEST_TIME_SCALE", raw)
    with pytest.raises(ValueError, match="BENCHSMITH_TEST_TIME_SCALE"):
        time_scale()
