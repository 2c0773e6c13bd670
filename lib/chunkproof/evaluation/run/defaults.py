"""The default grid, in one place: what a sweep, ``chunkproof sweep``, ``chunkproof report``,
``make run`` and notebook 03 run when not told otherwise (a test keeps the Makefile and the
notebook's literals equal to these)."""

DEFAULT_STRATEGIES = ("rct", "mhs_rct", "ast_merge", "ast_breadcrumb")
DEFAULT_SIZES = (300, 600, 1200)
"""Sizes in chars that bracket the size of the shipped study's pooled best config at the
default budget (docs/benchmarks.md; a test holds them to it), so a verdict is never forced to
the edge of what was tried."""
DEFAULT_RETRIEVERS = ("bm25",)
DEFAULT_K = 5
DEFAULT_CORPUS = "data/sample"
DEFAULT_BUDGETS = (512, 1024, 2048)
"""Token budgets: each also scores the top chunks that fill it (the fair comparison of sizes)."""
STUDY_SIZES = (300, 600, 1200, 2400)
"""The sizes ``chunkproof study`` sweeps: past where the pooled score peaks at the default
budget, so the study never stops at the edge of what it tried."""
DEFAULT_CONTRASTS = ("ast_breadcrumb:ast_merge",)
"""Planned contrasts: the breadcrumb prefix alone (the two strategies cut identical spans)."""


def middle_budget(budgets) -> int | None:
    """The middle of the token budgets (the lower middle of an even count); None for none."""
    ordered = sorted(budgets)
    return ordered[(len(ordered) - 1) // 2] if ordered else None


def default_primary_metric(budgets=DEFAULT_BUDGETS, k: int = DEFAULT_K, *,
                           answers: bool = True) -> str:
    """What a choice is made on unless told: the answer found (``answer_hit``; ``hit`` when the
    queries carry no answer) within the middle reader budget, so configs are compared on an
    equal amount of text handed over; at the top k only when no budget was swept."""
    first = "answer_hit" if answers else "hit"
    middle = middle_budget(budgets)
    return f"{first}@b{middle}" if middle is not None else f"{first}@{k}"


DEFAULT_PRIMARY_METRIC = default_primary_metric()


def default_contrasts(strategies) -> list[str]:
    """The default contrasts whose two strategies are both in ``strategies``."""
    names = set(strategies)
    return [c for c in DEFAULT_CONTRASTS if set(c.split(":")) <= names]


def contrasts_for(given, strategies) -> list[str]:
    """The planned contrasts of a sweep of ``strategies``: ``given`` None means the defaults
    whose two strategies are both swept (so a smaller grid drops them, never fails); a given
    contrast must name two different swept strategies, else ValueError saying how to fix it.
    The one rule of the command line, the notebooks and ``SweepParams``."""
    if given is None:
        return default_contrasts(strategies)
    found = [canonical_contrast(text, strategies) for text in given]
    for text in found:
        contrast_problem(text, strategies)
    return found


def canonical_contrast(text: str, strategies) -> str:
    """Contrast ``text`` with each side by its canonical name (a plug-in's entry-point name as
    its import path) when that makes both sides strategies of ``strategies`` (canonical
    names); else ``text`` as it is, for ``contrast_problem`` to explain."""
    cuts = [(text[:at], text[at + 1:]) for at, char in enumerate(text) if char == ":"]
    if any(set(cut) <= set(strategies) for cut in cuts):
        return text
    from ...chunking.registry import check_strategy  # here: --help loads no strategy
    from ...errors import ChunkproofError

    for cut in cuts:
        try:
            sides = tuple(check_strategy(side) for side in cut)
        except ChunkproofError:
            continue
        if set(sides) <= set(strategies):
            return ":".join(sides)
    return text


def contrast_sides(text: str, strategies) -> tuple[str, str]:
    """The two strategies of contrast 'A:B': split at the colon that leaves two swept
    strategies (a plug-in's name ``package.module:function`` holds a colon of its own), else
    at the one colon it holds; ValueError when neither tells."""
    cuts = [(text[:at], text[at + 1:]) for at, char in enumerate(text) if char == ":"]
    swept = [cut for cut in cuts if set(cut) <= set(strategies)]
    if len(swept) == 1 or len(cuts) == 1:
        return (swept or cuts)[0]
    raise ValueError(f"contrast {text!r}: expected 'A:B', two different strategies of the "
                     "sweep, e.g. ast_breadcrumb:ast_merge")


def contrast_problem(text: str, strategies) -> None:
    """ValueError when ``text`` is not 'A:B' of two different strategies in ``strategies``."""
    sides = contrast_sides(text, strategies)
    if sides[0] == sides[1] or not all(sides):
        raise ValueError(f"contrast {text!r}: expected 'A:B', two different strategies of the "
                         "sweep, e.g. ast_breadcrumb:ast_merge")
    unknown = [side for side in sides if side not in strategies]
    if unknown:
        raise ValueError(f"contrast {text!r} names {', '.join(unknown)}, not among the swept "
                         f"strategies ({', '.join(strategies)}): add it to the strategies, or "
                         "drop the contrast (--contrast none, CONTRASTS=[] in a notebook, "
                         "CONTRASTS= for make run)")


MIN_INTERVAL_N = 10
"""A mean over fewer queries than this gets no interval (NaN) in summary.csv and the charts: an
interval from a handful of values says nothing about the spread (one query gives [v, v]). Its
n is always shown."""
