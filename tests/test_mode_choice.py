"""Retrieval modes in a sweep and in the choice: each config x mode scored, tested against plain
at an equal budget, and chosen and exported as one candidate."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest
import yaml

from chunkproof import load_config
from chunkproof.evaluation.choice import choose as ch
from chunkproof.evaluation.choice import export as ex
from chunkproof.evaluation.choice.mode_candidates import by_candidate, candidate_id, split_candidate
from chunkproof.evaluation.retrieval.modes import MODES, PLAIN
from chunkproof.evaluation.run.runs import load_run
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep, summary_table
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"
BUDGETS = (128, 256)
PRIMARY = "answer_hit@b128"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("modes") / "run"
    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("rct", "ast_breadcrumb"), sizes=(200,), budgets=BUDGETS,
                         modes=MODES)
    run_sweep(params, out, progress=False)
    return load_run(out)


def rule(**values):
    return ch.ChoiceRule(**{"primary_metric": PRIMARY, **values})


def pick(run, rule_):
    """The choice without a study (it never ran retrieval modes or this grid)."""
    return ch.choose(run, rule_, study=None)


def test_every_mode_is_scored_and_expansions_only_at_budgets(run):
    rows = run.per_query
    assert set(rows["mode"]) == set(MODES)
    for mode in MODES:
        names = set(rows.loc[rows["mode"] == mode, "metric"])
        assert {"span_recall@b128", "answer_hit@b256"} <= names
        assert ("answer_hit@5" in names) == (mode in (PLAIN, "boost"))
    assert set(run.summary["mode"]) == set(MODES)


def test_each_mode_is_tested_against_plain_on_the_same_config(run):
    sig = run.significance
    tests = sig[sig["family"] == "modes"]
    assert set(tests["mode"]) == set(MODES) - {PLAIN}
    assert (tests["config_a"] == tests["config_b"]).all()
    plain = run.summary[(run.summary["split"] == "all") & (run.summary["mode"] == PLAIN)]
    for _, row in tests[tests["metric"] == PRIMARY].iterrows():
        mine = run.summary[(run.summary["split"] == "all") & (run.summary["mode"] == row["mode"])
                           & (run.summary["config_id"] == row["config_a"])
                           & (run.summary["metric"] == PRIMARY)]
        theirs = plain[(plain["config_id"] == row["config_a"]) & (plain["metric"] == PRIMARY)]
        assert row["mean_a"] == pytest.approx(float(mine["mean"].iloc[0]))
        assert row["mean_b"] == pytest.approx(float(theirs["mean"].iloc[0]))


def test_a_plain_run_keeps_its_id_and_an_expansion_needs_a_budget():
    plain = SweepParams(corpus=str(MINI), sizes=(200,))
    assert "modes" not in plain.shared()
    assert SweepParams(corpus=str(MINI), sizes=(200,), modes=("plain", "boost")).run_id != (
        plain.run_id)
    with pytest.raises(ValueError, match="expand=parent.*budget"):
        SweepParams(corpus=str(MINI), sizes=(200,), modes=("expand=parent",))


def test_candidate_ids_join_a_config_and_its_mode():
    assert candidate_id("abc123", PLAIN) == "abc123"
    assert candidate_id("abc123", "expand=parent") == "abc123+expand=parent"
    assert split_candidate("abc123+expand=parent") == ("abc123", "expand=parent")
    assert split_candidate("abc123") == ("abc123", PLAIN)


def test_the_choice_ranks_every_config_in_every_mode(run, tmp_path):
    choice = pick(run, rule())
    ids = set(choice.candidates["config_id"])
    configs = set(run.chunk_stats["config_id"])
    assert ids == {candidate_id(c, m) for c in configs for m in MODES}
    assert choice.mode == split_candidate(choice.chosen["config_id"])[1]
    path = ex.export_choice(choice, tmp_path)
    data = yaml.safe_load(path.read_text())
    assert data["retrieval_mode"] == choice.mode
    assert load_config(path).config_id == data["config_id"] == split_candidate(
        choice.chosen["config_id"])[0]


def test_the_choice_picks_a_mode_that_scores_best(run, tmp_path):
    rows = run.per_query
    target = sorted(set(rows["config_id"]))[0]
    lifted = (rows["mode"] == "expand=siblings") & (rows["config_id"] == target) & (
        rows["metric"] == PRIMARY)
    rows = rows.assign(value=rows["value"].where(~lifted, 1.0))
    lowered = ~lifted & (rows["metric"] == PRIMARY)
    rows = rows.assign(value=rows["value"].where(~lowered, 0.0))
    rows = rows.assign(source=rows["query_id"])  # eight pages: a clustered test can reject
    changed = replace(run, per_query=rows, summary=summary_table(rows, run.chunk_stats))
    choice = pick(changed, rule(alpha=0.1))  # 8 questions, 7 comparisons: Holm reaches 0.055
    assert choice.decided_by == "your questions"
    assert choice.mode == "expand=siblings"
    assert choice.chosen["config_id"] == candidate_id(target, "expand=siblings")
    assert choice.config.config_id == target
    assert "+expand=siblings" in ex.verdict_text(choice)
    data = yaml.safe_load(ex.export_choice(choice, tmp_path).read_text())
    assert data["retrieval_mode"] == "expand=siblings" and data["config_id"] == target


def test_a_run_of_plain_retrieval_is_its_own_candidate_table(run):
    plain = replace(run, per_query=run.per_query[run.per_query["mode"] == PLAIN])
    assert by_candidate(plain) is plain
    keyed = by_candidate(run)
    assert by_candidate(keyed) is keyed
    assert len(keyed.chunk_stats) == len(MODES) * len(run.chunk_stats)
    assert isinstance(keyed.per_query, pd.DataFrame)


def test_a_configs_name_carries_its_mode_unless_plain():
    from chunkproof.viz.charts import config_label

    frame = pd.DataFrame({"strategy": ["rct", "rct"], "size": [200, 200],
                          "mode": [PLAIN, "boost"]})
    assert list(config_label(frame)) == ["rct/200", "rct/200 +boost"]
    keyed = pd.DataFrame({"strategy": ["rct"], "size": [200],
                          "config_id": [candidate_id("abc", "expand=parent")]})
    assert list(config_label(keyed)) == ["rct/200 +expand=parent"]


def test_notebook_03_tabulates_each_mode_against_plain_per_budget(run):
    from chunkproof.notebooks.strategy_sweep import modes_table, plain_rows

    table = modes_table(run)
    assert list(table.columns) == ["strategy", "size", "retriever", "mode", "span_recall@b128",
                                   "span_recall@b256", "plain span_recall@b128"]
    assert len(table) == 3 * len(run.chunk_stats)  # each config in each mode but plain
    assert set(plain_rows(run).summary["mode"]) == {PLAIN}
    only_plain = replace(run, significance=run.significance[run.significance["family"]
                                                            != "modes"])
    assert "only the plain retrieval mode" in modes_table(only_plain)


def test_a_tie_between_modes_of_one_config_says_plain_comes_first(run):
    rows = run.per_query
    primary = rows["metric"] == PRIMARY
    rows = rows.assign(value=rows["value"].where(~primary, 1.0))  # every candidate ties
    changed = replace(run, per_query=rows, summary=summary_table(rows, run.chunk_stats))
    choice = pick(changed, rule())
    assert choice.mode == PLAIN  # tied, equal cost: its own modes rank right after it
    assert choice.decided_by == "cost"
    assert choice.runner_up["config_id"] == candidate_id(choice.config.config_id, "boost")
