"""Paired comparisons: Holm correction, sign-flip test, the interval inverting it (agreeing with
the test, a property test), planned and exploratory families."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from chunklab.errors import ComparisonError
from chunklab.evaluation.families import (
    best_config,
    compare_all,
    compare_pairs,
    compare_to_best,
    holm,
    permutations_for,
)
from chunklab.evaluation.stats import (
    PairedResult,
    SignFlipTest,
    bootstrap_ci,
    mean_intervals,
    paired_comparison,
    paired_results,
    flipped_sums,
    sign_flip_p,
)


def test_holm_hand_computed():
    # sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> 0.06)
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_at_one_and_keeps_nan_out():
    # m = 3: 0.02 x 3 = 0.06; 0.6 x 2 = 1.2 -> 1.0; 0.7 x 1 = 0.7, raised to the 1.0 before it
    adjusted = holm([0.7, float("nan"), 0.6, 0.02])
    assert math.isnan(adjusted[1])
    assert [adjusted[0], adjusted[2], adjusted[3]] == pytest.approx([1.0, 1.0, 0.06])
    assert holm([]).tolist() == []


def test_sign_flip_is_exact_for_small_samples():
    diffs = np.array([1.0, 2.0, 3.0, -0.5, 1.0, 2.0, 0.5, 1.0])
    scipy_p = scipy_stats.permutation_test(
        (diffs,), np.mean, permutation_type="samples", n_resamples=2000
    ).pvalue
    assert sign_flip_p(diffs, n_resamples=2000, seed=0) == pytest.approx(scipy_p)
    assert sign_flip_p(diffs, n_resamples=2000, seed=0) == pytest.approx(6 / 256)


def test_sign_flip_monte_carlo_matches_scipy():
    diffs = np.random.default_rng(3).normal(0.25, 1.0, 40)
    scipy_p = scipy_stats.permutation_test(
        (diffs,), np.mean, permutation_type="samples", n_resamples=20000,
        vectorized=True, rng=np.random.default_rng(1),
    ).pvalue
    assert sign_flip_p(diffs, n_resamples=20000, seed=0) == pytest.approx(scipy_p, abs=0.01)


def test_sign_flip_of_no_difference_is_one():
    assert sign_flip_p(np.zeros(30), n_resamples=2000, seed=0) == 1.0


def test_known_effect_is_significant():
    rng = np.random.default_rng(11)
    b = rng.uniform(0.3, 0.7, 60)
    a = b + 0.1 + rng.normal(0, 0.05, 60)
    result = paired_comparison(a, b, n_resamples=3000, seed=0)
    assert result.n == 60
    assert result.mean_diff == pytest.approx(float(np.mean(a - b)))
    assert result.p_value < 0.001
    assert 0 < result.ci_low < result.mean_diff < result.ci_high
    assert result.ci_low < 0.1 < result.ci_high


def test_no_effect_is_not_significant():
    rng = np.random.default_rng(12)
    a = rng.binomial(1, 0.6, 60).astype(float)
    b = rng.binomial(1, 0.6, 60).astype(float)
    result = paired_comparison(a, b, n_resamples=3000, seed=0)
    assert result.p_value > 0.05
    assert result.ci_low < 0 < result.ci_high


def test_paired_comparison_is_deterministic_and_drops_nan_pairs():
    a = [0.1, 0.4, float("nan"), 0.8, 0.5, 0.9, 0.3]
    b = [0.2, 0.1, 0.5, 0.3, float("nan"), 0.4, 0.2]
    first = paired_comparison(a, b, seed=5)
    assert first == paired_comparison(a, b, seed=5)
    assert first.n == 5
    assert first.mean_a == pytest.approx(np.mean([0.1, 0.4, 0.8, 0.9, 0.3]))
    assert set(first.as_dict()) == {
        "n", "mean_a", "mean_b", "mean_diff", "ci_low", "ci_high", "p_value",
    }
    assert isinstance(first, PairedResult)


def test_constant_difference_has_a_point_interval():
    result = paired_comparison([1.0] * 10, [0.0] * 10)
    assert (result.ci_low, result.ci_high) == (1.0, 1.0)
    assert result.p_value == pytest.approx(2 / 2**10)


def test_unpaired_input_is_rejected():
    with pytest.raises(ComparisonError, match=r"shapes \(3,\) and \(2,\)"):
        paired_comparison([1, 2, 3], [1, 2])


# --- all pairs --------------------------------------------------------------------------


def tidy(values: dict[str, np.ndarray], metric: str = "recall@5") -> pd.DataFrame:
    rows = [
        {"config_id": config, "query_id": f"q{i:02d}", "query_kind": "title",
         "metric": metric, "value": float(v)}
        for config, column in values.items()
        for i, v in enumerate(column)
    ]
    return pd.DataFrame(rows)


@pytest.fixture
def three_configs():
    rng = np.random.default_rng(21)
    base = rng.binomial(1, 0.5, 60).astype(float)
    strong = np.maximum(base, rng.binomial(1, 0.6, 60))  # a superset of base's hits
    same = base.copy()
    flip = rng.choice(60, 4, replace=False)
    same[flip] = 1 - same[flip]  # a few queries differ, both ways
    return tidy({"base": base, "strong": strong, "same": same})


def test_compare_all_verdicts(three_configs):
    table = compare_all(three_configs, "recall@5")
    verdicts = {(r.config_a, r.config_b): r.verdict for r in table.itertuples()}
    assert verdicts == {
        ("base", "same"): "no significant difference",
        ("base", "strong"): "B better",
        ("same", "strong"): "B better",
    }
    assert list(table.columns) == [
        "family", "metric", "config_a", "config_b", "n", "mean_a", "mean_b", "mean_diff",
        "ci_low", "ci_high", "p_value", "wins_a", "wins_b", "p_holm", "verdict",
    ]
    assert set(table["family"]) == {"exploratory"}
    assert (table["p_holm"] >= table["p_value"]).all()
    assert table["p_holm"].tolist() == pytest.approx(holm(table["p_value"]).tolist())
    assert (table["n"] == 60).all()


def test_lower_is_better_flips_the_verdict(three_configs):
    table = compare_all(three_configs, "recall@5", higher_is_better=False)
    row = table[(table.config_a == "base") & (table.config_b == "strong")].iloc[0]
    assert row.verdict == "A better"


def test_compare_all_is_deterministic(three_configs):
    pd.testing.assert_frame_equal(
        compare_all(three_configs, "recall@5"), compare_all(three_configs, "recall@5")
    )


def test_compare_all_uses_only_the_requested_metric(three_configs):
    other = tidy({"base": np.ones(60), "strong": np.zeros(60), "same": np.ones(60)}, "hit@5")
    table = compare_all(pd.concat([three_configs, other]), "recall@5")
    assert set(table.metric) == {"recall@5"}
    assert table.loc[table.config_b == "strong", "verdict"].tolist() == ["B better", "B better"]


def test_compare_all_errors_name_the_problem(three_configs):
    with pytest.raises(ComparisonError, match=r"no rows for metric 'mrr@5'.*recall@5"):
        compare_all(three_configs, "mrr@5")
    with pytest.raises(ComparisonError, match="several 'recall@5' values"):
        compare_all(pd.concat([three_configs, three_configs]), "recall@5")
    with pytest.raises(ComparisonError, match=r"lacks column\(s\) \['value'\]"):
        compare_all(three_configs.drop(columns="value"), "recall@5")


def test_permutations_leave_room_for_holm():
    assert permutations_for(1) == 2000
    n = permutations_for(66)  # the 66 pairs of 12 configs
    assert 66 / (n + 1) <= 0.005


def test_twelve_configs_can_still_reach_significance():
    rng = np.random.default_rng(5)
    values = {f"c{i:02d}": rng.binomial(1, 0.5, 60).astype(float) for i in range(11)}
    values["best"] = np.ones(60)
    table = compare_all(tidy(values), "recall@5")
    assert len(table) == 66
    best = table[(table.config_a == "best") | (table.config_b == "best")]
    assert (best["p_holm"] < 0.05).all()
    assert (best["config_a"] == "best").all()  # pairs follow sorted config ids
    assert set(best["verdict"]) == {"A better"}


# --- intervals that agree with the test ------------------------------------------------


def test_three_differing_queries_of_sixty_give_an_interval_holding_zero():
    diffs = np.zeros(60)
    diffs[:3] = 1.0  # 3 of 60 queries differ, all one way: exact p = 2 / 2**3 = 0.25
    test = SignFlipTest(diffs, n_resamples=2000, seed=0)
    assert test.p_value(0.0) == pytest.approx(0.25, abs=0.02)
    low, high = test.interval(0.95)
    assert low <= 0.0 < diffs.mean() <= high


def test_the_interval_is_every_mean_the_test_does_not_reject():
    rng = np.random.default_rng(4)
    for diffs in (rng.normal(0.3, 1.0, 25), rng.choice([-1.0, 0.0, 1.0], 40),
                  np.array([0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0])):
        test = SignFlipTest(diffs, n_resamples=3000, seed=2)
        low, high = test.interval(0.95)
        step = (high - low) / 400
        assert test.p_value(low + step) >= 0.05 and test.p_value(high - step) >= 0.05
        assert test.p_value(low - 3 * step) < 0.05 and test.p_value(high + 3 * step) < 0.05
        assert low < diffs.mean() < high


def test_an_exact_interval_by_hand():
    # d = (1, 1, 1, 1, 1, 1): every shifted difference is 1 - delta, so only the two
    # all-same-sign vectors of the 64 reach the observed |sum|: p = 2/64 < 0.05 for any
    # delta != 1, and the interval is the single point 1
    test = SignFlipTest(np.ones(6), n_resamples=2000, seed=0)
    assert test.p_value(0.0) == pytest.approx(2 / 64) and test.p_value(0.7) == pytest.approx(
        2 / 64)
    assert test.interval(0.95) == (1.0, 1.0)
    # with five, 2/32 = 0.0625 >= 0.05: no delta is rejected, the interval is unbounded
    assert SignFlipTest(np.ones(5), n_resamples=2000, seed=0).interval(0.95) == (
        -math.inf, math.inf)


@settings(max_examples=150, deadline=None)
@given(diffs=st.lists(st.one_of(st.sampled_from([-1.0, 0.0, 0.5, 1.0]),
                                st.floats(-1, 1, allow_nan=False).map(lambda x: round(x, 3))),
                      min_size=1, max_size=40),
       resamples=st.sampled_from([64, 500]), seed=st.integers(0, 3),
       confidence=st.sampled_from([0.9, 0.95]))
def test_the_interval_excludes_zero_only_when_the_uncorrected_test_rejects(
        diffs, resamples, seed, confidence):
    result = paired_comparison(np.asarray(diffs), np.zeros(len(diffs)), n_resamples=resamples,
                               seed=seed, confidence=confidence)
    excludes = result.ci_low > 0 or result.ci_high < 0
    assert excludes == (result.p_value < 1 - confidence)
    assert result.ci_low <= result.mean_diff <= result.ci_high


def test_planned_pairs_are_their_own_holm_family(three_configs):
    planned = compare_pairs(three_configs, "recall@5", [("strong", "base")])
    everything = compare_all(three_configs, "recall@5")
    assert set(planned["family"]) == {"planned"} and len(planned) == 1
    row = planned.iloc[0]
    assert row.p_holm == row.p_value  # a family of one: nothing to correct for
    twin = everything[(everything.config_a == "base") & (everything.config_b == "strong")].iloc[0]
    assert twin.p_holm >= twin.p_value
    assert row.wins_a == twin.wins_b and row.wins_b == twin.wins_a == 0


# --- many pairs at once -----------------------------------------------------------------


def test_pairs_tested_together_match_each_tested_alone():
    rng = np.random.default_rng(8)
    wide = pd.DataFrame({f"c{i}": rng.binomial(1, 0.3 + 0.05 * i, 80).astype(float)
                         for i in range(5)})
    wide.iloc[3, 2] = np.nan  # one pair set keeps fewer queries
    pairs = [("c0", "c1"), ("c0", "c2"), ("c3", "c4"), ("c2", "c4")]
    together = paired_results(wide, pairs, n_resamples=3000, seed=1, confidence=0.95)
    for (a, b), result in zip(pairs, together, strict=True):
        alone = paired_comparison(wide[a], wide[b], n_resamples=3000, seed=1)
        assert result.n == alone.n
        assert result.p_value == pytest.approx(alone.p_value, abs=1e-12)
        assert (result.ci_low, result.ci_high) == pytest.approx((alone.ci_low, alone.ci_high))


def test_each_config_against_the_best(three_configs):
    table = compare_to_best(three_configs, "recall@5")
    assert best_config(three_configs, "recall@5") == "strong"
    assert table[["config_a", "config_b"]].values.tolist() == [["strong", "base"],
                                                               ["strong", "same"]]
    assert set(table["family"]) == {"exploratory"}
    assert set(table["verdict"]) == {"A better"}
    assert table["p_holm"].tolist() == pytest.approx(holm(table["p_value"]).tolist())


def test_bootstrap_intervals_of_many_samples_at_once():
    rng = np.random.default_rng(3)
    samples = [rng.normal(0.5, 1, 40), rng.normal(2, 1, 40), rng.binomial(1, 0.4, 25) * 1.0,
               np.full(10, 0.25), np.array([0.7]), np.array([])]
    low, high = mean_intervals(samples, n_resamples=2000, seed=0)
    for values, lo, hi in zip(samples[:3], low, high, strict=False):
        scipy_ci = bootstrap_ci(values, n_resamples=2000, seed=0, methods=("percentile",))
        assert lo < values.mean() < hi
        assert (lo, hi) == pytest.approx(scipy_ci, abs=0.05)  # same method, other draws
    assert (low[3], high[3]) == (0.25, 0.25) and (low[4], high[4]) == (0.7, 0.7)
    assert np.isnan(low[5]) and np.isnan(high[5])
    again = mean_intervals(samples, n_resamples=2000, seed=0)
    assert np.array_equal(low, again[0], equal_nan=True)


# --- sign vectors too many to keep ----------------------------------------------------------


def test_sign_vectors_past_the_cache_limit_give_the_same_sums():
    # past cache_bytes the sign vectors come as a one-shot stream of batches: every batch
    # must be used once for both the flipped sums and each vector's sign sum
    rng = np.random.default_rng(11)
    diffs = rng.normal(0.1, 1.0, (300, 3))
    kept = flipped_sums(diffs, n_resamples=5000, seed=3)
    streamed = flipped_sums(diffs, n_resamples=5000, seed=3, cache_bytes=0)
    assert streamed[0].shape == (5000, 3) and streamed[1].shape == (5000,)
    np.testing.assert_array_equal(kept[0], streamed[0])
    np.testing.assert_array_equal(kept[1], streamed[1])
    assert not streamed[2]
