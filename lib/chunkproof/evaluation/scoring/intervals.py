"""Closed-form confidence intervals, vectorised: Tango's score interval of a paired difference
of proportions, Wilson's of a proportion, Student's t of a mean (with when it is rough)."""

from __future__ import annotations

import numpy as np

TANGO = "Tango score"
"""Interval of a paired difference of 0/1 values (Tango 1998): every difference its score
test does not reject. Its coverage holds near the stated level even with few discordant pairs."""
T = "t"
"""Student's t interval of a mean (of values, or of paired differences)."""
T_ROUGH = "t (rough)"
"""A t interval over fewer than ``T_RELIABLE_N`` values or fewer than ``T_RELIABLE_NONZERO``
non-zero ones: its coverage rests on a normality the sample cannot show."""
WILSON = "Wilson score"
"""Interval of a proportion (the mean of 0/1 values)."""
T_RELIABLE_N = 30
T_RELIABLE_NONZERO = 10
_BISECTIONS = 60


def z_of(confidence: float) -> float:
    """The two-sided normal quantile of ``confidence``."""
    from scipy import stats  # here: a notebook that only draws never loads scipy

    return float(stats.norm.ppf(0.5 + confidence / 2))


def tango(a_only, b_only, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Tango's score interval of ``P(A=1, B=0) - P(A=0, B=1)`` from ``a_only`` (queries where
    only A scores 1), ``b_only`` (only B) and ``n`` pairs, each an array (or a number): the
    differences whose score statistic stays within the normal quantile, found by bisection
    for every pair at once. NaN where ``n`` is 0."""
    b, c, size = (np.atleast_1d(np.asarray(x, dtype=float)) for x in (a_only, b_only, n))
    b, c, size = np.broadcast_arrays(b, c, size)
    z = z_of(confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = (b - c) / size
        low = _root(b, c, size, np.full_like(estimate, -1.0), estimate, z)
        high = _root(b, c, size, estimate, np.ones_like(estimate), -z)
    empty = size == 0
    low[empty], high[empty] = np.nan, np.nan
    return low, high


def _score(b: np.ndarray, c: np.ndarray, n: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Tango's statistic at ``delta``: the observed difference over its standard error with
    the discordant probability at its maximum-likelihood value under that delta."""
    quad_b = -b - c + (2 * n - b + c) * delta
    quad_c = -c * delta * (1 - delta)
    root = np.sqrt(np.maximum(quad_b * quad_b - 8 * n * quad_c, 0.0))
    q = (root - quad_b) / (4 * n)
    variance = n * (2 * q + delta * (1 - delta))
    excess = b - c - n * delta
    limit = np.sign(excess) * np.inf
    return np.divide(excess, np.sqrt(np.maximum(variance, 0.0)), out=limit, where=variance > 0)


def _root(b, c, n, low, high, target: float) -> np.ndarray:
    """The delta in [low, high] where the (decreasing) score statistic crosses ``target``:
    the end of the interval on that side (``low`` or ``high`` itself when it never does)."""
    lo, hi = low.copy(), high.copy()
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2
        above = _score(b, c, n, mid) > target
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return (lo + hi) / 2


def wilson(successes, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of a proportion, for arrays of counts (NaN where n is 0)."""
    k, size = (np.asarray(x, dtype=float) for x in (successes, n))
    z = z_of(confidence)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / size
        centre = (p + z * z / (2 * size)) / (1 + z * z / size)
        half = z * np.sqrt(p * (1 - p) / size + z * z / (4 * size * size)) / (1 + z * z / size)
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def t_interval(mean, sd, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Student's t interval of a mean from its sample mean, standard deviation and size
    (arrays; a constant sample gives [mean, mean]; one value says nothing: unbounded)."""
    from scipy import stats

    mean, sd, size = (np.asarray(x, dtype=float) for x in (mean, sd, n))
    with np.errstate(invalid="ignore", divide="ignore"):
        quantile = stats.t.ppf(0.5 + confidence / 2, np.maximum(size - 1, 1))
        half = np.where(size >= 2, quantile * sd / np.sqrt(size), np.inf)
    return mean - half, mean + half


def t_name(n, nonzero) -> np.ndarray:
    """``T`` or ``T_ROUGH`` for each t interval of ``n`` values, ``nonzero`` of them not 0."""
    rough = (np.asarray(n) < T_RELIABLE_N) | (np.asarray(nonzero) < T_RELIABLE_NONZERO)
    return np.where(rough, T_ROUGH, T)


def mean_intervals(mean, sd, n, binary, confidence: float = 0.95
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Interval of each mean: Wilson's where the values are 0/1 (``binary``), else t."""
    w_low, w_high = wilson(np.asarray(mean, dtype=float) * np.asarray(n), n, confidence)
    t_low, t_high = t_interval(mean, sd, n, confidence)
    binary = np.asarray(binary, dtype=bool)
    return np.where(binary, w_low, t_low), np.where(binary, w_high, t_high)
