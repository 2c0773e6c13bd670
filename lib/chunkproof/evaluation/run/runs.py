"""A run: what it was asked (SweepParams), what it produced (SweepResult, RunInfo), its parts
reused only when the key of what produced them matches, every table written and read through
its declared schema; its folder (locked, refused when it holds another run) is
``run_folder.py``'s."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import platform
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pandas as pd
import pyarrow.parquet as pq
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from ...chunking.config import MAX_SIZE, ChunkerConfig, make_config
from ...chunking.embedder import embedder_choice
from ...chunking.records import Chunk
from ...chunking.registry import check_strategy
from ...chunking.sizes import tokenizer_choice
from ...errors import ChoiceError, UnknownRetrieverError
from ...util.atomic import write_atomic, write_text_atomic
from ...util.code_version import KEY_PACKAGES, code_version
from ...util.paths import real_path, shared_path
from ..queries.mining import MAX_SOURCES, DroppedQueries
from ..queries.queries import MIN_SPLIT
from ..retrieval.embedding import DENSE
from ..retrieval.modes import PLAIN, check_modes
from ..retrieval.retrieve import retriever_names
from . import tables
from .defaults import (
    DEFAULT_CORPUS,
    DEFAULT_K,
    DEFAULT_RETRIEVERS,
    DEFAULT_SIZES,
    DEFAULT_STRATEGIES,
    canonical_contrast,
    contrast_problem,
    contrast_sides,
)

PACKAGES = ("chunkproof", *KEY_PACKAGES)
"""Packages whose versions run.json records: chunkproof and every one the parts are keyed by
(``KEY_PACKAGES``)."""


MAX_K = 10_000
"""The most chunks a query's ranking is cut at (top k)."""
PATH_FIELDS = ("corpus", "queries", "held_out_queries")
"""The parameters that name a file or folder."""


