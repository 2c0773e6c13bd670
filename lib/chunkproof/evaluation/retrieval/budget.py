"""Context-budget bundles: the top-ranked chunks until a token budget is filled, each charged
what a reader is handed (its context label and text, ``sizes.reader_tokens``), the chunk that
crosses the budget truncated at a token boundary (not dropped), nothing after it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...chunking.records import Chunk
from ...chunking.sizes import label_tokens, prefix_chars, reader_tokens
from ...util.frozen import quick_replace


def budget_name(budget: int) -> str:
    """The cut a budget gives metric names: ``b1024`` in ``span_iou@b1024``."""
    return f"b{budget}"


def truncate(chunk: Chunk, tokens: int, *, starts: Sequence[int] | np.ndarray | None = None
             ) -> Chunk:
    """``chunk`` cut to its first ``tokens`` tokens: its text and span end shortened, so its
    renderings are their prefix then the shorter text (for a rewritten, non-verbatim chunk the
    span end moves by the same number of chars). ``starts``: its text's token starts, when
    already made (``sizes.token_starts``)."""
    chars = prefix_chars(chunk.text, tokens, starts=starts)
    text = chunk.text[:chars]
    end = chunk.start + min(chars, chunk.end - chunk.start)
    return quick_replace(chunk, text=text, end=end,
                         n_chars=len(text), n_words=len(text.split()), n_tokens=tokens)


def cost(chunk: Chunk) -> int:
    """Tokens a reader is handed for ``chunk``: its context label and its text."""
    return reader_tokens(chunk.n_tokens, chunk.context_prefix)


def fill_budget(ranked: Sequence[Chunk], budget: int) -> list[Chunk]:
    """Chunks in rank order while their cost (``cost``: label and text) fits in ``budget``;
    the first that does not fit has its text truncated to the tokens its label leaves, and
    filling stops there (a chunk whose label alone does not fit is left out): ``fill`` of one
    ranking."""
    ranked = list(ranked)
    costs = np.asarray([[cost(c) for c in ranked]], dtype=np.int64).reshape(1, len(ranked))
    labels = np.asarray([[label_tokens(c.context_prefix) for c in ranked]],
                        dtype=np.int64).reshape(1, len(ranked))
    whole, room = fill(costs, labels, np.asarray([len(ranked)]), budget)
    bundle = ranked[:whole[0]]
    return [*bundle, truncate(ranked[whole[0]], int(room[0]))] if room[0] else bundle


def fill(costs: np.ndarray, labels: np.ndarray, lengths: np.ndarray,
         budget: int) -> tuple[np.ndarray, np.ndarray]:
    """How ``budget`` tokens fill each ranking at once: ``costs`` and ``labels`` hold, row by
    row, each ranked chunk's cost and its label's tokens (a row's first ``lengths`` entries
    are its ranking). Per row: how many chunks go in whole, and the tokens the next one's
    text is truncated to (0: none goes in truncated). A chunk goes in whole while the budget
    left is positive and holds its cost; the first that does not fit gets the tokens its
    label leaves, when there are any, and filling stops there."""
    rows, width = costs.shape
    placed = np.arange(width) < np.asarray(lengths)[:, None]
    filled = np.cumsum(np.where(placed, costs, 0), axis=1)
    before = filled - np.where(placed, costs, 0)
    whole = (placed & (filled <= budget) & (before < budget)).sum(axis=1)
    nxt = np.minimum(whole, max(width - 1, 0))
    row = np.arange(rows)
    left = budget - (before[row, nxt] if width else np.zeros(rows, dtype=np.int64))
    room = left - (labels[row, nxt] if width else 0)
    truncated = (whole < np.asarray(lengths)) & (left > 0) & (room > 0)
    return whole, np.where(truncated, room, 0)


def reach(tokens: Sequence[int], budget: int) -> int:
    """How many ranks a bundle of ``budget`` tokens uses, given the ranked chunks' sizes."""
    sizes = np.asarray(tokens, dtype=np.int64).reshape(1, -1)
    return int(reaches(sizes, np.asarray([sizes.shape[1]]), budget)[0])


def reaches(tokens: np.ndarray, lengths: np.ndarray, budget: int) -> np.ndarray:
    """``reach`` of each row of ``tokens`` (a row's first ``lengths`` entries are its ranked
    chunks' sizes): the ranks up to the one where the sizes add up to ``budget``, at most
    the row's length."""
    lengths = np.asarray(lengths)
    placed = np.arange(tokens.shape[1]) < lengths[:, None]
    filled = np.cumsum(np.where(placed, tokens, 0), axis=1)
    return np.minimum((placed & (filled < budget)).sum(axis=1) + 1, lengths)


def depth(tokens: Sequence[int] | np.ndarray, budget: int) -> int:
    """Ranks to retrieve so that any ranking of chunks of these sizes fills ``budget``: as
    many as the smallest chunks take to reach it."""
    return reach(sorted(tokens), budget)
