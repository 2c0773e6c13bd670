"""Chunk-folder benchmark: wall seconds of ``chunkproof chunk --out DIR/`` in this process and
with Ray Data, on a corpus grown to ``--mb`` and written to a temporary folder.

    python -m chunkproof.bench.chunk_engines [--corpus data/sample] [--mb 20]
                                           [--strategy ast_breadcrumb] [--size 1000]
                                           [--address ADDR]

Prints the local engine's seconds, the seconds to start (or join) Ray, the Ray engine's
seconds on the running instance, their ratio, whether the two folders hold the same shard
bytes, and the load average at start and end (the ratio means little on a busy machine).
Without ``--address`` Ray starts a local instance with every core of this machine.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from ..chunking.apply import chunk_to_folder
from ..chunking.config import ChunkerConfig, make_config
from ..chunking.shards import read_manifest
from ..util.ray_cluster import connect
from .sweep import write_grown


def timed(corpus: Path, config: ChunkerConfig, out: Path, engine: str) -> tuple[float, dict]:
    """Wall seconds of chunking ``corpus`` into ``out`` on ``engine``, and the manifest."""
    began = time.perf_counter()
    made = chunk_to_folder(str(corpus), config, f"{out}/", engine=engine)
    return time.perf_counter() - began, made


def same_shards(a: Path, b: Path) -> bool:
    names = [s["file"] for s in read_manifest(a)["shards"]]
    return names == [s["file"] for s in read_manifest(b)["shards"]] and all(
        (a / n).read_bytes() == (b / n).read_bytes() for n in names)


def run(corpus_dir: str, megabytes: float, strategy: str, size: int, address: str) -> None:
    config = make_config(strategy=strategy, size=size)
    with tempfile.TemporaryDirectory(prefix="chunkproof-bench-") as tmp:
        root = Path(tmp)
        documents, nbytes = write_grown(corpus_dir, megabytes, root / "corpus")
        print(f"corpus: {documents} documents, {nbytes / 1e6:.1f} MB ({corpus_dir} grown); "
              f"{strategy} at {size}; load average {load()}")
        local, made = timed(root / "corpus", config, root / "local", "local")
        print(f"local engine: {local:.1f} s, {made['chunks']} chunks in "
              f"{len(made['shards'])} shard(s)")
        began = time.perf_counter()
        ray, joined = connect(address, feature="the chunk engine benchmark")
        start = time.perf_counter() - began
        cpus = int(ray.cluster_resources().get("CPU", 0))
        try:
            on_ray, _ = timed(root / "corpus", config, root / "ray", "ray")
        finally:
            if joined:
                ray.shutdown()
        print(f"ray: {start:.1f} s to {'start' if joined else 'join'} ({cpus} CPUs), "
              f"then {on_ray:.1f} s to chunk")
        print(f"ray / local: {on_ray / local:.2f} (chunking), {(start + on_ray) / local:.2f} "
              f"(with the start); same shard bytes: {same_shards(root / 'local', root / 'ray')}; "
              f"load average {load()}")


def load() -> str:
    """The 1-minute load average and the cores ("unknown" where the OS does not say)."""
    try:
        return f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chunkproof.bench.chunk_engines",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="data/sample")
    parser.add_argument("--mb", type=float, default=20.0, help="grown corpus size in MB")
    parser.add_argument("--strategy", default="ast_breadcrumb")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--address", default="", help="a Ray cluster to join")
    args = parser.parse_args(argv)
    run(args.corpus, args.mb, args.strategy, args.size, args.address)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
