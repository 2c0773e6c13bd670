"""The rule over repeated seeded splits: how often each config is chosen, the configs the
evidence cannot separate, the smallest detectable difference, and the tie margin in queries."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from chunkproof.evaluation.choice import choose as ch
from chunkproof.evaluation.choice import export as ex
from chunkproof.evaluation.choice.stability import detectable_difference, stability
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("stability") / "run"
    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("rct", "ast_breadcrumb"), sizes=(200, 400), min_split=4)
    run_sweep(params, out, progress=False)
    return ch.load_run(out)


def test_the_detectable_difference_by_hand():
    # (z_0.975 + z_0.8) * sd / sqrt(n) = (1.95996 + 0.84162) * 0.5 / 10
    assert detectable_difference(0.5, 100) == pytest.approx(0.140079, abs=1e-5)


def test_every_split_chooses_one_config_and_the_verdict_is_the_most_chosen(run):
    rule = ch.ChoiceRule(primary_metric="answer_hit@5", splits=12)
    found = stability(run, rule, ch.candidates(run, rule), splits=12)
    assert found.splits == 12 and found.table["chosen"].sum() == 12
    top = found.table.iloc[0]
    assert found.verdict == top["config"] and top["chosen"] == found.table["chosen"].max()
    assert found.share == pytest.approx(top["chosen"] / 12)
    assert (found.table["held_out_low"] <= found.table["held_out_high"]).all()
    assert found.margin_queries == pytest.approx(rule.tie_margin * found.tuning_queries)
    assert found.verdict not in found.inseparable
    assert found.detectable_tuning >= found.detectable >= 0


def test_the_choice_is_the_most_chosen_config_and_says_so(run, tmp_path):
    choice = ch.choose(run, ch.ChoiceRule(primary_metric="answer_hit@5", splits=12))
    assert choice.chosen["config_id"] == choice.stability.verdict_id
    text = choice.stability.text(choice.rule)
    assert f"Over 12 seeded splits of the {choice.stability.queries} queries" in text
    assert "queries of a tuning half" in text and "at 80% power" in text
    data = yaml.safe_load(ex.export_choice(choice, tmp_path).read_text())
    assert data["stability"]["verdict"] == choice.stability.verdict
    assert data["stability"]["text"] == text


def test_no_splits_asked_keeps_the_single_split_choice(run):
    choice = ch.choose(run, ch.ChoiceRule(primary_metric="answer_hit@5", splits=0))
    assert choice.stability is None and choice.chosen["rank"] == 1


def test_configs_far_apart_are_separated():
    rng = np.random.default_rng(0)
    assert detectable_difference(float(np.std(rng.binomial(1, 0.5, 400))), 400) < 0.15
