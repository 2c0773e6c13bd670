"""``chunkproof study``: the same grid on every site of a study folder (its written questions,
and optionally its mined ones), each site's per-question evidence, the random-effects pooled
tables, the rule's calibration by simulation, forest plots, and the results file the verdict
reads as its prior."""

from __future__ import annotations

import os
import subprocess
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import ConfigError, GridWarning
from .evaluation.choice.calibration import (
    calibration_table,
    old_pick,
    simulate,
    validation_table,
)
from .evaluation.choice.candidates import bundle_tokens
from .evaluation.choice.mode_candidates import by_candidate
from .evaluation.queries.kinds import FREE_KINDS
from .evaluation.run.defaults import (
    DEFAULT_BUDGETS,
    DEFAULT_K,
    DEFAULT_RETRIEVERS,
    DEFAULT_STRATEGIES,
    STUDY_SIZES,
)
from .evaluation.run.engine import Engine
from .evaluation.run.runs import SweepParams, versions
from .evaluation.run.sweep import run_sweep
from .evaluation.study.evidence import METRICS, SiteEvidence, site_evidence
from .evaluation.study.kinds import (
    AGREEMENT,
    CEILING_SITE_COLUMNS,
    KIND_COLUMNS,
    SITE_COLUMNS,
    evidence_by_site,
    kind_tables,
    mined_evidence,
    site_ceiling_row,
    site_kind_rows,
)
from .evaluation.study.prior import REFERENCE, Prior, pooled_table, separated
from .evaluation.study.results import StudyResults
from .evaluation.study.rule import TIE_MARGIN
from .evaluation.study.sites import Site, find_sites
from .util.atomic import write_text_atomic
from .util.sheets import csv_text

PRIMARY = ("bm25", "answer_hit@b1024")
"""The retriever and metric the validation table and the old-rule comparison are made at."""


@dataclass
class StudyPlan:
    """What ``chunkproof study`` runs."""

    folder: str
    out: str
    sites: tuple[str, ...] = ()
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    sizes: tuple[int, ...] = STUDY_SIZES
    retrievers: tuple[str, ...] = DEFAULT_RETRIEVERS
    budgets: tuple[int, ...] = DEFAULT_BUDGETS
    draws: int = 60
    mined: bool = False
    """Also sweep each site's mined queries and judge every mined kind against its written
    questions (the ``kinds`` tables)."""
    engine: Engine = field(default_factory=Engine)


WRITTEN, MINED = "written", "mined"


def site_params(plan: StudyPlan, site: Site, queries: str = WRITTEN) -> SweepParams:
    """The site's sweep of its written questions, or of the queries mined from its pages."""
    return SweepParams(corpus=str(site.docs),
                       queries=str(site.queries) if queries == WRITTEN else "",
                       strategies=plan.strategies, sizes=plan.sizes,
                       retrievers=plan.retrievers, budgets=plan.budgets, contrasts=(),
                       k=DEFAULT_K)


def sweep_site(plan: StudyPlan, site: Site, queries: str = WRITTEN):
    """The site's sweep into ``out/sites/<site>/<queries>`` (an identical finished run there
    is reused)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridWarning)
        return run_sweep(site_params(plan, site, queries),
                         Path(plan.out) / "sites" / site.name / queries,
                         engine=plan.engine, progress=False, overwrite=True)


def run_site(plan: StudyPlan, site: Site) -> tuple[SiteEvidence, Any]:
    """The site's written questions swept and read as evidence (with the run)."""
    result = sweep_site(plan, site)
    bundle = bundle_tokens(by_candidate(result), "bm25") if "bm25" in plan.retrievers else {}
    return site_evidence(site.name, result, bundle_tokens=dict(bundle)), result


