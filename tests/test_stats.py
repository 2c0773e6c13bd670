"""Paired comparisons: Holm correction, the exact sign test of 0/1 metrics, the adaptive sign-flip
test of continuous ones, intervals that never claim what the test does not (a property test),
planned and exploratory families."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from chunkproof.errors import ComparisonError
from chunkproof.evaluation.scoring.families import (
    best_config,
    compare_all,
    compare_pairs,
    compare_to_best,
    holm,
    permutations_for,
)
from chunkproof.evaluation.scoring.stats import (
    HOEFFDING,
    SIGN_TEST,
    PairedResult,
    hoeffding_p,
    paired_comparison,
    paired_results,
    sign_flip_p,
    sign_test_p,
)


def flip_p(diffs, **options) -> float:
    return float(sign_flip_p(np.asarray(diffs, dtype=float)[:, None], **options)[0][0])


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
    assert flip_p(diffs, n_resamples=2000, seed=0) == pytest.approx(scipy_p)
    assert flip_p(diffs, n_resamples=2000, seed=0) == pytest.approx(6 / 256)


def test_sign_flip_monte_carlo_matches_scipy():
    diffs = np.random.default_rng(3).normal(0.25, 1.0, 40)
    scipy_p = scipy_stats.permutation_test(
        (diffs,), np.mean, permutation_type="samples", n_resamples=20000,
        vectorized=True, rng=np.random.default_rng(1),
    ).pvalue
    every_level = np.linspace(0.001, 0.999, 999)  # never clear of one: all 20000 are drawn
    p, drawn = sign_flip_p(diffs[:, None], n_resamples=20000, seed=0, levels=every_level)
    assert drawn[0] == 20000 and p[0] == pytest.approx(scipy_p, abs=0.01)


def test_sign_flip_of_no_difference_is_one():
    assert flip_p(np.zeros(30), n_resamples=2000, seed=0) == 1.0


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
        "n", "mean_a", "mean_b", "mean_diff", "ci_low", "ci_high", "p_value", "test",
        "interval"}
    assert isinstance(first, PairedResult)


def test_a_constant_continuous_difference_has_a_point_interval():
    result = paired_comparison([0.75] * 40, [0.25] * 40)
    assert (result.ci_low, result.ci_high) == (0.5, 0.5)


def test_ten_of_ten_hits_against_none_by_the_sign_test():
    result = paired_comparison([1.0] * 10, [0.0] * 10)
    assert result.test == SIGN_TEST
    assert result.p_value == pytest.approx(2 / 2**10)
    assert 0.4 < result.ci_low < 1.0 == result.ci_high  # Tango: 0.445 at 10 of 10


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
        "ci_low", "ci_high", "p_value", "test", "interval", "wins_a", "wins_b", "p_holm",
        "verdict"]
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
    a, b = np.zeros(60), np.zeros(60)
    a[:3] = 1.0  # 3 of 60 queries differ, all one way: exact p = 2 / 2**3 = 0.25
    result = paired_comparison(a, b)
    assert result.test == SIGN_TEST and result.p_value == pytest.approx(0.25)
    assert result.ci_low <= 0.0 < result.mean_diff <= result.ci_high


@pytest.mark.parametrize(("a_only", "b_only"), [(0, 0), (1, 0), (4, 1), (9, 2), (30, 31)])
def test_the_sign_test_is_scipys_binomial_test(a_only, b_only):
    expected = (scipy_stats.binomtest(a_only, a_only + b_only, 0.5).pvalue
                if a_only + b_only else 1.0)
    assert sign_test_p(a_only, b_only) == pytest.approx(expected)


def test_hoeffding_bounds_the_exact_sign_flip_p():
    rng = np.random.default_rng(6)
    for diffs in (rng.normal(0.4, 1.0, 14), rng.choice([-1.0, 0.0, 1.0, 0.5], 16)):
        exact = flip_p(diffs, n_resamples=2**16, seed=0)
        assert exact <= hoeffding_p(diffs[:, None])[0] + 1e-12


def test_a_far_tail_is_settled_by_the_bound_without_sign_vectors():
    rng = np.random.default_rng(7)
    diffs = rng.normal(0.3, 0.5, 2000)
    p, drawn = sign_flip_p(diffs[:, None], n_resamples=13200, seed=0, levels=(0.05 / 66,))
    assert drawn[0] == 0 and p[0] < 1e-10
    assert paired_comparison(diffs, np.zeros(2000)).test == HOEFFDING


def test_the_count_of_sign_vectors_follows_the_precision_needed():
    rng = np.random.default_rng(8)
    null = rng.normal(0.0, 1.0, 200)  # p far above alpha: settled by the first batch
    near = rng.normal(0.0, 1.0, 200)
    near += 1.9 * near.std() / np.sqrt(200) - near.mean()  # p close to 0.05
    p, drawn = sign_flip_p(np.stack([null, near], axis=1), n_resamples=20000, seed=0)
    assert drawn[0] == 1024 and p[0] > 0.2
    assert drawn[1] > 4 * drawn[0]


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
    assert not excludes or result.p_value < 1 - confidence
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


# --- sign vectors too many to keep ----------------------------------------------------------


def test_sign_vectors_past_the_cache_limit_give_the_same_p_values():
    # past cache_bytes the sign vectors come as a one-shot stream of batches, read once
    rng = np.random.default_rng(11)
    diffs = rng.normal(0.05, 1.0, (300, 3))
    every_level = np.linspace(0.001, 0.999, 999)
    kept = sign_flip_p(diffs, n_resamples=5000, seed=3, levels=every_level)
    streamed = sign_flip_p(diffs, n_resamples=5000, seed=3, levels=every_level, cache_bytes=0)
    assert (streamed[1] == 5000).all()
    np.testing.assert_array_equal(kept[0], streamed[0])
