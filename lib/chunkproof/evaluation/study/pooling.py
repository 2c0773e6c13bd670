"""Random-effects pooling of per-site paired effects (DerSimonian-Laird): each site's effect
of one config against another is the mean per-question difference with its cluster-robust
standard error (questions grouped by page), the sites' effects are pooled with the
between-site variance tau^2 estimated from their spread, and the prediction interval says
where the effect on a new site is expected to lie."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ..scoring.clustered import cluster_codes, cluster_se

CONFIDENCE = 0.95


def site_effect(diffs: np.ndarray, pages: Sequence | np.ndarray) -> tuple[float, float]:
    """(mean difference, its cluster-robust standard error) of one site's per-question
    differences, questions grouped by ``pages`` (labels, or cluster numbers from 0). The
    standard error is at least half a question's worth (0.5 / n): two configs that agree on
    every question of a site still carry that site's uncertainty, not an infinite weight."""
    values = np.asarray(diffs, dtype=float)
    n = len(values)
    given = np.asarray(pages)
    if given.dtype.kind in "iu":
        _, codes = np.unique(given, return_inverse=True)
        count = int(codes.max()) + 1 if len(codes) else 0
    else:
        codes, count = cluster_codes(list(pages))
    se = float(cluster_se(values[:, None], codes, count)[0]) if count > 1 else math.nan
    floor = 0.5 / max(n, 1)
    return float(values.mean()), floor if math.isnan(se) else max(se, floor)


@dataclass(frozen=True, slots=True)
class Pooled:
    """The random-effects pooled effect of ``k`` sites."""

    k: int
    effect: float
    se: float
    ci_low: float
    ci_high: float
    tau2: float
    """Between-site variance of the true effects (DerSimonian-Laird, clipped at 0)."""
    i2: float
    """Share of the effects' spread beyond what sampling explains, (Q - (k-1)) / Q, at least 0."""
    q: float
    """Cochran's Q of the sites' effects about the fixed-effect mean."""
    pi_low: float
    """The 95% prediction interval of the effect on a new site (t with k - 2 degrees of
    freedom, Higgins, Thompson and Spiegelhalter 2009); NaN with fewer than 3 sites."""
    pi_high: float

    def as_dict(self) -> dict:
        return asdict(self)


def pool(effects: Sequence[float], ses: Sequence[float], *,
         confidence: float = CONFIDENCE) -> Pooled:
    """DerSimonian-Laird random-effects pooling of ``effects`` with standard errors ``ses``;
    the interval is normal, the prediction interval t with k - 2 degrees of freedom."""
    from scipy import stats  # here: a notebook that only draws never loads scipy

    y = np.asarray(effects, dtype=float)
    variance = np.asarray(ses, dtype=float) ** 2
    k = len(y)
    w = 1.0 / variance
    fixed = float((w * y).sum() / w.sum())
    q = float((w * (y - fixed) ** 2).sum())
    c = float(w.sum() - (w * w).sum() / w.sum())
    tau2 = max(0.0, (q - (k - 1)) / c) if k > 1 and c > 0 else 0.0
    w_re = 1.0 / (variance + tau2)
    effect = float((w_re * y).sum() / w_re.sum())
    se = float(math.sqrt(1.0 / w_re.sum()))
    z = float(stats.norm.ppf(0.5 + confidence / 2))
    i2 = max(0.0, (q - (k - 1)) / q) if q > 0 else 0.0
    if k >= 3:
        half = float(stats.t.ppf(0.5 + confidence / 2, k - 2)) * math.sqrt(tau2 + se * se)
        pi = (effect - half, effect + half)
    else:
        pi = (math.nan, math.nan)
    return Pooled(k=k, effect=effect, se=se, ci_low=effect - z * se, ci_high=effect + z * se,
                  tau2=tau2, i2=i2, q=q, pi_low=pi[0], pi_high=pi[1])
