"""How stable a choice is: the rule applied to repeated seeded tuning / held-out splits of the
queries (how often each config is chosen, its held-out scores across splits), the configs the
evidence cannot separate from the most chosen one, and the smallest difference the queries can
detect."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats

from ...util.values import plain
from ..queries.queries import Query, split_queries
from ..scoring import families
from .candidates import label, primary_values, rank
from .rules import ChoiceRule, metric_phrase

POWER = 0.8
"""Power at which the detectable difference is stated."""


@dataclass
class Stability:
    """The rule over ``splits`` seeded splits of ``queries`` queries."""

    splits: int
    queries: int
    tuning_queries: int
    """Queries in each tuning half."""
    table: pd.DataFrame
    """Per config: ``config``, ``chosen`` (splits), ``share``, and its held-out mean across
    splits: ``held_out_median``, ``held_out_low`` and ``held_out_high`` (the 10th and 90th
    percentiles)."""
    verdict: str
    """``strategy/size`` of the config chosen most often."""
    verdict_id: str
    share: float
    """Share of the splits that chose it."""
    inseparable: list[str] = field(default_factory=list)
    """Configs the paired tests on every query cannot tell from the verdict (Holm over the
    comparisons with it)."""
    detectable: float | None = None
    """Smallest difference in the primary metric detectable at 80% power (two-sided, at the
    rule's alpha) between two configs on every query; None with one config."""
    detectable_tuning: float | None = None
    """The same on one tuning half."""
    margin_queries: float = 0.0
    """The rule's tie margin as queries of a tuning half."""

    def text(self, rule: ChoiceRule) -> str:
        """The verdict over splits in words."""
        cannot = (", ".join(self.inseparable) if self.inseparable else "none")
        detect = ("" if self.detectable is None else
                  f" The smallest difference in {metric_phrase(rule.primary_metric)} these "
                  "queries can detect "
                  f"at {POWER:.0%} power is {self.detectable:.3f} on all {self.queries} "
                  f"({self.detectable_tuning:.3f} on a tuning half of {self.tuning_queries}).")
        return (f"Over {self.splits} seeded splits of the {self.queries} queries into tuning "
                f"and held-out halves, the rule chose {self.verdict} in "
                f"{round(self.share * self.splits)} ({self.share:.0%}). Configs the evidence "
                f"cannot separate from it (paired tests on all {self.queries} queries, Holm): "
                f"{cannot}. Tie margin {rule.tie_margin:g} = {self.margin_queries:.1f} queries "
                f"of a tuning half.{detect}")

    def as_dict(self, rule: ChoiceRule) -> dict[str, Any]:
        rows = [{k: plain(v, digits=4) for k, v in row.items()}
                for row in self.table.to_dict("records")]
        return {"splits": self.splits, "queries": self.queries, "verdict": self.verdict,
                "share": plain(self.share, digits=4), "inseparable": self.inseparable,
                "detectable_difference": _rounded(self.detectable),
                "detectable_difference_tuning_half": _rounded(self.detectable_tuning),
                "tie_margin_queries": plain(float(self.margin_queries), digits=2),
                "per_config": rows,
                "text": self.text(rule)}


def _rounded(value: float | None) -> float | None:
    return None if value is None else plain(float(value), digits=4)


def stability(run, rule: ChoiceRule, table: pd.DataFrame, *, splits: int = 20,
              seed: int = 0) -> Stability | None:
    """The rule (``candidates.rank``) applied to ``splits`` seeded splits of the queries the
    rule uses (stratified by kind, as the sweep splits), each config scored on the tuning half
    and reported on the held-out half; None when fewer than 4 queries or no config is
    eligible. ``table`` is the run's ``candidates`` (constraints and identical configs as
    there)."""
    values = primary_values(run, rule, "all")
    eligible = table[table["passes"] & (table["same_as"] == "")].drop(
        columns=["rank", "tied", "gap_to_best", "p_vs_best"], errors="ignore")
    values = values[[c for c in eligible["config_id"] if c in values.columns]].dropna()
    if values.shape[0] < 4 or values.shape[1] == 0:
        return None
    kinds = _kinds(run, values.index)
    chosen, held = [], []
    for s in range(splits):
        split = split_queries([Query(q, q, (), kind=kinds[q]) for q in values.index],
                              seed=seed + s, minimum=2)
        tuning = [q for q in values.index if split.sets[q] == "tuning"]
        held_ids = [q for q in values.index if split.sets[q] != "tuning"]
        scored = eligible.assign(**{rule.primary_metric: eligible["config_id"].map(
            values.loc[tuning].mean())})
        ranked = rank(scored, rule, values.loc[tuning])
        chosen.append(ranked.iloc[0]["config_id"])
        held.append(values.loc[held_ids].mean())
    return _summary(values, eligible, rule, chosen, pd.DataFrame(held), len(tuning))


def _kinds(run, ids) -> dict[str, str]:
    rows = run.per_query.drop_duplicates("query_id").set_index("query_id")["query_kind"]
    return {q: str(rows.get(q, "")) for q in ids}


def _summary(values: pd.DataFrame, eligible: pd.DataFrame, rule: ChoiceRule,
             chosen: list[str], held: pd.DataFrame, tuning: int) -> Stability:
    counts = pd.Series(chosen).value_counts()
    names = dict(zip(eligible["config_id"], eligible.apply(label, axis=1), strict=True))
    order = sorted(values.columns, key=lambda c: (-counts.get(c, 0), -held[c].median(), c))
    frame = pd.DataFrame({
        "config": [names[c] for c in order], "config_id": order,
        "chosen": [int(counts.get(c, 0)) for c in order],
        "share": [counts.get(c, 0) / len(chosen) for c in order],
        "held_out_median": [held[c].median() for c in order],
        "held_out_low": [held[c].quantile(0.1) for c in order],
        "held_out_high": [held[c].quantile(0.9) for c in order]})
    verdict = order[0]
    detectable = _detectable(values, verdict, rule.alpha)
    return Stability(
        splits=len(chosen), queries=len(values), tuning_queries=tuning, table=frame,
        verdict=names[verdict], verdict_id=verdict, share=counts.get(verdict, 0) / len(chosen),
        inseparable=[names[c] for c in _inseparable(values, verdict, rule.alpha)],
        detectable=detectable, margin_queries=rule.tie_margin * tuning,
        detectable_tuning=None if detectable is None else detectable * np.sqrt(
            len(values) / tuning))


def _inseparable(values: pd.DataFrame, verdict: str, alpha: float) -> list[str]:
    """The configs whose paired test against ``verdict`` on every query, Holm-corrected over
    those tests, does not reject at ``alpha``."""
    others = [c for c in values.columns if c != verdict]
    if not others:
        return []
    tidy = values.rename_axis("query_id").reset_index().melt(
        id_vars="query_id", var_name="config_id", value_name="value").assign(metric="primary")
    table = families.compare_pairs(tidy, "primary", [(verdict, c) for c in others],
                                   alpha=alpha)
    return [c for c, p in zip(others, table["p_holm"], strict=True) if not p < alpha]


def detectable_difference(sd: float, n: int, *, alpha: float = 0.05,
                          power: float = POWER) -> float:
    """The mean paired difference a two-sided test at ``alpha`` detects with ``power`` over
    ``n`` queries whose differences have standard deviation ``sd`` (normal approximation:
    (z_(1-alpha/2) + z_power) sd / sqrt(n))."""
    z = scipy_stats.norm.ppf(1 - alpha / 2) + scipy_stats.norm.ppf(power)
    return float(z * sd / np.sqrt(n))


def _detectable(values: pd.DataFrame, verdict: str, alpha: float) -> float | None:
    """``detectable_difference`` on every query, with the median standard deviation of the
    verdict's paired differences against each other config (None with one config)."""
    others = [c for c in values.columns if c != verdict]
    if not others:
        return None
    spread = [float(np.std(values[verdict] - values[c], ddof=1)) for c in others]
    return detectable_difference(float(np.median(spread)), len(values), alpha=alpha)
