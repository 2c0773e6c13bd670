"""The sweep's units of work on a Ray cluster (the optional ``ray`` extra): the same units as
the local engine, run by actors that each receive the parsed documents and the queries once
(an actor that dies is restarted and its unfinished units run again, ``RETRIES`` times);
a config's chunks and the vectors a dense retriever needs travel through Ray's object store,
so no worker needs the run folder or the embedding cache; embedding runs in actors that
load the model once, on a GPU when their node has one."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ...chunking.config import ChunkerConfig
from ...chunking.embedder import Embedder
from ...chunking.records import Chunk
from ...document.corpus import Document
from ...errors import WorkerLostError
from ...util.ray_cluster import connect
from ..queries.queries import Query
from ..retrieval.embedding import DENSE
from ..retrieval.retrieve import EmbeddingCache, MemoryCache, default_cache_dir
from . import units
from .engine import SHARDS_PER_WORKER, Engine, Executor, _Encoder
from .runs import read_chunks, read_part

RETRIES = 3
"""How often a lost actor is restarted and its unfinished calls run again (the units are
deterministic and keyed, so a rerun gives the same result) before the sweep fails."""


class SweepWorker:
    """A Ray actor: the documents and queries, received once; one unit per call."""

    def __init__(self, docs: list[Document], queries: list[Query]):
        self.docs, self.queries = docs, queries

    def chunk(self, shard: tuple[Document, ...], config: ChunkerConfig) -> units.Chunked:
        return units.chunk_unit(shard, config)

    def score(self, job: units.ScoreJob, chunks: list[Chunk]) -> units.Scored:
        return units.score_config(job, chunks, self.queries, self.docs)

    def stats(self, config: ChunkerConfig, chunks: list[Chunk]) -> dict[str, Any]:
        return units.config_stats(config, chunks, self.docs)


class EmbedWorker:
    """A Ray actor holding the sentence-transformers model, loaded once."""

    def __init__(self, embedder: Embedder, threads: int = 0):
        if threads:
            import torch

            torch.set_num_threads(threads)
        self.encoder = _Encoder(embedder)

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.encoder(texts)


class _Ref:
    """A Ray object ref that waits like a Future."""

    def __init__(self, ray: Any, ref: Any):
        self.ray, self.ref = ray, ref

    def result(self) -> Any:
        with _lost_workers(self.ray):
            return self.ray.get(self.ref)


@contextmanager
def _lost_workers(ray: Any) -> Iterator[None]:
    """A worker that died more than ``RETRIES`` times becomes WorkerLostError (one line)."""
    try:
        yield
    except ray.exceptions.RayActorError as err:
        reason = " ".join(str(err).split())[:200]
        raise WorkerLostError(f"a Ray worker died and was restarted {RETRIES} times without "
                              f"finishing its work ({reason}); check the cluster's memory "
                              "and nodes, or run with --engine local") from None


def _results(ray: Any, results: Iterator[Any]) -> Iterator[Any]:
    with _lost_workers(ray):
        yield from results


class RayExecutor(Executor):
    """Units as Ray actor tasks, ``workers`` actors (default: the cluster's CPUs)."""

    def __init__(self, engine: Engine, docs: Sequence[Document], queries: Sequence[Query]):
        ray, self.owned = connect(engine.address, feature="the ray engine")
        self.ray = ray
        resources = ray.cluster_resources()
        self.workers = engine.workers or max(1, int(resources.get("CPU", 1)))
        self.gpus = float(resources.get("GPU", 0))
        self.queries = list(queries)
        self.shards = units.shards(list(docs), self.workers * SHARDS_PER_WORKER)
        self.shard_refs = [ray.put(shard) for shard in self.shards]
        docs_ref, queries_ref = ray.put(list(docs)), ray.put(list(queries))
        actor = ray.remote(num_cpus=1, max_restarts=RETRIES,
                           max_task_retries=RETRIES)(SweepWorker)
        self.actors = [actor.remote(docs_ref, queries_ref) for _ in range(self.workers)]
        self.pool = ray.util.ActorPool(self.actors)
        self.kept: dict[Path, Any] = {}
        self.embedders: list[Any] = []
        self.turn = 0

    def chunk(self, jobs):
        refs = self.shard_refs
        return _results(self.ray, self.pool.map(
            lambda a, job: a.chunk.remote(refs[job[0]], job[1]), list(jobs)))

    def keep(self, path: Path, chunks: list[Chunk]) -> None:
        self.kept[path] = self.ray.put(chunks)

    def _chunks(self, path: Path):
        if path not in self.kept:
            self.kept[path] = self.ray.put(read_chunks(path))
        return self.kept[path]

    def stats(self, config, path):
        actor = self.actors[self.turn % len(self.actors)]
        self.turn += 1
        return _Ref(self.ray, actor.stats.remote(config, self._chunks(path)))

    def score(self, jobs):
        ready = [(self._with_vectors(job, path), self._chunks(path)) for job, path in jobs]
        return _results(self.ray, self.pool.map(lambda a, item: a.score.remote(*item), ready))

    def _with_vectors(self, job: units.ScoreJob, path: Path) -> units.ScoreJob:
        """A dense job carries the vectors of its chunks and the queries from this machine's
        cache (filled by the sweep's embedding pass), so its actor embeds nothing."""
        if job.retriever not in DENSE:
            return job
        name = job.options["embedder"].cache_name()
        cache = EmbeddingCache(default_cache_dir(), name)
        texts = list(read_part(path, ["embed_text"])["embed_text"])
        texts += [q.query for q in self.queries]
        keys = [cache.key(t) for t in texts]
        memory = MemoryCache(name, cache.get(list(dict.fromkeys(keys))))
        return dataclasses.replace(job, options={**job.options, "cache": memory})

    def encode(self, embedder, batches):
        if not self.embedders:
            self.embedders = self._embedders(embedder)
        pool = self.ray.util.ActorPool(self.embedders)
        return pool.map(lambda a, texts: a.encode.remote(texts), list(batches))

    def _embedders(self, embedder: Embedder) -> list[Any]:
        """One embedding actor per GPU of the cluster; without GPUs, one per node using the
        node's cores (the sweep's actors are idle while the pass runs)."""
        ray = self.ray
        if self.gpus >= 1:
            actor = ray.remote(num_cpus=1, num_gpus=1)(EmbedWorker)
            return [actor.remote(embedder) for _ in range(int(self.gpus))]
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor = ray.remote(num_cpus=0)(EmbedWorker)
        return [actor.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
                    node["NodeID"], soft=False)).remote(embedder,
                                                        int(node["Resources"].get("CPU", 1)))
                for node in ray.nodes() if node.get("Alive")]

    def close(self) -> None:
        for actor in [*self.actors, *self.embedders]:
            self.ray.kill(actor)
        self.kept.clear()
        if self.owned:
            self.ray.shutdown()
