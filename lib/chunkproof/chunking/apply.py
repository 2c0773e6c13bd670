"""A config applied to a whole corpus: into one JSONL file (``chunkproof chunk --out FILE``),
each chunk written as it is made, or into a chunk folder (``chunkproof chunk --out DIR/``): its
shards (``shards``) chunked in this process or on Ray Data (``ray_data``), the folder made
beside its place and renamed into it whole, its manifest written last."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..document.corpus import Corpus, Document, Skipped, file_limit
from ..document.time_limit import parse_limit
from ..errors import ChunkproofError
from ..util.atomic import write_atomic, write_folder_atomic, write_text_atomic
from .build import chunk_document
from .config import ChunkerConfig
from .shards import MANIFEST, Reading, Shard, chunk_shard, manifest, plan_shards

ENGINES = ("local", "ray")


def chunk_to_jsonl(corpus: Iterable[Document], config: ChunkerConfig,
                   out: str | os.PathLike) -> int:
    """Every chunk of ``corpus`` under ``config`` as one JSON object a line (``Chunk.as_dict``)
    in ``out``, written atomically: each document's lines go to the temporary file as its
    chunks are made, before the next document is read, so one document's chunks are held at
    a time and no line is held beyond its own. The number of chunks."""
    written = 0

    def write(tmp: Path) -> None:
        nonlocal written
        with tmp.open("w", encoding="utf-8") as file:
            for doc in corpus:
                for chunk in chunk_document(doc, config):
                    file.write(json.dumps(chunk.as_dict(), ensure_ascii=False))
                    file.write("\n")
                    written += 1
                file.flush()

    write_atomic(out, write)
    return written


def chunk_to_folder(corpus: str, config: ChunkerConfig, out: str | os.PathLike, *,
                    engine: str = "local", address: str = "", max_bytes: int | None = None,
                    parse_seconds: float | None = None) -> dict[str, Any]:
    """Chunk every file of ``corpus`` under ``config`` into the folder ``out`` (Parquet shards
    and ``MANIFEST``), in this process (``local``) or with Ray Data (``ray``, joining
    ``address``); the manifest. ``out`` appears whole or not at all; a chunk folder already
    there is replaced, any other folder refused."""
    if engine not in ENGINES:
        raise ChunkproofError(f"unknown engine {engine!r}; valid engines: {', '.join(ENGINES)}")
    check_out(Path(out))
    reading = Reading(config.infer_headings, file_limit(max_bytes), parse_limit(parse_seconds))
    shards = plan_shards(corpus)
    made: dict[str, Any] = {}

    def write(folder: Path) -> None:
        done = run_shards(shards, config, folder, reading, engine=engine, address=address)
        made.update(manifest(config, done, corpus=corpus, engine=engine))
        if not made["corpus"]["documents"]:
            skipped = tuple(Skipped(**s) for s in made["skipped"])
            Corpus(str(corpus), (), skipped).require_documents()
        write_text_atomic(folder / MANIFEST, json.dumps(made, indent=1, ensure_ascii=False))

    write_folder_atomic(out, write)
    return made


def run_shards(shards: list[Shard], config: ChunkerConfig, folder: Path, reading: Reading, *,
               engine: str, address: str = "") -> list[dict[str, Any]]:
    """Each shard's row (``chunk_shard``), chunked in this process or on Ray Data."""
    if engine == "ray":
        from .ray_data import chunk_on_ray

        return chunk_on_ray(shards, config, folder, reading, address=address)
    return [chunk_shard(shard.as_row(), config, str(folder), reading) for shard in shards]


def check_out(out: Path) -> None:
    """ChunkproofError unless ``out`` can become a chunk folder: new, an empty folder, or a
    chunk folder (one holding ``MANIFEST``), which is replaced."""
    if out.exists() and not out.is_dir():
        raise ChunkproofError(f"--out: {out} is a file, not a folder: name a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise ChunkproofError(f"--out: {out} holds files but no {MANIFEST}, so it is not a "
                            "chunk folder this command made: name a new or empty folder")