def data_commit(folder: str | os.PathLike) -> str:
    """The last commit that changed the study folder ("" outside a git checkout)."""
    try:
        done = subprocess.run(["git", "log", "-1", "--format=%H", "--", "."], cwd=folder,
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def study_meta(plan: StudyPlan, sites: Sequence[Site], evidence: Sequence[SiteEvidence]
               ) -> dict[str, Any]:
    found = versions()
    return {"date": max(str(s.source.get("vendored", "")) for s in sites),
            "data_commit": data_commit(plan.folder), "sites": [s.name for s in sites],
            "questions": sum(len(e.questions) for e in evidence),
            "pages": sum(len(set(e.pages)) for e in evidence),
            "grid": {"strategies": list(plan.strategies), "sizes": list(plan.sizes),
                     "retrievers": list(plan.retrievers), "budgets": list(plan.budgets),
                     "unit": "chars"},
            "tie_margin": TIE_MARGIN, "draws": plan.draws,
            "versions": {k: v for k, v in found.items() if k != "chunkproof_code"}}


def versus_best(prior: Prior, retriever: str, metric: str) -> list[dict[str, Any]]:
    """Each config against the pooled best (the top of the ranking): the pooled difference
    and whether the pooled evidence sets it below the best."""
    configs = prior.configs(retriever, metric)
    best = prior.ranking(configs, retriever, metric)[0][0]
    rows = []
    for config in configs:
        row: dict[str, Any] = {"retriever": retriever, "metric": metric, "config": config,
                               "best": best}
        if config == best:
            row.update(effect=0.0, separated=False)
        else:
            pooled = prior.pooled(best, config, retriever, metric)
            row.update(pooled.as_dict(), separated=separated(pooled, TIE_MARGIN))
        rows.append(row)
    return rows


def site_effect_rows(prior: Prior, retriever: str, metric: str) -> list[dict[str, Any]]:
    rows = []
    for config in prior.configs(retriever, metric):
        if config == prior.reference:
            continue
        for site, effect, se in prior.site_effects(config, prior.reference, retriever, metric):
            rows.append({"retriever": retriever, "metric": metric, "config": config,
                         "site": site, "effect": effect, "se": se})
    return rows


def old_mined_picks(prior: Prior, mined_runs: dict[str, Any], retriever: str,
                    metric: str) -> dict[str, str]:
    """Each site's pick by the former rule on its mined run: the free kinds it read
    (``FREE_KINDS``), tie-broken by the site's top-k bundle."""
    bundles = {site.name: site.bundle_tokens for site in prior.sites}
    picks = {}
    for name, run in mined_runs.items():
        found = mined_evidence(run, FREE_KINDS, retriever, metric)
        if found is not None:
            picks[name] = old_pick(found.values, bundles.get(name, {}))
    return picks


def calibrate(prior: Prior, plan: StudyPlan, mined_runs: dict[str, Any] | None = None,
              kind_sites: list[dict] | None = None) -> tuple[list[dict], list[dict]]:
    """The calibration table at every retriever and metric, and the leave-one-site-out
    validation at ``PRIMARY``; with ``mined_runs``, each held-out site's "mined questions
    only" row reads its queries of the kinds admitted without it (``kind_sites``)."""
    calibration, validation = [], []
    for retriever in plan.retrievers:
        for metric in METRICS:
            mined = (evidence_by_site(mined_runs, kind_sites or [], retriever, metric)
                     if mined_runs else None)
            simulated = simulate(prior, retriever, metric, draws=plan.draws, mined=mined,
                                 old_mined=old_mined_picks(prior, mined_runs or {}, retriever,
                                                           metric))
            table = calibration_table(simulated).assign(retriever=retriever, metric=metric)
            calibration += table.to_dict("records")
            if (retriever, metric) == PRIMARY:
                validation = validation_table(simulated).to_dict("records")
    return calibration, validation


def run_study(plan: StudyPlan, *, progress=print) -> StudyResults:
    """Every site run, pooled and calibrated; the results file written to
    ``out/study.json`` with its tables as CSV beside it."""
    sites = find_sites(plan.folder, plan.sites)
    if plan.mined and AGREEMENT[0] not in plan.retrievers:
        raise ConfigError(f"--mined: the kinds are judged under {AGREEMENT[0]}; add it to "
                          f"--retrievers (got {','.join(plan.retrievers)})")
    evidence, kind_rows, ceiling, mined_runs = [], [], [], {}
    for site in sites:
        progress(f"study: {site.name}: sweeping {len(site_params(plan, site).configs())} "
                 f"configs on its written questions")
        found, written = run_site(plan, site)
        evidence.append(found)
        if plan.mined:
            progress(f"study: {site.name}: sweeping them on its mined queries")
            mined_runs[site.name] = sweep_site(plan, site, MINED)
            kind_rows += site_kind_rows(site.name, written, mined_runs[site.name])
            ceiling.append(site_ceiling_row(site.name, written))
    prior = Prior(tuple(evidence), REFERENCE, study_meta(plan, sites, evidence))
    tables: dict[str, list[dict]] = {"pooled": [], "versus_best": [], "site_effects": []}
    for retriever in plan.retrievers:
        for metric in METRICS:
            tables["pooled"] += pooled_table(prior, retriever, metric)
            tables["versus_best"] += versus_best(prior, retriever, metric)
            tables["site_effects"] += site_effect_rows(prior, retriever, metric)
    if plan.mined:
        tables["kinds"], tables["kind_sites"] = kind_tables(kind_rows)
        tables["ceiling"] = ceiling
    progress("study: calibrating the rule by simulation")
    tables["calibration"], tables["validation"] = calibrate(
        prior, plan, mined_runs, tables.get("kind_sites"))
    results = StudyResults(prior, {s.name: s.source for s in sites}, tables)
    out = Path(plan.out)
    results.write(out / "study.json")
    columns = {"kinds": KIND_COLUMNS, "kind_sites": SITE_COLUMNS,
               "ceiling": CEILING_SITE_COLUMNS}
    for name, rows in tables.items():
        write_text_atomic(out / f"{name}.csv",
                          csv_text(pd.DataFrame(rows, columns=columns.get(name))))
    for name, svg in forest_svgs(results).items():
        write_text_atomic(out / name, svg)
    return results


def forest_name(retriever: str, metric: str) -> str:
    return f"forest_{retriever}_{metric.replace('@', '_')}.svg"


def forest_svgs(results: StudyResults, retrievers: Sequence[str] | None = None
                ) -> dict[str, str]:
    """A forest plot (SVG text, by file name) per retriever and metric of the pooled table:
    each config's effect over the reference on every site, pooled, and on a new site."""
    from .viz.render import to_svg
    from .viz.study_charts import forest

    prior = results.prior
    pooled = pd.DataFrame(results.table("pooled"))
    drawn = {}
    for (retriever, metric), rows in pooled.groupby(["retriever", "metric"], sort=True):
        if retriever not in (retrievers or (retriever,)):
            continue
        rows = rows[rows["config"] != rows["against"]]
        dots = pd.DataFrame(site_effect_rows(prior, str(retriever), str(metric)))
        title = (f"{metric}, {retriever}: effect over {prior.reference} on "
                 f"{len(prior.sites)} sites")
        drawn[forest_name(str(retriever), str(metric))] = to_svg(forest(rows, dots,
                                                                        title=title))
    return drawn
