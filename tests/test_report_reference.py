"""The report's sweep and choice give the recorded per-query values and choice
(tests/report_reference.py, recorded from the code that mined the queries in each notebook)
with the queries mined once: kept in the run folder as the report does before its notebooks
run, then read back by the sweep (03) and the choice (06), which never mine them again."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from chunkproof.document.corpus import load_corpus
from chunkproof.evaluation.queries import mined_part
from chunkproof.evaluation.queries.mining import mine_all
from chunkproof.evaluation.run.engine import Engine
from chunkproof.evaluation.run.sweep import run_sweep
from report_reference import CORPUS, FOLDER, choice_of, per_query_values, sweep_params

pytestmark = pytest.mark.needs("tokenizer")


def test_the_sweep_and_the_choice_on_queries_mined_once_equal_the_reference(tmp_path,
                                                                            monkeypatch):
    corpus = load_corpus(CORPUS)
    mined_part.save_mined(tmp_path / "parts", corpus, mine_all(corpus))  # as the report does
    monkeypatch.setattr(mined_part, "mine_all", lambda *a, **k: pytest.fail("mined again"))
    result = run_sweep(sweep_params(), tmp_path, engine=Engine(workers=1), progress=False)
    got = per_query_values(result.per_query)
    expected = pd.read_parquet(FOLDER / "per_query.parquet")
    assert len(got) == len(expected)
    for column in expected.columns:
        pd.testing.assert_series_equal(got[column], expected[column], check_dtype=False,
                                       check_exact=True, obj=f"per_query.{column}")
    recorded = json.loads((FOLDER / "choice.json").read_text(encoding="utf-8"))
    assert choice_of(tmp_path) == recorded
