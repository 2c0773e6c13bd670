"""Throughput benchmark: markdown-it block parse vs every strategy, on a replicated corpus.

    python -m chunklab.bench [--corpus data/sample] [--mb 5] [--size 1000] [--repeat 3]

Ratios are measured in the same run, so a noisy machine moves both sides alike.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from .chunking.build import chunk_document
from .chunking.config import make_config
from .chunking.registry import REGISTRY
from .document.blocks import parse_blocks
from .document.corpus import load_corpus, make_document


def replicate(corpus, megabytes: float) -> list:
    """Copies of every document (each with a distinct id and text) until the target size."""
    target = megabytes * 1_000_000
    docs, size, round_ = [], 0, 0
    while size < target:
        for doc in corpus:
            text = f"{doc.text}\n\n<!-- copy {round_} -->\n"
            docs.append(make_document(f"copy{round_}/{doc.id}", text))
            size += len(text.encode())
        round_ += 1
    return docs


def _timed(func, docs, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        for doc in docs:
            func(doc)
        best = min(best, time.perf_counter() - began)
    return best


def run(corpus_dir: str, megabytes: float, size: int, repeat: int) -> list[dict]:
    docs = replicate(load_corpus(corpus_dir), megabytes)
    total_mb = sum(len(d.text.encode()) for d in docs) / 1_000_000
    rows: list[dict[str, Any]] = []
    parse_seconds = _timed(lambda d: parse_blocks(d.text, d.is_markdown, d.infer_headings),
                           docs, repeat)
    rows.append({"stage": "block parse (markdown-it)", "seconds": parse_seconds})
    for name in REGISTRY:
        config = make_config(strategy=name, size=size)
        # From text to chunks: the document is made (parsed) inside the timed call.
        seconds = _timed(lambda d, c=config: chunk_document(make_document(d.id, d.text), c),
                         docs, repeat)
        rows.append({"stage": name, "seconds": seconds})
    for row in rows:
        row["MB/s"] = total_mb / row["seconds"]
        row["x parse"] = parse_seconds / row["seconds"]
    print(f"{len(docs)} documents, {total_mb:.2f} MB, size={size} chars, best of {repeat}")
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chunklab.bench", description=__doc__)
    parser.add_argument("--corpus", default="data/sample")
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rows = run(args.corpus, args.mb, args.size, args.repeat)
    print(f"{'stage':<28}{'seconds':>9}{'MB/s':>8}{'x parse':>9}")
    for row in rows:
        print(f"{row['stage']:<28}{row['seconds']:>9.2f}{row['MB/s']:>8.2f}{row['x parse']:>9.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
