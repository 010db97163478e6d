"""Paired statistics for comparing two evals, in the standard library: exact McNemar, bootstrap.

Both work on the same questions answered by two runs. McNemar's exact test asks whether the
right→wrong and wrong→right flips are more lopsided than a fair coin would make them; the
paired bootstrap resamples questions to give a confidence interval for a mean difference.
"""

from __future__ import annotations

import math
import random
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from functools import lru_cache
from itertools import repeat

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_MEMO = 64
"""Bootstraps a process keeps (80 kB each at 10,000 resamples), for :func:`resampled_means`."""
_PICKS_AT_ONCE = 1 << 16
"""Resampled picks drawn in one list, several resamples each: a call of ``random.choices``
per resample cost more than the picks of a small eval (2.6× the time for 6 questions)."""


def mcnemar_exact(flips_one_way: int, flips_other_way: int) -> float:
    """Two-sided exact McNemar p-value for the two discordant counts (b and c of the 2×2 table).

    The binomial test of min(b, c) successes in b + c trials at probability 1/2, doubled and
    capped at 1, computed in exact integers: statsmodels' ``mcnemar(table, exact=True)``.
    """
    if flips_one_way < 0 or flips_other_way < 0:
        raise ValueError("discordant counts must be ≥ 0")
    n = flips_one_way + flips_other_way
    if n == 0:
        return 1.0
    term = tail = 1  # C(n, 0); then C(n, i + 1) = C(n, i) * (n - i) / (i + 1), exactly
    for i in range(min(flips_one_way, flips_other_way)):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / (1 << n))


def bootstrap_ci(
    differences: Sequence[float],
    *,
    seed: int,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of paired ``differences`` (one per question).

    Questions are resampled with replacement ``resamples`` times from ``random.Random(seed)``;
    the bounds are the (1 ± level)/2 quantiles of the resampled means, linearly interpolated.
    The same seed gives the same interval.
    """
    if not 0 < level < 1:
        raise ValueError("level must be between 0 and 1")
    means = resampled_means(differences, seed=seed, resamples=resamples)
    tail = (1 - level) / 2
    return _quantile(means, tail), _quantile(means, 1 - tail)


def resampled_means(
    differences: Sequence[float], *, seed: int, resamples: int = BOOTSTRAP_RESAMPLES
) -> Sequence[float]:
    """The means of ``resamples`` resamples of ``differences`` (with replacement, from
    ``random.Random(seed)``), sorted: the one bootstrap both the interval and the p-value read.

    Made once per differences, seed and resamples in a process (most of ``eval show``'s time on
    a matrix): a matrix's pairs of cells that answered alike share one, as do the interval and
    the p-value of the same differences, and ``show`` and ``report`` of a folder in one process.
    """
    if not differences:
        raise ValueError("no differences to resample")
    if resamples < 1:
        raise ValueError("resamples must be ≥ 1")
    return _resampled_means(tuple(differences), seed, resamples)


@lru_cache(maxsize=BOOTSTRAP_MEMO)
def _resampled_means(differences: tuple[float, ...], seed: int, resamples: int) -> array[float]:
    """:func:`resampled_means`, kept (equal differences resample alike: ``-0.0`` as ``0.0``,
    ``1`` as ``1.0``); an array, read only."""
    draw = random.Random(seed).random
    n = len(differences)
    scale = n + 0.0  # each pick as random.choices(differences, k=n) makes it: the same means
    per_chunk = max(1, _PICKS_AT_ONCE // n)
    means: list[float] = []
    for start in range(0, resamples, per_chunk):
        count = min(per_chunk, resamples - start)
        picks = iter([differences[math.floor(draw() * scale)] for _ in repeat(None, n * count)])
        resamples_made = zip(*[picks] * n, strict=True)  # n picks a resample
        means.extend(total / n for total in map(sum, resamples_made))
    means.sort()
    return array("d", means)


def bootstrap_p(
    differences: Sequence[float], *, seed: int, resamples: int = BOOTSTRAP_RESAMPLES
) -> float:
    """Two-sided paired bootstrap p-value of a mean difference of 0: twice the share of
    resampled means on the far side of 0 (those ≤ 0 or those ≥ 0, the fewer), capped at 1; the
    test that agrees with :func:`bootstrap_ci` (p < 0.05 when the 95 % interval leaves 0 out,
    up to ties at 0)."""
    means = resampled_means(differences, seed=seed, resamples=resamples)
    below = bisect_right(means, 0.0)  # sorted: those ≤ 0 come first, those ≥ 0 last
    above = len(means) - bisect_left(means, 0.0)
    return min(1.0, 2 * min(below, above) / len(means))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the k-th smallest of m is
    multiplied by m − k + 1, each kept at least the one before it, capped at 1 (the family-wise
    error of a set of tests held at α by rejecting where the adjusted p < α)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def _quantile(ordered: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, interpolated between neighbours (numpy's default)."""
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)
