"""The metric reference: per-query values and rankings ``units.score_config`` gave on three
corpora (the sample with its questions, two fixture corpora, one with mined queries), every
retrieval mode, every budget, recorded from the scorer that scored one query at a time, with
the chunks and queries they were scored on (so a change of chunking or mining leaves the
reference valid). ``tests/test_metric_reference.py`` holds today's scorer to it.

    python tests/metric_reference.py     # rewrite tests/fixtures/metric_reference/

Rewrite it only when a metric is meant to change, and say so in the commit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
FOLDER = Path(__file__).resolve().parent / "fixtures" / "metric_reference"
CASES = {"sample": ("data/sample", "data/sample/queries.jsonl"),
         "mini_corpus": ("tests/fixtures/mini_corpus", "tests/fixtures/mini_corpus/queries.jsonl"),
         "realworld": ("tests/fixtures/realworld", "")}
"""Case -> (corpus, query file; "" for queries mined from the corpus)."""
CONFIGS = (("ast_breadcrumb", 300), ("mhs_rct", 300))
"""A config with breadcrumb and source-label prefixes, and one whose chunks are rewritten."""
K = 5
BUDGETS = (64, 512, 1024)
"""64 tokens: nearly every bundle ends in a truncated chunk."""


def job_inputs(case: str, *, from_reference: bool = True):
    """(documents, queries, [(config, chunks)]) of ``case``: the chunks and queries stored in
    the reference (``from_reference``), else made now."""
    from chunkproof.chunking.config import make_config
    from chunkproof.document.corpus import load_corpus
    from chunkproof.evaluation.queries.mining import mine_all
    from chunkproof.evaluation.queries.queries import Query, load_queries
    from chunkproof.evaluation.run import units

    folder, query_file = CASES[case]
    docs = list(load_corpus(ROOT / folder))
    configs = [make_config(strategy=s, size=n) for s, n in CONFIGS]
    if from_reference:
        lines = (FOLDER / f"{case}.queries.jsonl").read_text(encoding="utf-8").splitlines()
        queries = [Query.from_dict(json.loads(line)) for line in lines]
        return docs, queries, [(c, read_chunks(FOLDER / f"{case}.{c.strategy}.chunks.parquet"))
                               for c in configs]
    queries = (load_queries(ROOT / query_file, docs) if query_file
               else mine_all(docs).queries)
    return docs, queries, [(c, units.chunk_shard(docs, c)) for c in configs]


def read_chunks(path: Path):
    """Chunk records from their fields as ``write_chunks`` stored them."""
    from chunkproof.chunking.records import Chunk

    rows = pd.read_parquet(path).to_dict("records")
    return [Chunk(**{name: tuple(value) if name in LIST_FIELDS else value
                     for name, value in row.items()}) for row in rows]


def write_chunks(path: Path, chunks) -> None:
    """The chunks' fields (the text once: prefixes, not renderings), zstd-compressed."""
    from chunkproof.chunking.records import Chunk

    names = list(Chunk.__dataclass_fields__)
    frame = pd.DataFrame({name: [list(v) if name in LIST_FIELDS else v
                                 for v in (getattr(c, name) for c in chunks)] for name in names})
    frame.to_parquet(path, index=False, compression="zstd")


LIST_FIELDS = ("breadcrumb", "heading_provenance")


def score(docs, queries, config, chunks):
    """``units.score_config`` of one config: every mode, the reference's k and budgets."""
    from chunkproof.evaluation.retrieval import modes
    from chunkproof.evaluation.run import units

    job = units.ScoreJob(config, "bm25", K, BUDGETS, modes.MODES)
    return units.score_config(job, chunks, queries, docs)


def write() -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        docs, queries, configs = job_inputs(case, from_reference=False)
        (FOLDER / f"{case}.queries.jsonl").write_text(
            "".join(json.dumps(q.as_dict(), ensure_ascii=False) + "\n" for q in queries),
            encoding="utf-8")
        per_query, retrieved = [], []
        for config, chunks in configs:
            write_chunks(FOLDER / f"{case}.{config.strategy}.chunks.parquet", chunks)
            scored = score(docs, queries, config, chunks)
            per_query.append(scored.per_query)
            retrieved.append(scored.retrieved)
        for name, frames in (("per_query", per_query), ("retrieved", retrieved)):
            pd.concat(frames, ignore_index=True).to_parquet(
                FOLDER / f"{case}.{name}.parquet", index=False, compression="zstd")
        print(f"{case}: {len(queries)} queries", file=sys.stderr)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "lib"))
    write()
