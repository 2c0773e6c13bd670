"""Sentence boundaries of prose, by blingfire's sentence breaker (a compiled finite-state
model: fast enough to run on every oversized paragraph, and it knows CJK full stops)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..errors import SegmenterError


@lru_cache(maxsize=1)
def _breaker() -> Any:
    try:
        from blingfire import text_to_sentences_and_offsets
    except OSError as err:  # the wheel ships its native library for x86-64 only
        raise SegmenterError(str(err)) from None
    return text_to_sentences_and_offsets


def sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]`` as spans that tile it: each runs to where the next
    begins (whitespace excluded), the first from ``start``, the last to ``end``."""
    _, found = _breaker()(text[start:end])
    bounds = [start + s for s, _e in found if 0 < s < end - start]
    spans: list[tuple[int, int]] = []
    begin = start
    for nxt in [*bounds, end]:
        if nxt <= begin:
            continue
        stop = begin + len(text[begin:nxt].rstrip())
        if stop == begin:  # only indentation before the first sentence: it starts here
            continue
        spans.append((begin, stop))
        begin = nxt
    return spans
