"""The sweep's units of work, each a function of what it is handed: one shard of documents
chunked under one config, one config's chunks described, one config x retriever scored. Every
engine (in process, local processes, Ray) runs these and only these, so a result never
depends on where it ran."""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...chunking.build import chunk_document
from ...chunking.config import ChunkerConfig
from ...chunking.records import Chunk
from ...document.corpus import Document
from ..queries.queries import Query
from ..retrieval import budget, modes
from ..retrieval.retrieve import make_retriever
from ..scoring import chunk_stats, metrics
from . import grid, tables
from .runs import config_columns


def shards(docs: Sequence[Document], n: int) -> list[tuple[Document, ...]]:
    """``docs`` cut into at most ``n`` runs of consecutive documents of about equal text
    length, in order (so their chunks, concatenated, are in document order)."""
    if not docs:
        return []
    n = max(1, min(n, len(docs)))
    ends = list(itertools.accumulate(len(d.text) + 1 for d in docs))
    total = ends[-1]
    runs, start = [], 0
    for i in range(1, n + 1):
        stop = len(docs) if i == n else next(
            (j + 1 for j in range(start, len(docs)) if ends[j] >= total * i / n), len(docs))
        if stop > start:
            runs.append(tuple(docs[start:stop]))
            start = stop
    return runs


def chunk_shard(docs: Sequence[Document], config: ChunkerConfig) -> list[Chunk]:
    """Every chunk of ``docs`` under ``config``, in document order."""
    return [chunk for doc in docs for chunk in chunk_document(doc, config)]


@dataclass(frozen=True, slots=True)
class Chunked:
    """A shard chunked under one config, and the CPU seconds it took where it ran."""

    chunks: list[Chunk]
    cpu: float


def chunk_unit(docs: Sequence[Document], config: ChunkerConfig) -> Chunked:
    """``chunk_shard``, timed: the unit of work every engine runs."""
    began = time.process_time()
    chunks = chunk_shard(docs, config)
    return Chunked(chunks, time.process_time() - began)


@dataclass(frozen=True, slots=True)
class Digest:
    """What the sweep keeps of one config's chunks once they are on disk."""

    config_id: str
    signature: str
    """``grid.signature`` of the chunks: equal for configs whose chunks are identical."""
    applied: dict[str, str]
    """Document id -> the strategy that cut it (they differ under ``structure_routed``)."""


def digest(config: ChunkerConfig, chunks: Sequence[Chunk]) -> Digest:
    """The signature and applied strategies of one config's chunks."""
    return Digest(config.config_id, grid.signature(chunks),
                  {c.doc_id: c.applied_strategy for c in chunks})


def config_stats(config: ChunkerConfig, chunks: Sequence[Chunk], docs: Any) -> dict[str, Any]:
    """The config's row of chunk_stats.csv (``chunk_stats.chunk_stats``)."""
    return {**config_columns(config),
            **chunk_stats.chunk_stats(chunks, config, docs=docs).as_dict()}


@dataclass(frozen=True, slots=True)
class ScoreJob:
    """One config x retriever to index and score."""

    config: ChunkerConfig
    retriever: str
    k: int
    budgets: tuple[int, ...] = ()
    modes: tuple[str, ...] = (modes.PLAIN,)
    """The retrieval modes scored (``modes``), each on the same ranking."""
    options: dict[str, Any] = field(default_factory=dict)
    """Retriever constructor options (e.g. the embedding cache of a dense retriever)."""


@dataclass(frozen=True, slots=True)
class Scored:
    """A scored config x retriever: per-query rows, rankings, embedding cache counts."""

    per_query: pd.DataFrame
    retrieved: pd.DataFrame
    cache_stats: dict[str, int]
    cpu: float = 0.0
    """CPU seconds the unit took where it ran (index, rank, score)."""


def score_config(job: ScoreJob, chunks: Sequence[Chunk], queries: Sequence[Query],
                 docs: Any) -> Scored:
    """Index ``chunks``, rank them once for every query, deep enough to fill each budget
    (and, with ``boost``, to reorder), and score the top-k and budget bundles of each
    retrieval mode on that one ranking, every query at once (``metrics.Scorer``): a boost
    reorders it, an expansion fills the budgets from each hit's section (and is not scored
    at k). Rankings are kept as deep as a bundle reached."""
    began = time.process_time()
    chunks = list(chunks)
    retriever = make_retriever(job.retriever, **job.options)
    retriever.index(chunks)
    scorer = metrics.Scorer(chunks, queries, docs)
    tokens = scorer.table.cost[:scorer.table.ranked]
    deep = max([job.k, *(budget.depth(tokens, b) for b in job.budgets)])
    pool = max(deep, modes.BOOST_POOL) if modes.BOOST in job.modes else deep
    texts = [q.query for q in queries]
    found = retriever.search(texts, pool)
    columns = {**config_columns(job.config), "retriever": job.retriever}
    rows, retrieved = [], []
    for mode in job.modes:
        results = ([h[:deep] for h in modes.boost_all(found, texts, modes.heading_terms(chunks))]
                   if mode == modes.BOOST else [h[:deep] for h in found])
        expands = mode in modes.EXPANSIONS
        ranking = scorer.ranking(results)
        rows.append(scorer.frame(ranking, ks=() if expands else (job.k,), budgets=job.budgets,
                                 config_id=job.config.config_id,
                                 reader=modes.reader(mode, chunks),
                                 leading={**columns, "mode": mode}))
        retrieved.append(ranked_rows(scorer, ranking, results, job, {**columns, "mode": mode}))
    cache = dict(getattr(retriever, "cache_stats", None) or {})
    return Scored(pd.concat(rows, ignore_index=True),
                  tables.RETRIEVED.frame_of(pd.concat(retrieved, ignore_index=True)), cache,
                  time.process_time() - began)


def ranked_rows(scorer: metrics.Scorer, ranking: np.ndarray, results: Sequence,
                job: ScoreJob, leading: dict[str, Any]) -> pd.DataFrame:
    """retrieved.parquet's rows of one mode (``results``, and the ``ranking`` of rows
    ``scorer.ranking`` made of them): each query's ranking as deep as its top k or a budget
    bundle reached (``budget.reaches``)."""
    lengths = (ranking >= 0).sum(axis=1)
    sizes = scorer.table.cost[np.maximum(ranking, 0)]
    used = np.full(len(ranking), job.k)
    for b in job.budgets:
        used = np.maximum(used, budget.reaches(sizes, lengths, b))
    query, column = np.nonzero(np.arange(ranking.shape[1]) < np.minimum(used, lengths)[:, None])
    scores = np.asarray([float(score) for hits in results for _, score in hits])
    starts = np.cumsum(lengths) - lengths
    return pd.DataFrame({
        **metrics.constant_columns(leading, len(query)),
        "query_id": metrics.text_column([q.id for q in scorer.queries], query),
        "rank": column + 1,
        "chunk_id": metrics.text_column([c.id for c in scorer.table.chunks],
                                        ranking[query, column]),
        "score": scores[starts[query] + column]})
