"""Context-budget bundles: the top-ranked chunks until a token budget is filled, each charged
what a reader is handed (its context label and text, ``sizes.reader_tokens``), the chunk that
crosses the budget truncated at a token boundary (not dropped), nothing after it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ...chunking.records import Chunk
from ...chunking.sizes import label_tokens, prefix_chars, reader_tokens


def budget_name(budget: int) -> str:
    """The cut a budget gives metric names: ``b1024`` in ``span_iou@b1024``."""
    return f"b{budget}"


def truncate(chunk: Chunk, tokens: int) -> Chunk:
    """``chunk`` cut to its first ``tokens`` tokens: its text and span end shortened, so its
    renderings are their prefix then the shorter text (for a rewritten, non-verbatim chunk the
    span end moves by the same number of chars)."""
    chars = prefix_chars(chunk.text, tokens)
    text = chunk.text[:chars]
    end = chunk.start + min(chars, chunk.end - chunk.start)
    return dataclasses.replace(chunk, text=text, end=end,
                               n_chars=len(text), n_words=len(text.split()), n_tokens=tokens)


def cost(chunk: Chunk) -> int:
    """Tokens a reader is handed for ``chunk``: its context label and its text."""
    return reader_tokens(chunk.n_tokens, chunk.context_prefix)


def fill_budget(ranked: Sequence[Chunk], budget: int) -> list[Chunk]:
    """Chunks in rank order while their cost (``cost``: label and text) fits in ``budget``;
    the first that does not fit has its text truncated to the tokens its label leaves, and
    filling stops there (a chunk whose label alone does not fit is left out)."""
    bundle: list[Chunk] = []
    left = budget
    for chunk in ranked:
        if left <= 0:
            break
        if cost(chunk) <= left:
            bundle.append(chunk)
            left -= cost(chunk)
        else:
            room = left - label_tokens(chunk.context_prefix)
            if room > 0:
                bundle.append(truncate(chunk, room))
            break
    return bundle


def reach(tokens: Sequence[int], budget: int) -> int:
    """How many ranks a bundle of ``budget`` tokens uses, given the ranked chunks' sizes."""
    filled = np.cumsum(np.asarray(tokens, dtype=np.int64))
    return min(int(np.searchsorted(filled, budget)) + 1, len(filled))


def depth(tokens: Sequence[int], budget: int) -> int:
    """Ranks to retrieve so that any ranking of chunks of these sizes fills ``budget``: as
    many as the smallest chunks take to reach it."""
    return reach(sorted(tokens), budget)
