"""Cluster-aware paired tests: questions of one page move together, so the test flips the
sign of each page's summed difference and the interval is cluster-robust. Checked by hand on
a small case, against the plain test where every page has one question, and by simulation:
with clustered questions the plain test rejects a true null far too often and its interval
misses; the clustered ones hold their level and cover."""

from __future__ import annotations

import math

import numpy as np
import pytest

from chunkproof.evaluation.scoring import clustered, stats


def test_cluster_codes_number_pages_in_order_of_first_appearance():
    codes, count = clustered.cluster_codes(["b.md", "a.md", "b.md", "c.md", "a.md"])
    assert count == 3
    assert codes.tolist() == [0, 1, 0, 2, 1]


def test_the_cluster_robust_interval_worked_by_hand():
    # differences 1, 1, 0 on page p, -1 on q, 0, 1 on r: mean 2/6
    diffs = np.array([[1.0], [1.0], [0.0], [-1.0], [0.0], [1.0]])
    codes = np.array([0, 0, 0, 1, 2, 2])
    mean = 2 / 6
    residuals = [2 - 3 * mean, -1 - 1 * mean, 1 - 2 * mean]  # T_g - n_g * mean
    se = math.sqrt(3 / 2 * sum(r * r for r in residuals)) / 6
    assert clustered.cluster_se(diffs, codes, 3)[0] == pytest.approx(se)
    low, high = clustered.cluster_interval(diffs, codes, 3, 0.95)
    quantile = 4.302652729911275  # t(0.975, 2 degrees of freedom)
    assert (low[0], high[0]) == pytest.approx((mean - quantile * se, mean + quantile * se))
    assert clustered.cluster_totals(diffs, codes, 3)[:, 0].tolist() == [2.0, -1.0, 1.0]


def test_one_question_a_page_is_the_plain_test():
    rng = np.random.default_rng(0)
    left = rng.integers(0, 2, size=(40, 3)).astype(float)
    right = rng.integers(0, 2, size=(40, 3)).astype(float)
    plain = stats.compare_columns(left, right, n_resamples=2000, seed=0, confidence=0.95)
    pages = stats.compare_columns(left, right, n_resamples=2000, seed=0, confidence=0.95,
                                  clusters=np.arange(40))
    assert plain == pages


def test_paired_comparison_groups_by_the_labels_it_is_given_and_drops_nan_pairs():
    a = [1, 1, 1, 0, 1, 1, np.nan, 1]
    b = [0, 0, 0, 0, 1, 0, 1, 0]
    pages = ["x", "x", "x", "y", "y", "z", "z", "w"]
    result = stats.paired_comparison(a, b, clusters=pages)
    assert result.n == 7
    assert result.test == "cluster sign-flip (4 pages, exact)"
    assert result.interval == "cluster-robust t (4 pages)"
    # page sums 3, 0, 1, 1: of the 16 sign vectors, those with |sum| >= 5 are the two
    # that keep every non-zero sum's sign, counted twice for the zero page: 4 of 16
    assert result.p_value == pytest.approx(4 / 16)


def _clustered_pairs(rng, pages: int, per_page: int, delta: float, datasets: int):
    """``datasets`` columns of 0/1 pairs: each page leans toward A or B by a random amount
    (so its questions move together), the population difference about ``delta``."""
    codes = np.repeat(np.arange(pages), per_page)
    lean = rng.normal(0, 0.35, size=(pages, datasets))
    p_a = np.clip(0.25 + delta / 2 + lean, 0, 0.6)[codes]
    p_b = np.clip(0.25 - delta / 2 - lean, 0, 0.6)[codes]
    draw = rng.random((pages * per_page, datasets))
    diff = np.where(draw < p_a, 1.0, np.where(draw < p_a + p_b, -1.0, 0.0))
    return (diff > 0).astype(float), (diff < 0).astype(float), codes


def _population_difference(rng, delta: float) -> float:
    lean = rng.normal(0, 0.35, size=1_000_000)
    return float((np.clip(0.25 + delta / 2 + lean, 0, 0.6)
                  - np.clip(0.25 - delta / 2 - lean, 0, 0.6)).mean())


def test_with_pages_of_eight_questions_the_plain_test_fails_and_the_clustered_one_holds():
    rng = np.random.default_rng(7)
    left, right, codes = _clustered_pairs(rng, pages=30, per_page=8, delta=0.0, datasets=600)
    plain = stats.compare_columns(left, right, n_resamples=2000, seed=0, confidence=0.95)
    pages = stats.compare_columns(left, right, n_resamples=2000, seed=0, confidence=0.95,
                                  clusters=codes)
    truth = _population_difference(rng, 0.0)
    plain_rejects = np.mean([r.p_value < 0.05 for r in plain])
    page_rejects = np.mean([r.p_value < 0.05 for r in pages])
    assert plain_rejects > 0.2      # a true null rejected several times too often
    assert page_rejects <= 0.07     # about its 5% level
    covers = np.mean([r.ci_low <= truth <= r.ci_high for r in pages])
    assert covers >= 0.93


def test_the_clustered_interval_covers_a_real_difference():
    rng = np.random.default_rng(11)
    left, right, codes = _clustered_pairs(rng, pages=25, per_page=3, delta=0.2, datasets=600)
    truth = _population_difference(rng, 0.2)
    pages = stats.compare_columns(left, right, n_resamples=2000, seed=0, confidence=0.95,
                                  clusters=codes)
    plain = stats.compare_columns(left, right, n_resamples=2000, seed=0, confidence=0.95)
    page_covers = np.mean([r.ci_low <= truth <= r.ci_high for r in pages])
    plain_covers = np.mean([r.ci_low <= truth <= r.ci_high for r in plain])
    assert page_covers >= 0.92
    assert plain_covers < page_covers


def test_design_effect_is_one_without_clusters_and_grows_with_them():
    rng = np.random.default_rng(3)
    left, right, codes = _clustered_pairs(rng, pages=30, per_page=8, delta=0.0, datasets=200)
    diffs = left - right
    inflated = clustered.design_effect(diffs, codes, 30)
    assert np.nanmedian(inflated) > 2
    alone = clustered.design_effect(diffs, np.arange(240), 240)
    assert np.nanmedian(alone) == pytest.approx(1.0)
