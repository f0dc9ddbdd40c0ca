"""Unbiased pass@k: agrees with the closed form, stays finite for large n, aggregates per group."""

from __future__ import annotations

import math
import random

import pytest

from benchsmith.evaluate.humanext.passk import aggregate, counts, estimate, mean_pass_at_k, parse_ks, pass_at_k


def exact(n: int, c: int, k: int) -> float:
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 20, 37])
def test_matches_the_binomial_closed_form(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(exact(n, c, k), abs=1e-12)


def test_pass_at_1_is_the_fraction_correct():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(200, 0, 1) == 0.0
    assert pass_at_k(200, 200, 100) == 1.0


def test_stable_for_large_n():
    # C(1000, 500) overflows floats; the product form does not
    value = pass_at_k(1000, 3, 500)
    assert 0.0 < value < 1.0
    assert value == pytest.approx(1 - (500 * 499 * 498) / (1000 * 999 * 998), rel=1e-9)


def test_monotone_in_k_and_c():
    rng = random.Random(0)
    for _ in range(50):
        n = rng.randint(2, 60)
        c = rng.randint(0, n - 1)
        values = [pass_at_k(n, c, k) for k in range(1, n + 1)]
        assert values == sorted(values)
        assert pass_at_k(n, c + 1, 1) >= pass_at_k(n, c, 1)


@pytest.mark.parametrize(("n", "c", "k"), [(0, 0, 1), (5, 6, 1), (5, -1, 1), (5, 2, 0), (5, 2, 6)])
def test_invalid_arguments_are_refused(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_estimate_vectorised():
    got = estimate([10, 5], [2, 5], 2)
    assert got.tolist() == pytest.approx([exact(10, 2, 2), 1.0])
    assert estimate(4, [0, 4], 1).tolist() == [0.0, 1.0]
    with pytest.raises(ValueError):
        estimate([3], [1, 2], 1)


def test_counts_and_aggregation_per_group():
    outcomes = [("direct", "p1", True), ("direct", "p1", False), ("direct", "p2", False), ("direct", "p2", False),
                ("oracle", "p1", True), ("oracle", "p2", True)]
    assert counts([(p, ok) for g, p, ok in outcomes if g == "direct"]) == {"p1": (2, 1), "p2": (2, 0)}
    agg = aggregate(outcomes, [1, 2, 5])
    assert agg["direct"][1].value == pytest.approx(0.25)
    assert agg["direct"][2].value == pytest.approx(0.5)  # p1: 1 - C(1,2)/C(2,2) = 1; p2: 0
    assert 5 not in agg["direct"]  # undefined with n=2 < k=5: left out, not guessed
    assert agg["oracle"][1].value == 1.0 and agg["oracle"][1].problems == 2 and agg["oracle"][1].n_min == 1
    assert mean_pass_at_k({}, 1) is None


def test_parse_ks():
    assert parse_ks("10,1, 1") == [1, 10]
    for bad in ("", "0", "a", "1,-2"):
        with pytest.raises(ValueError):
            parse_ks(bad)
