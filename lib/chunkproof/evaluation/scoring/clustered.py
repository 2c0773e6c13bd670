"""Questions come in clusters: several are asked of one page, and a page a config chunks well
answers all of them. A paired test that treats them as independent rejects a true null far
more often than its level. Here the paired differences are summed per cluster (the page a
question asks about), the sign-flip test flips those sums (``stats.compare_columns``), and the
interval is the cluster-robust t interval of the mean difference."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CLUSTER_TEST = "cluster sign-flip"
"""The paired test with clusters: the sign of each cluster's summed difference flipped."""
CLUSTER_T = "cluster-robust t"
"""The interval with clusters: t with G - 1 degrees of freedom around the mean difference,
its variance from the cluster sums (CR1: scaled by G / (G - 1))."""


def cluster_codes(labels: Sequence) -> tuple[np.ndarray, int]:
    """(the cluster number of each item, the number of clusters) of ``labels``, numbered in
    order of first appearance."""
    _, first, codes = np.unique(np.asarray(labels, dtype=object).astype(str),
                                return_index=True, return_inverse=True)
    renumber = np.argsort(np.argsort(first))
    return renumber[codes].ravel(), len(first)


def clustered(codes: np.ndarray | None, n: int) -> bool:
    """Whether ``codes`` groups ``n`` items into fewer clusters than items (a cluster of
    two or more): the clustered test and interval then apply."""
    return codes is not None and len(codes) == n and len(np.unique(codes)) < n


def cluster_totals(values: np.ndarray, codes: np.ndarray, count: int) -> np.ndarray:
    """The sum of ``values`` (items x columns) within each cluster: clusters x columns."""
    totals = np.zeros((count, values.shape[1]), dtype=float)
    np.add.at(totals, codes, values)
    return totals


def cluster_se(diffs: np.ndarray, codes: np.ndarray, count: int) -> np.ndarray:
    """The cluster-robust standard error of each column's mean of ``diffs`` (items x
    columns): sqrt(G / (G - 1) * sum_g (T_g - n_g * mean)^2) / n, NaN with one cluster."""
    n = diffs.shape[0]
    mean = diffs.mean(axis=0)
    sizes = np.bincount(codes, minlength=count).astype(float)[:, None]
    residual = cluster_totals(diffs, codes, count) - sizes * mean[None, :]
    if count < 2:
        return np.full(diffs.shape[1], np.nan)
    return np.sqrt(count / (count - 1) * (residual * residual).sum(axis=0)) / n


def design_effect(diffs: np.ndarray, codes: np.ndarray, count: int) -> np.ndarray:
    """How much the clusters inflate the variance of each column's mean difference: the
    cluster-robust variance over the independent one (1 when they are independent, NaN when
    the differences do not vary)."""
    n = diffs.shape[0]
    plain = diffs.var(axis=0, ddof=1) / n if n > 1 else np.full(diffs.shape[1], np.nan)
    robust = cluster_se(diffs, codes, count) ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(plain > 0, robust / plain, np.nan)


def cluster_interval(diffs: np.ndarray, codes: np.ndarray, count: int, confidence: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The cluster-robust t interval of each column's mean difference (t with ``count`` - 1
    degrees of freedom; unbounded with one cluster)."""
    from scipy import stats  # here: a notebook that only draws never loads scipy

    mean = diffs.mean(axis=0)
    se = cluster_se(diffs, codes, count)
    quantile = stats.t.ppf(0.5 + confidence / 2, max(count - 1, 1))
    half = np.where(count >= 2, quantile * se, np.inf)
    return mean - half, mean + half


def cluster_names(count: int, drawn: np.ndarray, p: np.ndarray, exact: bool
                  ) -> tuple[list[str], str]:
    """(the test's name for each column, the interval's name) with ``count`` clusters: the
    sign vectors drawn, ``exact`` (every one), or Hoeffding's bound (none drawn, p < 1)."""
    def how(d: int, q: float) -> str:
        return ("exact" if exact else f"{d} sign vectors" if d else
                "Hoeffding bound" if q < 1 else "no difference")
    tests = [f"{CLUSTER_TEST} ({count} pages, {how(d, q)})"
             for d, q in zip(drawn, p, strict=True)]
    return tests, f"{CLUSTER_T} ({count} pages)"
