"""The sweep: strategies x sizes x retrievers (x options), chunked once, scored per query."""

from __future__ import annotations

import os
import tempfile
import time
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ...chunking.config import ChunkerConfig
from ...chunking.embedder import embedder_choice
from ...chunking.sizes import token_method, tokenizer_choice
from ...document.corpus import Corpus, load_corpus
from ...errors import GridWarning
from ...util.paths import real_path, repo_root, shown_path
from ...util.progress import progress_bar
from ..queries.mined_part import mined_once, save_mined
from ..queries.mining import Mined
from ..queries.queries import QuerySplit, given_split, load_queries, query_group, split_queries
from ..retrieval import budget, embedding, modes
from ..retrieval.retrieve import EmbeddingCache, default_cache_dir
from ..scoring import families, intervals, leakage, metrics
from . import costs, grid, tables, units
from .defaults import MIN_INTERVAL_N, default_primary_metric
from .engine import Engine, Executor, Pending
from .launch import start
from .run_folder import prepare, writing
from .runs import (
    DroppedQueries,
    Parts,
    RunInfo,
    SweepParams,
    SweepResult,
    chunks_frame,
    config_columns,
    has_part,
    read_chunks,
    read_part,
    run_parts,
    versions,
    write_part,
    write_results,
)

# section_efficiency is measured on queries with gold sections (mined ones) only
KEY_METRICS = ("recall@{k}", "hit@{k}", "answer_hit@{k}", "bundle_efficiency@{k}",
               "section_efficiency@{k}")


