"""Closed-form intervals: Wilson's and t agree with scipy's; Tango's paired interval covers the
true difference at least 93% of the time with few discordant pairs (a seeded simulation)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from chunkproof.evaluation.scoring.intervals import mean_intervals, t_interval, tango, wilson


@pytest.mark.parametrize(("k", "n"), [(0, 20), (3, 20), (20, 20), (57, 95)])
def test_wilson_is_scipys(k, n):
    expected = scipy_stats.binomtest(k, n).proportion_ci(0.95, method="wilson")
    low, high = wilson(np.array([k]), np.array([n]))
    assert (low[0], high[0]) == pytest.approx((expected.low, expected.high))


def test_t_is_scipys():
    values = np.random.default_rng(1).normal(0.3, 1.0, 25)
    expected = scipy_stats.ttest_1samp(values, 0.0).confidence_interval(0.95)
    low, high = t_interval(values.mean(), values.std(ddof=1), len(values))
    assert (float(low), float(high)) == pytest.approx((expected.low, expected.high))


def test_a_mean_of_hits_gets_wilsons_and_a_share_gets_t():
    low, high = mean_intervals([1.0, 0.5], [0.0, 0.0], [20, 20], [True, False])
    assert 0.8 < low[0] < 1.0 and high[0] == pytest.approx(1.0)  # 20 of 20 hits: not [1, 1]
    assert (low[1], high[1]) == (0.5, 0.5)  # a constant share


def test_no_discordant_pair_is_not_a_point():
    # 0 of 30 differ: the difference is not known to be 0, only small
    low, high = tango(0, 0, 30)
    assert low[0] < -0.1 and high[0] > 0.1 and low[0] == pytest.approx(-high[0])


SIZES = (20, 30, 60)
DISCORDANT = (0.5, 1, 2, 3, 4, 5)
"""Expected discordant pairs among n: the held-out sizes where a wrong interval misleads."""
SHARES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Share of the discordant pairs where A alone scores 1."""


def coverage(n: int, expected: float, share: float, draws: int, rng) -> float:
    """Share of ``draws`` seeded samples of n pairs whose Tango interval holds the truth."""
    p_a, p_b = expected / n * share, expected / n * (1 - share)
    counts = rng.multinomial(n, [p_a, p_b, 1 - p_a - p_b], size=draws)
    pairs, index = np.unique(counts[:, :2], axis=0, return_inverse=True)
    low, high = tango(pairs[:, 0], pairs[:, 1], n)
    truth = p_a - p_b
    covered = (low - 1e-9 <= truth) & (truth <= high + 1e-9)
    return float(covered[index.ravel()].mean())


@pytest.mark.parametrize("n", SIZES)
def test_tango_covers_with_few_discordant_pairs(n):
    rng = np.random.default_rng(n)
    found = {(e, s): coverage(n, e, s, 20_000, rng) for e in DISCORDANT for s in SHARES}
    worst = min(found, key=found.get)
    assert found[worst] >= 0.93, f"coverage {found[worst]:.3f} at {worst}"
