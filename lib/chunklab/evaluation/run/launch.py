"""The executor an Engine names: in this process, a local process pool or a Ray cluster."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ...document.corpus import Document
from ..queries.queries import Query
from .engine import Engine, Executor, InProcess, LocalPool, default_workers


@contextmanager
def start(engine: Engine, docs: Sequence[Document], queries: Sequence[Query]
          ) -> Iterator[Executor]:
    """The executor ``engine`` describes, closed on exit."""
    executor: Executor
    if engine.kind == "ray":
        from .ray_engine import RayExecutor

        executor = RayExecutor(engine, docs, queries)
    elif (engine.workers or default_workers()) == 1:
        executor = InProcess(docs, queries)
    else:
        executor = LocalPool(docs, queries, engine.workers or default_workers())
    try:
        yield executor
    finally:
        executor.close()
