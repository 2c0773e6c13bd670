"""The verdict's rule in its three steps, on made-up evidence and a made-up study: the user's
questions decide when they separate the best by the tie margin; among the configs they cannot
separate, the study's pooled result decides; among those it cannot separate either, the
smaller index. Then its calibration: the sentence a page prints is the simulation's row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from chunkproof.evaluation.choice import calibration
from chunkproof.evaluation.choice.verdict import calibration_row
from chunkproof.evaluation.study.evidence import SiteEvidence
from chunkproof.evaluation.study.prior import Prior
from chunkproof.evaluation.study.results import StudyResults
from chunkproof.evaluation.study.rule import (
    COST,
    STUDY,
    YOUR_QUESTIONS,
    Evidence,
    apply_rule,
)

KEY = ("bm25", "answer_hit@b1024")
COST_OF = {"small/300": 900.0, "mid/600": 800.0, "big/1200": 700.0, "other/600": 750.0}


def _values(rng, n: int, rates: dict[str, float]) -> pd.DataFrame:
    """n questions x configs of 0/1, each config answering at its rate, sharing draws so
    that configs differ on few questions (as real configs do)."""
    draw = rng.random(n)
    return pd.DataFrame({c: (draw < r).astype(float) for c, r in rates.items()},
                        index=pd.Index([f"q{i}" for i in range(n)], name="query_id"))


def _site(rng, name: str, n: int, rates: dict[str, float]) -> SiteEvidence:
    table = _values(rng, n, rates)
    pages = tuple(f"p{i // 3}" for i in range(n))
    return SiteEvidence(name, tuple(table.index), pages, ("prose",) * n, {KEY: table},
                        {c: int(COST_OF[c]) for c in rates}, {c: 1.0 for c in rates})


def _prior(rates: dict[str, float], sites: int = 6, n: int = 60, seed: int = 0) -> Prior:
    rng = np.random.default_rng(seed)
    return Prior(tuple(_site(rng, f"s{i}", n, rates) for i in range(sites)),
                 reference="small/300")


def _evidence(table: pd.DataFrame) -> Evidence:
    return Evidence(table, [f"p{i // 2}" for i in range(len(table))])


def test_questions_that_separate_decide_and_need_the_margin():
    rng = np.random.default_rng(1)
    clear = _values(rng, 400, {"small/300": 0.5, "mid/600": 0.62, "big/1200": 0.75})
    outcome = apply_rule(list(clear), evidence=_evidence(clear), prior=None, retriever=KEY[0],
                         metric=KEY[1], cost=COST_OF)
    assert (outcome.pick, outcome.decided_by) == ("big/1200", YOUR_QUESTIONS)
    assert outcome.inseparable == ["big/1200"]
    # 4,000 questions make a 0.03 difference significant, but it is below the tie margin
    close = _values(rng, 4000, {"small/300": 0.70, "big/1200": 0.73})
    outcome = apply_rule(list(close), evidence=_evidence(close), prior=None,
                         retriever=KEY[0], metric=KEY[1], cost=COST_OF)
    assert outcome.tests["small/300"].p_value < 0.05
    assert set(outcome.inseparable) == {"small/300", "big/1200"}
    assert outcome.decided_by == COST


def test_the_study_decides_among_what_the_questions_cannot_separate():
    prior = _prior({"small/300": 0.5, "mid/600": 0.65, "big/1200": 0.8})
    rng = np.random.default_rng(2)
    few = _values(rng, 12, {"small/300": 0.6, "mid/600": 0.6, "big/1200": 0.6})
    outcome = apply_rule(list(few), evidence=_evidence(few), prior=prior, retriever=KEY[0],
                         metric=KEY[1], cost=COST_OF)
    assert (outcome.pick, outcome.decided_by) == ("big/1200", STUDY)
    assert [c for c, _ in outcome.study_order] == ["big/1200", "mid/600", "small/300"]


def test_cost_decides_among_what_the_study_cannot_separate_either():
    prior = _prior({"small/300": 0.6, "mid/600": 0.6, "big/1200": 0.6})
    outcome = apply_rule(["small/300", "mid/600", "big/1200"], evidence=None, prior=prior,
                         retriever=KEY[0], metric=KEY[1], cost=COST_OF)
    assert outcome.decided_by == COST
    assert outcome.pick == "big/1200"  # the smallest index of the three
    assert set(outcome.study_tied) == {"small/300", "mid/600", "big/1200"}


def test_configs_the_study_never_ran_are_named_and_left_to_the_known_ones():
    prior = _prior({"small/300": 0.5, "big/1200": 0.8})
    outcome = apply_rule(["small/300", "big/1200", "other/600"], evidence=None, prior=prior,
                         retriever=KEY[0], metric=KEY[1], cost=COST_OF)
    assert outcome.unknown == ["other/600"]
    assert outcome.pick == "big/1200" and outcome.decided_by == STUDY


def test_the_study_reads_configs_by_the_names_it_gives_them():
    prior = _prior({"small/300": 0.5, "big/1200": 0.8})
    outcome = apply_rule(["id-a", "id-b"], evidence=None, prior=prior, retriever=KEY[0],
                         metric=KEY[1], cost={"id-a": 1.0, "id-b": 2.0},
                         study_names={"id-a": "small/300", "id-b": "big/1200"})
    assert outcome.pick == "id-b" and outcome.decided_by == STUDY


def test_leaving_a_site_out_pools_the_others_only():
    prior = _prior({"small/300": 0.5, "big/1200": 0.8}, sites=4)
    whole = prior.pooled("big/1200", "small/300", *KEY)
    left = prior.pooled("big/1200", "small/300", *KEY, leave_out="s0")
    assert whole.k == 4 and left.k == 3


@pytest.fixture(scope="module")
def simulated():
    prior = _prior({"small/300": 0.55, "mid/600": 0.62, "big/1200": 0.7}, sites=5, n=50)
    return prior, calibration.simulate(prior, *KEY, sizes=(10, 20, 40), draws=6)


def test_every_held_out_site_is_simulated_for_both_rules(simulated):
    prior, frame = simulated
    assert set(frame["site"]) == set(prior.site_names())
    assert set(frame["rule"]) == {"new", "old"}
    assert set(frame.loc[frame["rule"] == "new", "questions"]) == {0, 10, 20, 40}
    assert (frame["regret"] >= 0).all()


def test_the_pages_calibrated_sentence_is_the_simulations_row(simulated):
    prior, frame = simulated
    table = calibration.calibration_table(frame).assign(retriever=KEY[0], metric=KEY[1])
    study = StudyResults(prior, tables={"calibration": table.to_dict("records")})
    for asked, drawn in ((40, 40), (55, 40), (25, 20), (10, 10), (4, 10), (0, 0)):
        row = calibration_row(study, *KEY, asked)
        expected = table[(table["rule"] == "new") & (table["questions"] == drawn)].iloc[0]
        assert row["questions"] == drawn
        assert row["within"] == pytest.approx(expected["within"])
        tenths = int(round(expected["within"] * 10))
        assert f"on {tenths} of 10 held-out sites' draws" in row["text"]
        assert f"({int(expected['draws'])} draws over {int(expected['sites'])} sites" in \
            row["text"]


def test_too_few_questions_say_nothing_is_detectable_never_zero():
    from chunkproof.evaluation.choice.verdict import Verdict, settle_from
    from chunkproof.evaluation.study.rule import Outcome

    rng = np.random.default_rng(4)
    table = _values(rng, 10, {"small/300": 0.5, "big/1200": 0.55})
    evidence = _evidence(table)
    settled, detectable = settle_from(evidence, None, "big/1200", "small/300",
                                      {c: c for c in table}, *KEY, margin=0.05)
    assert detectable is None
    outcome = Outcome("big/1200", COST, ["big/1200", "small/300"],
                      cost={"big/1200": 1.0, "small/300": 2.0})
    verdict = Verdict(outcome, {}, *KEY, evidence=YOUR_QUESTIONS, questions=10, pages=5,
                      runner_up="small/300", settle=settled, detectable=detectable)
    text = " ".join(verdict.sentences())
    assert "No difference between these two is detectable with your 10 questions" in text
    assert "0.000" not in text