class SweepParams(BaseModel):
    """What a sweep runs; equal params reuse each other's finished work."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    corpus: str = DEFAULT_CORPUS
    queries: str = Field("", description="JSONL query file; empty = mine queries from corpus")
    held_out_queries: str = Field(
        default="", description="a second JSONL file held out: then `queries` is the tuning set")
    split_seed: int = Field(default=0, description="seed of the tuning / held-out split")
    min_split: int = Field(default=MIN_SPLIT, ge=2, description="fewer queries are not split")
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES
    sizes: tuple[int, ...] = DEFAULT_SIZES
    retrievers: tuple[str, ...] = DEFAULT_RETRIEVERS
    unit: str = "chars"
    k: int = Field(DEFAULT_K, gt=0, le=MAX_K)
    budgets: tuple[Annotated[int, Field(gt=0, le=MAX_SIZE)], ...] = Field(
        default=(), description="token budgets: each also scores the top chunks that fill it")
    contrasts: tuple[str, ...] = Field(
        default=(), description="planned comparisons 'a:b' of two strategies, at each size")
    mined_max_sources: int = Field(
        default=MAX_SOURCES, gt=0, description="mined queries with more gold documents are dropped")
    options: dict[str, Any] = Field(default_factory=dict, description="fixed config options")
    grid: dict[str, tuple[Any, ...]] = Field(
        default_factory=dict, description="option -> values swept in addition"
    )
    all_pairs: bool = Field(
        default=False, description="test every pair of configs, however many; else each "
                                   "config against the best one beyond 12 configs")
    primary_metric: str = Field(
        default="", description="the planned contrasts' primary metric (the others are "
                                "secondary); empty: the answer found within the middle budget")
    modes: tuple[str, ...] = Field(
        default=(PLAIN,), description="retrieval modes scored on each ranking (plain, boost, "
                                      "expand=parent, expand=siblings), each against plain")

    @field_validator("strategies")
    @classmethod
    def _strategies(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        if not names:
            raise ValueError("give at least one strategy (see: chunkproof strategies)")
        return tuple(check_strategy(name) for name in names)  # plug-ins by import path

    @field_validator("contrasts")
    @classmethod
    def _canonical_contrasts(cls, texts: tuple[str, ...], info: ValidationInfo
                             ) -> tuple[str, ...]:
        """A plug-in named in a contrast by its entry point becomes its import path."""
        swept = info.data.get("strategies") or ()
        return tuple(canonical_contrast(text, swept) for text in texts)

    @field_validator("retrievers")
    @classmethod
    def _retrievers(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        if not names:
            raise ValueError(f"give at least one retriever ({', '.join(retriever_names())})")
        for name in names:
            if name not in retriever_names():
                raise UnknownRetrieverError(name, retriever_names())
        return names

    @field_validator("sizes")
    @classmethod
    def _sizes(cls, sizes: tuple[int, ...]) -> tuple[int, ...]:
        if not sizes:
            raise ValueError("give at least one size, e.g. 300,600")
        return sizes

    @model_validator(mode="after")
    def _contrasts(self) -> SweepParams:
        if self.held_out_queries and not self.queries:
            raise ValueError("held_out_queries: give the tuning queries too (queries); mined "
                             "queries are split by split_seed instead")
        for text in self.contrasts:
            contrast_problem(text, self.strategies)
        check_modes(self.modes, budgets=self.budgets)
        self.configs()  # a size, option or grid value no config accepts fails here, at once
        return self

    def planned_pairs(self) -> list[tuple[str, str]]:
        """(config A, config B) of every planned contrast: strategy A against strategy B at
        each size and option combination of the grid (everything else equal)."""
        configs = self.configs()
        def rest(c: ChunkerConfig) -> str:
            return json.dumps({**c.model_dump(), "strategy": ""}, sort_keys=True, default=str)
        by_key = {(c.strategy, rest(c)): c.config_id for c in configs}
        pairs = []
        for text in self.contrasts:
            a, b = contrast_sides(text, self.strategies)
            for config in configs:
                twin = by_key.get((b, rest(config)))
                if config.strategy == a and twin:
                    pairs.append((config.config_id, twin))
        return pairs

    def shared(self) -> dict[str, Any]:
        """The parameters as params.json and run.json record them: plain JSON values, the
        paths (``PATH_FIELDS``) named relative to the repo root or under ``~`` whatever the
        working folder (``util.paths.shared_path``), never as the machine spells them."""
        values = json.loads(json.dumps(self.model_dump(), default=str))
        if tuple(values["modes"]) == (PLAIN,):  # a run of plain retrieval keeps its id
            del values["modes"]
        return {**values, **{name: shared_path(values[name]) for name in PATH_FIELDS}}

    @classmethod
    def from_shared(cls, values: dict[str, Any]) -> SweepParams:
        """The parameters a run folder recorded (``shared``), their paths found again from
        this working folder (``util.paths.real_path``)."""
        return cls(**{**values, **{name: real_path(values[name]) for name in PATH_FIELDS
                                   if name in values}})

    @property
    def run_id(self) -> str:
        """A hash of ``shared``: the same run however its paths were spelled and from
        whichever folder it was started."""
        canonical = json.dumps(self.shared(), sort_keys=True, default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]

    def configs(self) -> list[ChunkerConfig]:
        """Every chunker config of the grid, validated (a bad option names itself)."""
        names = sorted(self.grid)
        combos = itertools.product(*(self.grid[n] for n in names)) if names else [()]
        result = []
        for combo in combos:
            for strategy in self.strategies:
                for size in self.sizes:
                    values = {**self.options, **dict(zip(names, combo, strict=True))}
                    result.append(make_config(values, strategy=strategy, size=size,
                                              unit=self.unit))
        return list(dict.fromkeys(result))


@dataclass
class SweepResult:
    """The tables of one sweep (also written to ``run_dir``)."""

    params: SweepParams
    run_dir: Path | None
    loaded_chunks: pd.DataFrame | None
    """The chunks table when it is held; None: read from ``run_dir`` when first asked."""
    retrieved: pd.DataFrame
    per_query: pd.DataFrame
    summary: pd.DataFrame
    chunk_stats: pd.DataFrame
    significance: pd.DataFrame
    run_info: RunInfo = field(default_factory=lambda: RunInfo())  # type: ignore[typeddict-item]
    document_warnings: pd.DataFrame = field(
        default_factory=lambda: tables.DOCUMENT_WARNINGS.frame([]))
    """What the corpus load did other than read a file as marked up (``Corpus.warnings``)."""

    @property
    def chunks(self) -> pd.DataFrame:
        """Every config's chunks (chunks.parquet), read once when first asked for."""
        if self.loaded_chunks is None:
            assert self.run_dir is not None, "a result without a folder holds its chunks"
            self.loaded_chunks = tables.CHUNKS.read(self.run_dir)
        return self.loaded_chunks


class CorpusInfo(TypedDict):
    """run.json ``corpus``: the folder, its content fingerprint, documents and skipped files."""

    root: str
    fingerprint: str
    documents: int
    skipped: list[dict[str, str]]
    warnings: dict[str, int]
    """Warnings of the load per kind (document_warnings.csv lists them)."""


