"""The verdict's rule, in three steps, on plain tables so that the report and the simulation
that calibrates it apply the very same function:

1. *Your evidence*: the config with the best mean on your questions, and every config its
   cluster-aware paired test (Holm over the comparisons with it) cannot set below it by at
   least the tie margin: the configs your evidence cannot separate.
2. *The study*: among those, the config the study's pooled effect ranks best at the same
   retriever and metric. Its margin over the next may be small: the page states it with its
   intervals, and the simulation (``choice.calibration``) measures how often such picks are
   right on a site the study has not seen. (Handing every config the pooled evidence cannot
   separate to cost instead was measured there too: cost then picks the cheapest of a wide
   set, the largest chunks, which answer fewer questions.)
3. *Cost*: among configs the study ranks equal, or when it knows none of them, the config
   whose index costs least (``index_tokens``: what embedding and storing it costs; at an
   equal reader budget the reader pays the same).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..scoring import families, stats
from .prior import Prior

YOUR_QUESTIONS = "your questions"
MINED_QUESTIONS = "mined questions"
STUDY = "the study"
COST = "cost"
DECIDERS = (YOUR_QUESTIONS, MINED_QUESTIONS, STUDY, COST)
"""What can decide a pick (``decided_by``)."""
TIE_MARGIN = 0.05
"""The smallest difference in the primary metric that counts as a win: below it two configs
are tied however many questions show it."""
ALPHA = 0.05
EQUAL = 1e-9
"""Pooled effects closer than this are the study ranking two configs equal."""


@dataclass(frozen=True)
class Evidence:
    """The user's questions as the rule reads them: questions x configs values of the
    primary metric, the page each question asks about, and what they are (written or mined)."""

    values: pd.DataFrame
    pages: Sequence[str]
    name: str = YOUR_QUESTIONS

    def __len__(self) -> int:
        return len(self.values)


@dataclass
class Outcome:
    """What the rule picked and why."""

    pick: str
    decided_by: str
    inseparable: list[str]
    """The configs the user's evidence cannot separate from its best (every config when
    there is no evidence), best mean first."""
    evidence_best: str | None = None
    means: dict[str, float] = field(default_factory=dict)
    """Each config's mean on the evidence."""
    tests: dict[str, stats.PairedResult] = field(default_factory=dict)
    """The evidence's best against each other config (A = the best)."""
    p_holm: dict[str, float] = field(default_factory=dict)
    study_order: list[tuple[str, float]] = field(default_factory=list)
    """The inseparable configs the study knows, by pooled effect over its reference."""
    study_tied: list[str] = field(default_factory=list)
    """Of those, the ones the study ranks equal to its best (the same pooled effect)."""
    unknown: list[str] = field(default_factory=list)
    """Inseparable configs the study has no data on."""
    cost: dict[str, float] = field(default_factory=dict)


def _by_cost(configs: Sequence[str], cost: Mapping[str, float]) -> str:
    return min(configs, key=lambda c: (cost.get(c, np.inf), c))


def evidence_step(evidence: Evidence, configs: Sequence[str], cost: Mapping[str, float], *,
                  margin: float, alpha: float, seed: int = 0) -> Outcome:
    """Step 1 alone: the best config on the evidence and the configs it cannot separate."""
    values = evidence.values[list(configs)]
    means = values.mean()
    best = min(configs, key=lambda c: (-means[c], cost.get(c, np.inf), c))
    others = [c for c in configs if c != best]
    outcome = Outcome(best, evidence.name, [best], evidence_best=best,
                      means={c: float(means[c]) for c in configs})
    if not others:
        return outcome
    clusters = pd.Series(np.asarray(evidence.pages, dtype=object).astype(str),
                         index=values.index)
    levels = tuple(alpha / np.arange(len(others), 0, -1))
    results = stats.paired_results(values, [(best, c) for c in others], n_resamples=
                                   families.permutations_for(len(others), alpha=alpha),
                                   seed=seed, confidence=1 - alpha, levels=levels,
                                   clusters=clusters)
    adjusted = families.holm([r.p_value for r in results])
    outcome.tests = dict(zip(others, results, strict=True))
    outcome.p_holm = {c: float(p) for c, p in zip(others, adjusted, strict=True)}
    kept = [c for c in others if not (outcome.p_holm[c] < alpha
                                      and means[best] - means[c] >= margin - 1e-12)]
    outcome.inseparable = [best, *sorted(kept, key=lambda c: (-means[c], c))]
    return outcome


def apply_rule(configs: Sequence[str], *, evidence: Evidence | None, prior: Prior | None,
               retriever: str, metric: str, cost: Mapping[str, float],
               margin: float = TIE_MARGIN, alpha: float = ALPHA, leave_out: str = "",
               seed: int = 0, study_names: Mapping[str, str] | None = None) -> Outcome:
    """The three steps over ``configs`` (those meeting the constraints); ``leave_out``: a
    study site the prior must not use (the simulation's held-out site); ``study_names``: the
    name the study gives each config, where it is not the config's own."""
    configs = list(configs)
    if evidence is not None and len(evidence):
        outcome = evidence_step(evidence, configs, cost, margin=margin, alpha=alpha,
                                seed=seed)
    else:
        outcome = Outcome(_by_cost(configs, cost), COST, sorted(configs))
    outcome.cost = {c: float(cost.get(c, np.nan)) for c in configs}
    if len(outcome.inseparable) == 1:
        return outcome
    tied = outcome.inseparable
    if prior is not None:
        names = dict(study_names or {})
        own = {names.get(c, c): c for c in tied}
        known = [c for c in tied if prior.knows(names.get(c, c), retriever, metric)]
        outcome.unknown = [c for c in tied if c not in known]
        if known:
            ranked = prior.ranking([names.get(c, c) for c in known], retriever, metric,
                                   leave_out=leave_out)
            outcome.study_order = [(own[name], effect) for name, effect in ranked]
            top, best = ranked[0]
            outcome.study_tied = [own[name] for name, effect in ranked
                                  if abs(effect - best) <= EQUAL]
            if len(outcome.study_tied) == 1:
                outcome.pick, outcome.decided_by = own[top], STUDY
                return outcome
            tied = outcome.study_tied
    outcome.pick, outcome.decided_by = _by_cost(tied, cost), COST
    return outcome
