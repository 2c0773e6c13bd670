"""A corpus chunked on a Ray cluster with Ray Data (the optional ``ray`` extra): the planned
shards become a dataset, ``map_batches`` reads, chunks and writes each one on a worker
(``shards.chunk_shard``, the local engine's call) and hands back a row of what it did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import ChunkproofError, WorkerLostError
from ..util.ray_cluster import connect
from .config import ChunkerConfig
from .shards import Reading, Shard, chunk_shard

FEATURE = "chunkproof chunk --engine ray"


def chunk_shards(batch: Any, config: ChunkerConfig, folder: str, reading: Reading) -> Any:
    """``map_batches``' function: a batch of shard rows (an Arrow table) in, a table of one
    JSON row each (``chunk_shard``'s) out. A chunkproof error (a folder the worker cannot write)
    comes back as the row's ``error``: Ray Data hands the caller its text, not the error."""
    import pyarrow as pa

    done = []
    for row in batch.to_pylist():
        try:
            done.append(json.dumps(chunk_shard(row, config, folder, reading)))
        except ChunkproofError as err:
            done.append(json.dumps({"error": str(err)}))
    return pa.table({"done": pa.array(done, pa.string())})


def chunk_on_ray(shards: list[Shard], config: ChunkerConfig, folder: Path, reading: Reading, *,
                 address: str = "") -> list[dict[str, Any]]:
    """Each shard's row (``chunk_shard``), run by Ray Data's workers, one task per shard; the
    shards are written into ``folder``, which every worker must reach at the same path."""
    ray, joined = connect(address, feature=FEATURE)
    try:
        from ray import data

        if not shards:
            return []
        dataset = data.from_items([s.as_row() for s in shards],
                                 override_num_blocks=len(shards))
        done = dataset.map_batches(chunk_shards, batch_size=1, batch_format="pyarrow",
                                   fn_kwargs={"config": config, "folder": str(folder.resolve()),
                                              "reading": reading})
        return _rows(done)
    finally:
        if joined:
            ray.shutdown()


def _rows(dataset: Any) -> list[dict[str, Any]]:
    """Every row of ``dataset``, run now: a shard's chunkproof error raised here as one line,
    any other failure of the run in one line too."""
    try:
        rows = [json.loads(row["done"]) for row in dataset.take_all()]
    except Exception as err:
        reason = " ".join(str(err).split())[:300]
        raise WorkerLostError(f"chunking on Ray failed: {type(err).__name__}: {reason}; "
                              "rerun with --debug for the traceback") from None
    for row in rows:
        if "error" in row:
            raise ChunkproofError(row["error"])
    return rows
