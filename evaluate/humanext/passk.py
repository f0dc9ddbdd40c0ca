"""The unbiased pass@k estimator (Chen et al., 2021) and its aggregation per setting and per model.

For a problem with ``n`` samples of which ``c`` pass, ``pass@k = 1 - C(n-c, k) / C(n, k)``: the probability that
at least one of ``k`` samples drawn without replacement passes.  The binomial ratio is evaluated as the product
``prod_{i=n-c+1}^{n} (1 - k/i)``, which never forms the huge binomials (no overflow, no cancellation).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence

import numpy as np


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one problem with ``n`` samples, ``c`` of them correct."""
    if n <= 0:
        raise ValueError(f"pass@k needs at least one sample (n={n})")
    if not 0 <= c <= n:
        raise ValueError(f"number correct c={c} must lie in [0, n={n}]")
    if k <= 0:
        raise ValueError(f"k must be positive (k={k})")
    if k > n:
        raise ValueError(f"pass@{k} needs n >= k samples per problem; got n={n}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def estimate(num_samples: Sequence[int] | int, num_correct: Sequence[int], k: int) -> np.ndarray:
    """pass@k per problem (``num_samples`` may be one int for all problems)."""
    if isinstance(num_samples, int):
        ns = [num_samples] * len(num_correct)
    else:
        ns = list(num_samples)
        if len(ns) != len(num_correct):
            raise ValueError("num_samples and num_correct differ in length")
    return np.array([pass_at_k(n, c, k) for n, c in zip(ns, num_correct)], dtype=float)


@dataclass(frozen=True)
class PassAtK:
    """Mean pass@k over the problems of one group; ``n_min`` = fewest samples any problem had."""

    k: int
    value: float
    problems: int
    n_min: int

    def to_dict(self) -> dict:
        return {"k": self.k, "value": self.value, "problems": self.problems, "n_min": self.n_min}


def counts(outcomes: Iterable[tuple[Hashable, bool]]) -> dict[Hashable, tuple[int, int]]:
    """(problem, passed) pairs -> {problem: (n, c)}, in first-seen order."""
    out: dict[Hashable, list[int]] = {}
    for problem, passed in outcomes:
        entry = out.setdefault(problem, [0, 0])
        entry[0] += 1
        entry[1] += int(bool(passed))
    return {p: (n, c) for p, (n, c) in out.items()}


def mean_pass_at_k(per_problem: Mapping[Hashable, tuple[int, int]], k: int) -> PassAtK | None:
    """Mean pass@k over problems, or None when some problem has fewer than ``k`` samples (undefined)."""
    if not per_problem:
        return None
    n_min = min(n for n, _ in per_problem.values())
    if n_min < k:
        return None
    values = [pass_at_k(n, c, k) for n, c in per_problem.values()]
    return PassAtK(k=k, value=float(np.mean(values)), problems=len(values), n_min=n_min)


def aggregate(
    outcomes: Iterable[tuple[Hashable, Hashable, bool]], ks: Sequence[int]
) -> dict[Hashable, dict[int, PassAtK]]:
    """(group, problem, passed) triples -> {group: {k: PassAtK}}; k values that are undefined are left out.

    A group is e.g. a setting, a (model, setting) pair or a position; a problem is the task id."""
    grouped: dict[Hashable, list[tuple[Hashable, bool]]] = defaultdict(list)
    for group, problem, passed in outcomes:
        grouped[group].append((problem, passed))
    result: dict[Hashable, dict[int, PassAtK]] = {}
    for group, items in grouped.items():
        per_problem = counts(items)
        row = {}
        for k in ks:
            value = mean_pass_at_k(per_problem, k)
            if value is not None:
                row[k] = value
        result[group] = row
    return result


def parse_ks(text: str) -> list[int]:
    """``"1,10"`` -> [1, 10] (sorted, unique, positive)."""
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ValueError(f"--k expects comma-separated positive integers, got {text!r}") from None
    if not ks or ks[0] <= 0:
        raise ValueError(f"--k expects comma-separated positive integers, got {text!r}")
    return ks