class RunInfo(TypedDict):
    """run.json: what identifies the run and how it went."""

    run_id: str
    params: dict[str, Any]
    versions: dict[str, str]
    corpus: CorpusInfo
    queries: int
    """Queries scored."""
    queries_fingerprint: str
    """sha256 over every query scored (``query_fingerprint``): a key of the scored parts."""
    queries_dropped: DroppedQueries
    queries_by_source: dict[str, int]
    """Queries per source: each mined source (title, section heading, heading code span,
    heading signature, heading identifier, definition list, table, body sentence), or the
    query file(s)."""
    query_split: dict[str, Any]
    """How the queries were split into tuning and held-out sets (``QuerySplit.report``)."""
    token_method: str
    """How token sizes were made: ``tokenizer`` (counted) or ``estimate`` (words x 1.3)."""
    tokenizer: dict[str, Any]
    """The tokenizer sizes were counted in and the encoder window (``TokenModel.as_dict``:
    ``bundled (all-MiniLM-L6-v2)`` and 256 unless chosen)."""
    embedder: dict[str, Any]
    """The dense model dense and hybrid retrieval embed with (``Embedder.as_dict``: its
    folder, name, digest, runtime and window; ``bundled (all-MiniLM-L6-v2)`` unless chosen)."""
    configs: int
    identical_configs: list[Any]
    """Configs whose chunks equal an earlier config's (``grid.SameChunks``): scored once."""
    warnings: list[str]
    """What the grid could not tell apart, in words (also raised as GridWarning)."""
    reused_parts: int
    """Parts read back instead of computed: only parts whose key (corpus content, query set,
    config, chunkproof version) equals this run's."""
    embedding_cache: dict[str, Any]
    """Dense retrieval's embedding pass: texts found in the cache (hits), texts embedded
    (misses), hit rate and texts embedded per second."""
    engine: dict[str, Any]
    """Where the work ran: engine (local or ray) and workers; no bearing on the results."""
    exploratory: str
    """What the exploratory family tests: ``all pairs`` or ``versus best``."""
    primary_metric: str
    """The planned contrasts' primary metric (``significance.csv`` role primary)."""
    seconds: dict[str, float]
    """Wall time per stage."""
    cpu_seconds: dict[str, float]
    """CPU time per stage of the process that ran the sweep (the work its local or Ray
    workers did is in ``costs``)."""
    costs: dict[str, Any] | None
    """What the units cost where they ran, per unit of work (``costs.Costs``: CPU seconds
    per MB chunked under one config, per query scored under one config x retriever); None
    when every part was read back."""


def config_columns(config: ChunkerConfig) -> dict[str, Any]:
    """The config's fields as table columns, so every table filters without a lookup."""
    return {"config_id": config.config_id, "strategy": config.strategy, "size": config.size,
            "unit": config.unit, "options": json.dumps(config.options(), sort_keys=True)}


def versions() -> dict[str, str]:
    """Python's and every package's version that run.json records, and the digest of
    chunkproof's code the parts are keyed by (``code_version``)."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return {"python": platform.python_version(), **found, "chunkproof_code": code_version()}


# --- parts: each config's finished work, reused only under the same key (Parts) ---------

def has_part(*paths: Path) -> bool:
    return all(path.is_file() for path in paths)


def write_part(path: Path, frame: pd.DataFrame) -> None:
    write_atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))


def read_part(path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    return pd.read_parquet(path, columns=columns)


def chunks_frame(config: ChunkerConfig, chunks: Sequence[Chunk]) -> pd.DataFrame:
    """One config's rows of chunks.parquet: the config's columns and each chunk's ``as_dict``,
    made a column at a time."""
    columns: dict[str, list] = {name: [value] * len(chunks)
                                for name, value in config_columns(config).items()}
    columns.update(Chunk.to_columns(chunks))
    return tables.CHUNKS.frame_of(columns)


def read_chunks(path: Path) -> list[Chunk]:
    """One config's chunks, read back as records (their columns only, a column at a time)."""
    return Chunk.from_columns(pq.read_table(path, columns=Chunk.column_names()).to_pydict())


