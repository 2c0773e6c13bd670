"""Which mined query kinds the verdict may decide on: each kind's rank agreement with the written
questions of every study site (``scoring.agreement``: Spearman of the configs' means at
``AGREEMENT``), pooled over the sites by random effects on Fisher's z, and the kind admitted
when the pooled rho is at least ``MIN_RHO``, its interval excludes 0 and its top config lies
among those the written questions cannot separate from their best on most sites, and it
holds out of sample: on every site it would be admitted without, it ranks that site's configs
with rho at least ``MIN_RHO`` (``held_out``). The same rule is applied with each site left
out, so the kinds a held-out site is judged with were admitted without it."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..scoring.agreement import AGREEMENT_METRIC, CEILING_COLUMNS, kind_agreement, written_ceiling
from .evidence import config_key
from .pooling import pool
from .rule import MINED_QUESTIONS, Evidence

AGREEMENT = ("bm25", AGREEMENT_METRIC)
"""The retriever and metric a kind's agreement is measured at."""
MIN_RHO = 0.6
"""The pooled Spearman a kind needs to decide."""
SPEARMAN_VARIANCE = 1.06
"""The variance of Fisher's z of a Spearman rho over n items is 1.06 / (n - 3) (Fieller,
Hartley and Pearson 1957), against 1 / (n - 3) for Pearson's r."""
RHO_CLIP = 0.999
"""A site's rho of +-1 enters the pooling as +-0.999: Fisher's z of 1 is infinite."""
MIN_SITES = 2
"""Sites a kind must be measured on (a defined rho, at least 4 configs) to be pooled."""
SITE_COLUMNS = ["site", "kind", "queries", "scored", "configs", "spearman", "kendall",
                "kind_best", "written_best", "pick_inside", "admitted_without_site"]
CEILING_SITE_COLUMNS = ["site", *CEILING_COLUMNS]
KIND_COLUMNS = ["kind", "rho", "ci_low", "ci_high", "tau2", "i2", "sites", "picks_inside",
                "admitted", "why"]


def site_kind_rows(site: str, written, mined, *, retriever: str = AGREEMENT[0],
                   metric: str = AGREEMENT[1]) -> list[dict]:
    """Every mined kind's agreement on one site (``kind_agreement`` of the site's written run
    and its mined run of the same grid), one row each with the site's name and the configs
    by their study names."""
    table = kind_agreement(written, mined, metric=metric, retriever=retriever)
    stats = written.chunk_stats
    names = {i: config_key(s, z, u, o) for i, s, z, u, o in zip(
        stats["config_id"], stats["strategy"], stats["size"], stats["unit"], stats["options"],
        strict=True)}

    def named(ids: str) -> str:
        return "+".join(names.get(i, i) for i in ids.split("+") if i)

    return [{"site": site, "kind": str(row.query_kind), "queries": int(row.queries),
             "scored": int(row.scored), "configs": int(row.configs),
             "spearman": _float(row.spearman), "kendall": _float(row.kendall),
             "kind_best": named(str(row.kind_best)), "written_best": named(str(row.written_best)),
             "pick_inside": bool(row.pick_inside)} for row in table.itertuples()]


def site_ceiling_row(site: str, written, *, retriever: str = AGREEMENT[0],
                     metric: str = AGREEMENT[1]) -> dict:
    """How well the site's written questions agree with themselves (``written_ceiling``):
    the rho any kind's agreement on the site is read against."""
    return {"site": site, **written_ceiling(written, metric=metric, retriever=retriever)}


def _float(value) -> float:
    return float(value) if value is not None and value == value else math.nan


@dataclass(frozen=True)
class KindVerdict:
    """A kind's agreement pooled over some sites, and whether it is admitted."""

    kind: str
    rho: float
    ci_low: float
    ci_high: float
    tau2: float
    i2: float
    sites: int
    picks_inside: int
    admitted: bool
    why: str

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in KIND_COLUMNS}


def fisher_z(rho: float, configs: int) -> tuple[float, float]:
    """(Fisher's z of a Spearman rho over ``configs`` configs, its standard error)."""
    clipped = float(np.clip(rho, -RHO_CLIP, RHO_CLIP))
    return math.atanh(clipped), math.sqrt(SPEARMAN_VARIANCE / (configs - 3))


def judge(kind: str, rows: Sequence[dict]) -> KindVerdict:
    """The kind's rows of some sites pooled (random effects on Fisher's z, DerSimonian-Laird:
    ``pooling.pool``; back on the rho scale) and the admission rule applied."""
    measured = [r for r in rows if r["spearman"] == r["spearman"] and r["configs"] > 3]
    inside = sum(bool(r["pick_inside"]) for r in rows)
    if len(measured) < MIN_SITES:
        why = ("no query of it has an answer span to score" if not any(r["scored"]
                                                                        for r in rows)
               else f"a rank agreement on {len(measured)} site(s): too few to pool")
        return KindVerdict(kind, math.nan, math.nan, math.nan, math.nan, math.nan,
                           len(measured), inside, False, why)
    z, se = zip(*(fisher_z(r["spearman"], r["configs"]) for r in measured), strict=True)
    pooled = pool(z, se)
    rho, low, high = (math.tanh(v) for v in (pooled.effect, pooled.ci_low, pooled.ci_high))
    failed = []
    if rho < MIN_RHO:
        failed.append(f"pooled rho {rho:.2f} < {MIN_RHO}")
    if low <= 0:
        failed.append("its interval reaches 0")
    if inside * 2 <= len(rows):
        failed.append(f"top config inside the written set on {inside} of {len(rows)} sites")
    why = "; ".join(failed) or (f"pooled rho {rho:.2f} [{low:.2f}, {high:.2f}], top config "
                                f"inside the written set on {inside} of {len(rows)} sites")
    return KindVerdict(kind, rho, low, high, pooled.tau2, pooled.i2, len(measured), inside,
                       not failed, why)


