"""The study as the verdict reads it: every site's written evidence, from which any two
configs' pooled effect is computed (each site's paired effect, then random effects), the
configs ranked by their pooled effect against the study's reference, and the same with one
site left out (what the study would say of a site it has not seen)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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
        found: set[str] | None = None
        for site in self.sites:
            columns = set(site.values.get((retriever, metric), {}))
            found = columns if found is None else found & columns
        return sorted(found or ())

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
            pages = np.asarray(site.pages, dtype=object)[keep]
            found.append((site.name, *site_effect(diff[keep], pages)))
        return found

    def pooled(self, a: str, b: str, retriever: str, metric: str, *,
               leave_out: str = "") -> Pooled:
        """A's pooled effect over B across the sites (``leave_out`` left out)."""
        return _pooled(self, a, b, retriever, metric, leave_out)

    def ranking(self, configs: Iterable[str], retriever: str, metric: str, *,
                leave_out: str = "") -> list[tuple[str, float]]:
        """The known ones of ``configs`` with their pooled effect over the reference, best
        first (ties by name)."""
        known = set(self.configs(retriever, metric))
        scored = [(c, self.pooled(c, self.reference, retriever, metric,
                                  leave_out=leave_out).effect if c != self.reference else 0.0)
                  for c in configs if c in known]
        return sorted(scored, key=lambda item: (-item[1], item[0]))


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
    config's pooled mean score: a row each."""
    base = against or prior.reference
    rows = []
    for config in prior.configs(retriever, metric):
        row: dict = {"retriever": retriever, "metric": metric, "config": config,
                     "against": base}
        if config == base:
            row.update(k=len(prior.sites), effect=0.0)
        else:
            row.update(prior.pooled(config, base, retriever, metric).as_dict())
        row["mean"] = float(np.mean([np.nanmean(s.table(retriever, metric)[config])
                                     for s in prior.sites]))
        rows.append(row)
    return rows


def separated(result: Pooled, margin: float) -> bool:
    """Whether a pooled effect of A over B says A is better: its interval excludes 0 and the
    effect is at least the tie margin."""
    return result.ci_low > 0 and result.effect >= margin


def study_ties(prior: Prior, best: str, others: Sequence[str], retriever: str, metric: str,
               margin: float, *, leave_out: str = "") -> list[str]:
    """Of ``others``, those the pooled evidence cannot set below ``best`` (``separated``)."""
    return [c for c in others if c == best or not separated(
        prior.pooled(best, c, retriever, metric, leave_out=leave_out), margin)]
