"""Paired comparisons of configs on the same queries: bootstrap CIs, permutation tests, Holm."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import ComparisonError

N_RESAMPLES = 2000
ALPHA = 0.05
_BATCH = 4096


@dataclass(frozen=True, slots=True)
class PairedResult:
    """Config A against config B on the queries both were scored on."""

    n: int
    """Queries compared (pairs with a NaN on either side are left out)."""
    mean_a: float
    mean_b: float
    mean_diff: float
    """Mean of A - B over the queries."""
    ci_low: float
    """Lower end of the bootstrap confidence interval of ``mean_diff`` (BCa)."""
    ci_high: float
    p_value: float
    """Two-sided paired sign-flip permutation test of ``mean_diff == 0``."""

    def as_dict(self) -> dict:
        return asdict(self)


def _mean(x, axis=-1):
    return np.mean(x, axis=axis)


def _paired(a, b) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ComparisonError(
            f"paired samples must be 1-D and of equal length, got shapes {a.shape} and {b.shape}"
        )
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def bootstrap_ci(
    values: np.ndarray, *, n_resamples: int, seed: int, confidence: float = 0.95,
    methods: Sequence[str] = ("BCa", "percentile"), min_n: int = 2,
) -> tuple[float, float]:
    """Bootstrap interval of the mean of ``values``: the first of ``methods`` that gives a
    finite interval (BCa is undefined on some samples). A constant sample gives [v, v];
    fewer than ``min_n`` values (or none) give NaN."""
    if len(values) == 0 or len(values) < min_n:
        return math.nan, math.nan
    if len(values) < 2 or np.all(values == values[0]):
        return float(values[0]), float(values[0])
    for method in methods:
        result = stats.bootstrap(
            (values,), _mean, n_resamples=n_resamples, confidence_level=confidence,
            method=method, vectorized=True, rng=np.random.default_rng(seed),
        )
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            break
    return float(low), float(high)


def all_signs(n: int) -> np.ndarray:
    """The 2**n vectors of +1/-1 of length n, one per row."""
    codes = np.arange(2**n)[:, None] >> np.arange(n) & 1
    return 1.0 - 2.0 * codes


def sign_flip_p(diffs: np.ndarray, *, n_resamples: int, seed: int) -> float:
    """Two-sided paired permutation p-value of a zero mean difference.

    Under the null each difference is as likely positive as negative, so the null
    distribution of the mean comes from flipping signs: exactly (all 2**n flips) when
    2**n <= n_resamples, else from ``n_resamples`` random flips counted together with the
    observed one, so that p >= 1 / (n_resamples + 1).
    """
    diffs = np.asarray(diffs, dtype=float)
    n = len(diffs)
    if n == 0 or np.all(diffs == 0):
        return 1.0
    observed = abs(diffs.mean())
    threshold = observed - 1e-6 * max(1.0, observed)  # near-ties count as extreme
    if n <= 16 and 2**n <= n_resamples:
        return float(np.mean(np.abs(all_signs(n) @ diffs) / n >= threshold))
    extreme = 0
    single = diffs.astype(np.float32)
    for signs in random_signs(n, n_resamples, seed):
        extreme += int((np.abs(signs @ single) / n >= threshold).sum())
    return (extreme + 1) / (n_resamples + 1)


@lru_cache(maxsize=4)
def _cached_signs(n: int, n_resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    return tuple(_sign_batches(n, n_resamples, seed))


def _sign_batches(n: int, n_resamples: int, seed: int):
    rng = np.random.default_rng(seed)
    for start in range(0, n_resamples, _BATCH):
        bits = rng.integers(0, 2, size=(min(_BATCH, n_resamples - start), n), dtype=np.int8)
        signs = (1 - 2 * bits).astype(np.float32)
        signs.flags.writeable = False
        yield signs


def random_signs(n: int, n_resamples: int, seed: int):
    """Batches of random +1/-1 rows; the same (n, n_resamples, seed) gives the same rows.

    Kept in memory (every pair of a comparison has the same n) when they fit in 64 MB.
    """
    if n * n_resamples * 4 <= 64 * 2**20:
        return _cached_signs(n, n_resamples, seed)
    return _sign_batches(n, n_resamples, seed)


def paired_comparison(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_resamples: int = N_RESAMPLES,
    n_permutations: int | None = None,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedResult:
    """Mean paired difference A - B with a bootstrap CI and a sign-flip permutation p-value.

    ``n_resamples`` drives the bootstrap and, unless ``n_permutations`` is given, the
    permutation test, whose smallest attainable p-value is 1 / (n_permutations + 1).
    """
    left, right = _paired(a, b)
    diffs = left - right
    low, high = bootstrap_ci(diffs, n_resamples=n_resamples, seed=seed, confidence=confidence)
    return PairedResult(
        n=len(diffs),
        mean_a=float(left.mean()) if len(left) else math.nan,
        mean_b=float(right.mean()) if len(right) else math.nan,
        mean_diff=float(diffs.mean()) if len(diffs) else math.nan,
        ci_low=low,
        ci_high=high,
        p_value=sign_flip_p(diffs, n_resamples=n_permutations or n_resamples, seed=seed),
    )


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
    for a, b in (("config_a", "config_b"), ("mean_a", "mean_b")):
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


def compare_all(
    per_query: pd.DataFrame,
    metric: str,
    *,
    config_col: str = "config_id",
    query_col: str = "query_id",
    alpha: float = ALPHA,
    higher_is_better: bool = True,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> pd.DataFrame:
    """Every pair of configs on ``metric``, with Holm-corrected p-values and a verdict.

    ``per_query`` is the tidy frame of ``metrics.score_run`` rows (columns ``metric`` and
    ``value``). Each pair is compared on the queries both configs were scored on. The
    verdict names a winner ("A better" / "B better", A = ``config_a``) only when the
    Holm-corrected p-value is below ``alpha``. The permutation count grows with the number
    of pairs (see ``permutations_for``) so that Holm's correction can reach ``alpha`` at all.
    """
    wide = _wide(per_query, metric, config_col, query_col)
    pairs = list(itertools.combinations(wide.columns, 2))
    n_permutations = permutations_for(len(pairs), alpha=alpha, floor=n_resamples)
    rows = []
    for config_a, config_b in pairs:
        result = paired_comparison(
            wide[config_a].to_numpy(), wide[config_b].to_numpy(),
            n_resamples=n_resamples, n_permutations=n_permutations, seed=seed,
        )
        rows.append({"metric": metric, "config_a": config_a, "config_b": config_b,
                     **result.as_dict()})
    frame = pd.DataFrame(rows, columns=_COLUMNS[:-2])
    frame["p_holm"] = holm(frame["p_value"].to_numpy())
    frame["verdict"] = [
        verdict(d, p, alpha=alpha, higher_is_better=higher_is_better)
        for d, p in zip(frame["mean_diff"], frame["p_holm"], strict=True)
    ]
    return frame


_COLUMNS = ["metric", "config_a", "config_b", "n", "mean_a", "mean_b", "mean_diff",
            "ci_low", "ci_high", "p_value", "p_holm", "verdict"]


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
