"""Rank agreement of a mined kind with written questions on one site: Spearman and Kendall of
the configs' means, and whether the kind's top config lies among those the written questions
cannot separate from their best."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from chunkproof.evaluation.queries.queries import Query
from chunkproof.evaluation.scoring.agreement import (
    COLUMNS,
    PAGE,
    kind_agreement,
    split_half,
    with_pages,
    written_set,
)

METRIC = "answer_hit@b1024"
CONFIGS = [f"c{i}" for i in range(6)]


def run_of(values: dict[str, dict[str, list[float]]]) -> SimpleNamespace:
    """A run holding ``values`` (kind -> config -> one value per query of the kind)."""
    rows = []
    for kind, by_config in values.items():
        for config, found in by_config.items():
            rows += [{"config_id": config, "retriever": "bm25", "mode": "plain",
                      "query_id": f"{kind}-{i}", "query_kind": kind, "metric": METRIC,
                      "value": v} for i, v in enumerate(found)]
    return SimpleNamespace(per_query=pd.DataFrame(rows), run_info={},
                           chunk_stats=pd.DataFrame({"config_id": CONFIGS}))


def hits(rate: float, n: int, seed: int) -> list[float]:
    """``n`` values of 0 or 1, ``rate`` of them 1, in a seeded order."""
    found = np.zeros(n)
    found[: round(rate * n)] = 1.0
    return list(np.random.default_rng(seed).permutation(found))


def by_config(rates: list[float], n: int, seed: int) -> dict[str, list[float]]:
    return {c: hits(r, n, seed) for c, r in zip(CONFIGS, rates, strict=True)}


def test_spearman_and_kendall_are_those_of_the_config_means():
    rates = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    shuffled = [0.6, 0.9, 0.4, 0.8, 0.5, 0.7]
    written = run_of({"manual": by_config(rates, 40, 1)})
    kinds = {"same": by_config(rates, 30, 2), "turned": by_config(rates[::-1], 30, 3),
             "mixed": by_config(shuffled, 30, 4)}
    table = kind_agreement(written, run_of(kinds))
    assert list(table.columns) == COLUMNS
    row = table.set_index("query_kind")
    assert row.loc["same", "spearman"] == pytest.approx(1.0)
    assert row.loc["turned", "spearman"] == pytest.approx(-1.0)
    assert row.loc["turned", "kendall"] == pytest.approx(-1.0)
    expected = stats.spearmanr(shuffled, rates).statistic
    assert row.loc["mixed", "spearman"] == pytest.approx(expected)
    assert row.loc["mixed", "queries"] == 30 and row.loc["mixed", "configs"] == 6


def test_a_kind_constant_over_configs_has_no_rank_agreement():
    written = run_of({"manual": {c: hits(0.5 + i / 20, 40, i) for i, c in enumerate(CONFIGS)}})
    flat = run_of({"flat": {c: [1.0] * 20 for c in CONFIGS}})
    row = kind_agreement(written, flat).iloc[0]
    assert np.isnan(row["spearman"]) and np.isnan(row["kendall"])
    assert row["kind_best"] == "+".join(CONFIGS)  # every config ties at the top


def test_the_pick_is_inside_the_set_the_written_questions_cannot_separate():
    # c0 answers every written question, c1 nearly every one, the rest none: only c1 is
    # inseparable from the best
    rates = {"c0": 1.0, "c1": 0.97, "c2": 0.0, "c3": 0.0, "c4": 0.0, "c5": 0.0}
    written = run_of({"manual": {c: hits(r, 60, 5) for c, r in rates.items()}})
    best, inside = written_set(written.per_query, METRIC)
    assert best == "c0" and inside == ["c0", "c1"]
    tops = {"at_best": "c0", "beside": "c1", "outside": "c3"}
    kinds = {kind: {c: hits(0.9 if c == top else 0.3, 20, 6) for c in CONFIGS}
             for kind, top in tops.items()}
    kinds["tied"] = {c: hits(0.9 if c in ("c1", "c4") else 0.3, 20, 7) for c in CONFIGS}
    row = kind_agreement(written, run_of(kinds)).set_index("query_kind")
    assert row.loc["at_best", "pick_inside"] and row.loc["beside", "pick_inside"]
    assert not row.loc["outside", "pick_inside"]
    assert row.loc["tied", "kind_best"] == "c1+c4"
    assert not row.loc["tied", "pick_inside"]  # a tie-break could land on c4
    assert set(row["written_set"]) == {"c0+c1"}


def test_pages_are_the_runs_own_else_each_querys_first_source():
    frame = pd.DataFrame({"query_id": ["a", "b"], "value": [1.0, 0.0]})
    queries = [Query("a", "x", ("p.md", "q.md")), Query("b", "y", ("q.md",))]
    assert list(with_pages(frame, queries)[PAGE]) == ["p.md", "q.md"]
    recorded = frame.assign(**{PAGE: ["r.md", "r.md"]})
    assert list(with_pages(recorded, queries)[PAGE]) == ["r.md", "r.md"]
    assert PAGE not in with_pages(frame).columns


def paged(patterns: dict[str, list[float]], per_page: int) -> pd.DataFrame:
    """Written rows: ``per_page`` questions on each page, every one scoring the configs as
    the page's pattern says."""
    rows = [{"query_id": f"{page}-{i}", PAGE: page, "config_id": config, "value": value}
            for page, pattern in patterns.items() for i in range(per_page)
            for config, value in zip(CONFIGS, pattern, strict=True)]
    return pd.DataFrame(rows)


def test_split_half_keeps_a_pages_questions_together():
    # two pages rank the configs one way, two the other way round: a split by page either
    # puts like with like (rho -1) or mixes both into flat halves (no rho); questions split
    # one by one would agree with themselves
    up, down = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0], [1.0, 0.8, 0.6, 0.4, 0.2, 0.0]
    found = split_half(paged({"a": up, "b": up, "c": down, "d": down}, 5), splits=50)
    assert found["split_half"] == pytest.approx(-1.0)
    assert found["questions"] == 20 and found["pages"] == 4 and found["configs"] == 6


def test_split_half_is_spearman_brown_corrected_and_its_square_root_the_ceiling():
    rng = np.random.default_rng(3)
    rates = np.linspace(0.2, 0.8, len(CONFIGS))
    patterns = {f"p{i}": list((rng.random(len(CONFIGS)) < rates).astype(float))
                for i in range(60)}
    found = split_half(paged(patterns, 1), splits=400)
    assert 0 < found["split_half"] < found["reliability"] < found["ceiling"] < 1
    assert found["reliability_low"] < found["reliability"] < found["reliability_high"]
    r = found["split_half"]
    assert found["reliability"] == pytest.approx(2 * r / (1 + r), abs=0.02)
    assert found["ceiling"] == pytest.approx(np.sqrt(found["reliability"]))
    noise = [split_half(paged({f"p{i}": list((rng.random(len(CONFIGS)) < 0.5).astype(float))
                               for i in range(60)}, 1), splits=100)["reliability"]
             for _ in range(20)]
    assert np.median(noise) < 0.2 < 0.8 < found["reliability"]  # chance agreement only
    assert np.isnan(split_half(paged({"a": rates, "b": rates, "c": rates}, 3))["ceiling"])