def pooled_all(rows: Sequence[dict], *, leave_out: str = "") -> dict[str, KindVerdict]:
    """Every kind of ``rows`` judged by the pooled rule on its sites (``leave_out``: that
    site left out)."""
    kept = [r for r in rows if r["site"] != leave_out]
    kinds = sorted({r["kind"] for r in rows})
    return {k: judge(k, [r for r in kept if r["kind"] == k]) for k in kinds}


def judge_all(rows: Sequence[dict], *, leave_out: str = "") -> dict[str, KindVerdict]:
    """Every kind of ``rows`` judged on its sites (``leave_out``: that site left out): the
    pooled rule, then ``held_out``."""
    kept = [r for r in rows if r["site"] != leave_out]
    return {k: held_out(v, kept) for k, v in pooled_all(rows, leave_out=leave_out).items()}


def held_out(verdict: KindVerdict, rows: Sequence[dict]) -> KindVerdict:
    """``verdict`` kept only if the kind holds on sites the pooling did not see: on every
    site of ``rows`` whose absence would still admit it, its rho there is at least
    ``MIN_RHO`` (a kind that ranks a new site's configs as written questions do only now and
    then must not decide)."""
    if not verdict.admitted:
        return verdict
    checked = [r for r in rows if r["kind"] == verdict.kind
               and pooled_all(rows, leave_out=r["site"])[verdict.kind].admitted]
    missed = [r["site"] for r in checked if not r["spearman"] >= MIN_RHO]
    if not missed:
        return verdict
    why = (f"{verdict.why}; but held out it ranks configs with rho >= {MIN_RHO} on "
           f"{len(checked) - len(missed)} of {len(checked)} sites (not on "
           f"{', '.join(sorted(missed))})")
    return KindVerdict(**{**verdict.as_dict(), "admitted": False, "why": why})


def kind_tables(rows: Sequence[dict]) -> tuple[list[dict], list[dict]]:
    """(the ``kinds`` table: each kind pooled over every site; the ``kind_sites`` table: each
    kind on each site, with whether it is admitted with that site left out)."""
    overall = [v.as_dict() for v in judge_all(rows).values()]
    per_site = []
    for site in sorted({r["site"] for r in rows}):
        without = judge_all(rows, leave_out=site)
        per_site += [{**r, "admitted_without_site": without[r["kind"]].admitted}
                     for r in rows if r["site"] == site]
    return overall, [{c: r[c] for c in SITE_COLUMNS} for r in per_site]


def admitted_without(per_site: Iterable[dict]) -> dict[str, tuple[str, ...]]:
    """Site -> the kinds admitted with that site left out (from the ``kind_sites`` rows)."""
    found: dict[str, list[str]] = {}
    for row in per_site:
        kinds = found.setdefault(row["site"], [])
        if row["admitted_without_site"]:
            kinds.append(row["kind"])
    return {site: tuple(sorted(kinds)) for site, kinds in found.items()}


def mined_evidence(run, kinds: Sequence[str], retriever: str, metric: str) -> Evidence | None:
    """The mined run's queries of ``kinds`` as the rule reads them (questions x the study's
    config names, plain retrieval, queries scored on every config), each with its page; None
    when no query of those kinds is scored."""
    rows = run.per_query
    rows = rows[(rows["retriever"] == retriever) & (rows["metric"] == metric)
                & (rows["mode"] == "plain") & rows["query_kind"].isin(list(kinds))]
    if rows.empty:
        return None
    named = rows.assign(config=[config_key(s, z, u, o) for s, z, u, o in zip(
        rows["strategy"], rows["size"], rows["unit"], rows["options"], strict=True)])
    values = named.pivot(index="query_id", columns="config", values="value").dropna()
    if values.empty:
        return None
    pages = named.drop_duplicates("query_id").set_index("query_id")["source"]
    return Evidence(values[sorted(values.columns)], [str(p) for p in pages[values.index]],
                    MINED_QUESTIONS)


def evidence_by_site(runs: Mapping[str, object], per_site: Iterable[dict], retriever: str,
                     metric: str) -> dict[str, Evidence | None]:
    """Each site's mined evidence from the kinds admitted without it (what the calibration's
    "mined questions only" row reads)."""
    kinds = admitted_without(per_site)
    return {site: mined_evidence(run, kinds.get(site, ()), retriever, metric)
            for site, run in runs.items()}

