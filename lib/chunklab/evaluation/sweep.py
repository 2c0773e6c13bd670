"""The sweep: strategies x sizes x retrievers (x options), chunked once, scored per query."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Iterator, Sequence
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
from ..errors import GridWarning
from ..util.atomic import write_atomic
from ..util.paths import shown_path
from . import budget, grid, leakage, metrics, stats, tables
from .defaults import MIN_INTERVAL_N
from .mining import mine
from .queries import QuerySplit, given_split, load_queries, query_group, split_queries
from .retrieve import make_retriever
from .runs import (
    DroppedQueries,
    RunInfo,
    SweepParams,
    SweepResult,
    config_columns,
    prepare,
    query_fingerprint,
    run_parts,
    versions,
    write_results,
    writing,
)

# section_efficiency is measured on queries with gold sections (mined ones) only
KEY_METRICS = ("recall@{k}", "hit@{k}", "answer_hit@{k}", "bundle_efficiency@{k}",
               "section_efficiency@{k}")


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


def _score(config, retriever_name, retriever, chunks, queries, corpus, k, budgets) -> tuple:
    retriever.index(chunks)
    tokens = [c.n_tokens for c in chunks]
    deep = max([k, *(budget.depth(tokens, b) for b in budgets)])  # enough to fill each budget
    results = retriever.search([q.query for q in queries], deep)
    rows = metrics.score_run(results, queries, chunks, docs=corpus, ks=(k,), budgets=budgets,
                             config_id=config.config_id)
    size = {c.id: c.n_tokens for c in chunks}
    retrieved = []
    for q, hits in zip(queries, results, strict=True):
        used = max([k, *(budget.reach([size[h[0]] for h in hits], b) for b in budgets)])
        retrieved += [{"query_id": q.id, "rank": rank, "chunk_id": chunk_id, "score": float(score)}
                      for rank, (chunk_id, score) in enumerate(hits[:used], start=1)]
    columns = {**config_columns(config), "retriever": retriever_name}
    return (pd.DataFrame([{**columns, **r} for r in rows]),
            tables.RETRIEVED.frame({**columns, **r} for r in retrieved))


def run_sweep(params: SweepParams, out_dir: str | os.PathLike | None = None, *,
              corpus: Corpus | None = None, progress: bool = True,
              overwrite: bool = False) -> SweepResult:
    """Run the grid; with ``out_dir``, write every table there atomically, holding the
    folder's lock, and reuse the parts whose key (corpus content, queries, config, chunklab
    version) matches this run's. A folder holding another run is refused, or with
    ``overwrite`` that run is replaced (``runs.run_folder`` picks a folder of its own
    instead)."""
    with writing(out_dir):
        return _sweep(params, out_dir, corpus=corpus, progress=progress, overwrite=overwrite)


def _sweep(params: SweepParams, out_dir: str | os.PathLike | None, *, corpus: Corpus | None,
           progress: bool, overwrite: bool = False) -> SweepResult:
    stage = _Stage()
    configs = params.configs()
    with stage("load"):
        corpus = corpus or load_corpus(params.corpus,
                                       infer_headings=params.options.get("infer_headings", False))
        queries, dropped, split, by_source = _queries(params, corpus.require_documents())
    run_dir = prepare(params, out_dir,  # once the inputs hold: a refused run leaves no params
                      overwrite=overwrite)
    parts = run_parts(run_dir, params, corpus, queries)
    reused = 0
    chunk_frames: list[pd.DataFrame] = []
    chunks_by_config: dict[str, list[Chunk]] = {}
    for config in tqdm(configs, desc="chunk", disable=not progress):
        with stage("chunk"):
            path = parts.path(config.config_id, "chunks") if parts else None
            chunks, frame, hit = _chunk_part(corpus, config, path)
        reused += hit
        chunk_frames.append(frame)
        chunks_by_config[config.config_id] = chunks
    same = grid.identical_configs(configs, chunks_by_config)
    per_query, retrieved, cache_stats = _retrieve_all(
        params, configs, chunks_by_config, queries, corpus, parts, stage, progress,
        {s["config_id"]: s["same_as"] for s in same})
    reused += cache_stats.pop("reused_parts")
    per_query = _annotate(per_query, queries, corpus, chunks_by_config, split)
    with stage("statistics"):
        chunk_stats = tables.CHUNK_STATS.frame(
            {**config_columns(c),
             **metrics.chunk_stats(chunks_by_config[c.config_id], c, docs=corpus).as_dict()}
            for c in configs
        )
        summary = summary_table(per_query, chunk_stats)
        significance = significance_table(per_query, params.k, params.budgets,
                                          planned=params.planned_pairs(),
                                          twins={s["config_id"] for s in same})
    notes = [s["text"] for s in same] + [w for w in [grid.one_chunk_warning(chunk_stats)] if w]
    twins = {s["config_id"] for s in same}  # their rows repeat an earlier config's
    notes += leakage.leak_warnings(per_query[~per_query["config_id"].isin(twins)])
    for note in notes:
        warnings.warn(note, GridWarning, stacklevel=2)
    info: RunInfo = {
        "run_id": params.run_id, "params": params.model_dump(), "versions": versions(),
        "corpus": {"root": shown_path(params.corpus), "fingerprint": corpus.fingerprint,
                   "documents": len(corpus), "skipped": [s.as_dict() for s in corpus.skipped]},
        "queries": len(queries), "queries_fingerprint": query_fingerprint(queries),
        "queries_dropped": dropped, "queries_by_source": by_source,
        "query_split": split.report(), "token_method": token_method(),
        "parser": corpus.parsers(),
        "configs": len(configs), "identical_configs": same, "warnings": notes,
        "reused_parts": reused, "embedding_cache": cache_stats,
        "seconds": {name: round(v, 3) for name, v in stage.seconds.items()},
    }
    chunks = tables.CHUNKS.conform(pd.concat(chunk_frames, ignore_index=True))
    result = SweepResult(params, run_dir, chunks, retrieved, tables.PER_QUERY.conform(per_query),
                         summary, chunk_stats, significance, info)
    if run_dir and parts:
        write_results(result)
        parts.remove_stale()
    return result


def _queries(params: SweepParams, corpus: Corpus) -> tuple[list, DroppedQueries, QuerySplit,
                                                             dict[str, int]]:
    """The run's queries, what mining dropped (nothing when they come from a file), their
    split into tuning and held-out sets, and how many each mined source gave."""
    if params.held_out_queries:
        tuning = load_queries(params.queries, corpus)
        held_out = load_queries(params.held_out_queries, corpus)
        return ([*tuning, *held_out], NOTHING_DROPPED, given_split(tuning, held_out),
                {"query files": len(tuning) + len(held_out)})
    if params.queries:
        queries, dropped = load_queries(params.queries, corpus), NOTHING_DROPPED
        by_source = {"query file": len(queries)}
    else:
        mined = mine(corpus, max_sources=params.mined_max_sources).require(params.corpus)
        queries, dropped, by_source = mined.queries, mined.report(), mined.sources()
    return queries, dropped, split_queries(queries, seed=params.split_seed,
                                           minimum=params.min_split), by_source


NOTHING_DROPPED: DroppedQueries = {"count": 0, "reason": "", "examples": [], "by_reason": {}}


def _chunk_part(corpus: Corpus, config: ChunkerConfig, path: Path | None) -> tuple:
    """(chunks, their table, reused?): read back from a finished part of the same key, or
    chunked now (and saved when the run has a folder)."""
    if path is not None and path.exists():
        frame = pd.read_parquet(path)
        return _records(frame), frame, True
    chunks = [chunk for doc in corpus for chunk in chunk_document(doc, config)]
    of_doc = {doc.id: {name: getattr(doc, name) for name in tables.DOCUMENT_NAMES}
              for doc in corpus}
    frame = tables.CHUNKS.frame({**config_columns(config), **chunk.as_dict(),
                                 **of_doc[chunk.doc_id]} for chunk in chunks)
    if path is not None:
        _parquet(path, frame)
    return chunks, frame, False


def _records(frame: pd.DataFrame) -> list[Chunk]:
    return [Chunk.from_dict(row) for row in frame.to_dict("records")]


def _retrieve_all(params, configs, chunks_by_config, queries, corpus, parts, stage, progress,
                  same_as):
    """Every config x retriever scored; a config whose chunks equal an earlier one's
    (``same_as``) gets that one's rows, relabelled, instead of a second index."""
    per_query, retrieved = [], []
    retrievers = {name: make_retriever(name) for name in params.retrievers}
    reused = 0
    done: dict[tuple[str, str], tuple] = {}
    by_id = {c.config_id: c for c in configs}
    grid_ = [(c, name) for c in configs for name in params.retrievers]
    for config, name in tqdm(grid_, desc="retrieve + score", disable=not progress):
        scored_part, ranks_part = (parts.path(config.config_id, table, name) if parts else None
                                   for table in ("per_query", "retrieved"))
        finished = scored_part and scored_part.exists()
        with stage(f"retrieve:{name}"):
            if config.config_id in same_as:
                twin = by_id[same_as[config.config_id]]
                ids = dict(zip((c.id for c in chunks_by_config[twin.config_id]),
                               (c.id for c in chunks_by_config[config.config_id]), strict=True))
                columns = config_columns(config)
                scored, ranks = (grid.copy_scores(f, columns, ids)
                                 for f in done[(twin.config_id, name)])
            elif finished:
                scored = pd.read_parquet(scored_part)
                ranks = pd.read_parquet(ranks_part)
                reused += 1
            else:
                scored, ranks = _score(config, name, retrievers[name],
                                       chunks_by_config[config.config_id], queries, corpus,
                                       params.k, params.budgets)
                if scored_part and ranks_part:
                    _parquet(ranks_part, ranks)
                    _parquet(scored_part, scored)
        done[(config.config_id, name)] = (scored, ranks)
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


