"""The shards of a chunk folder (``chunkproof chunk --out DIR/``): the corpus files listed once
and cut into shards by size, each shard read, chunked and written by one call
(``chunk_shard``) that either engine runs (``apply``: this process; ``ray_data``: Ray Data's
workers), the manifest made from what each call did, and the folder read back."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from ..document.corpus import (
    Corpus,
    Skipped,
    corpus_files,
    fingerprint_of,
    load_file,
    text_digest,
)
from ..errors import ChunkproofError
from ..util.atomic import write_atomic
from ..util.paths import shared_path
from .build import chunk_document
from .config import ChunkerConfig
from .records import LIST_COLUMNS, Chunk

MANIFEST = "_manifest.json"
"""Written last into the folder before it is renamed into place, so a folder holding it is
whole; the leading underscore keeps Parquet readers (pandas, pyarrow, Ray Data) from taking
it for a shard."""
FORMAT = "chunkproof-chunks"
FORMAT_VERSION = 1
SHARD_BYTES = 4 * 2**20
"""Input bytes a shard gathers before the next begins: seconds of chunking, so a task's
scheduling is small beside its work, and a 20 MB corpus is already five shards to share
between the cores."""
SHARD_FILES = 2000
"""Files a shard gathers at most (many tiny pages)."""


@dataclass(frozen=True, slots=True)
class Shard:
    """Files chunked and written together: their paths and document ids, in corpus order."""

    number: int
    paths: tuple[str, ...]
    doc_ids: tuple[str, ...]

    @property
    def name(self) -> str:
        return shard_name(self.number)

    def as_row(self) -> dict[str, Any]:
        return {"number": self.number, "paths": list(self.paths), "doc_ids": list(self.doc_ids)}


def shard_name(number: int) -> str:
    """A shard's file name: numbered, so the names sort in corpus order."""
    return f"part-{number:05d}.parquet"


@dataclass(frozen=True, slots=True)
class Reading:
    """The loader's settings, resolved once where the command runs and handed to every
    worker (which has neither its options nor its environment)."""

    infer_headings: bool
    max_bytes: int
    seconds: float


def plan_shards(root: str | os.PathLike) -> list[Shard]:
    """The files of ``root`` (``corpus_files``) cut into shards of ``SHARD_BYTES`` of input
    or ``SHARD_FILES`` files; the plan depends on the files alone, not on the engine."""
    shards: list[Shard] = []
    group: list[tuple[Path, str]] = []
    size = 0
    for path, doc_id in corpus_files(root):
        group.append((Path(os.path.abspath(path)), doc_id))
        size += _size(path)
        if size >= SHARD_BYTES or len(group) >= SHARD_FILES:
            shards.append(_shard(len(shards), group))
            group, size = [], 0
    if group:
        shards.append(_shard(len(shards), group))
    return shards


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:  # the file's own reading will say why
        return 0


def _shard(number: int, group: list[tuple[Path, str]]) -> Shard:
    return Shard(number, tuple(str(p) for p, _ in group), tuple(i for _, i in group))


def chunk_shard(row: dict[str, Any], config: ChunkerConfig, folder: str,
                reading: Reading) -> dict[str, Any]:
    """Read one shard's files (``load_file``) one at a time, chunk each (``chunk_document``)
    and write its chunks to the shard's file in ``folder`` as they are made (``ShardWriter``;
    atomically, no file when there is no chunk); what was done, as a row of plain values
    (``Shard.as_row`` in, ``manifest`` reads it)."""
    documents: list[list[str]] = []
    skipped: list[Skipped] = []
    name = shard_name(row["number"])

    def write(tmp: Path) -> None:
        with ShardWriter(tmp) as shard:
            for path, doc_id in zip(row["paths"], row["doc_ids"], strict=True):
                loaded = load_file(Path(path), doc_id, infer_headings=reading.infer_headings,
                                   max_bytes=reading.max_bytes, seconds=reading.seconds)
                if isinstance(loaded, Skipped):
                    skipped.append(loaded)
                    continue
                documents.append([loaded.id, text_digest(loaded.text)])
                warnings.extend(Corpus("", (loaded,), ()).warning_rows())
                chunks = chunk_document(loaded, config)
                del loaded  # its parse is not held while its chunks are written
                shard.take(chunks)
            shard.flush()
            if not shard.rows:
                raise _NoChunks
            written.append(shard.rows)

    written: list[int] = []
    warnings: list[dict] = []
    try:
        write_atomic(Path(folder) / name, write)
    except _NoChunks:
        name = ""
    return {"number": row["number"], "file": name, "rows": sum(written),
            "documents": documents, "skipped": [s.as_dict() for s in skipped],
            "warnings": warnings + Corpus("", (), tuple(skipped)).warning_rows()}


