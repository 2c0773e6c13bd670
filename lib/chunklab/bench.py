"""Throughput benchmark: markdown-it block parse vs every available strategy (peers
included), on a replicated corpus; each strategy of the ast family is timed with both block
parsers when markdown-it-pyrs (extra ``fast``) is installed, beside markdown-it-pyrs's own block
parse and LangChain's MarkdownHeaderTextSplitter alone (``x rust``, ``x LC header``: their time
over the row's).

    python -m chunklab.bench [--corpus data/sample] [--mb 5] [--size 1000] [--repeat 3]
                             [--budget 60]
    python -m chunklab.bench --scale [--scale-mb 5 10 20 50] [--headings 10000 20000 40000]
    python -m chunklab.bench --sweep   (the sweep's costs: see chunklab.sweep_bench)

Below the strategies, what a sweep pays per config beyond the first (``ast_breadcrumb, one
more config``: documents already parsed, their words already counted) and the token counts of
one copy's chunks encoded text by text vs word by word from an empty cache (the first config
of a sweep, on words never seen).

Ratios are measured in the same run, so a noisy machine moves both sides alike. A strategy
too slow to chunk every copy ``repeat`` times within ``budget`` seconds (an embedding model
per sentence) is timed on fewer whole copies (one pass over one copy when even that does not
fit), and the parse is timed on those same copies for its ratio; MB and passes say what each
row's best time is of.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from .chunking import sizes
from .chunking.build import chunk_document
from .chunking.config import make_config
from .chunking.registry import REGISTRY, available_names
from .document.blocks import parse_blocks
from .document.corpus import load_corpus, make_document
from .document.rust_blocks import available as rust_available


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


def copies_within(probe_seconds: float, copies: int, repeat: int, budget: float) -> int:
    """How many whole copies fit ``repeat`` timed passes in ``budget`` seconds (at least
    one), given that one copy took ``probe_seconds``."""
    if probe_seconds * copies * repeat <= budget:
        return copies
    return max(1, min(copies, int(budget / (probe_seconds * repeat))))


def run(corpus_dir: str, megabytes: float, size: int, repeat: int,
        budget: float = 60.0, strategies: list[str] | None = None) -> list[dict]:
    corpus = load_corpus(corpus_dir)
    docs = replicate(corpus, megabytes)
    per_copy = max(len(corpus), 1)
    copies = max(len(docs) // per_copy, 1)
    parse_seconds: dict[int, float] = {}

    def parse_time(n: int) -> float:
        if n not in parse_seconds:
            parse_seconds[n] = _timed(
                lambda d: parse_blocks(d.text, d.is_markdown, d.infer_headings),
                docs[: n * per_copy], repeat)
        return parse_seconds[n]

    rows: list[dict[str, Any]] = [
        {"stage": "block parse (markdown-it)", "copies": copies, "passes": repeat,
         "seconds": parse_time(copies)}
    ]
    references = _reference_rows(docs, copies, repeat)
    rows += references
    parsers = ["python", "rust"] if rust_available() else ["python"]
    for name in strategies or available_names():
        config = make_config(strategy=name, size=size)
        for parser in parsers if REGISTRY[name].family == "ast" else [None]:
            rows.append(_strategy_row(name, config, parser, docs, per_copy, copies, repeat,
                                      budget))
    rows += _sweep_rows(docs, per_copy, copies, size, repeat)
    for row in rows:
        chunked = docs[: row["copies"] * per_copy]
        row["MB"] = sum(len(d.text.encode()) for d in chunked) / 1_000_000
        row["MB/s"] = row["MB"] / row["seconds"]
        row["x parse"] = parse_time(row["copies"]) / row["seconds"]
    for row in rows:  # a reference's time scaled to the row's MB, over the row's time
        for ref in references:
            row[ref["column"]] = (ref["seconds"] * row["MB"] / ref["MB"]) / row["seconds"]
    total_mb = rows[0]["MB"]
    print(f"{len(docs)} documents, {total_mb:.2f} MB, size={size} chars, best of {repeat}")
    for name, strategy in REGISTRY.items():
        if not strategy.available:
            print(f"not timed: {name} ({strategy.status()})")
    return rows


def _strategy_row(name, config, parser, docs, per_copy, copies, repeat, budget) -> dict:
    """One strategy's best time from text to chunks (the document is made, so parsed,
    inside the timed call), on as many copies as the budget allows."""
    stage = name if parser is None else f"{name} [{parser}]"

    def chunk(d, c=config):
        return chunk_document(make_document(d.id, d.text, parser=parser), c)

    chunk(docs[0])  # loads what a peer needs (a model, a converter): untimed
    probe = _timed(chunk, docs[:per_copy], 1)
    if probe * repeat > budget:  # one copy, once: the probe is the measurement
        return {"stage": stage, "copies": 1, "passes": 1, "seconds": probe}
    n = copies_within(probe, copies, repeat, budget)
    return {"stage": stage, "copies": n, "passes": repeat,
            "seconds": _timed(chunk, docs[: n * per_copy], repeat)}


MARGINAL = "ast_breadcrumb"
"""The strategy whose marginal cost per config is printed."""


def _sweep_rows(docs, per_copy: int, copies: int, size: int, repeat: int) -> list[dict]:
    """What a sweep pays per config beyond the first: ``MARGINAL`` at half the size on
    documents already parsed whose words were already counted (by a first config); and the
    token counts of one copy's chunks, each text encoded whole vs word by word from an empty
    word cache (the copies repeat one corpus, so later copies find every word counted)."""
    if MARGINAL not in REGISTRY or not REGISTRY[MARGINAL].available:
        return []
    parsed = [make_document(d.id, d.text) for d in docs]
    first, other = (make_config(strategy=MARGINAL, size=s) for s in (size, max(size // 2, 1)))
    for doc in parsed:
        chunk_document(doc, first)
    rows = [{"stage": f"{MARGINAL}, one more config", "copies": copies, "passes": repeat,
             "seconds": _timed(lambda d: chunk_document(d, other), parsed, repeat)}]
    if not sizes.tokens_available():
        return rows
    texts = [c.text for d in parsed[:per_copy] for c in chunk_document(d, first)]

    def word_by_word(_doc) -> None:
        sizes._word_tokens.clear()
        sizes.count_tokens(texts)

    for stage, count in (("token counts, each text encoded", sizes.encode_counts),
                         ("token counts, word by word (cold)", word_by_word)):
        rows.append({"stage": stage, "copies": 1, "passes": repeat,
                     "seconds": _timed(lambda _d, f=count: f(texts), [None], repeat)})
    return rows


def _reference_rows(docs, copies: int, repeat: int) -> list[dict]:
    """markdown-it-pyrs's own block parse and LangChain's header splitter alone, when
    installed: what the ``x rust`` and ``x LC header`` columns compare with."""
    rows = []
    if rust_available():
        from .document.rust_blocks import _parser

        tree = _parser().tree
        rows.append({"stage": "block parse (markdown-it-pyrs)", "column": "x rust",
                     "copies": copies, "passes": repeat,
                     "seconds": _timed(lambda d: tree(d.text), docs, repeat)})
    try:
        from langchain_text_splitters import MarkdownHeaderTextSplitter
    except ImportError:
        return rows
    from .chunking.strategies.baselines import MHS_HEADERS

    splitter = MarkdownHeaderTextSplitter(MHS_HEADERS, strip_headers=False)
    rows.append({"stage": "LangChain header splitter", "column": "x LC header",
                 "copies": copies, "passes": repeat,
                 "seconds": _timed(lambda d: splitter.split_text(d.text), docs, repeat)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chunklab.bench", description=__doc__)
    parser.add_argument("--corpus", default="data/sample")
    parser.add_argument("--mb", type=float, default=None,
                        help="corpus size in MB (default 5; with --sweep 1)")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=60.0,
                        help="seconds a strategy's timed passes may take before it is timed "
                             "on fewer copies of the corpus")
    parser.add_argument("--strategies", nargs="+", choices=available_names(), default=None,
                        help="time only these strategies (default: every available one)")
    parser.add_argument("--scale", action="store_true",
                        help="time generated documents of growing size and heading count "
                             "instead (bench_scale.py)")
    parser.add_argument("--scale-mb", type=float, nargs="+", default=[5, 10, 20, 50])
    parser.add_argument("--headings", type=int, nargs="+", default=[10_000, 20_000, 40_000])
    parser.add_argument("--sweep", action="store_true",
                        help="benchmark the sweep instead: sizes, workers, statistics share, "
                             "start time, CPU and memory per MB of one file")
    parser.add_argument("--queries", default="",
                        help="with --sweep: a JSONL query file (default: the corpus's "
                             "queries.jsonl)")
    parser.add_argument("--file-mb", default="1,4,16,32",
                        help="with --sweep: sizes in MB of the one file chunked")
    args = parser.parse_args(argv)
    if args.sweep:
        from pathlib import Path

        from . import sweep_bench

        queries = args.queries or str(Path(args.corpus) / "queries.jsonl")
        sweep_bench.run(args.corpus, queries, args.mb or 1.0,
                        [float(x) for x in args.file_mb.split(",") if x])
        return 0
    if args.scale:
        from .bench_scale import run_scale
        from .evaluation.defaults import DEFAULT_STRATEGIES

        run_scale(args.scale_mb, args.headings, args.size,
                  tuple(args.strategies or DEFAULT_STRATEGIES))
        return 0
    rows = run(args.corpus, args.mb or 5.0, args.size, args.repeat, args.budget, args.strategies)
    extra = [c for c in ("x rust", "x LC header") if c in rows[-1]]
    print(f"{'stage':<34}{'MB':>7}{'passes':>7}{'seconds':>9}{'MB/s':>8}{'x parse':>9}"
          + "".join(f"{c:>12}" for c in extra))
    for row in rows:
        print(f"{row['stage']:<34}{row['MB']:>7.2f}{row['passes']:>7}{row['seconds']:>9.2f}"
              f"{row['MB/s']:>8.3g}{row['x parse']:>9.3g}"
              + "".join(f"{row[c]:>12.3g}" for c in extra))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
