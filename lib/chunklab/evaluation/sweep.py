"""The sweep: strategies x sizes x retrievers (x options), chunked once, scored per query."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from ..chunking.build import chunk_document
from ..chunking.config import ChunkerConfig
from ..chunking.records import Chunk
from ..chunking.sizes import token_method
from ..document.corpus import Corpus, load_corpus
from ..util.atomic import write_atomic
from . import metrics, stats, tables
from .queries import load_queries, mine_queries
from .retrieve import make_retriever
from .runs import (
    RunInfo,
    SweepParams,
    SweepResult,
    config_columns,
    prepare,
    versions,
    write_results,
)

KEY_METRICS = ("recall@{k}", "hit@{k}", "answer_hit@{k}", "bundle_efficiency@{k}")


class _Stage:
    """Accumulates wall time per stage for run.json."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - began


def _parquet(path: Path, frame: pd.DataFrame) -> None:
    write_atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))


def _score(config, retriever_name, retriever, chunks, queries, corpus, k) -> tuple:
    retriever.index(chunks)
    results = retriever.search([q.query for q in queries], k)
    rows = metrics.score_run(results, queries, chunks, docs=corpus, ks=(k,),
                             config_id=config.config_id)
    retrieved = [
        {"query_id": q.id, "rank": rank, "chunk_id": chunk_id, "score": float(score)}
        for q, hits in zip(queries, results, strict=True)
        for rank, (chunk_id, score) in enumerate(hits, start=1)
    ]
    columns = {**config_columns(config), "retriever": retriever_name}
    return (pd.DataFrame([{**columns, **r} for r in rows]),
            tables.RETRIEVED.frame({**columns, **r} for r in retrieved))


def run_sweep(params: SweepParams, out_dir: str | os.PathLike | None = None, *,
              corpus: Corpus | None = None, progress: bool = True) -> SweepResult:
    """Run the grid; with ``out_dir``, write every table there atomically and reuse parts."""
    stage = _Stage()
    run_dir = prepare(params, out_dir)
    with stage("load"):
        corpus = corpus or load_corpus(params.corpus,
                                       infer_headings=params.options.get("infer_headings", False))
        queries = load_queries(params.queries, corpus) if params.queries else mine_queries(corpus)
    configs = params.configs()
    parts = run_dir / "parts" if run_dir else None
    reused = 0
    chunk_frames: list[pd.DataFrame] = []
    chunks_by_config: dict[str, list[Chunk]] = {}
    for config in tqdm(configs, desc="chunk", disable=not progress):
        with stage("chunk"):
            path = parts / f"{config.config_id}.chunks.parquet" if parts else None
            chunks, frame, hit = _chunk_part(corpus, config, path)
        reused += hit
        chunk_frames.append(frame)
        chunks_by_config[config.config_id] = chunks
    per_query, retrieved, cache_stats = _retrieve_all(
        params, configs, chunks_by_config, queries, corpus, parts, stage, progress)
    reused += cache_stats.pop("reused_parts")
    per_query = _annotate(per_query, queries, corpus, chunks_by_config)
    with stage("statistics"):
        summary = summary_table(per_query)
        significance = significance_table(per_query, params.k)
        chunk_stats = tables.CHUNK_STATS.frame(
            {**config_columns(c),
             **metrics.chunk_stats(chunks_by_config[c.config_id], c, docs=corpus).as_dict()}
            for c in configs
        )
    info: RunInfo = {
        "run_id": params.run_id, "params": params.model_dump(), "versions": versions(),
        "corpus": {"root": params.corpus, "fingerprint": corpus.fingerprint,
                   "documents": len(corpus), "skipped": [s.as_dict() for s in corpus.skipped]},
        "queries": len(queries), "token_method": token_method(),
        "configs": len(configs), "reused_parts": reused,
        "embedding_cache": cache_stats,
        "seconds": {name: round(v, 3) for name, v in stage.seconds.items()},
    }
    chunks = tables.CHUNKS.conform(pd.concat(chunk_frames, ignore_index=True))
    result = SweepResult(params, run_dir, chunks, retrieved, tables.PER_QUERY.conform(per_query),
                         summary, chunk_stats, significance, info)
    if run_dir:
        write_results(result)
    return result


def _chunk_part(corpus: Corpus, config: ChunkerConfig, path: Path | None) -> tuple:
    """(chunks, their table, reused?): read back from a finished part of an identical earlier
    run, or chunked now (and saved when the run has a folder)."""
    if path is not None and path.exists():
        frame = pd.read_parquet(path)
        return _records(frame), frame, True
    chunks = [chunk for doc in corpus for chunk in chunk_document(doc, config)]
    frame = tables.CHUNKS.frame({**config_columns(config), **chunk.as_dict()} for chunk in chunks)
    if path is not None:
        _parquet(path, frame)
    return chunks, frame, False


def _records(frame: pd.DataFrame) -> list[Chunk]:
    return [Chunk.from_dict(row) for row in frame.to_dict("records")]


