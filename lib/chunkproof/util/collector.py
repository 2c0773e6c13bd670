"""Python's cyclic garbage collector held off while one document is parsed or chunked."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run the block (or, as a decorator, the function) with the cyclic collector off, and turn
    it back on after unless it was off already.

    A parse or a chunking makes objects by the hundred thousand (tokens, nodes, Blocks, pieces)
    that live until it returns and hold no reference cycles. Left on, the collector runs every
    few hundred of them and, as they pile up, walks them and every object the process already
    holds (a loaded corpus) again and again: a quarter of markdown-it-py's parse of long
    release notes. Reference counting still frees everything as usual; what cycles the block
    leaves are collected once it ends."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
