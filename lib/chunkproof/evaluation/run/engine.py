"""Where a sweep's units of work run: in this process, over local processes (as many as pay
for their start, by default) or on a Ray cluster (``ray_engine``); ``launch`` starts the one an
Engine names. An engine changes only where and how fast the work runs: the units (``units``)
and their order are the same, and so are the results."""

from __future__ import annotations

import math
import multiprocessing
import os
import select
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from ...chunking.config import ChunkerConfig
from ...chunking.embedder import Embedder
from ...chunking.records import Chunk
from ...document.corpus import Document
from ...errors import ConfigError
from ...util.cores import all_cores
from ..queries.queries import Query
from . import units
from .costs import Costs
from .costs import load as load_costs
from .runs import read_chunks

ENGINES = ("local", "ray")
PRELOAD = ["chunkproof.evaluation.run.sweep", "bm25s", "Stemmer"]
"""Imported once by the process local workers are forked from (clean: no thread or lock of
this process is inherited), so that a worker starts ready."""
WORKERS_VARIABLE = "CHUNKPROOF_WORKERS"
"""Environment variable: the default number of local workers, or ``auto`` (the default)."""
SHARDS_PER_WORKER = 4
"""Document shards per worker: enough to even out documents of unequal length."""
AUTO = "auto"


def default_workers() -> int | None:
    """``$CHUNKPROOF_WORKERS`` when it is a count, else None: decided from the work
    (``auto_workers``)."""
    value = os.environ.get(WORKERS_VARIABLE, "").strip()
    if value and value.lower() != AUTO:
        if not value.isdigit() or int(value) < 1:
            raise ConfigError(f"{WORKERS_VARIABLE} must be a positive integer or {AUTO}; "
                              f"got {value!r}")
        return int(value)
    return None


@dataclass(frozen=True, slots=True)
class Work:
    """What a sweep has to do: what ``auto_workers`` weighs a pool's start against."""

    chars: int
    """Characters of the corpus (every config chunks, indexes and scores all of them)."""
    units: int
    """Configs x retrievers."""
    queries: int


POOL_START = 1.0
"""CPU seconds before a pool's first unit runs: the forkserver imports the sweep, bm25s and
the stemmer (0.57 CPU-s measured), then forks each worker."""
SHIP_PER_MB = 0.05
"""CPU seconds to hand one worker the parsed documents, per MB of corpus (pickled here,
unpickled there)."""
MARGIN = 1.25
"""A pool is started only when its estimate beats one process by this factor: an estimate
off by a quarter never makes a run slower."""


def auto_workers(work: Work, *, cores: int | None = None, busy: float | None = None,
                 costs: Costs | None = None) -> int:
    """How many local processes pay for their start on ``work``: 1 unless a pool's start and
    shipping (``POOL_START``, ``SHIP_PER_MB``) plus the work shared out beats the work done
    here by ``MARGIN``, on the cores no other process keeps busy (``busy``: the 1-minute
    load average beyond this process). The work is weighed by ``costs`` (default: those the
    last sweep measured, ``costs.load``)."""
    cores = all_cores() if cores is None else cores
    busy = max(os.getloadavg()[0] - 1.0, 0.0) if busy is None else busy
    costs = costs or load_costs()
    free = max(1, min(cores, math.floor(cores - busy + 0.5)))
    mb = work.chars / 1e6
    serial = work.units * (mb * costs.chunk_per_mb + work.queries * costs.score_per_query)
    best, best_seconds = 1, serial
    for n in range(2, free + 1):
        seconds = POOL_START + n * mb * SHIP_PER_MB + serial / n
        if seconds * MARGIN < serial and seconds < best_seconds:
            best, best_seconds = n, seconds
    return best


