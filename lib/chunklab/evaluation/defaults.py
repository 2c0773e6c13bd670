"""The default grid, in one place: what a sweep, ``chunklab sweep``, ``chunklab report``,
``make run`` and notebook 03 run when not told otherwise (a test keeps the Makefile and the
notebook's literals equal to these)."""

DEFAULT_STRATEGIES = ("rct", "mhs_rct", "ast_merge", "ast_breadcrumb")
DEFAULT_SIZES = (300, 600, 1200)
DEFAULT_RETRIEVERS = ("bm25",)
DEFAULT_K = 5
DEFAULT_CORPUS = "data/sample"
DEFAULT_BUDGETS = (512, 1024, 2048)
"""Token budgets: each also scores the top chunks that fill it (the fair comparison of sizes)."""
DEFAULT_CONTRASTS = ("ast_breadcrumb:ast_merge",)
"""Planned contrasts: the breadcrumb prefix alone (the two strategies cut identical spans)."""


def default_contrasts(strategies) -> list[str]:
    """The default contrasts whose two strategies are both in ``strategies``."""
    names = set(strategies)
    return [c for c in DEFAULT_CONTRASTS if set(c.split(":")) <= names]


MIN_INTERVAL_N = 10
"""A mean over fewer queries than this gets no interval (NaN) in summary.csv and the charts: an
interval from a handful of values says nothing about the spread (one query gives [v, v]). Its
n is always shown."""