def _annotate(per_query: pd.DataFrame, queries, corpus: Corpus, chunks_by_config,
              split: QuerySplit) -> pd.DataFrame:
    """Each row gets the structure source of its query's first gold document, the strategy
    actually applied to that document, its query set and its query group (heading-derived
    or leak-free kinds), so results split by all four."""
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
    per_query["query_set"] = per_query["query_id"].map(split.sets)
    per_query["query_group"] = per_query["query_kind"].map(query_group)
    return per_query


GROUP = ["config_id", "strategy", "size", "unit", "options", "retriever"]
REALISED = ("tokens_p50", "tokens_p95")
"""chunk_stats columns every summary row carries: the config's realised size in tokens."""
SPLITS = ("structure_source", "applied_strategy", "query_kind", "query_set", "query_group")


SUMMARY_RESAMPLES = 1000
"""Bootstrap resamples behind each summary interval (percentile method, seed 0)."""


def _mean_ci(values: np.ndarray) -> dict[str, float]:
    values = values[~np.isnan(values)]
    if len(values) == 0:
        return {"mean": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n": 0}
    low, high = stats.bootstrap_ci(values, n_resamples=SUMMARY_RESAMPLES, seed=0,
                                   methods=("percentile",), min_n=MIN_INTERVAL_N)
    return {"mean": float(values.mean()), "ci_low": low, "ci_high": high, "n": len(values)}


def summary_table(per_query: pd.DataFrame, chunk_stats: pd.DataFrame | None = None
                  ) -> pd.DataFrame:
    """config x metric: mean with a 95% bootstrap interval and n; blended ("all") and split by
    structure source, applied strategy and query kind, side by side; each row carries its
    config's realised chunk size in tokens from ``chunk_stats`` (NaN without it)."""
    rows = []
    splits = [("all", None), *[(s, s) for s in SPLITS if s in per_query]]
    for split, column in splits:
        keys = [*GROUP, "metric"] + ([column] if column else [])
        for key, group in per_query.groupby(keys, sort=True, dropna=False):
            record = dict(zip(keys, key, strict=True))
            value = record.pop(column) if column else "all"
            rows.append({**record, "split": split, "split_value": value,
                         **_mean_ci(group["value"].to_numpy(dtype=float))})
    frame = pd.DataFrame(rows)
    realised = (chunk_stats.set_index("config_id")[list(REALISED)] if chunk_stats is not None
                else pd.DataFrame(columns=list(REALISED)))
    if frame.empty:
        return tables.SUMMARY.frame([])
    frame = frame.join(realised, on="config_id")
    return tables.SUMMARY.conform(frame)


def key_metrics(k: int, budgets: Sequence[int] = ()) -> list[str]:
    """The metrics tested pairwise: the key metrics at k, then span recall at each budget."""
    return ([t.format(k=k) for t in KEY_METRICS]
            + [f"span_recall@{budget.budget_name(b)}" for b in budgets])


def significance_table(per_query: pd.DataFrame, k: int, budgets: Sequence[int] = (), *,
                       planned: Sequence[tuple[str, str]] = (),
                       twins: set[str] | frozenset[str] = frozenset()) -> pd.DataFrame:
    """Paired tests per retriever on the key metrics: the ``planned`` pairs as one Holm family
    over all queries (and again on each query group, heading-derived and leak-free kinds,
    when the run has both), then every pair of configs as another (leaving out ``twins``,
    configs whose chunks equal an earlier config's, whose tests would only repeat that
    one's)."""
    frames = []
    for retriever, rows in per_query.groupby("retriever"):
        scored = rows[["config_id", "query_id", "metric", "value"]].dropna()
        explored = scored[~scored["config_id"].isin(twins)]
        groups = _query_groups(rows, scored)
        for metric in key_metrics(k, budgets):
            if metric not in set(scored["metric"]):
                continue  # e.g. bundle_efficiency is NaN for every query when nothing is found
            tables_ = _planned_tests(groups, metric, planned)
            if explored.loc[explored["metric"] == metric, "config_id"].nunique() >= 2:
                tables_.append(stats.compare_all(explored, metric).assign(query_group="all"))
            for table in tables_:
                table.insert(0, "retriever", retriever)
                frames.append(table)
    return tables.SIGNIFICANCE.frame(
        row for frame in frames for row in frame.to_dict("records"))


def _query_groups(rows: pd.DataFrame, scored: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``all`` the scored rows, then each query group's when the run has more than one."""
    groups = {"all": scored}
    if "query_group" in rows and rows["query_group"].nunique() > 1:
        for name, ids in rows.groupby("query_group")["query_id"]:
            groups[str(name)] = scored[scored["query_id"].isin(set(ids))]
    return groups


def _planned_tests(groups: dict[str, pd.DataFrame], metric: str,
                   planned: Sequence[tuple[str, str]]) -> list[pd.DataFrame]:
    found = []
    for name, scored in groups.items():
        present = set(scored.loc[scored["metric"] == metric, "config_id"])
        pairs = [p for p in planned if set(p) <= present]
        if pairs:
            found.append(stats.compare_pairs(scored, metric, pairs).assign(query_group=name))
    return found


def headline(result: SweepResult) -> pd.DataFrame:
    """The blended key metrics, one row per config x retriever, each config's realised
    median and p95 chunk size in tokens next to its requested size, for a printed table."""
    summary = result.summary[result.summary["split"] == "all"]
    names = key_metrics(result.params.k, result.params.budgets)
    wide = summary[summary["metric"].isin(names)].pivot_table(
        index=["config_id", "retriever"], columns="metric", values="mean")
    wide = wide.reindex(columns=[n for n in names if n in wide.columns]).round(3).reset_index()
    labels = result.chunk_stats[["config_id", "strategy", "size", *REALISED]].round(
        dict.fromkeys(REALISED, 1))
    table = labels.merge(wide, on="config_id").drop(columns="config_id")
    table = table.sort_values(["strategy", "size", "retriever"], ignore_index=True)
    table.columns.name = None
    return table[["strategy", "size", *REALISED, "retriever",
                  *[n for n in names if n in table.columns]]]
