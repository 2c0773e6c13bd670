"""Whether a mined query kind ranks configs as written questions do, on one site: the same grid
run on the site's written questions and on its mined queries, each kind's config means held
against the written questions' (Spearman and Kendall), and whether the kind's top config is
the written questions' top or one the written questions cannot separate from it (each config
against the written best, a paired test with the questions grouped by the page they ask
about, Holm over the configs)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..queries.queries import Query
from . import families
from .kind_figures import distinct_configs
from .stats import ALPHA

AGREEMENT_METRIC = "answer_hit@b1024"
"""What configs are ranked on: the answer found within the middle reader budget (the default
primary metric of the default budgets)."""
PAGE = "source"
"""The per-query column naming the page a question asks about (its first source)."""
COLUMNS = ["query_kind", "queries", "scored", "configs", "spearman", "spearman_p", "kendall",
           "kendall_p", "kind_best", "written_best", "written_set", "pick_inside"]
MEANINGS = {
    "queries": "mined queries of the kind",
    "scored": "those the metric is defined for on every config (an answer span)",
    "configs": "distinct configs both runs scored",
    "spearman": "rank correlation of the configs' means: the kind's against the written "
                "questions' (NaN when either is constant)",
    "kendall": "Kendall's tau-b of the same means",
    "kind_best": "the config(s) with the kind's best mean (tied ones joined by '+')",
    "written_best": "the config with the written questions' best mean",
    "written_set": "configs the written questions cannot separate from their best "
                   "(paired test, questions grouped by page, Holm over the configs)",
    "pick_inside": "every config of kind_best lies in written_set",
}


def with_pages(per_query: pd.DataFrame, queries: Sequence[Query] = ()) -> pd.DataFrame:
    """``per_query`` with the page each question asks about in ``PAGE``: as the run recorded
    it, else each query's first source (from ``queries``); unchanged when neither is known."""
    if PAGE in per_query.columns or not queries:
        return per_query
    first = {q.id: q.sources[0] for q in queries}
    return per_query.assign(**{PAGE: per_query["query_id"].map(first)})


def scores(run, metric: str, retriever: str, configs: Sequence[str]) -> pd.DataFrame:
    """The run's rows of ``metric`` under ``retriever`` (plain retrieval) for ``configs``,
    NaN values left out."""
    rows = run.per_query
    keep = ((rows["retriever"] == retriever) & (rows["metric"] == metric)
            & rows["config_id"].isin(configs))
    if "mode" in rows.columns:
        keep &= rows["mode"] == "plain"
    return rows[keep].dropna(subset=["value"])


def config_means(rows: pd.DataFrame) -> pd.Series:
    """Each config's mean over the queries scored on every config."""
    wide = rows.pivot_table(index="query_id", columns="config_id", values="value").dropna()
    return wide.mean() if len(wide) else pd.Series(dtype=float)


def written_set(rows: pd.DataFrame, metric: str, *, alpha: float = ALPHA) -> tuple[str, list[str]]:
    """(the written questions' best config, the configs they cannot separate from it): each
    config against the best on ``metric`` (``families.compare_to_best``: Holm over the
    configs; questions of one page tested as one cluster when ``rows`` has ``PAGE``)."""
    best = families.best_config(rows, metric)
    tests = families.compare_to_best(rows, metric, alpha=alpha)
    worse = set(tests.loc[tests["verdict"] == "A better", "config_b"])
    kept = sorted(set(rows["config_id"]) - worse)
    return best, [best, *[c for c in kept if c != best]]


def rank_agreement(kind: pd.Series, written: pd.Series) -> dict[str, float]:
    """Spearman's rho and Kendall's tau-b (with p-values) of two configs' means over the
    configs both hold; NaN when fewer than three configs or either side is constant."""
    from scipy import stats  # here: a notebook that only draws never loads scipy

    both = pd.concat([kind, written], axis=1, join="inner").dropna()
    nan = {"spearman": np.nan, "spearman_p": np.nan, "kendall": np.nan, "kendall_p": np.nan}
    if len(both) < 3 or both.iloc[:, 0].nunique() < 2 or both.iloc[:, 1].nunique() < 2:
        return nan
    rho = stats.spearmanr(both.iloc[:, 0], both.iloc[:, 1])
    tau = stats.kendalltau(both.iloc[:, 0], both.iloc[:, 1])
    return {"spearman": float(rho.statistic), "spearman_p": float(rho.pvalue),
            "kendall": float(tau.statistic), "kendall_p": float(tau.pvalue)}


def top_configs(means: pd.Series) -> list[str]:
    """The configs sharing the best mean, by id."""
    if means.empty:
        return []
    return sorted(means.index[np.isclose(means, means.max(), rtol=0, atol=1e-12)])


