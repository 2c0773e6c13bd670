"""The exact sign test's power, and the two figures made from it: the questions a difference
needs and the smallest difference a number of questions detects. Checked against a simulation
of the test itself (scipy's binomtest) and against the normal approximation it replaces."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from chunkproof.evaluation.scoring import power


def _simulated_power(n: int, a_only: float, b_only: float, runs: int = 20000) -> float:
    rng = np.random.default_rng(5)
    draws = rng.multinomial(n, [a_only, b_only, 1 - a_only - b_only], size=runs)
    a, b = draws[:, 0], draws[:, 1]
    # binomtest's two-sided p at 1/2: twice the smaller tail (vectorised), checked on a few
    p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(a, b), a + b, 0.5))
    for row in range(5):
        if a[row] + b[row]:
            assert p[row] == pytest.approx(stats.binomtest(int(a[row]), int(a[row] + b[row]),
                                                           0.5).pvalue)
    return float(np.mean((p < 0.05) & (a + b > 0)))


@pytest.mark.parametrize(("n", "a_only", "b_only"), [(40, 0.25, 0.05), (60, 0.2, 0.1),
                                                     (15, 0.3, 0.0), (100, 0.12, 0.06)])
def test_power_is_the_rejection_rate_of_the_exact_test(n, a_only, b_only):
    expected = _simulated_power(n, a_only, b_only)
    assert power.sign_test_power(n, a_only, b_only) == pytest.approx(expected, abs=0.012)


def test_questions_needed_is_the_first_count_with_the_power():
    needed = power.questions_needed(0.25, 0.05)
    assert needed is not None
    assert power.sign_test_power(needed, 0.25, 0.05) >= 0.8
    assert power.sign_test_power(needed - 3, 0.25, 0.05) < 0.8


def test_clusters_inflate_the_questions_needed():
    alone = power.questions_needed(0.25, 0.05)
    clustered = power.questions_needed(0.25, 0.05, design_effect=2.0)
    assert alone is not None and clustered is not None
    assert clustered == pytest.approx(2 * alone, abs=4)


def test_no_count_past_the_cap_and_none_for_equal_configs():
    assert power.questions_needed(0.101, 0.1) is None
    assert power.questions_needed(0.1, 0.1) is None


def test_the_exact_detectable_difference_is_wider_than_the_normal_approximation():
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    for n, discordant in ((50, 0.3), (100, 0.2), (200, 0.15)):
        exact = power.detectable_difference(n, discordant)
        normal = z * np.sqrt(discordant / n)
        assert exact is not None and exact > normal
        a_only = (discordant + exact) / 2
        assert power.sign_test_power(n, a_only, discordant - a_only) >= 0.8


def test_too_few_questions_detect_nothing_rather_than_zero():
    assert power.detectable_difference(10, 0.2) is None
    assert power.detectable_difference(10, 0.0) is None


def test_settling_says_no_number_below_the_tie_margin_and_counts_with_pages():
    tied = power.settling(np.array([1, -1, 0, 0, 1, -1, 0, 0]), None, margin=0.05)
    assert tied.questions is None and "less than the tie margin" in tied.text
    diffs = np.array([1] * 12 + [-1] * 3 + [0] * 25)
    alone = power.settling(diffs, None, margin=0.05)
    paged = power.settling(diffs, np.repeat(np.arange(8), 5), margin=0.05)
    assert alone.questions == power.questions_needed(0.3, 0.075)
    assert paged.questions is not None and paged.questions >= alone.questions
