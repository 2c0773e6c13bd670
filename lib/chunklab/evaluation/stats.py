"""Paired comparisons of configs on the same queries: sign-flip permutation tests with the
intervals that invert them, bootstrap CIs of means (their Holm families are ``families``)."""

from __future__ import annotations

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
    """Lower end of the confidence interval of ``mean_diff`` obtained by inverting the sign-flip
    test (every mean difference it does not reject), so it agrees with ``p_value``."""
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


RESAMPLE_CELLS = 4_000_000
"""Resample weights (resamples x values) held at once by ``mean_intervals``."""


def mean_intervals(samples: Sequence[np.ndarray], *, n_resamples: int, seed: int,
                   confidence: float = 0.95, min_n: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bootstrap interval of the mean of each sample: every sample of one size
    is resampled with the same draws (``seed``), all of them in one matrix product of the
    samples with the resamples' counts. A sample of fewer than ``min_n`` values (or none)
    gives NaN; a constant one [v, v]."""
    low = np.full(len(samples), np.nan)
    high = np.full(len(samples), np.nan)
    by_size: dict[int, list[int]] = {}
    for i, values in enumerate(samples):
        if len(values) >= max(1, min_n):
            by_size.setdefault(len(values), []).append(i)
    tail = (1.0 - confidence) / 2
    for members in by_size.values():
        stacked = np.stack([np.asarray(samples[i], dtype=float) for i in members])
        means = np.concatenate(list(_resampled_means(stacked, n_resamples, seed)), axis=1)
        lo, hi = np.quantile(means, [tail, 1.0 - tail], axis=1)
        constant = np.all(stacked == stacked[:, :1], axis=1)
        lo[constant] = hi[constant] = stacked[constant, 0]
        low[members], high[members] = lo, hi
    return low, high


def _resampled_means(stacked: np.ndarray, n_resamples: int, seed: int):
    """Blocks of samples x resamples of bootstrap means of each row of ``stacked``."""
    n = stacked.shape[1]
    rng = np.random.default_rng(seed)
    block = max(1, RESAMPLE_CELLS // n)
    for start in range(0, n_resamples, block):
        rows = min(block, n_resamples - start)
        draws = rng.integers(0, n, size=(rows, n)) + (np.arange(rows) * n)[:, None]
        counts = np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n)
        yield stacked @ counts.T / n


def all_signs(n: int) -> np.ndarray:
    """The 2**n vectors of +1/-1 of length n, one per row."""
    codes = np.arange(2**n)[:, None] >> np.arange(n) & 1
    return 1.0 - 2.0 * codes


TIE = 1e-6
"""Relative tolerance under which a flipped sum counts as tied with the observed one."""


class SignFlipTest:
    """The two-sided paired sign-flip test of ``mean(diffs) == delta``, for any delta.

    Under the null each ``diff - delta`` is as likely positive as negative, so the null
    distribution of their sum comes from flipping signs: exactly (all 2**n sign vectors)
    when 2**n <= n_resamples, else ``n_resamples`` random ones counted together with the
    observed sum, so that p >= 1 / (n_resamples + 1). The same sign vectors serve every
    delta, so the p-value at 0 and the interval obtained by inverting the test (every delta
    the test does not reject) can never disagree.
    """

    def __init__(self, diffs, *, n_resamples: int, seed: int):
        diffs = np.asarray(diffs, dtype=float)
        flipped, signs_sum, exact = flipped_sums(diffs[:, None], n_resamples=n_resamples,
                                                 seed=seed)
        self._set(diffs, flipped[:, 0], signs_sum, exact)

    def _set(self, diffs: np.ndarray, flipped: np.ndarray, signs_sum: np.ndarray,
             exact: bool) -> None:
        self.diffs = diffs
        self.n = len(diffs)
        self.total = float(diffs.sum())
        self.exact = exact
        self.extra = 0 if exact else 1
        self.flipped = flipped
        self.signs_sum = signs_sum

    @classmethod
    def of_columns(cls, diffs: np.ndarray, *, n_resamples: int, seed: int
                   ) -> list[SignFlipTest]:
        """One test per column of ``diffs`` (queries x pairs, no NaN), every column's flipped
        sums from one matrix product with the same sign vectors a single test would use."""
        flipped, signs_sum, exact = flipped_sums(diffs, n_resamples=n_resamples, seed=seed)
        tests = []
        for j in range(diffs.shape[1]):
            test = cls.__new__(cls)
            test._set(np.ascontiguousarray(diffs[:, j]), flipped[:, j], signs_sum, exact)
            tests.append(test)
        return tests

    def _tolerance(self, delta: float) -> float:
        return TIE * self.n * max(1.0, abs(self.total / self.n - delta))

    def p_value(self, delta: float = 0.0) -> float:
        """Two-sided p-value of ``mean == delta`` (1 with no pairs or all of them equal to
        delta)."""
        shifted = self.diffs - delta
        if self.n == 0 or np.all(shifted == 0):
            return 1.0
        observed = abs(self.total - self.n * delta)
        stat = np.abs(self.flipped - delta * self.signs_sum)
        extreme = int((stat >= observed - self._tolerance(delta)).sum())
        return (extreme + self.extra) / (len(self.flipped) + self.extra)

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """Every delta whose p-value is at least 1 - confidence, around the observed mean
        (widened to 0 when the test at 0 does not reject): so the interval excludes 0
        exactly when ``p_value(0) < 1 - confidence``. Unbounded when the test cannot reject
        with so few pairs; NaN with none; [d, d] when every difference is d and the test
        rejects 0."""
        if self.n == 0:
            return math.nan, math.nan
        mean = self.total / self.n
        alpha = 1.0 - confidence
        if np.all(self.diffs == self.diffs[0]) and self.p_value(0.0) < alpha:
            return float(self.diffs[0]), float(self.diffs[0])
        low, high = self._component(mean, alpha)
        if self.p_value(0.0) >= alpha:
            low, high = min(low, 0.0), max(high, 0.0)
        elif low <= 0.0 <= high:  # float ties at the boundary: the test has the last word
            low, high = (math.nextafter(0.0, 1.0), high) if mean > 0 else (
                low, math.nextafter(0.0, -1.0))
        return float(low), float(high)

    def _component(self, mean: float, alpha: float) -> tuple[float, float]:
        """The run of deltas around ``mean`` where the share of extreme flips stays at or
        above ``alpha``. For one sign vector, ``|A - delta B| >= |c - n delta| - tol`` is
        piecewise linear in delta with kinks at A/B and c/n: its set is up to three
        intervals, found here for every vector at once and swept in order."""
        a, b, c, n = self.flipped, self.signs_sum, self.total, float(self.n)
        tol = self._tolerance(0.0)
        always = np.abs(b) >= n  # the all-same-sign vectors: always as extreme as observed
        kink_b = np.divide(a, b, out=np.full_like(a, c / n), where=b != 0)
        kink_c = np.full_like(a, c / n)
        lo_k, hi_k = np.minimum(kink_b, kink_c), np.maximum(kink_b, kink_c)
        pieces = [(np.full_like(a, -np.inf), lo_k, lo_k - 1.0), (lo_k, hi_k, (lo_k + hi_k) / 2),
                  (hi_k, np.full_like(a, np.inf), hi_k + 1.0)]
        starts, ends = [], []
        for left, right, inside in pieces:
            s1, s2 = np.sign(a - b * inside), np.sign(c - n * inside)
            s1[s1 == 0], s2[s2 == 0] = 1.0, 1.0
            slope, level = -s1 * b + s2 * n, s1 * a - s2 * c + tol  # f = level + slope * d
            root = np.divide(-level, slope, out=np.zeros_like(a), where=slope != 0)
            lo = np.where(slope > 0, np.maximum(left, root), left)
            hi = np.where(slope < 0, np.minimum(right, root), right)
            keep = (lo <= hi) & (left < right) & ~always & ((slope != 0) | (level >= 0))
            starts.append(lo[keep])
            ends.append(hi[keep])
        need = alpha * (len(a) + self.extra) - self.extra - int(always.sum())
        if need <= 0:
            return -math.inf, math.inf
        points = np.concatenate([*ends, *starts])
        steps = np.concatenate([-np.ones(sum(map(len, ends))), np.ones(sum(map(len, starts)))])
        order = np.lexsort((steps, points))  # at one point, an interval ends before one starts
        points, count = points[order], np.cumsum(steps[order])
        points, first = np.unique(points, return_index=True)
        last = np.append(first[1:], len(count)) - 1
        ok = count[last] >= need - 1e-9  # covered enough between points[i] and points[i + 1]
        at = int(np.searchsorted(points, mean, side="right")) - 1
        if at < 0 or not ok[at]:
            return mean, mean
        first_ok = last_ok = at
        while first_ok > 0 and ok[first_ok - 1]:
            first_ok -= 1
        while last_ok < len(ok) - 1 and ok[last_ok]:
            last_ok += 1
        return float(points[first_ok]), float(points[last_ok])


def sign_flip_p(diffs: np.ndarray, *, n_resamples: int, seed: int) -> float:
    """Two-sided paired permutation p-value of a zero mean difference (``SignFlipTest``)."""
    return SignFlipTest(diffs, n_resamples=n_resamples, seed=seed).p_value(0.0)


def flipped_sums(diffs: np.ndarray, *, n_resamples: int, seed: int
                 ) -> tuple[np.ndarray, np.ndarray, bool]:
    """(sign vectors x columns of flipped sums, each sign vector's sum, exact?) for the
    columns of ``diffs`` (queries x pairs): every sign vector when 2**n <= n_resamples, else
    ``n_resamples`` random ones, the same for every column."""
    n = diffs.shape[0]
    exact = 0 < n <= 16 and 2**n <= n_resamples
    batches = [all_signs(n)] if exact else (random_signs(n, n_resamples, seed) if n else [])
    flipped, counts = [], []
    for signs in batches:  # once: a batch generator (over 64 MB of signs) is read only once
        flipped.append(signs @ diffs)  # float64
        counts.append(signs.sum(axis=1, dtype=np.float64))
    if not flipped:
        return np.zeros((0, diffs.shape[1])), np.zeros(0), exact
    return np.concatenate(flipped), np.concatenate(counts), exact


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
    """Mean paired difference A - B with a sign-flip permutation p-value and the interval
    obtained by inverting that same test (so the interval excludes 0 exactly when p is
    below 1 - confidence).

    The test uses ``n_permutations`` sign vectors (default ``n_resamples``); its smallest
    attainable p-value is 1 / (n_permutations + 1).
    """
    left, right = _paired(a, b)
    test = SignFlipTest(left - right, n_resamples=n_permutations or n_resamples, seed=seed)
    return _result(left, right, test, confidence)


def _result(left: np.ndarray, right: np.ndarray, test: SignFlipTest,
            confidence: float) -> PairedResult:
    diffs = test.diffs
    low, high = test.interval(confidence)
    return PairedResult(
        n=len(diffs),
        mean_a=float(left.mean()) if len(left) else math.nan,
        mean_b=float(right.mean()) if len(right) else math.nan,
        mean_diff=float(diffs.mean()) if len(diffs) else math.nan,
        ci_low=low,
        ci_high=high,
        p_value=test.p_value(0.0),
    )


PAIR_BATCH_CELLS = 8_000_000
"""Flipped sums (sign vectors x pairs) computed in one matrix product at most."""


def paired_results(wide: pd.DataFrame, pairs: Sequence[tuple[str, str]], *, n_resamples: int,
                   seed: int, confidence: float) -> list[PairedResult]:
    """``paired_comparison`` of every pair of columns of ``wide`` (queries x configs), the
    pairs that keep the same queries tested together: one matrix product of their
    differences with the shared sign vectors instead of one per pair."""
    values = wide.to_numpy(dtype=float)
    column = {name: i for i, name in enumerate(wide.columns)}
    index = [(column[a], column[b]) for a, b in pairs]
    kept = [~(np.isnan(values[:, i]) | np.isnan(values[:, j])) for i, j in index]
    groups: dict[bytes, list[int]] = {}
    for p, mask in enumerate(kept):
        groups.setdefault(np.packbits(mask).tobytes() + bytes([len(mask) % 8]), []).append(p)
    results: list[PairedResult | None] = [None] * len(pairs)
    for members in groups.values():
        mask = kept[members[0]]
        left = values[mask][:, [index[p][0] for p in members]]
        right = values[mask][:, [index[p][1] for p in members]]
        step = max(1, PAIR_BATCH_CELLS // max(n_resamples, 1))
        for start in range(0, len(members), step):
            cols = slice(start, start + step)
            tests = SignFlipTest.of_columns(left[:, cols] - right[:, cols],
                                            n_resamples=n_resamples, seed=seed)
            for offset, test in enumerate(tests):
                j = start + offset
                results[members[j]] = _result(left[:, j], right[:, j], test, confidence)
    return [r for r in results if r is not None]
