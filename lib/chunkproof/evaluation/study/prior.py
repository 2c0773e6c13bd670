"""The study as the verdict reads it: every site's written evidence, from which any two
configs' pooled effect is computed (each site's paired effect, then random effects), the
configs ranked by their pooled effect against the study's reference, and the same with one
site left out (what the study would say of a site it has not seen)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ...errors import StudyError
from .evidence import SiteEvidence
from .pooling import Pooled, pool, site_effect

REFERENCE = "rct/600"
"""The config every other is ranked against: LangChain's recursive splitter at 600 chars,
what a pipeline starts from."""


@dataclass(frozen=True, eq=False)
class Prior:
    """The study's sites, the configs studied, and what it is pooled against."""

    sites: tuple[SiteEvidence, ...]
    reference: str = REFERENCE
    meta: dict = field(default_factory=dict)
    """What was studied and when: date, data commit, grid, versions (the results file's)."""

    def configs(self, retriever: str, metric: str) -> list[str]:
        """The configs every site has values of, for ``retriever`` and ``metric``."""
        return list(_configs(self, retriever, metric))

    def knows(self, config: str, retriever: str, metric: str) -> bool:
        return config in self.configs(retriever, metric)

    def site_names(self) -> list[str]:
        return [s.name for s in self.sites]

    def questions(self, leave_out: str = "") -> int:
        return sum(len(s.questions) for s in self.sites if s.name != leave_out)

    def site_effects(self, a: str, b: str, retriever: str, metric: str, *,
                     leave_out: str = "") -> list[tuple[str, float, float]]:
        """(site, effect of A over B, its standard error) for every site but ``leave_out``."""
        found = []
        for site in self.sites:
            if site.name == leave_out:
                continue
            table = site.table(retriever, metric)
            if a not in table or b not in table:
                raise StudyError(f"the study has no {metric} of {a} or {b} on {site.name}")
            diff = (table[a] - table[b]).to_numpy()
            keep = ~np.isnan(diff)
            found.append((site.name, *site_effect(diff[keep], site.page_codes[keep])))
        return found

    def pooled(self, a: str, b: str, retriever: str, metric: str, *,
               leave_out: str = "") -> Pooled:
        """A's pooled effect over B across the sites (``leave_out`` left out)."""
        return _pooled(self, a, b, retriever, metric, leave_out)

    def pooled_mean(self, config: str, retriever: str, metric: str, *,
                    leave_out: str = "") -> Pooled:
        """The config's score pooled across the sites (``leave_out`` left out): each site's
        mean with its cluster-robust standard error, pooled by random effects. Sites differ
        in how hard their questions are, so tau^2 is large and the sites weigh nearly alike:
        what a new site is expected to score."""
        return _pooled_mean(self, config, retriever, metric, leave_out)

    def ranking(self, configs: Iterable[str], retriever: str, metric: str, *,
                leave_out: str = "") -> list[tuple[str, float]]:
        """The known ones of ``configs`` with their pooled mean score, best first (ties by
        name): the study's expectation for a site it has not seen."""
        known = set(self.configs(retriever, metric))
        scored = [(c, self.pooled_mean(c, retriever, metric, leave_out=leave_out).effect)
                  for c in configs if c in known]
        return sorted(scored, key=lambda item: (-item[1], item[0]))


@lru_cache(maxsize=256)
def _configs(prior: Prior, retriever: str, metric: str) -> tuple[str, ...]:
    found: set[str] | None = None
    for site in prior.sites:
        table = site.values.get((retriever, metric))
        columns = set() if table is None else {str(c) for c in table.columns.tolist()}
        found = columns if found is None else found & columns
    return tuple(sorted(found or ()))


@lru_cache(maxsize=65536)
def _pooled_mean(prior: Prior, config: str, retriever: str, metric: str,
                 leave_out: str) -> Pooled:
    found = []
    for site in prior.sites:
        if site.name == leave_out:
            continue
        values = site.table(retriever, metric)[config].to_numpy()
        keep = ~np.isnan(values)
        found.append(site_effect(values[keep], site.page_codes[keep]))
    if not found:
        raise StudyError("the study has no site left to pool")
    return pool([m for m, _ in found], [s for _, s in found])


@lru_cache(maxsize=65536)
def _pooled(prior: Prior, a: str, b: str, retriever: str, metric: str,
            leave_out: str) -> Pooled:
    effects = prior.site_effects(a, b, retriever, metric, leave_out=leave_out)
    if not effects:
        raise StudyError("the study has no site left to pool")
    return pool([e for _, e, _ in effects], [s for _, _, s in effects])


def pooled_table(prior: Prior, retriever: str, metric: str,
                 against: str | None = None) -> list[dict]:
    """Every config's pooled effect over ``against`` (default: the reference), with each
    config's pooled mean score, its 95% interval and its prediction interval for a new
    site: a row each."""
    base = against or prior.reference
    rows = []
    for config in prior.configs(retriever, metric):
        row: dict = {"retriever": retriever, "metric": metric, "config": config,
                     "against": base}
        if config == base:
            row.update(k=len(prior.sites), effect=0.0)
        else:
            row.update(prior.pooled(config, base, retriever, metric).as_dict())
        score = prior.pooled_mean(config, retriever, metric)
        row.update(mean=score.effect, mean_ci_low=score.ci_low, mean_ci_high=score.ci_high,
                   mean_pi_low=score.pi_low, mean_pi_high=score.pi_high)
        rows.append(row)
    return rows


def separated(result: Pooled, margin: float) -> bool:
    """Whether a pooled effect of A over B says A is better: its interval excludes 0 and the
    effect is at least the tie margin."""
    return result.ci_low > 0 and result.effect >= margin