def query_fingerprint(queries: Iterable[Any]) -> str:
    """sha256 over every query record (id, text, sources, answer, kind, gold spans), in
    order: changes when any query changes, so parts scored on other queries are never
    reused."""
    digest = hashlib.sha256()
    for query in queries:
        digest.update(json.dumps(query.as_dict(), sort_keys=True).encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


@dataclass
class Parts:
    """A run folder's ``parts/``: each file named by its config (and retriever) and by the key
    of everything that produced it, so a part of another corpus content, query set, chunkproof
    code (``code_version``) or scoring setting is never found, only recomputed."""

    folder: Path
    corpus: str
    """The corpus content fingerprint."""
    queries: str
    """The query-set fingerprint (``query_fingerprint``)."""
    scoring: str = ""
    """What else decides a score (k, token budgets): part of the key of scored parts."""
    version: str = field(default_factory=lambda: code_version())
    """What made the parts: ``code_version``."""
    asked: set[Path] = field(default_factory=set)
    sizes: str = field(default_factory=lambda: tokenizer_choice().key())
    """The tokenizer and window sizes were counted in (``TokenModel.key``: empty for the
    bundled ones, so their parts keep their keys)."""
    embedder: str = field(default_factory=lambda: embedder_choice().key())
    """The dense model's digest (``Embedder.key``: empty for the bundled model)."""

    def key(self, config_id: str, retriever: str = "") -> str:
        """Chunk parts depend on the corpus, the config and the version; scored parts also on
        the retriever, the queries and the scoring settings, and a dense retriever's on its
        model."""
        inputs = [self.corpus, self.version, config_id, *([self.sizes] if self.sizes else [])]
        if retriever:
            inputs += [retriever, self.queries, self.scoring]
            if retriever in DENSE and self.embedder:
                inputs.append(self.embedder)
        return hashlib.sha256("\0".join(inputs).encode()).hexdigest()[:12]

    def path(self, config_id: str, table: str, retriever: str = "") -> Path:
        """Where the part of ``table`` (chunks, retrieved, per_query) for this config lives."""
        stem = f"{config_id}.{retriever}" if retriever else config_id
        path = self.folder / f"{stem}.{self.key(config_id, retriever)}.{table}.parquet"
        self.asked.add(path)
        return path

    def remove_stale(self) -> list[Path]:
        """Delete every part this run did not ask for (another key: stale or foreign)."""
        stale = [p for p in self.folder.glob("*.parquet") if p not in self.asked]
        for path in stale:
            path.unlink(missing_ok=True)
        return stale


def run_parts(folder: Path, params: SweepParams, corpus: Any, queries: list) -> Parts:
    """The keyed parts in ``folder`` (a run folder's ``parts/``, or a temporary folder for a
    run without one)."""
    scoring = json.dumps({"k": params.k, "budgets": list(params.budgets)})
    return Parts(folder, corpus.fingerprint, query_fingerprint(queries), scoring)


def write_results(result: SweepResult, chunk_parts: list[Path] | None = None) -> None:
    """Every table of the run folder through its schema, and run.json, each atomically; the
    chunks table is streamed from ``chunk_parts`` (one config's chunks at a time) when given,
    else written from the result."""
    run_dir = result.run_dir
    assert run_dir is not None
    for table, frame in ((tables.RETRIEVED, result.retrieved),
                         (tables.PER_QUERY, result.per_query), (tables.SUMMARY, result.summary),
                         (tables.CHUNK_STATS, result.chunk_stats),
                         (tables.SIGNIFICANCE, result.significance),
                         (tables.DOCUMENT_WARNINGS, result.document_warnings)):
        table.write(run_dir, frame)
    if chunk_parts is not None:
        tables.CHUNKS.write_parts(run_dir, chunk_parts)
    else:
        tables.CHUNKS.write(run_dir, result.chunks)
    write_text_atomic(run_dir / "run.json", json.dumps(result.run_info, indent=2, default=str))


def load_run(run_dir: str | os.PathLike) -> SweepResult:
    """A finished sweep folder read back into a SweepResult."""
    run_dir = Path(run_dir)
    missing = [name for name in tables.RUN_FILES if not (run_dir / name).is_file()]
    if missing:
        raise ChoiceError(f"{run_dir} is not a finished sweep folder: missing {missing}")
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    significance = (tables.SIGNIFICANCE.read(run_dir)
                    if (run_dir / tables.SIGNIFICANCE.file).is_file() else pd.DataFrame())
    warned = (tables.DOCUMENT_WARNINGS.read(run_dir)
              if (run_dir / tables.DOCUMENT_WARNINGS.file).is_file()
              else tables.DOCUMENT_WARNINGS.frame([]))
    return SweepResult(
        params=SweepParams.from_shared(info["params"]), run_dir=run_dir,
        loaded_chunks=None, retrieved=plain_mode(tables.RETRIEVED.read(run_dir)),
        per_query=plain_mode(tables.PER_QUERY.read(run_dir)),
        summary=plain_mode(tables.SUMMARY.read(run_dir)),
        chunk_stats=tables.CHUNK_STATS.read(run_dir), significance=plain_mode(significance),
        run_info=info, document_warnings=warned)


def plain_mode(frame: pd.DataFrame) -> pd.DataFrame:
    """A table of a run made before retrieval modes, its rows marked ``plain`` (after the
    retriever column); a table with modes as it is."""
    if "mode" in frame.columns or "retriever" not in frame.columns:
        return frame
    return frame.assign(mode=PLAIN)[_after(list(frame.columns), "retriever")]


def _after(columns: list[str], name: str) -> list[str]:
    at = columns.index(name) + 1
    return [*columns[:at], "mode", *columns[at:]]