class Engine(BaseModel):
    """Where a sweep runs; equal results whatever it says."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["local", "ray"] = Field(
        default="local", description="local: processes on this machine; ray: a Ray cluster")
    workers: PositiveInt | None = Field(
        default=None, description="processes (local) or actors (ray); default (auto): as "
                                  "many local processes as pay for their start on the work "
                                  "($CHUNKPROOF_WORKERS if set), or every CPU of the cluster")
    address: str = Field(
        default="", description="ray: the cluster to join (e.g. ray://head:10001 or auto); "
                                "default: the running instance, else a local one")

    def describe(self, workers: int) -> dict[str, Any]:
        chosen = "given" if self.workers or default_workers() else AUTO
        return {"kind": self.kind, "workers": workers, "address": self.address,
                "chosen": chosen}


class Executor:
    """Runs the units of work of one sweep; results come back in the order asked."""

    workers: int = 1
    shards: Sequence[tuple[Document, ...]] = ()

    def chunk(self, jobs: Sequence[tuple[int, ChunkerConfig]]) -> Iterator[units.Chunked]:
        """The chunks of shard ``i`` under each config, for every ``(i, config)``."""
        raise NotImplementedError

    def score(self, jobs: Sequence[tuple[units.ScoreJob, Path]]) -> Iterator[units.Scored]:
        """Each job scored on the chunks kept at its path."""
        raise NotImplementedError

    def stats(self, config: ChunkerConfig, path: Path) -> Pending:
        """The config's chunk statistics (``units.config_stats``) of the chunks at ``path``,
        computed while the sweep goes on; ``.result()`` waits for them."""
        raise NotImplementedError

    def keep(self, path: Path, chunks: list[Chunk]) -> None:
        """The chunks just written to ``path`` (an engine without the folder keeps them; one
        that makes their statistics in this process, until then, so they are not read back)."""

    def encode(self, embedder: Embedder, batches: Iterable[list[str]]
               ) -> Iterator[np.ndarray]:
        """Unit vectors of each batch of texts, in order, the model loaded once."""
        encoder = _Encoder(embedder)
        return map(encoder, batches)

    def close(self) -> None:
        pass


class Pending(Protocol):
    def result(self) -> Any: ...


def done(value: Any) -> Future:
    """A finished Future holding ``value``."""
    future: Future = Future()
    future.set_result(value)
    return future


class _Encoder:
    """The dense model (``chunking.embedder``) loaded on first use; one batch encoded per
    call."""

    def __init__(self, embedder: Embedder):
        self.embedder = embedder
        self.model: Any = None

    def __call__(self, texts: list[str]) -> np.ndarray:
        if self.model is None:
            from ...chunking.encoder import embedding_model

            self.model = embedding_model(self.embedder)
        return self.model.embed(texts, len(texts))


class _StatsHere(Executor):
    """Chunk statistics made in this process from the chunks just written, not read back
    from their part: reading a part costs about what its statistics cost."""

    docs: list[Document]
    kept: dict[Path, list[Chunk]]
    """The chunks just written to a path, until their statistics are made."""

    def keep(self, path: Path, chunks: list[Chunk]) -> None:
        self.kept[path] = chunks

    def stats(self, config, path):
        chunks = self.kept.pop(path, None)
        return done(units.config_stats(config, read_chunks(path) if chunks is None else chunks,
                                       self.docs))


class InProcess(_StatsHere):
    """Every unit in this process, one after another: the reference every engine matches."""

    def __init__(self, docs: Sequence[Document], queries: Sequence[Query]):
        self.docs, self.queries = list(docs), list(queries)
        self.shards = units.shards(self.docs, 1)
        self.kept = {}

    def chunk(self, jobs):
        return (units.chunk_unit(self.shards[i], config) for i, config in jobs)

    def score(self, jobs):
        return (units.score_config(job, read_chunks(path), self.queries, self.docs)
                for job, path in jobs)


_STATE: dict[str, Any] = {}
"""A pool worker's documents, shards and queries, handed over once when it starts."""


def exit_with(process: int) -> None:
    """End this process as soon as process ``process`` ends, however it ends (``kill -9``
    included): a pool worker outlives no sweep. A daemon thread waits on the process's
    pidfd (Linux), else checks every second that it is there."""
    def watch() -> None:
        try:
            handle = os.pidfd_open(process)
        except ProcessLookupError:
            os._exit(1)
        except (AttributeError, OSError):  # no pidfd here: poll
            while _running(process):
                time.sleep(1.0)
        else:
            select.select([handle], [], [])
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _running(process: int) -> bool:
    try:
        os.kill(process, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _start_worker(docs: list[Document], shards: list[tuple[int, int]],
                  queries: list[Query], parent: int) -> None:
    exit_with(parent)
    _STATE.update(docs=docs, shards=[tuple(docs[a:b]) for a, b in shards], queries=queries)


def _chunk_task(job: tuple[int, ChunkerConfig]) -> units.Chunked:
    index, config = job
    return units.chunk_unit(_STATE["shards"][index], config)


def _score_task(job: tuple[units.ScoreJob, Path]) -> units.Scored:
    score_job, path = job
    return units.score_config(score_job, read_chunks(path), _STATE["queries"], _STATE["docs"])


class LocalPool(_StatsHere):
    """Units over ``workers`` local processes. Each worker is handed the parsed documents once
    (no worker reads or parses the corpus again); a config's chunks reach a scoring worker
    through the part on disk; their statistics are made here while the workers chunk the
    next configs."""

    def __init__(self, docs: Sequence[Document], queries: Sequence[Query], workers: int):
        self.workers = workers
        docs = self.docs = list(docs)
        self.kept = {}
        self.shards = units.shards(docs, workers * SHARDS_PER_WORKER)
        bounds, start = [], 0
        for shard in self.shards:
            bounds.append((start, start + len(shard)))
            start += len(shard)
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        self.pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                                        initargs=(docs, bounds, list(queries),
                                                  os.getpid()))

    def chunk(self, jobs):
        return ordered(lambda job: self.pool.submit(_chunk_task, job), jobs, 2 * self.workers)

    def score(self, jobs):
        return ordered(lambda job: self.pool.submit(_score_task, job), jobs, 2 * self.workers)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def ordered(submit: Callable[[Any], Future], items: Iterable[Any], window: int) -> Iterator:
    """Each item's result, in order, with at most ``window`` submitted ahead of the one
    read (so results of work far ahead are not held)."""
    pending: deque[Future] = deque()
    for item in items:
        pending.append(submit(item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()