class _Stage:
    """Accumulates wall time and this process's CPU time per stage for run.json."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        began, began_cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - began
            self.cpu[name] = self.cpu.get(name, 0.0) + time.process_time() - began_cpu


def run_sweep(params: SweepParams, out_dir: str | os.PathLike | None = None, *,
              corpus: Corpus | None = None, progress: bool = True,
              engine: Engine | None = None, overwrite: bool = False,
              mined_from: str | os.PathLike | None = None) -> SweepResult:
    """Run the grid; with ``out_dir``, write every table there atomically, holding the
    folder's lock for the whole run, and reuse the parts whose key (corpus content, queries,
    config, chunkproof version) matches this run's. A folder holding another run is refused, or
    with ``overwrite`` that run is replaced (``run_folder.run_folder`` picks a folder of its own
    instead).

    ``engine`` says where the work runs (default: every local core); the results are the
    same wherever it runs. Each config's chunks go to a keyed part on disk as soon as they
    are made (a temporary folder without ``out_dir``), so no stage holds every config's
    chunks. The lock is held here, by the process that starts the workers, from when the
    inputs have been read and checked (a refused run leaves no folder behind).

    Queries mined from the corpus are read back from the part a run folder's ``parts/`` keeps
    of them (``mined_from``, default ``out_dir``'s; ``queries.mined_part``) when it is of this
    corpus, else mined; with ``out_dir`` they are kept there for the next reader.
    """
    stage = _Stage()
    with stage("load"):
        folder = mined_from or (Path(out_dir) / "parts" if out_dir else None)
        inputs = load_inputs(params, corpus, mined_from=Path(folder) if folder else None)
    with writing(out_dir):
        return _sweep(params, out_dir, inputs, stage=stage, progress=progress,
                      engine=engine or Engine(), overwrite=overwrite)


@dataclass(frozen=True)
class Inputs:
    """A run's corpus and queries, read and checked."""

    corpus: Corpus
    queries: list
    dropped: DroppedQueries
    split: QuerySplit
    by_source: dict[str, int]
    mined: Mined | None = None
    """The queries mined from the corpus (None when they come from a query file)."""


def load_inputs(params: SweepParams, corpus: Corpus | None = None, *,
                mined_from: Path | None = None) -> Inputs:
    """The corpus (``corpus`` when given, else read from ``params.corpus``) and the queries
    the run is asked (read, or mined: read back from the part ``mined_from``, a run folder's
    ``parts/``, keeps of this corpus, else mined now) and split; a missing or empty corpus, a
    bad query file or a corpus no query can be mined from raises its one-line
    ChunkproofError."""
    corpus = corpus or load_corpus(params.corpus,
                                   infer_headings=params.options.get("infer_headings", False))
    return Inputs(corpus, *_queries(params, corpus.require_documents(), mined_from))


def _sweep(params: SweepParams, out_dir: str | os.PathLike | None, inputs: Inputs, *,
           stage: _Stage, progress: bool, engine: Engine, overwrite: bool = False
           ) -> SweepResult:
    configs = params.configs()
    corpus, queries, dropped = inputs.corpus, inputs.queries, inputs.dropped
    split, by_source = inputs.split, inputs.by_source
    run_dir = prepare(params, out_dir,  # once the inputs hold: a refused run leaves no params
                      overwrite=overwrite)
    if run_dir is not None and inputs.mined is not None:  # the later notebooks read them back
        save_mined(run_dir / "parts", corpus, inputs.mined)
    units = len(configs) * len(params.retrievers)
    with _parts_folder(run_dir) as folder, start(engine, list(corpus), queries,
                                                 units) as executor:
        parts = run_parts(folder, params, corpus, queries)
        work = _Work()
        with stage("chunk"):
            digests, pending, reused = _chunk_all(configs, corpus, parts, executor, progress,
                                                  work)
        same = grid.identical_configs(configs, {i: d.signature for i, d in digests.items()})
        with stage("embed"):
            embedded = _embed_all(params, configs, parts, queries, executor, progress)
        with stage("retrieve"):
            per_query, retrieved, reused_scores = _retrieve_all(
                params, configs, queries, parts, executor, progress,
                {s["config_id"]: s["same_as"] for s in same}, work)
        measured = costs.measured(work.chunk_cpu, work.chunked_mb, work.score_cpu,
                                  work.scored_queries)
        costs.record(measured)
        reused += reused_scores
        per_query = _annotate(per_query, queries, corpus,
                              {i: d.applied for i, d in digests.items()}, split)
        with stage("chunk"):  # the chunk figures finish in the workers
            chunk_stats = tables.CHUNK_STATS.frame(pending[c.config_id].result()
                                                   for c in configs)
        with stage("statistics"):
            summary = summary_table(per_query, chunk_stats)
            primary = params.primary_metric or default_primary_metric(
                params.budgets, params.k, answers=any(q.answer is not None for q in queries))
            significance = significance_table(per_query, params.k, params.budgets,
                                              planned=params.planned_pairs(), primary=primary,
                                              twins={s["config_id"] for s in same},
                                              all_pairs=params.all_pairs)
        notes = [s["text"] for s in same] + [w for w in [grid.one_chunk_warning(chunk_stats)] if w]
        twins = {s["config_id"] for s in same}  # their rows repeat an earlier config's
        notes += leakage.leak_warnings(per_query[~per_query["config_id"].isin(twins)])
        for note in notes:
            warnings.warn(note, GridWarning, stacklevel=2)
        info: RunInfo = {
            "run_id": params.run_id, "params": params.shared(), "versions": versions(),
            "corpus": {"root": shown_path(real_path(params.corpus), base=repo_root() or None),
                       "fingerprint": corpus.fingerprint, "documents": len(corpus),
                       "skipped": [s.as_dict() for s in corpus.skipped],
                       "warnings": dict(Counter(w.kind for _, w in corpus.warnings()))},
            "queries": len(queries), "queries_fingerprint": parts.queries,
            "queries_dropped": dropped, "queries_by_source": by_source,
            "query_split": split.report(), "token_method": token_method(),
            "tokenizer": tokenizer_choice().as_dict(),
            "embedder": embedder_choice().as_dict(),
            "configs": len(configs), "identical_configs": same, "warnings": notes,
            "reused_parts": reused, "embedding_cache": embedded,
            "engine": engine.describe(executor.workers),
            "exploratory": exploratory_design(len(configs) - len(same), params.all_pairs),
            "primary_metric": primary,
            "seconds": {name: round(v, 3) for name, v in stage.seconds.items()},
            "cpu_seconds": {name: round(v, 3) for name, v in stage.cpu.items()},
            "costs": measured.as_dict() if measured else None,
        }
        chunk_paths = [parts.path(c.config_id, "chunks") for c in configs]
        held = None if run_dir else tables.CHUNKS.conform(
            pd.concat([read_part(p) for p in chunk_paths], ignore_index=True))
        result = SweepResult(params, run_dir, held, retrieved,
                             tables.PER_QUERY.conform(per_query), summary, chunk_stats,
                             significance, info,
                             tables.DOCUMENT_WARNINGS.frame(corpus.warning_rows()))
        if run_dir:
            write_results(result, chunk_paths)
            parts.remove_stale()
    return result


@dataclass
class _Work:
    """The CPU seconds the sweep's units took where they ran, and the work they did."""

    chunk_cpu: float = 0.0
    chunked_mb: float = 0.0
    """MB of corpus chunked, once per config chunked now."""
    score_cpu: float = 0.0
    scored_queries: int = 0
    """Queries scored, once per config x retriever scored now."""


@contextmanager
def _parts_folder(run_dir: Path | None) -> Iterator[Path]:
    """The run's parts folder, or a temporary one for a run without a folder."""
    if run_dir is not None:
        yield run_dir / "parts"
        return
    with tempfile.TemporaryDirectory(prefix="chunkproof-parts-") as tmp:
        yield Path(tmp)


def _queries(params: SweepParams, corpus: Corpus, mined_from: Path | None
             ) -> tuple[list, DroppedQueries, QuerySplit, dict[str, int], Mined | None]:
    """The run's queries, what mining dropped (nothing when they come from a file), their
    split into tuning and held-out sets, how many each mined source gave, and what was
    mined."""
    if params.held_out_queries:
        tuning = load_queries(params.queries, corpus)
        held_out = load_queries(params.held_out_queries, corpus)
        return ([*tuning, *held_out], NOTHING_DROPPED, given_split(tuning, held_out),
                {"query files": len(tuning) + len(held_out)}, None)
    mined = None
    if params.queries:
        queries, dropped = load_queries(params.queries, corpus), NOTHING_DROPPED
        by_source = {"query file": len(queries)}
    else:
        mined = mined_once(mined_from, corpus, params.mined_max_sources).require(params.corpus)
        queries, dropped, by_source = mined.queries, mined.report(), mined.sources()
    return queries, dropped, split_queries(queries, seed=params.split_seed,
                                           minimum=params.min_split), by_source, mined


NOTHING_DROPPED: DroppedQueries = {"count": 0, "reason": "", "examples": [], "by_reason": {}}


def _chunk_all(configs: list[ChunkerConfig], corpus: Corpus, parts: Parts,
               executor: Executor, progress: bool, work: _Work
               ) -> tuple[dict[str, units.Digest], dict[str, Pending], int]:
    """Every config's chunks on disk (read back from a finished part of the same key, or
    chunked now, shard by shard, and written with their document's columns), their digests,
    and their chunk statistics under way: one config's chunks in memory at a time; the
    units' CPU seconds added to ``work``."""
    todo = [c for c in configs if not has_part(parts.path(c.config_id, "chunks"))]
    n = len(executor.shards)
    made = executor.chunk([(i, config) for config in todo for i in range(n)])
    digests, pending, reused = {}, {}, 0
    for config in progress_bar(configs, desc="chunk", unit="config", enabled=progress):
        path = parts.path(config.config_id, "chunks")
        if config in todo:
            shards = [next(made) for _ in range(n)]
            chunks = [chunk for shard in shards for chunk in shard.chunks]
            work.chunk_cpu += sum(shard.cpu for shard in shards)
            work.chunked_mb += sum(len(d.text) for d in corpus) / 1e6
            write_part(path, chunks_frame(config, chunks))
        else:
            chunks, reused = read_chunks(path), reused + 1
        executor.keep(path, chunks)
        digests[config.config_id] = units.digest(config, chunks)
        pending[config.config_id] = executor.stats(config, path)
    return digests, pending, reused


def _embed_all(params: SweepParams, configs: list[ChunkerConfig], parts: Parts, queries,
               executor: Executor, progress: bool) -> dict[str, Any]:
    """The one embedding pass of a sweep with a dense retriever: every config's distinct
    embed texts and the queries (``embedding.embed_missing``)."""
    if not set(params.retrievers) & set(embedding.DENSE):
        return {"hits": 0, "misses": 0, "hit_rate": None, "texts_per_second": None}
    texts = dict.fromkeys(q.query for q in queries)
    for config in configs:
        texts.update(dict.fromkeys(
            read_part(parts.path(config.config_id, "chunks"), ["embed_text"])["embed_text"]))
    model = embedder_choice()
    cache = EmbeddingCache(default_cache_dir(), model.cache_name())
    return embedding.embed_missing(cache, list(texts), lambda b: executor.encode(model, b),
                                   progress=progress)


def _retrieve_all(params: SweepParams, configs: list[ChunkerConfig], queries, parts: Parts,
                  executor: Executor, progress: bool, same_as: dict[str, str], work: _Work):
    """Every config x retriever scored (``units.score_config``, on the executor); a config
    whose chunks equal an earlier one's (``same_as``) gets that one's rows, relabelled,
    instead of a second index; finished parts of the same key are read back; the units'
    CPU seconds added to ``work``."""
    grid_ = [(c, name) for c in configs for name in params.retrievers]
    todo = [(c, name) for c, name in grid_
            if c.config_id not in same_as and not has_part(
                *(parts.path(c.config_id, table, name) for table in ("per_query", "retrieved")))]
    model = {"embedder": embedder_choice()}  # what a dense job embeds with, wherever it runs
    scored_now = executor.score([
        (units.ScoreJob(c, name, params.k, tuple(params.budgets), tuple(params.modes),
                        model if name in embedding.DENSE else {}),
         parts.path(c.config_id, "chunks")) for c, name in todo])
    by_id = {c.config_id: c for c in configs}
    done: dict[tuple[str, str], tuple] = {}
    per_query, retrieved, reused = [], [], 0
    for config, name in progress_bar(grid_, desc="retrieve + score", unit="config x retriever",
                                     enabled=progress):
        rows_path, ranks_path = (parts.path(config.config_id, table, name)
                                for table in ("per_query", "retrieved"))
        if config.config_id in same_as:
            twin = by_id[same_as[config.config_id]]
            ids = dict(zip(read_part(parts.path(twin.config_id, "chunks"), ["id"])["id"],
                           read_part(parts.path(config.config_id, "chunks"), ["id"])["id"],
                           strict=True))
            scored, ranks = (grid.copy_scores(f, config_columns(config), ids)
                             for f in done[(twin.config_id, name)])
        elif (config, name) in todo:
            result = next(scored_now)
            scored, ranks = result.per_query, result.retrieved
            work.score_cpu += result.cpu
            work.scored_queries += len(queries)
            write_part(ranks_path, ranks)
            write_part(rows_path, scored)
        else:
            scored, ranks, reused = read_part(rows_path), read_part(ranks_path), reused + 1
        done[(config.config_id, name)] = (scored, ranks)
        per_query.append(scored)
        retrieved.append(ranks)
    return (pd.concat(per_query, ignore_index=True), pd.concat(retrieved, ignore_index=True),
            reused)


def _column(values: list, codes: np.ndarray, index: pd.Index) -> pd.Series:
    return pd.Series(metrics.text_column(values, codes), index=index)


def _annotate(per_query: pd.DataFrame, queries, corpus: Corpus,
              applied: dict[str, dict[str, str]], split: QuerySplit) -> pd.DataFrame:
    """Each row gets the structure source of its query's first gold document, the strategy
    actually applied to that document, that document (``source``: the cluster paired tests
    group its questions in), its query set and its query group (heading-derived or
    leak-free kinds), so results split by all of them. Each is looked up once per distinct
    query (and config), then spread over the rows."""
    structure = {d.id: d.structure_source for d in corpus}
    first_source = {q.id: q.sources[0] for q in queries}
    by_query, query_ids = pd.factorize(per_query["query_id"])
    by_config, config_ids = pd.factorize(per_query["config_id"])
    by_kind, kinds = pd.factorize(per_query["query_kind"])
    sources = [first_source.get(q) for q in query_ids]
    strategies = [applied[c].get(s, "") if isinstance(s, str) else ""
                  for c in config_ids for s in sources]
    per_query = per_query.copy()
    index = per_query.index
    per_query["structure_source"] = _column([structure.get(s) for s in sources], by_query, index)
    per_query["applied_strategy"] = _column(strategies, by_config * len(sources) + by_query,
                                            index)
    per_query["source"] = _column(sources, by_query, index)
    per_query["query_set"] = _column([split.sets.get(q) for q in query_ids], by_query, index)
    per_query["query_group"] = _column([query_group(k) for k in kinds], by_kind, index)
    return per_query


GROUP = ["config_id", "strategy", "size", "unit", "options", "retriever", "mode"]
REALISED = ("tokens_p50", "tokens_p95")
"""chunk_stats columns every summary row carries: the config's realised size in tokens."""
SPLITS = ("structure_source", "applied_strategy", "query_kind", "query_set", "query_group")


def summary_table(per_query: pd.DataFrame, chunk_stats: pd.DataFrame | None = None
                  ) -> pd.DataFrame:
    """config x metric: mean with a 95% interval (Wilson's for a 0/1 metric, else t; none
    below ``MIN_INTERVAL_N`` queries) and n; blended ("all") and split by structure source,
    applied strategy and query kind, side by side; each row carries its config's realised
    chunk size in tokens from ``chunk_stats`` (NaN without it)."""
    if per_query.empty:
        return tables.SUMMARY.frame([])
    per_query = with_mode(per_query)
    values = per_query["value"].to_numpy(dtype=float)
    keys = [*GROUP, "metric"]
    base = _codes(per_query, keys)
    frames = [_sums(values, base, per_query, keys, "all")]
    for column in (s for s in SPLITS if s in per_query):
        split = _codes(per_query, [column])
        frames.append(_sums(values, base * (int(split.max()) + 1) + split, per_query, keys,
                            column))
    frame = pd.concat(frames, ignore_index=True)
    n = frame["n"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = frame["total"].to_numpy() / n
        sd = np.sqrt(np.maximum(frame["square"].to_numpy() - n * mean * mean, 0.0) / (n - 1))
    low, high = intervals.mean_intervals(mean, sd, n, frame["binary"].to_numpy())
    low[n < MIN_INTERVAL_N], high[n < MIN_INTERVAL_N] = np.nan, np.nan
    frame = frame.assign(mean=mean, ci_low=low, ci_high=high)
    realised = (chunk_stats.set_index("config_id")[list(REALISED)] if chunk_stats is not None
                else pd.DataFrame(columns=list(REALISED)))
    frame = frame.join(realised, on="config_id")
    return tables.SUMMARY.conform(frame.drop(columns=["total", "square", "binary"]))


def with_mode(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-query rows with a ``mode`` column (``plain`` where the rows carry none)."""
    return frame if "mode" in frame else frame.assign(mode=modes.PLAIN)


def _codes(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """A group code per row of ``frame`` over ``columns`` (NaN a value of its own)."""
    codes = np.zeros(len(frame), dtype=np.int64)
    for column in columns:
        found, _ = pd.factorize(frame[column], use_na_sentinel=False)
        codes = codes * (int(found.max()) + 1) + found
    return codes


def _sums(values: np.ndarray, key: np.ndarray, per_query: pd.DataFrame, keys: list[str],
          split: str) -> pd.DataFrame:
    """Count, sum, sum of squares and whether every value is 0 or 1 of each group of ``key``
    (integer codes), with the group's ``keys`` columns and ``split`` value, sorted by them
    (each group's values summed in row order)."""
    dense, groups = pd.factorize(key)
    first = np.empty(len(groups), dtype=np.int64)
    first[dense[::-1]] = np.arange(len(dense) - 1, -1, -1)  # each group's first row
    present = ~np.isnan(values)
    safe = np.where(present, values, 0.0)
    other = present & ~np.isin(values, (0.0, 1.0))
    frame = per_query[keys].iloc[first].reset_index(drop=True)
    frame["split"] = split
    frame["split_value"] = ("all" if split == "all" else
                            per_query[split].iloc[first].astype(object).to_numpy())
    frame["n"] = np.bincount(dense, weights=present, minlength=len(groups)).astype(int)
    frame["total"] = np.bincount(dense, weights=safe, minlength=len(groups))
    frame["square"] = np.bincount(dense, weights=safe * safe, minlength=len(groups))
    frame["binary"] = np.bincount(dense, weights=other, minlength=len(groups)) == 0
    return frame.sort_values([*keys, "split_value"], ignore_index=True, na_position="last")


def key_metrics(k: int, budgets: Sequence[int] = ()) -> list[str]:
    """The metrics tested pairwise: the key metrics at k, then span recall at each budget."""
    return ([t.format(k=k) for t in KEY_METRICS]
            + [f"span_recall@{budget.budget_name(b)}" for b in budgets])


ALL_PAIRS_UP_TO = 12
"""Up to this many configs the exploratory family tests every pair (66 pairs at 12); beyond
it, each config against the best one, unless every pair is asked for."""


def exploratory_design(n_configs: int, all_pairs: bool = False) -> str:
    """``all pairs`` or ``versus best``: what the exploratory family of a grid tests."""
    return "all pairs" if all_pairs or n_configs <= ALL_PAIRS_UP_TO else "versus best"


def significance_table(per_query: pd.DataFrame, k: int, budgets: Sequence[int] = (), *,
                       planned: Sequence[tuple[str, str]] = (), primary: str = "",
                       twins: set[str] | frozenset[str] = frozenset(),
                       all_pairs: bool = False) -> pd.DataFrame:
    """Paired tests per retriever on the key metrics: the ``planned`` pairs as one Holm family
    over all queries (and again on each query group, heading-derived and leak-free kinds,
    when the run has both), then an exploratory family (leaving out ``twins``, configs whose
    chunks equal an earlier config's, whose tests would only repeat that one's): every pair
    of configs up to ``ALL_PAIRS_UP_TO`` configs (or with ``all_pairs``), else each config
    against the best; both within each retrieval mode. With several modes, the ``modes``
    family: each mode against plain on every config (``families.compare_modes``)."""
    frames = []
    per_query = with_mode(per_query)
    names = list(dict.fromkeys([*([primary] if primary else []), *key_metrics(k, budgets)]))
    columns = ["retriever", "mode", "config_id", "query_id", "metric", "value"]
    keyed = per_query.loc[per_query["metric"].isin(names),
                          columns + (["query_group"] if "query_group" in per_query else [])]
    keyed = keyed.astype({c: object for c in keyed.columns if c != "value"})
    for (retriever, mode), rows in keyed.groupby(["retriever", "mode"]):
        scored = rows[["config_id", "query_id", "metric", "value"]].dropna()
        groups = _query_groups(rows, scored)
        for metric, of_metric in scored.groupby("metric", sort=False):
            # a metric NaN for every query (bundle_efficiency when nothing is found) is absent
            tables_ = _planned_tests(groups, str(metric), planned)
            explored = of_metric[~of_metric["config_id"].isin(list(twins))]
            n_explored = explored["config_id"].nunique()
            if n_explored >= 2:
                compare = (families.compare_all if exploratory_design(n_explored, all_pairs)
                           == "all pairs" else families.compare_to_best)
                tables_.append(compare(explored, str(metric)).assign(query_group="all"))
            frames += _placed(tables_, names, str(metric), primary, retriever, mode)
    for retriever, rows in keyed[~keyed["config_id"].isin(list(twins))].groupby("retriever"):
        for metric, of_metric in rows.dropna(subset=["value"]).groupby("metric", sort=False):
            for mode, table in families.compare_modes(of_metric, str(metric)):
                frames += _placed([table], names, str(metric), primary, retriever, mode)
    frames.sort(key=lambda item: item[0])
    return tables.SIGNIFICANCE.frame(
        row for _, frame in frames for row in frame.to_dict("records"))


def _placed(found: list[pd.DataFrame], names: list[str], metric: str, primary: str,
            retriever: str, mode: str) -> list[tuple[int, pd.DataFrame]]:
    """Test tables labelled with their retriever, mode and role, keyed by the metric's place."""
    for table in found:
        table.insert(0, "retriever", retriever)
        table.insert(1, "mode", mode)
        table["role"] = "primary" if metric == primary else "secondary"
    return [(names.index(metric), table) for table in found]


def _query_groups(rows: pd.DataFrame, scored: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """``all`` the scored rows, then each query group's when the run has more than one."""
    groups = {"all": scored}
    if "query_group" in rows and rows["query_group"].nunique() > 1:
        for name, ids in rows.groupby("query_group")["query_id"]:
            groups[str(name)] = scored[scored["query_id"].isin(ids.unique())]
    return groups


def _planned_tests(groups: dict[str, pd.DataFrame], metric: str,
                   planned: Sequence[tuple[str, str]]) -> list[pd.DataFrame]:
    found = []
    for name, scored in groups.items():
        of_metric = scored[scored["metric"] == metric]
        present = set(of_metric["config_id"].unique())
        pairs = [p for p in planned if set(p) <= present]
        if pairs:
            found.append(families.compare_pairs(of_metric, metric, pairs).assign(
                query_group=name))
    return found


def headline(result: SweepResult) -> pd.DataFrame:
    """The blended key metrics, one row per config x retriever, each config's realised
    median and p95 chunk size in tokens next to its requested size, for a printed table."""
    summary = result.summary[result.summary["split"] == "all"]
    names = key_metrics(result.params.k, result.params.budgets)
    wide = summary[summary["metric"].isin(names)].pivot_table(
        index=["config_id", "retriever", "mode"], columns="metric", values="mean")
    wide = wide.reindex(columns=[n for n in names if n in wide.columns]).round(3).reset_index()
    labels = result.chunk_stats[["config_id", "strategy", "size", *REALISED]].round(
        dict.fromkeys(REALISED, 1))
    table = labels.merge(wide, on="config_id").drop(columns="config_id")
    table = table.sort_values(["strategy", "size", "retriever", "mode"], ignore_index=True)
    table.columns.name = None
    return table[["strategy", "size", *REALISED, "retriever", "mode",
                  *[n for n in names if n in table.columns]]]