class _NoChunks(Exception):
    """A shard whose files hold no chunk: it gets no file."""


BATCH_ROWS = 1024
"""Chunks a shard's file takes at a time (one Parquet row group each): what is held of a
shard's table at once, whatever its size."""


class ShardWriter:
    """A shard's Parquet file written batch by batch (``BATCH_ROWS`` chunks a row group), in
    the shards' schema (``chunk_schema``); opened, and pyarrow loaded, with the first batch
    (after the parse of the first document is let go)."""

    def __init__(self, path: Path):
        self.path = path
        self.writer: Any = None
        self.held: list[Chunk] = []
        self.rows = 0

    def take(self, chunks: list[Chunk]) -> None:
        """Write ``chunks``, emptying the list as they go: a chunk written is held no more."""
        chunks.reverse()
        while chunks:
            self.held.append(chunks.pop())
            if len(self.held) >= BATCH_ROWS:
                self.flush()

    def flush(self) -> None:
        if not self.held:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = chunk_schema()
        self.writer = self.writer or pq.ParquetWriter(self.path, schema)
        self.writer.write_table(pa.Table.from_pydict(Chunk.to_columns(self.held), schema=schema))
        self.rows += len(self.held)
        self.held = []

    def __enter__(self) -> ShardWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if exc[0] is None:
                self.flush()
        finally:
            if self.writer is not None:
                self.writer.close()


ARROW_TYPES = {"str": "string", "int": "int64", "bool": "bool"}
"""The Arrow type of each kind of Chunk field (the tuple fields are lists of strings)."""


def chunk_schema():
    """The shards' Arrow schema: ``Chunk.column_names`` typed by the fields (one schema for
    every shard, whatever its rows hold: a shard whose breadcrumbs are all empty too)."""
    import pyarrow as pa

    kinds = {name: field.type for name, field in Chunk.__dataclass_fields__.items()}
    kinds.update(embed_text="str", context_text="str")
    return pa.schema([
        (name, pa.list_(pa.string()) if name in LIST_COLUMNS
         else pa.type_for_alias(ARROW_TYPES[str(kinds[name])]))
        for name in Chunk.column_names()])


def manifest(config: ChunkerConfig, done: Iterable[dict[str, Any]], *, corpus: str,
             engine: str) -> dict[str, Any]:
    """The folder's manifest from each shard's row (``chunk_shard``), in shard order: the
    config, the corpus and its fingerprint (as ``Corpus.fingerprint``), the counts, every
    shard with its rows, every skipped file with the reason and every warning of the load
    (``Corpus.warning_rows``: doc_id, kind, message, line)."""
    rows = sorted(done, key=lambda r: r["number"])
    documents = [tuple(d) for r in rows for d in r["documents"]]
    return {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "chunkproof_version": metadata.version("chunkproof"), "engine": engine,
        "config": config.model_dump(), "config_id": config.config_id,
        "corpus": {"root": shared_path(corpus), "fingerprint": fingerprint_of(documents),
                   "documents": len(documents)},
        "chunks": sum(r["rows"] for r in rows),
        "columns": Chunk.column_names(),
        "shards": [{"file": r["file"], "rows": r["rows"]} for r in rows if r["file"]],
        "skipped": [s for r in rows for s in r["skipped"]],
        "warnings": [w for r in rows for w in r["warnings"]],
    }


def read_manifest(folder: str | os.PathLike) -> dict[str, Any]:
    """A chunk folder's manifest; ChunkproofError when the folder has none (not a whole chunk
    folder)."""
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise ChunkproofError(f"{folder} is not a whole chunk folder: it holds no {MANIFEST}")
    return json.loads(path.read_text(encoding="utf-8"))


def read_chunk_folder(folder: str | os.PathLike) -> list[Chunk]:
    """Every chunk of a chunk folder, in corpus order (its shards as the manifest lists
    them)."""
    import pyarrow.parquet as pq

    chunks: list[Chunk] = []
    for shard in read_manifest(folder)["shards"]:
        table = pq.read_table(Path(folder) / shard["file"], columns=Chunk.column_names())
        chunks += Chunk.from_columns(table.to_pydict())
    return chunks
