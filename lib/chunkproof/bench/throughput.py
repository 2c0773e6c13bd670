"""Throughput benchmark: markdown-it block parse vs every available strategy (peers
included), on a replicated corpus, beside LangChain's MarkdownHeaderTextSplitter, alone and
followed by its RecursiveCharacterTextSplitter (``x LC header``, ``x LC+RCT``: their time over
the row's).

    python -m chunkproof.bench [--corpus data/sample] [--mb 5] [--size 1000] [--repeat 3]
                             [--budget 60]
    python -m chunkproof.bench --scale [--scale-mb 5 10 20 50] [--headings 10000 20000 40000]
    python -m chunkproof.bench --sweep   (the sweep's costs: see chunkproof.bench.sweep)

Below the strategies, ast_breadcrumb with its size in tokens (``--size`` / 4), alone and with
tiny sections merged; what a sweep pays per config beyond the first (``ast_breadcrumb, one
more config``: documents already parsed, their words already counted) and the token counts of
one copy's chunks encoded text by text vs word by word from an empty cache (the first config
of a sweep, on words never seen).

Ratios are measured in the same run, the row and the references (the block parses, LangChain's
header splitter) taking turns pass by pass on the same copies, so a machine that slows down for
a while slows both sides alike. A strategy too slow to chunk every copy ``repeat`` times within
``budget`` seconds (an embedding model per sentence) is timed on fewer whole copies (one pass
over one copy when even that does not fit), and the references are timed on those same copies
for its ratios; MB and passes say what each row's best time is of.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..chunking import sizes
from ..chunking.build import chunk_document
from ..chunking.config import make_config
from ..chunking.registry import REGISTRY, available_names
from ..document.blocks import parse_blocks
from ..document.corpus import load_corpus, make_document
from . import scale


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
    return _together({"seconds": (func, docs)}, repeat)["seconds"]


def _together(timers: dict[str, tuple[Any, list]], repeat: int) -> dict[str, float]:
    """Best CPU time (of this process, every thread's) of a pass of each ``func`` over its
    ``docs``, the timers taking turns pass by pass: a machine that slows down for a while
    slows every one of them alike, and time the machine gives to others is not counted."""
    best = dict.fromkeys(timers, float("inf"))
    for _ in range(repeat):
        for name, (func, docs) in timers.items():
            began = time.process_time()
            for doc in docs:
                func(doc)
            best[name] = min(best[name], time.process_time() - began)
    return best


def copies_within(probe_seconds: float, copies: int, repeat: int, budget: float) -> int:
    """How many whole copies fit ``repeat`` timed passes in ``budget`` seconds (at least
    one), given that one copy took ``probe_seconds``."""
    if probe_seconds * copies * repeat <= budget:
        return copies
    return max(1, min(copies, int(budget / (probe_seconds * repeat))))


PARSE = "x parse"
"""The column of the ratio to chunkproof's markdown-it block parse."""


def run(corpus_dir: str, megabytes: float, size: int, repeat: int,
        budget: float = 60.0, strategies: list[str] | None = None) -> list[dict]:
    """Rows of the benchmark: the references (markdown-it block parse, and LangChain's header
    splitter when installed), every strategy, the sweep's marginal
    costs; each row with its ratio to every reference timed pass by pass with it."""
    corpus = load_corpus(corpus_dir)
    docs = replicate(corpus, megabytes)
    per_copy = max(len(corpus), 1)
    copies = max(len(docs) // per_copy, 1)
    references = _references(size)
    timed = _together({column: (func, docs) for column, (_, func) in references.items()}, repeat)
    rows: list[dict[str, Any]] = [
        {"stage": stage, "copies": copies, "passes": repeat, "seconds": timed[column],
         "references": timed} for column, (stage, _) in references.items()]
    for name in strategies or available_names():
        config = make_config(strategy=name, size=size)
        rows.append(_strategy_row(name, config, docs, per_copy, copies, repeat, budget,
                                  references))
    rows += _token_rows(docs, per_copy, copies, size, repeat, budget, references)
    rows += _sweep_rows(docs, per_copy, copies, size, repeat, references)
    for row in rows:
        chunked = docs[: row["copies"] * per_copy]
        row["MB"] = sum(len(d.text.encode()) for d in chunked) / 1_000_000
        row["MB/s"] = row["MB"] / row["seconds"]
        for column, seconds in row.pop("references").items():
            row[column] = seconds / row["seconds"]
    print(f"{len(docs)} documents, {rows[0]['MB']:.2f} MB, size={size} chars, best of {repeat}"
          "; each row's ratios are to the references timed pass by pass with it")
    for name, strategy in REGISTRY.items():
        if not strategy.available:
            print(f"not timed: {name} ({strategy.status()})")
    return rows


def _with_references(stage: str, func, docs: list, references: dict, ref_docs: list,
                     copies: int, repeat: int) -> dict:
    """A row: ``func`` over ``docs`` and each reference over ``ref_docs``, pass by pass."""
    timers = {column: (ref, ref_docs) for column, (_, ref) in references.items()}
    timed = _together({**timers, "seconds": (func, docs)}, repeat)
    seconds = timed.pop("seconds")
    return {"stage": stage, "copies": copies, "passes": repeat, "seconds": seconds,
            "references": timed}


def _strategy_row(name, config, docs, per_copy, copies, repeat, budget, references) -> dict:
    """One strategy's best time from text to chunks (the document is made, so parsed,
    inside the timed call), on as many copies as the budget allows."""
    def chunk(d, c=config):
        return chunk_document(make_document(d.id, d.text), c)

    chunk(docs[0])  # loads what a peer needs (a model, a converter): untimed
    probe = _timed(chunk, docs[:per_copy], 1)
    if probe * repeat > budget:  # one copy, once: the probe is the measurement
        timers = {column: (ref, docs[:per_copy]) for column, (_, ref) in references.items()}
        return {"stage": name, "copies": 1, "passes": 1, "seconds": probe,
                "references": _together(timers, 1)}
    n = copies_within(probe, copies, repeat, budget)
    return _with_references(name, chunk, docs[: n * per_copy], references,
                            docs[: n * per_copy], n, repeat)


MARGINAL = "ast_breadcrumb"
"""The strategy whose marginal cost per config, and cost at a size in tokens, is printed."""
CHARS_PER_TOKEN = 4
"""About how many chars of English prose a token holds: the size in tokens of the tokens row."""


def _token_rows(docs, per_copy: int, copies: int, size: int, repeat: int, budget: float,
                references: dict) -> list[dict]:
    """``MARGINAL`` with its size in tokens (about the same chunks as ``size`` chars), alone
    and with tiny sections merged: every span packing weighs is counted in tokens."""
    if MARGINAL not in REGISTRY or not REGISTRY[MARGINAL].available:
        return []
    if not sizes.tokens_available():
        return []
    tokens = max(size // CHARS_PER_TOKEN, 1)
    rows = []
    for min_size in (0, tokens // 4):
        config = make_config(strategy=MARGINAL, size=tokens, unit="tokens", min_size=min_size)
        row = _strategy_row(MARGINAL, config, docs, per_copy, copies, repeat, budget,
                            references)
        merged = f", min_size {min_size}" if min_size else ""
        rows.append({**row, "stage": f"{MARGINAL}, {tokens} tokens{merged}"})
    return rows


def _sweep_rows(docs, per_copy: int, copies: int, size: int, repeat: int,
                references: dict) -> list[dict]:
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
    rows = [_with_references(f"{MARGINAL}, one more config",
                             lambda d: chunk_document(d, other), parsed, references, docs,
                             copies, repeat)]
    if not sizes.tokens_available():
        return rows
    texts = [c.text for d in parsed[:per_copy] for c in chunk_document(d, first)]

    def word_by_word(_doc) -> None:
        sizes.WORDS.clear()
        sizes.count_tokens(texts)

    for stage, count in (("token counts, each text encoded", sizes.encode_counts),
                         ("token counts, word by word (cold)", word_by_word)):
        rows.append(_with_references(stage, lambda _d, f=count: f(texts), [None], references,
                                     docs[:per_copy], 1, repeat))
    return rows


def _references(size: int) -> dict[str, tuple[str, Any]]:
    """By ratio column: (stage, one document's pass) of chunkproof's markdown-it block parse,
    and when installed LangChain's header splitter alone and followed by its recursive
    splitter at ``size`` chars (the structure-aware splitter people run instead): what the
    ``x parse``, ``x LC header`` and ``x LC+RCT`` columns compare with."""
    found: dict[str, tuple[str, Any]] = {
        PARSE: ("block parse (markdown-it)",
                lambda d: parse_blocks(d.text, d.is_markdown, d.infer_headings))}
    try:
        from langchain_text_splitters import MarkdownHeaderTextSplitter
    except ImportError:
        return found
    from ..chunking.strategies.baselines import MHS_HEADERS, _rct

    splitter = MarkdownHeaderTextSplitter(MHS_HEADERS, strip_headers=False)
    recursive = _rct(make_config(strategy="rct", size=size))
    found["x LC header"] = ("LangChain header splitter", lambda d: splitter.split_text(d.text))
    found["x LC+RCT"] = ("LangChain header + recursive",
                         lambda d: recursive.split_documents(splitter.split_text(d.text)))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chunkproof.bench", description=__doc__)
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
                             "instead (scale.py)")
    scale.add_arguments(parser)
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

        from . import sweep

        queries = args.queries or str(Path(args.corpus) / "queries.jsonl")
        sweep.run(args.corpus, queries, args.mb or 1.0,
                        [float(x) for x in args.file_mb.split(",") if x])
        return 0
    if args.scale:
        from ..evaluation.run.defaults import DEFAULT_STRATEGIES

        scale.run_scale(args.scale_mb, args.headings, args.size,
                  tuple(args.strategies or DEFAULT_STRATEGIES))
        return 0
    rows = run(args.corpus, args.mb or 5.0, args.size, args.repeat, args.budget, args.strategies)
    extra = [c for c in ("x LC header", "x LC+RCT") if c in rows[-1]]
    print(f"{'stage':<40}{'MB':>7}{'passes':>7}{'CPU s':>9}{'MB/s':>8}{'x parse':>9}"
          + "".join(f"{c:>12}" for c in extra))
    for row in rows:
        print(f"{row['stage']:<40}{row['MB']:>7.2f}{row['passes']:>7}{row['seconds']:>9.2f}"
              f"{row['MB/s']:>8.3g}{row['x parse']:>9.3g}"
              + "".join(f"{row[c]:>12.3g}" for c in extra))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