def _retrieve_all(params, configs, chunks_by_config, queries, corpus, parts, stage, progress):
    per_query, retrieved = [], []
    retrievers = {name: make_retriever(name) for name in params.retrievers}
    reused = 0
    grid = [(c, name) for c in configs for name in params.retrievers]
    for config, name in tqdm(grid, desc="retrieve + score", disable=not progress):
        stem = f"{config.config_id}.{name}"
        done = parts and (parts / f"{stem}.per_query.parquet").exists()
        with stage(f"retrieve:{name}"):
            if done:
                scored = pd.read_parquet(parts / f"{stem}.per_query.parquet")
                ranks = pd.read_parquet(parts / f"{stem}.retrieved.parquet")
                reused += 1
            else:
                scored, ranks = _score(config, name, retrievers[name],
                                       chunks_by_config[config.config_id], queries, corpus,
                                       params.k)
                if parts:
                    _parquet(parts / f"{stem}.retrieved.parquet", ranks)
                    _parquet(parts / f"{stem}.per_query.parquet", scored)
        per_query.append(scored)
        retrieved.append(ranks)
    cache: dict[str, Any] = {"hits": 0, "misses": 0}
    for retriever in retrievers.values():
        for key, value in (getattr(retriever, "cache_stats", None) or {}).items():
            if key in cache:
                cache[key] += value
    looked_up = cache["hits"] + cache["misses"]
    cache["hit_rate"] = cache["hits"] / looked_up if looked_up else None
    cache["reused_parts"] = reused
    return (pd.concat(per_query, ignore_index=True), pd.concat(retrieved, ignore_index=True),
            cache)


def _annotate(per_query: pd.DataFrame, queries, corpus: Corpus, chunks_by_config) -> pd.DataFrame:
    """Each row gets the structure source of its query's first gold document and the
    strategy actually applied to that document, so results split by both."""
    first_source = {q.id: q.sources[0] for q in queries}
    structure = {d.id: d.structure_source for d in corpus}
    applied = {
        config_id: {c.doc_id: c.applied_strategy for c in chunks}
        for config_id, chunks in chunks_by_config.items()
    }
    sources = per_query["query_id"].map(first_source)
    per_query = per_query.copy()
    per_query["structure_source"] = sources.map(structure)
    per_query["applied_strategy"] = [
        applied[c].get(s, "") for c, s in zip(per_query["config_id"], sources, strict=True)
    ]
    return per_query


GROUP = ["config_id", "strategy", "size", "unit", "options", "retriever"]
SPLITS = ("structure_source", "applied_strategy", "query_kind")


SUMMARY_RESAMPLES = 1000
"""Bootstrap resamples behind each summary interval (percentile method, seed 0)."""


def _mean_ci(values: np.ndarray) -> dict[str, float]:
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return {"mean": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n": 0}
    low, high = stats.bootstrap_ci(values, n_resamples=SUMMARY_RESAMPLES, seed=0,
                                   methods=("percentile",), min_n=1)
    return {"mean": float(values.mean()), "ci_low": low, "ci_high": high, "n": len(values)}


def summary_table(per_query: pd.DataFrame) -> pd.DataFrame:
    """config x metric: mean with a 95% bootstrap interval and n; blended ("all") and split by
    structure source, applied strategy and query kind, side by side."""
    rows = []
    splits = [("all", None), *[(s, s) for s in SPLITS if s in per_query]]
    for split, column in splits:
        keys = [*GROUP, "metric"] + ([column] if column else [])
        for key, group in per_query.groupby(keys, sort=True, dropna=False):
            record = dict(zip(keys, key, strict=True))
            value = record.pop(column) if column else "all"
            rows.append({**record, "split": split, "split_value": value,
                         **_mean_ci(group["value"].to_numpy(dtype=float))})
    return tables.SUMMARY.frame(rows)


def significance_table(per_query: pd.DataFrame, k: int) -> pd.DataFrame:
    """Every pair of configs (per retriever) on the key metrics, Holm-corrected."""
    frames = []
    for retriever, rows in per_query.groupby("retriever"):
        scored = rows[["config_id", "query_id", "metric", "value"]].dropna()
        for template in KEY_METRICS:
            metric = template.format(k=k)
            if metric not in set(scored["metric"]) or scored["config_id"].nunique() < 2:
                continue  # e.g. bundle_efficiency is NaN for every query when nothing is found
            table = stats.compare_all(scored, metric)
            table.insert(0, "retriever", retriever)
            frames.append(table)
    return tables.SIGNIFICANCE.frame(
        row for frame in frames for row in frame.to_dict("records"))


def headline(result: SweepResult) -> pd.DataFrame:
    """The blended key metrics, one row per config x retriever, for a printed table."""
    summary = result.summary[result.summary["split"] == "all"]
    names = [t.format(k=result.params.k) for t in KEY_METRICS]
    wide = summary[summary["metric"].isin(names)].pivot_table(
        index=["strategy", "size", "retriever"], columns="metric", values="mean")
    return wide.reindex(columns=[n for n in names if n in wide.columns]).round(3).reset_index()
