"""Paired comparisons of configs on the same queries: an exact sign test on the discordant
queries with Tango's interval for 0/1 metrics; for continuous ones a sign-flip permutation test
whose count adapts to the precision its p-value needs, with a t interval (Holm families of
these tests are ``families``; the intervals ``intervals``)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from ...errors import ComparisonError
from . import clustered, intervals

N_RESAMPLES = 2000
"""Most sign vectors a permutation test of one pair draws (``families`` raises it with the
number of pairs Holm corrects over)."""
ALPHA = 0.05
_BATCH = 1024
SIGN_TEST = "exact sign test"
"""A 0/1 metric: the two-sided binomial test of the discordant queries (McNemar's, exact)."""
SIGN_FLIP = "sign-flip"
"""A continuous metric: the paired sign-flip permutation test of the mean difference."""
HOEFFDING = "sign-flip bound"
"""A continuous metric whose difference is so far in the tail that Hoeffding's bound on the
exact sign-flip p-value already lies below every level it is compared with: that bound (never
below the exact p-value) is reported and no sign vector drawn."""


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
    """Lower end of the interval of ``mean_diff`` (``interval`` names it), widened to hold 0
    when the test does not reject, so it never claims a difference the test does not."""
    ci_high: float
    p_value: float
    """Two-sided p-value of ``mean_diff == 0`` (``test`` names the test)."""
    test: str
    """``SIGN_TEST``, ``SIGN_FLIP`` (with the sign vectors drawn, or ``exact``) or
    ``HOEFFDING``."""
    interval: str
    """``intervals.TANGO``, ``intervals.T`` or ``intervals.T_ROUGH``."""

    def as_dict(self) -> dict:
        return asdict(self)


def _paired(a, b) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ComparisonError(
            f"paired samples must be 1-D and of equal length, got shapes {a.shape} and {b.shape}"
        )
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def is_binary(values: np.ndarray) -> bool:
    """Whether every value is 0 or 1 (a hit, not a share)."""
    return bool(np.isin(values, (0.0, 1.0)).all())


def sign_test_p(a_only, b_only) -> np.ndarray:
    """Two-sided exact binomial p-value of the discordant counts (``scipy.stats.binomtest``
    with p = 1/2, vectorised: twice the smaller tail, at most 1; 1 with none discordant)."""
    from scipy import stats  # here: a notebook that only draws never loads scipy

    a_only, b_only = np.asarray(a_only), np.asarray(b_only)
    tail = stats.binom.cdf(np.minimum(a_only, b_only), a_only + b_only, 0.5)
    return np.where(a_only + b_only > 0, np.minimum(1.0, 2.0 * tail), 1.0)


def all_signs(n: int) -> np.ndarray:
    """The 2**n vectors of +1/-1 of length n, one per row."""
    codes = np.arange(2**n)[:, None] >> np.arange(n) & 1
    return (1 - 2 * codes).astype(np.float32)


TIE = 1e-6
"""Relative tolerance under which a flipped sum counts as tied with the observed one."""


def hoeffding_p(diffs: np.ndarray) -> np.ndarray:
    """Hoeffding's upper bound on the two-sided sign-flip p-value of each column of ``diffs``
    (queries x pairs): P(|sum of s_i d_i| >= |sum d_i|) <= 2 exp(-(sum d_i)^2 / (2 sum d_i^2))."""
    total, squares = diffs.sum(axis=0), (diffs * diffs).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = 2.0 * np.exp(-total * total / (2.0 * squares))
    return np.where(squares > 0, np.minimum(bound, 1.0), 1.0)


def sign_flip_p(diffs: np.ndarray, *, n_resamples: int, seed: int,
                levels: Sequence[float] = (ALPHA,), cache_bytes: int | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """(p-values, sign vectors drawn) of the sign-flip test of each column of ``diffs``
    (queries x pairs, no NaN): exact (every sign vector) when 2**n <= n_resamples; else
    Hoeffding's bound where it lies below every level; else random sign vectors, the same for
    every column, drawn in batches until the p-value's 99.9% Wilson interval holds none of
    ``levels`` (the thresholds it is compared with) or ``n_resamples`` are drawn. A Monte
    Carlo p-value counts the observed sum: (extreme + 1) / (drawn + 1)."""
    n, pairs = diffs.shape
    observed = np.abs(diffs.sum(axis=0))
    tolerance = TIE * np.maximum(1.0, observed)
    if n and 2**n <= n_resamples and n <= 16:
        flipped = np.abs(all_signs(n) @ diffs)
        extreme = (flipped >= observed - tolerance).sum(axis=0)
        return extreme / 2**n, np.zeros(pairs, dtype=int)
    p = hoeffding_p(diffs)
    drawn = np.zeros(pairs, dtype=int)
    varies = (diffs != 0).any(axis=0)
    open_ = np.flatnonzero((p >= min(levels, default=ALPHA)) & varies)
    extreme = np.zeros(pairs)
    floor = np.asarray(sorted(levels))
    for signs in random_signs(n, n_resamples, seed, cache_bytes=cache_bytes):
        if not len(open_):
            break
        flipped = np.abs(signs @ diffs[:, open_].astype(np.float32))
        extreme[open_] += (flipped >= observed[open_] - tolerance[open_]).sum(axis=0)
        drawn[open_] += len(signs)
        p[open_] = (extreme[open_] + 1) / (drawn[open_] + 1)
        low, high = intervals.wilson(extreme[open_], drawn[open_], 0.999)
        undecided = ((floor[None, :] >= low[:, None]) & (floor[None, :] <= high[:, None]))
        open_ = open_[undecided.any(axis=1)]
    return p, drawn


@lru_cache(maxsize=4)
def _cached_signs(n: int, n_resamples: int, seed: int) -> tuple[np.ndarray, ...]:
    return tuple(_sign_batches(n, n_resamples, seed))


def _sign_batches(n: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(seed)
    width = (n + 7) // 8
    for start in range(0, n_resamples, _BATCH):
        rows = min(_BATCH, n_resamples - start)
        packed = np.frombuffer(rng.bytes(rows * width), dtype=np.uint8).reshape(rows, width)
        bits = np.unpackbits(packed, axis=1, count=n)  # one random bit a query
        signs = bits.astype(np.float32)  # 1 - 2 * bit, in place in float32
        signs *= -2.0
        signs += 1.0
        signs.flags.writeable = False
        yield signs


SIGN_CACHE_BYTES = 64 * 2**20
"""Sign vectors (queries x resamples x 4 bytes) kept in memory for the next comparison."""


def random_signs(n: int, n_resamples: int, seed: int, *,
                 cache_bytes: int | None = None) -> Iterable[np.ndarray]:
    """Batches of random +1/-1 rows; the same (n, n_resamples, seed) gives the same rows.

    Kept in memory (every pair of a comparison has the same n) when they fit in
    ``cache_bytes`` (default ``SIGN_CACHE_BYTES``); past it they are a one-shot stream,
    made afresh for each call, so a caller iterates them once.
    """
    limit = SIGN_CACHE_BYTES if cache_bytes is None else cache_bytes
    if n * n_resamples * 4 <= limit:
        return _cached_signs(n, n_resamples, seed)
    return _sign_batches(n, n_resamples, seed)


def compare_columns(left: np.ndarray, right: np.ndarray, *, n_resamples: int, seed: int,
                    confidence: float, levels: Sequence[float] = (ALPHA,),
                    cache_bytes: int | None = None,
                    clusters: np.ndarray | None = None) -> list[PairedResult]:
    """A ``PairedResult`` for each column pair of ``left`` and ``right`` (queries x pairs, no
    NaN): the pairs whose values are all 0 or 1 by the exact sign test with Tango's interval,
    the others by the sign-flip test (sharing its sign vectors) with a t interval. With
    ``clusters`` (a cluster number per query) grouping any two queries, every pair by the
    cluster sign-flip test with the cluster-robust t interval (``clustered``) instead."""
    n, pairs = left.shape
    if clustered.clustered(clusters, n):
        assert clusters is not None
        return _clustered_columns(left, right, clusters, n_resamples=n_resamples, seed=seed,
                                  confidence=confidence, levels=levels,
                                  cache_bytes=cache_bytes)
    diffs = left - right
    binary = np.isin(left, (0.0, 1.0)).all(axis=0) & np.isin(right, (0.0, 1.0)).all(axis=0)
    a_only, b_only = (diffs > 0).sum(axis=0), (diffs < 0).sum(axis=0)
    p = np.ones(pairs)
    tests = np.full(pairs, SIGN_TEST, dtype=object)
    low, high = intervals.tango(a_only, b_only, np.full(pairs, n), confidence)
    names = np.full(pairs, intervals.TANGO, dtype=object)
    p[binary] = sign_test_p(a_only[binary], b_only[binary])
    rest = np.flatnonzero(~binary)
    if len(rest):
        p[rest], drawn = sign_flip_p(diffs[:, rest], n_resamples=n_resamples, seed=seed,
                                     levels=levels, cache_bytes=cache_bytes)
        tests[rest] = _flip_names(drawn, p[rest], diffs.shape[0], n_resamples)
        sd = diffs[:, rest].std(axis=0, ddof=1) if n > 1 else np.full(len(rest), np.nan)
        low[rest], high[rest] = intervals.t_interval(diffs[:, rest].mean(axis=0), sd, n,
                                                     confidence)
        names[rest] = intervals.t_name(n, (diffs[:, rest] != 0).sum(axis=0))
    return [_result(left[:, j], right[:, j], p[j], (low[j], high[j]), tests[j], names[j],
                    confidence) for j in range(pairs)]


def _clustered_columns(left: np.ndarray, right: np.ndarray, codes: np.ndarray, *,
                       n_resamples: int, seed: int, confidence: float,
                       levels: Sequence[float], cache_bytes: int | None) -> list[PairedResult]:
    """``compare_columns`` with clusters: the sign-flip test of each cluster's summed
    difference, and the cluster-robust t interval."""
    diffs = left - right
    count = int(codes.max()) + 1
    totals = clustered.cluster_totals(diffs, codes, count)
    p, drawn = sign_flip_p(totals, n_resamples=n_resamples, seed=seed, levels=levels,
                           cache_bytes=cache_bytes)
    low, high = clustered.cluster_interval(diffs, codes, count, confidence)
    exact = bool(count and 2**count <= n_resamples and count <= 16)
    tests, name = clustered.cluster_names(count, drawn, p, exact)
    return [_result(left[:, j], right[:, j], p[j], (low[j], high[j]), tests[j], name,
                    confidence) for j in range(left.shape[1])]


def _flip_names(drawn: np.ndarray, p: np.ndarray, n: int, n_resamples: int) -> list[str]:
    if n and 2**n <= n_resamples and n <= 16:
        return [f"{SIGN_FLIP} (exact)"] * len(drawn)
    return [f"{SIGN_FLIP} ({d} sign vectors)" if d else
            (HOEFFDING if q < 1 else SIGN_FLIP) for d, q in zip(drawn, p, strict=True)]


def _result(left: np.ndarray, right: np.ndarray, p: float, interval: tuple[float, float],
            test: str, name: str, confidence: float) -> PairedResult:
    n = len(left)
    low, high = (float(v) for v in interval)
    if n and p >= 1 - confidence:  # not rejected: the interval holds 0
        low, high = min(low, 0.0), max(high, 0.0)
    return PairedResult(
        n=n, mean_a=float(left.mean()) if n else math.nan,
        mean_b=float(right.mean()) if n else math.nan,
        mean_diff=float((left - right).mean()) if n else math.nan,
        ci_low=low if n else math.nan, ci_high=high if n else math.nan,
        p_value=float(p), test=str(test), interval=str(name))


def paired_comparison(
    a: Sequence[float],
    b: Sequence[float],
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
    clusters: Sequence | None = None,
) -> PairedResult:
    """Mean paired difference A - B with its test and interval (``compare_columns``): at most
    ``n_resamples`` sign vectors for a continuous metric, drawn until the p-value is clear of
    1 - confidence. ``clusters``: a label per query (the page it asks about), for the
    cluster-aware test and interval."""
    left, right = _paired(a, b)
    codes = None
    if clusters is not None:
        keep = ~(np.isnan(np.asarray(a, dtype=float)) | np.isnan(np.asarray(b, dtype=float)))
        codes = clustered.cluster_codes(np.asarray(clusters, dtype=object)[keep])[0]
    return compare_columns(left[:, None], right[:, None], n_resamples=n_resamples, seed=seed,
                           confidence=confidence, levels=(1 - confidence,), clusters=codes)[0]


PAIR_BATCH_CELLS = 8_000_000
"""Query x pair values compared in one call at most."""


def paired_results(wide: pd.DataFrame, pairs: Sequence[tuple[str, str]], *, n_resamples: int,
                   seed: int, confidence: float, levels: Sequence[float] = (ALPHA,),
                   clusters: pd.Series | None = None) -> list[PairedResult]:
    """``paired_comparison`` of every pair of columns of ``wide`` (queries x configs), the
    pairs that keep the same queries tested together (``compare_columns``), each p-value drawn
    as precisely as ``levels`` (the thresholds it will meet, e.g. Holm's) need; ``clusters``
    (query -> the page it asks about, indexed like ``wide``) for cluster-aware tests."""
    values = wide.to_numpy(dtype=float)
    column = {name: i for i, name in enumerate(wide.columns)}
    index = [(column[a], column[b]) for a, b in pairs]
    kept = [~(np.isnan(values[:, i]) | np.isnan(values[:, j])) for i, j in index]
    groups: dict[bytes, list[int]] = {}
    for p, mask in enumerate(kept):
        groups.setdefault(np.packbits(mask).tobytes() + bytes([len(mask) % 8]), []).append(p)
    results: list[PairedResult | None] = [None] * len(pairs)
    labels = None if clusters is None else clusters.reindex(wide.index).to_numpy(dtype=object)
    for members in groups.values():
        mask = kept[members[0]]
        left = values[mask][:, [index[p][0] for p in members]]
        right = values[mask][:, [index[p][1] for p in members]]
        codes = None if labels is None else clustered.cluster_codes(labels[mask])[0]
        step = max(1, PAIR_BATCH_CELLS // max(len(left), 1))
        for start in range(0, len(members), step):
            cols = slice(start, start + step)
            found = compare_columns(left[:, cols], right[:, cols], n_resamples=n_resamples,
                                    seed=seed, confidence=confidence, levels=levels,
                                    clusters=codes)
            for offset, result in enumerate(found):
                results[members[start + offset]] = result
    return [r for r in results if r is not None]
