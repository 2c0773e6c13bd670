"""How often the verdict's rule is right, measured by simulation on the study's own questions:
for each study site, draw 10, 20, 30 or 40 of its written questions (or none: mined questions
only), apply the rule with the prior built from the other sites, and compare the pick with
what all of that site's questions say: whether it is among the configs they cannot separate
from their best (``inside``), and how far its mean is below the best's (``regret``). The
former rule (a tie margin on an uncorrected test, then the smallest top-k bundle) is measured
the same way for comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..scoring import stats
from ..study.evidence import SiteEvidence
from ..study.prior import Prior
from ..study.rule import (
    ALPHA,
    MINED_QUESTIONS,
    TIE_MARGIN,
    Evidence,
    Outcome,
    apply_rule,
    evidence_step,
)

DRAW_SIZES = (10, 20, 30, 40)
"""Written questions drawn from a held-out site (0 stands for mined questions only)."""
DRAWS = 60
"""Draws per site and size."""
WITHIN = 0.05
"""A pick within this of the best mean counts as right in the page's sentence."""
NEW, OLD = "new", "old"


def truth(site: SiteEvidence, configs: Sequence[str], retriever: str, metric: str, *,
          margin: float = TIE_MARGIN, alpha: float = ALPHA) -> tuple[pd.Series, list[str]]:
    """(each config's mean on all the site's questions, the configs they cannot separate
    from the best): what a draw's pick is judged against."""
    table = site.table(retriever, metric)[list(configs)]
    step = evidence_step(Evidence(table, site.pages), configs, site.index_tokens,
                         margin=margin, alpha=alpha)
    return table.mean(), step.inseparable


def old_pick(values: pd.DataFrame, bundle: Mapping[str, float], *, margin: float = TIE_MARGIN,
             alpha: float = ALPHA) -> str:
    """The former rule on ``values`` (questions x configs of 0/1), kept to measure the new
    one against: the best mean; a config within ``margin`` of it that the uncorrected exact
    sign test, every question independent, does not set below it is tied with it; the tied
    config with the smallest top-k bundle (``bundle``) is picked."""
    means = values.mean()
    best = min(values.columns, key=lambda c: (-means[c], bundle.get(c, np.inf), c))
    diffs = values[best].to_numpy()[:, None] - values.to_numpy()
    p = stats.sign_test_p((diffs > 0).sum(axis=0), (diffs < 0).sum(axis=0))
    tied = [c for c, q in zip(values.columns, p, strict=True) if c == best or (
        means[best] - means[c] <= margin + 1e-12 and q >= alpha)]
    return min(tied, key=lambda c: (bundle.get(c, np.inf), -means[c], c))


def _draws(site: SiteEvidence, n: int, draws: int, seed: int) -> list[np.ndarray]:
    if n >= len(site.questions):
        return [np.arange(len(site.questions))]
    rng = np.random.default_rng([seed, n, sum(map(ord, site.name))])
    return [np.sort(rng.choice(len(site.questions), size=n, replace=False))
            for _ in range(draws)]


def simulate(prior: Prior, retriever: str, metric: str, *,
             sizes: Sequence[int] = DRAW_SIZES, draws: int = DRAWS, seed: int = 0,
             mined: Mapping[str, Evidence | None] | None = None,
             old_mined: Mapping[str, str] | None = None,
             margin: float = TIE_MARGIN, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per site, rule (new, old), number of written questions (0: mined only) and
    draw: the pick, what decided it, whether it is ``inside`` the site's inseparable set and
    its ``regret``. ``mined``: each site's evidence from its admitted mined kinds (None or
    absent: none admitted); ``old_mined``: the former rule's pick on each site's mined run."""
    rows: list[dict] = []
    for site in prior.sites:
        rows += _site_rows(prior, site, retriever, metric, sizes=sizes, draws=draws,
                           seed=seed, mined=(mined or {}).get(site.name),
                           old_mined=(old_mined or {}).get(site.name), margin=margin,
                           alpha=alpha)
    return pd.DataFrame(rows)


def _site_rows(prior: Prior, site: SiteEvidence, retriever: str, metric: str, *,
               sizes: Sequence[int], draws: int, seed: int, mined: Evidence | None,
               old_mined: str | None, margin: float, alpha: float) -> list[dict]:
    """``simulate``'s rows of one held-out site."""
    configs = prior.configs(retriever, metric)
    means, inside = truth(site, configs, retriever, metric, margin=margin, alpha=alpha)
    best = float(means.max())
    table = site.table(retriever, metric)[configs]
    rows = []

    def row(rule: str, n: int, draw: int, pick: str, decided: str) -> dict:
        return {"site": site.name, "rule": rule, "questions": n, "draw": draw, "pick": pick,
                "decided_by": decided, "inside": pick in inside,
                "regret": best - float(means[pick])}

    def new(evidence: Evidence | None, draw: int) -> Outcome:
        return apply_rule(configs, evidence=evidence, prior=prior, retriever=retriever,
                          metric=metric, cost=site.index_tokens, margin=margin, alpha=alpha,
                          leave_out=site.name, seed=draw)

    outcome = new(mined, 0)
    rows.append(row(NEW, 0, 0, outcome.pick, outcome.decided_by))
    if old_mined is not None:
        rows.append(row(OLD, 0, 0, old_mined, MINED_QUESTIONS))
    for n in sizes:
        for draw, picked in enumerate(_draws(site, n, draws, seed)):
            values = table.iloc[picked]
            outcome = new(Evidence(values, [site.pages[i] for i in picked]), draw)
            rows.append(row(NEW, n, draw, outcome.pick, outcome.decided_by))
            rows.append(row(OLD, n, draw, old_pick(values, site.bundle_tokens, margin=margin,
                                                   alpha=alpha), ""))
    return rows


def calibration_table(simulated: pd.DataFrame, *, within: float = WITHIN) -> pd.DataFrame:
    """Per rule and number of questions, over every site's draws: the share inside, the
    share within ``within`` of the best, the mean regret, and how many draws and sites."""
    frame = simulated.assign(within=simulated["regret"] <= within + 1e-12)
    grouped = frame.groupby(["rule", "questions"], sort=True)
    return grouped.agg(draws=("draw", "size"), sites=("site", "nunique"),
                       inside=("inside", "mean"), within=("within", "mean"),
                       mean_regret=("regret", "mean"), worst_regret=("regret", "max")
                       ).reset_index()


def validation_table(simulated: pd.DataFrame) -> pd.DataFrame:
    """Per site, rule and number of questions: share of picks inside and mean regret (the
    leave-one-site-out validation docs/statistics.md shows)."""
    grouped = simulated.groupby(["site", "rule", "questions"], sort=True)
    return grouped.agg(draws=("draw", "size"), inside=("inside", "mean"),
                       mean_regret=("regret", "mean")).reset_index()
