"""Holm families of paired comparisons: the planned contrasts, the exploratory family (every
pair, or each config against the best) and each retrieval mode against plain, each row a paired
test of two configs with its Holm-corrected p-value and verdict (the tests: ``stats``)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...errors import ComparisonError
from ..retrieval.modes import PLAIN
from .stats import ALPHA, N_RESAMPLES, paired_results


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values, in the input order (NaN stays NaN, not counted)."""
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full_like(p, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    order = valid[np.argsort(p[valid], kind="stable")]
    m = len(order)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted


def permutations_for(n_pairs: int, *, alpha: float = ALPHA, floor: int = N_RESAMPLES) -> int:
    """Permutations whose smallest p-value, Holm-multiplied by ``n_pairs``, is <= alpha / 10.

    A permutation p-value cannot fall below 1 / (permutations + 1): with 2000 of them and
    the 66 pairs of 12 configs, Holm's smallest corrected p is at least 0.033, and the
    resolution left below alpha = 0.05 is too coarse to separate real differences.
    """
    return max(floor, math.ceil(10 * max(n_pairs, 1) / alpha))


def verdict(mean_diff: float, p_adjusted: float, *, alpha: float, higher_is_better: bool) -> str:
    if not p_adjusted < alpha or mean_diff == 0:
        return "no significant difference"
    a_better = (mean_diff > 0) == higher_is_better
    return "A better" if a_better else "B better"


TURNED = {"A better": "B better", "B better": "A better"}


def swap_sides(rows: pd.DataFrame) -> pd.DataFrame:
    """Paired-test rows with A and B exchanged: configs and means swapped, the difference and
    its interval negated, the verdict turned."""
    out = rows.copy()
    for a, b in (("config_a", "config_b"), ("mean_a", "mean_b"), ("wins_a", "wins_b")):
        if a in rows and b in rows:
            out[a], out[b] = rows[b], rows[a]
    out["mean_diff"] = -rows["mean_diff"]
    out["ci_low"], out["ci_high"] = -rows["ci_high"], -rows["ci_low"]
    out["verdict"] = rows["verdict"].replace(TURNED)
    return out


def orient(rows: pd.DataFrame, config_a: str) -> pd.DataFrame:
    """Paired-test rows turned so that ``config_a`` is A wherever it takes part."""
    flip = rows["config_b"] == config_a
    return pd.concat([rows[~flip], swap_sides(rows[flip])]).loc[rows.index]


CLUSTER = "source"
"""The per-query column naming the page a query asks about: its cluster in paired tests."""


def query_clusters(per_query: pd.DataFrame, query_col: str = "query_id",
                   cluster_col: str = CLUSTER) -> pd.Series | None:
    """query -> its cluster (the page it asks about), or None when ``per_query`` has no
    ``cluster_col`` (a run made before clusters were recorded: every query on its own)."""
    if cluster_col not in per_query.columns:
        return None
    firsts = per_query.drop_duplicates(query_col)
    return pd.Series(firsts[cluster_col].astype(str).to_numpy(), index=firsts[query_col])


EXPLORATORY = "exploratory"
PLANNED = "planned"
"""The two Holm families: every pair of configs, and the contrasts declared before the run."""
MODES = "modes"
"""The Holm family of each retrieval mode against plain, config by config."""


def compare_all(per_query: pd.DataFrame, metric: str, **options: Any) -> pd.DataFrame:
    """Every pair of configs on ``metric``: the exploratory family (``compare_pairs`` with
    its ``options``)."""
    return compare_pairs(per_query, metric, None, family=EXPLORATORY, **options)


def compare_pairs(
    per_query: pd.DataFrame,
    metric: str,
    pairs: Sequence[tuple[str, str]] | None,
    *,
    family: str = PLANNED,
    config_col: str = "config_id",
    query_col: str = "query_id",
    alpha: float = ALPHA,
    higher_is_better: bool = True,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    cluster_col: str = CLUSTER,
) -> pd.DataFrame:
    """The given pairs of configs (None: every pair) on ``metric`` as one Holm family, with a
    verdict.

    ``per_query`` is the tidy frame of ``metrics.score_run`` rows (columns ``metric`` and
    ``value``). Each pair is compared on the queries both configs were scored on; ``wins_a``
    and ``wins_b`` count the queries each is better on. The verdict names a winner ("A
    better" / "B better", A = ``config_a``) only when the Holm-corrected p-value (over these
    pairs only) is below ``alpha``. The permutation count grows with the number of pairs (see
    ``permutations_for``) so that Holm's correction can reach ``alpha`` at all; the interval
    inverts the uncorrected test, so it excludes 0 exactly when ``p_value < alpha``. Where
    ``per_query`` has a ``cluster_col`` column (the page each query asks about), queries of
    one page are tested as one cluster (``stats.compare_columns``).
    """
    wide = _wide(per_query, metric, config_col, query_col)
    if pairs is None:
        pairs = list(itertools.combinations(wide.columns, 2))
    n_permutations = permutations_for(len(pairs), alpha=alpha, floor=n_resamples)
    holm_levels = alpha / np.arange(max(len(pairs), 1), 0, -1)
    results = paired_results(wide, pairs, n_resamples=n_permutations, seed=seed,
                             confidence=1.0 - alpha, levels=tuple(holm_levels),
                             clusters=query_clusters(per_query, query_col, cluster_col))
    rows = []
    for (config_a, config_b), result in zip(pairs, results, strict=True):
        a, b = wide[config_a].to_numpy(), wide[config_b].to_numpy()
        rows.append({"family": family, "metric": metric, "config_a": config_a,
                     "config_b": config_b, **result.as_dict(),
                     "wins_a": int(np.sum(a > b)), "wins_b": int(np.sum(a < b))})
    frame = pd.DataFrame(rows, columns=_COLUMNS[:-2])
    frame["p_holm"] = holm(frame["p_value"].to_numpy())
    frame["verdict"] = [
        verdict(d, p, alpha=alpha, higher_is_better=higher_is_better)
        for d, p in zip(frame["mean_diff"], frame["p_holm"], strict=True)
    ]
    return frame


def best_config(per_query: pd.DataFrame, metric: str, *, config_col: str = "config_id",
                query_col: str = "query_id", higher_is_better: bool = True) -> str:
    """The config with the best mean on ``metric`` (the first by id among equals)."""
    means = _wide(per_query, metric, config_col, query_col).mean()
    means = means if higher_is_better else -means
    return str(means[means == means.max()].index[0])


def compare_to_best(per_query: pd.DataFrame, metric: str, **options: Any) -> pd.DataFrame:
    """Each config against the best one on ``metric`` (A = the best), one Holm family: the
    exploratory family of a grid too large for every pair (``compare_pairs`` options)."""
    keys = {k: options[k] for k in ("config_col", "query_col", "higher_is_better")
            if k in options}
    best = best_config(per_query, metric, **keys)
    column = options.get("config_col", "config_id")
    others = sorted(set(per_query.loc[per_query["metric"] == metric, column].unique()) - {best})
    return compare_pairs(per_query, metric, [(best, o) for o in others], family=EXPLORATORY,
                         **options)


_COLUMNS = ["family", "metric", "config_a", "config_b", "n", "mean_a", "mean_b", "mean_diff",
            "ci_low", "ci_high", "p_value", "test", "interval", "wins_a", "wins_b", "p_holm",
            "verdict"]


def _wide(per_query: pd.DataFrame, metric: str, config_col: str, query_col: str) -> pd.DataFrame:
    """query x config table of one metric's values."""
    missing = {config_col, query_col, "metric", "value"} - set(per_query.columns)
    if missing:
        raise ComparisonError(f"per-query frame lacks column(s) {sorted(missing)}; "
                              f"it has {list(per_query.columns)}")
    rows = per_query[per_query["metric"] == metric]
    if rows.empty:
        known = sorted(per_query["metric"].unique())
        raise ComparisonError(f"no rows for metric {metric!r}; metrics present: {known}")
    if rows.duplicated([config_col, query_col]).any():
        raise ComparisonError(
            f"several {metric!r} values for one {config_col} x {query_col}: filter the frame first"
        )
    return rows.pivot(index=query_col, columns=config_col, values="value")


def compare_modes(rows: pd.DataFrame, metric: str) -> list[tuple[str, pd.DataFrame]]:
    """Each retrieval mode of ``rows`` (per-query rows with a ``mode`` column, one retriever)
    against plain on every config scored in both, on all queries: (mode, its Holm family), A
    the mode and B plain (``config_a`` = ``config_b``)."""
    found = []
    keyed = rows.assign(config_id=rows["config_id"] + "|" + rows["mode"])
    for mode in [m for m in dict.fromkeys(rows["mode"]) if m != PLAIN]:
        both = (set(rows.loc[rows["mode"] == mode, "config_id"])
                & set(rows.loc[rows["mode"] == PLAIN, "config_id"]))
        pairs = [(f"{c}|{mode}", f"{c}|{PLAIN}") for c in sorted(both)]
        if not pairs:
            continue
        table = compare_pairs(keyed[rows["mode"].isin([mode, PLAIN])], metric, pairs,
                              family=MODES)
        for side in ("config_a", "config_b"):
            table[side] = table[side].str.rsplit("|", n=1).str[0]
        found.append((mode, table.assign(query_group="all")))
    return found