def kind_agreement(written, mined, *, metric: str = AGREEMENT_METRIC, retriever: str = "bm25",
                   written_queries: Sequence[Query] = (), alpha: float = ALPHA
                   ) -> pd.DataFrame:
    """One row per query kind of ``mined`` (``COLUMNS``): how its configs' means on ``metric``
    rank against those of the written questions of ``written`` (a run of the same grid on the
    same corpus), and whether its top config lies among those the written questions cannot
    separate from their best. The questions are grouped by page as the run recorded them, or
    by each one's first source in ``written_queries``."""
    configs = [c for c in distinct_configs(written) if c in set(distinct_configs(mined))]
    asked = with_pages(scores(written, metric, retriever, configs), written_queries)
    if asked.empty:
        raise ValueError(f"the written run has no {metric!r} values under {retriever!r} "
                         "for the configs both runs scored")
    written_means = config_means(asked)
    best, inside = written_set(asked, metric, alpha=alpha)
    found = scores(mined, metric, retriever, configs)
    kinds = mined.per_query.drop_duplicates("query_id").groupby("query_kind")["query_id"].size()
    rows = []
    for kind, count in kinds.items():
        mine = found[found["query_kind"] == kind]
        means = config_means(mine)
        tops = top_configs(means)
        scored = mine.pivot_table(index="query_id", columns="config_id",
                                  values="value").dropna()
        rows.append({"query_kind": kind, "queries": int(count), "scored": len(scored),
                     "configs": len(configs), **rank_agreement(means, written_means),
                     "kind_best": "+".join(tops), "written_best": best,
                     "written_set": "+".join(inside),
                     "pick_inside": bool(tops) and set(tops) <= set(inside)})
    return pd.DataFrame(rows, columns=COLUMNS)


SPLITS = 2000
"""Random halves of a site's pages the written questions' self-agreement is averaged over."""
FLAT = 1e-9
"""Config means spread less than this are equal (a half whose configs tie ranks nothing)."""
CEILING_COLUMNS = ["questions", "pages", "configs", "split_half", "reliability",
                   "reliability_low", "reliability_high", "ceiling"]


def split_half(rows: pd.DataFrame, *, splits: int = SPLITS, seed: int = 0) -> dict[str, float]:
    """How well a site's written questions rank configs as they themselves do: over
    ``splits`` random halves of the pages (``PAGE``; a page's questions stay together),
    Spearman's rho of the configs' means on one half against the other (``split_half``, the
    median), each rho Spearman-Brown corrected to the whole set's size (2r / (1 + r)):
    ``reliability`` (the median; ``_low``/``_high`` the 2.5 and 97.5 percentiles) is the rho
    a second written set of the same size would show, and ``ceiling`` = sqrt(reliability)
    the rho of a perfect generator whose many queries make its means exact (the written
    side's noise alone attenuates it). NaN when fewer than four pages or three configs."""
    from scipy import stats

    wide = rows.pivot_table(index="query_id", columns="config_id", values="value").dropna()
    pages = rows.drop_duplicates("query_id").set_index("query_id")[PAGE].reindex(wide.index)
    names = np.asarray(sorted(set(pages)))
    found = {"questions": float(len(wide)), "pages": float(len(names)),
             "configs": float(wide.shape[1])}
    nan = dict.fromkeys(CEILING_COLUMNS[3:], np.nan)
    if len(names) < 4 or wide.shape[1] < 3:
        return {**found, **nan}
    rng = np.random.default_rng(seed)
    values, of_page = wide.to_numpy(), pages.to_numpy()
    raw = []
    for _ in range(splits):
        half = set(rng.permutation(names)[: len(names) // 2])
        mask = np.fromiter((p in half for p in of_page), bool, len(of_page))
        one, two = values[mask].mean(axis=0), values[~mask].mean(axis=0)
        if np.ptp(one) > FLAT and np.ptp(two) > FLAT:
            raw.append(stats.spearmanr(one, two).statistic)
    if not raw:
        return {**found, **nan}
    r = np.clip(np.asarray(raw), -0.999, 1.0)  # Spearman-Brown of -1 is infinite
    corrected = 2 * r / (1 + r)
    reliability = float(np.median(corrected))
    return {**found, "split_half": float(np.median(raw)), "reliability": reliability,
            "reliability_low": float(np.percentile(corrected, 2.5)),
            "reliability_high": float(np.percentile(corrected, 97.5)),
            "ceiling": float(np.sqrt(reliability)) if reliability > 0 else 0.0}


def written_ceiling(written, *, metric: str = AGREEMENT_METRIC, retriever: str = "bm25",
                    written_queries: Sequence[Query] = (), splits: int = SPLITS,
                    seed: int = 0) -> dict[str, float]:
    """``split_half`` of a written run's questions on its distinct configs (the ones a kind's
    agreement is measured on)."""
    asked = with_pages(scores(written, metric, retriever, distinct_configs(written)),
                       written_queries)
    return split_half(asked, splits=splits, seed=seed)
