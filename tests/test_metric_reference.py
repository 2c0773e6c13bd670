"""The scorer gives the recorded per-query values and rankings (tests/metric_reference.py):
every metric, every budget, every retrieval mode, on the sample and two fixture corpora, value
for value (NaN where NaN), rows in the same order."""

from __future__ import annotations

import pandas as pd
import pytest

from metric_reference import CASES, FOLDER, job_inputs, score

pytestmark = pytest.mark.needs("tokenizer")


@pytest.mark.parametrize("case", list(CASES))
def test_scores_equal_the_reference(case):
    docs, queries, configs = job_inputs(case)
    per_query, retrieved = [], []
    for config, chunks in configs:
        scored = score(docs, queries, config, chunks)
        per_query.append(scored.per_query)
        retrieved.append(scored.retrieved)
    for name, frames in (("per_query", per_query), ("retrieved", retrieved)):
        expected = pd.read_parquet(FOLDER / f"{case}.{name}.parquet")
        got = pd.concat(frames, ignore_index=True)
        assert list(got.columns) == list(expected.columns)
        assert len(got) == len(expected), f"{case} {name}: {len(got)} rows, not {len(expected)}"
        assert set(expected["mode"]) == {"plain", "boost", "expand=parent", "expand=siblings"}
        for column in expected.columns:
            pd.testing.assert_series_equal(got[column], expected[column], check_dtype=False,
                                           check_exact=True, obj=f"{case} {name}.{column}")
