"""Dense encoding on CPU: texts per CPU second of each runtime on the same texts, and how far
each ONNX runtime's top-5 agrees with sentence-transformers' on torch.

    python -m chunkproof.bench.dense [--corpus data/sample] [--queries FILE] [--strategy S]
                                   [--size N] [--unit chars] [--rounds 2] [--k 5]

The texts are the chunks of the corpus under one config and the queries (each distinct text
once), embedded in the sweep's batches (64, longest first) by each runtime, the model loaded
first and one batch embedded untimed. The runtimes take turns, round after round, and each
keeps its least CPU time: a busy spell slows every runtime alike. CPU time is the process's
(all its threads), so a runtime that keeps cores busy waiting pays for it. Agreement: for each
query, the top ``k`` chunks by dot product of unit vectors (dense retrieval) under each ONNX
runtime against torch's, as the fraction of queries with the same set and the mean overlap.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from ..chunking.build import chunk_corpus
from ..chunking.config import ChunkerConfig, make_config
from ..chunking.encoder import RUNTIMES, load_dense
from ..document.corpus import load_corpus
from ..evaluation.queries.queries import load_queries
from ..evaluation.retrieval.embedding import BATCH, sorted_batches
from ..evaluation.retrieval.retrieve import top_k
from ..evaluation.run.defaults import DEFAULT_CORPUS
from ..util.cores import all_cores

DEFAULT_QUERIES = "data/sample/queries.jsonl"


def bench_texts(corpus_dir: str, queries_file: str, config: ChunkerConfig
                ) -> tuple[list[str], list[str]]:
    """The queries and the chunks' embed texts of the corpus under ``config``."""
    corpus = load_corpus(corpus_dir)
    queries = [q.query for q in load_queries(queries_file, corpus)]
    return queries, [c.embed_text for c in chunk_corpus(corpus, config)]


def embed_timed(encoder: Any, texts: list[str]) -> tuple[np.ndarray, float, float]:
    """Unit vectors of ``texts`` in the sweep's batches, with CPU and wall seconds."""
    vectors = np.zeros((len(texts), 0), dtype=np.float32)
    cpu, wall = time.process_time(), time.perf_counter()
    for rows in sorted_batches(texts, BATCH):
        part = encoder.embed([texts[i] for i in rows], len(rows))
        if vectors.shape[1] == 0:
            vectors = np.zeros((len(texts), part.shape[1]), dtype=np.float32)
        vectors[rows] = part
    return vectors, time.process_time() - cpu, time.perf_counter() - wall


def agreement(reference: np.ndarray, other: np.ndarray, n_queries: int, k: int
              ) -> dict[str, float]:
    """Top-``k`` agreement of dense retrieval (queries: the first ``n_queries`` rows, chunks:
    the rest) and the cosine of each text's two vectors."""
    tops = []
    for vectors in (reference, other):
        scores = vectors[:n_queries] @ vectors[n_queries:].T
        tops.append([set(top_k(row, k).tolist()) for row in scores])
    same = [a == b for a, b in zip(*tops, strict=True)]
    overlap = [len(a & b) / len(a) for a, b in zip(*tops, strict=True)]
    cosines = (reference * other).sum(axis=1)
    return {"identical": float(np.mean(same)), "overlap": float(np.mean(overlap)),
            "min_cosine": float(cosines.min()), "mean_cosine": float(cosines.mean())}


def dense_figures(corpus_dir: str = DEFAULT_CORPUS, queries_file: str = DEFAULT_QUERIES,
                  config: ChunkerConfig | None = None, *, rounds: int = 2, k: int = 5,
                  runtimes: tuple[str, ...] = RUNTIMES) -> dict[str, Any]:
    """Each runtime's texts per CPU second (and per wall second, and its ratio to torch's),
    and each other runtime's top-``k`` agreement with torch's (``agreement``)."""
    config = config or make_config()
    queries, chunks = (list(dict.fromkeys(t)) for t in bench_texts(corpus_dir, queries_file,
                                                                     config))
    texts = queries + chunks
    encoders, loads = {}, {}
    for name in runtimes:
        began = time.perf_counter()
        encoders[name] = load_dense(name)
        encoders[name].embed(texts[:BATCH], BATCH)  # first batch: warm, untimed
        loads[name] = time.perf_counter() - began
    best: dict[str, tuple[np.ndarray, float, float]] = {}
    for _ in range(rounds):
        for name, encoder in encoders.items():
            vectors, cpu, wall = embed_timed(encoder, texts)
            if name not in best or cpu < best[name][1]:
                best[name] = (vectors, cpu, wall)
    rows: dict[str, dict[str, float]] = {
        name: {"texts_per_cpu_s": len(texts) / cpu, "texts_per_wall_s": len(texts) / wall,
               "cpu_s": cpu, "load_s": loads[name]} for name, (_, cpu, wall) in best.items()}
    reference = best.get("torch")
    for name, row in rows.items():
        if reference is not None and name != "torch":
            row["vs_torch"] = row["texts_per_cpu_s"] / rows["torch"]["texts_per_cpu_s"]
            row.update(agreement(reference[0], best[name][0], len(queries), k))
    return {"config": config.config_id, "strategy": config.strategy, "size": config.size,
            "unit": config.unit, "queries": len(queries), "texts": len(texts),
            "cores": all_cores(), "rounds": rounds, "k": k, "runtimes": rows}


def print_figures(figures: dict[str, Any]) -> None:
    print(f"dense encoding: {figures['texts']} distinct texts ({figures['queries']} queries and "
          f"the chunks of {figures['strategy']} at {figures['size']} {figures['unit']}), "
          f"{figures['cores']} cores, least CPU time of {figures['rounds']} rounds")
    k = figures["k"]
    print(f"{'runtime':<11}{'texts/CPU-s':>12}{'texts/s':>9}{'x torch':>9}"
          f"{f'same top-{k}':>12}{'overlap':>9}{'min cos':>9}{'load s':>8}")
    for name, row in figures["runtimes"].items():
        compared = "vs_torch" in row
        print(f"{name:<11}{row['texts_per_cpu_s']:>12.1f}{row['texts_per_wall_s']:>9.1f}"
              + (f"{row['vs_torch']:>9.2f}{row['identical']:>12.3f}{row['overlap']:>9.3f}"
                 f"{row['min_cosine']:>9.4f}" if compared else f"{'1.00':>9}{'':>30}")
              + f"{row['load_s']:>8.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chunkproof.bench.dense",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=DEFAULT_CORPUS)
    parser.add_argument("--queries", default=DEFAULT_QUERIES)
    default = make_config()
    parser.add_argument("--strategy", default=default.strategy)
    parser.add_argument("--size", type=int, default=default.size)
    parser.add_argument("--unit", default=default.unit)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--runtimes", default=",".join(RUNTIMES),
                        help="comma-separated; torch is the reference of the agreement")
    args = parser.parse_args(argv)
    config = make_config(strategy=args.strategy, size=args.size, unit=args.unit)
    print_figures(dense_figures(args.corpus, args.queries, config, rounds=args.rounds, k=args.k,
                                runtimes=tuple(args.runtimes.split(","))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
