"""The executor an Engine names: in this process, a local process pool or a Ray cluster."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ...document.corpus import Document
from ..queries.queries import Query
from .engine import (
    Engine,
    Executor,
    InProcess,
    LocalPool,
    Work,
    auto_workers,
    default_workers,
)


@contextmanager
def start(engine: Engine, docs: Sequence[Document], queries: Sequence[Query], units: int = 1
          ) -> Iterator[Executor]:
    """The executor ``engine`` describes, closed on exit; local workers, unless given, as
    many as pay for their start on ``units`` configs x retrievers over ``docs``."""
    executor: Executor
    workers = engine.workers or default_workers()
    if engine.kind == "ray":
        from .ray_engine import RayExecutor

        executor = RayExecutor(engine, docs, queries)
    else:
        workers = workers or auto_workers(Work(sum(len(d.text) for d in docs), units,
                                               len(queries)))
        executor = InProcess(docs, queries) if workers == 1 else LocalPool(docs, queries,
                                                                            workers)
    try:
        yield executor
    finally:
        executor.close()
