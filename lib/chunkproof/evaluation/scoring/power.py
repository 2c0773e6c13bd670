"""How many questions a paired 0/1 comparison needs, from the exact sign test's own power:
two configs disagree on a share of the questions (the discordant ones) and one wins a share of
those; with questions clustered by page, the design effect inflates the count. Both the
questions needed for a difference and the smallest difference a number of questions detects
come from this one calculation, never from a normal approximation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

POWER = 0.8
"""The power figures are stated at."""
MAX_QUESTIONS = 2000
"""Beyond this many questions a count is no realistic advice: it is reported as more."""


def rejection_bound(discordant: np.ndarray, alpha: float) -> np.ndarray:
    """For each number of discordant questions, the largest count of one side at which the
    two-sided exact sign test rejects at ``alpha`` (-1 where none does)."""
    from scipy import stats  # here: a notebook that only draws never loads scipy

    d = np.asarray(discordant)
    bound = stats.binom.ppf(alpha / 2, d, 0.5).astype(int)
    too_far = stats.binom.cdf(bound, d, 0.5) > alpha / 2
    return np.where(too_far, bound - 1, bound)


def sign_test_power(n: int, a_only: float, b_only: float, *, alpha: float = 0.05) -> float:
    """Power of the two-sided exact sign test (McNemar's, exact) on ``n`` independent pairs
    where A alone scores 1 with probability ``a_only`` and B alone with ``b_only``."""
    from scipy import stats

    disagree = a_only + b_only
    if n <= 0 or disagree <= 0:
        return 0.0
    counts = np.arange(n + 1)
    bound = rejection_bound(counts, alpha)
    share = a_only / disagree
    tail = np.where(bound >= 0, stats.binom.cdf(bound, counts, share)
                    + stats.binom.sf(counts - bound - 1, counts, share), 0.0)
    return float(np.sum(stats.binom.pmf(counts, n, disagree) * tail))


def _effective(n: int, design_effect: float) -> int:
    return int(n / max(design_effect, 1.0))


def questions_needed(a_only: float, b_only: float, *, design_effect: float = 1.0,
                     alpha: float = 0.05, power: float = POWER,
                     cap: int = MAX_QUESTIONS) -> int | None:
    """The fewest questions at which the exact sign test reaches ``power`` against a
    difference ``a_only - b_only`` (the shares of questions only A, only B answers), the count
    inflated by ``design_effect`` (questions clustered by page); None past ``cap``."""
    if a_only == b_only:
        return None
    n = 2
    while True:
        effective = _effective(n, design_effect)
        if sign_test_power(effective, a_only, b_only, alpha=alpha) >= power:
            return n
        if n >= cap:
            return None
        n = min(cap, n + max(1, n // 40))


def detectable_difference(n: int, discordant: float, *, design_effect: float = 1.0,
                          alpha: float = 0.05, power: float = POWER) -> float | None:
    """The smallest difference in a 0/1 metric (the share only one config answers minus the
    share only the other does) that ``n`` questions detect with ``power`` when the two
    configs disagree on a ``discordant`` share of them; None when not even a difference of
    the whole discordant share would be detected (too few questions)."""
    effective = _effective(n, design_effect)
    if discordant <= 0 or sign_test_power(effective, discordant, 0.0, alpha=alpha) < power:
        return None
    low, high = 0.0, discordant
    for _ in range(40):
        mid = (low + high) / 2
        a_only = (discordant + mid) / 2
        if sign_test_power(effective, a_only, discordant - a_only, alpha=alpha) >= power:
            high = mid
        else:
            low = mid
    return high


@dataclass(frozen=True, slots=True)
class Settling:
    """What would settle a comparison of two configs: the questions it needs, in words."""

    questions: int | None
    """Questions needed (None: no realistic number)."""
    text: str


def settling(diffs: np.ndarray, codes: Sequence | None, *, margin: float,
             alpha: float = 0.05) -> Settling:
    """How many questions would settle A against B, from their per-question differences
    ``diffs`` (1: only A answers, -1: only B), the discordance and design effect observed
    (``codes``: each question's page), by the exact test's power; none when they differ by
    less than ``margin`` or would need more than ``MAX_QUESTIONS``."""
    from .clustered import cluster_codes, design_effect

    n = len(diffs)
    a_only = float(np.mean(diffs > 0)) if n else 0.0
    b_only = float(np.mean(diffs < 0)) if n else 0.0
    if n == 0 or abs(a_only - b_only) < margin:
        return Settling(None, "no realistic number: they differ by less than the tie margin "
                              f"({abs(a_only - b_only):.3f} < {margin:g})")
    effect = 1.0
    if codes is not None:
        numbers, count = cluster_codes(codes)
        effect = float(design_effect(diffs[:, None].astype(float), numbers, count)[0])
        effect = 1.0 if math.isnan(effect) else max(effect, 1.0)
    needed = questions_needed(a_only, b_only, design_effect=effect, alpha=alpha)
    if needed is None:
        return Settling(None, f"more than {MAX_QUESTIONS:,} questions")
    return Settling(needed, f"about {needed} questions (exact sign test, power {POWER:.0%}, "
                            f"design effect {effect:.2f})")
