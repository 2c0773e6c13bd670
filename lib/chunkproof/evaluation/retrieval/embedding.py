"""One embedding pass per model for a whole sweep: the distinct texts of every config (and
the queries) not yet in the cache, longest first in fixed batches, so a batch pads little,
with a progress bar over texts; every vector lands in the cache the retrievers read."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ...util.progress import progress_bar
from .retrieve import EmbeddingCache

BATCH = 64
"""Texts per batch of the pass."""
DENSE = ("dense", "hybrid")
"""Retrievers that embed (hybrid through its dense half)."""


def sorted_batches(texts: list[str], size: int = BATCH) -> list[list[int]]:
    """Indices of ``texts`` longest first (ties in order), cut into batches of ``size``."""
    order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
    return [order[start:start + size] for start in range(0, len(order), size)]


def embed_missing(cache: EmbeddingCache, texts: Iterable[str],
                  encode: Callable[[Iterable[list[str]]], Iterator[np.ndarray]], *,
                  batch_size: int = BATCH, progress: bool = True) -> dict[str, Any]:
    """Embed the distinct ``texts`` not in ``cache`` in one length-sorted batched pass and
    store them: hits (already cached), misses (embedded now) and texts per second."""
    by_key = {cache.key(t): t for t in texts}
    found = set(cache.get(list(by_key)))
    missing = [t for k, t in by_key.items() if k not in found]
    batches = sorted_batches(missing, batch_size)
    began = time.perf_counter()
    with progress_bar(total=len(missing), desc="embed", unit="text", enabled=progress) as bar:
        for batch, vectors in zip(batches, encode([missing[i] for i in b] for b in batches),
                                  strict=True):
            cache.put({cache.key(missing[i]): v for i, v in zip(batch, vectors, strict=True)})
            bar.update(len(batch))
    seconds = time.perf_counter() - began
    return {"hits": len(found), "misses": len(missing),
            "hit_rate": len(found) / len(by_key) if by_key else None,
            "texts_per_second": round(len(missing) / seconds, 1) if missing else None}
