"""Command line: chunklab strategies | chunk | summary (thin wrappers over the library)."""

from __future__ import annotations

import argparse
import json
import sys

from . import chunk_corpus, load_config, load_corpus, make_config
from .config import parse_value
from .errors import ChunklabError
from .io import write_text_atomic
from .strategies import REGISTRY


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chunklab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("strategies", help="list strategies with a one-line description")

    chunk = sub.add_parser("chunk", help="chunk a corpus and write one JSON object per chunk")
    chunk.add_argument("--corpus", required=True, help="folder of .md/.markdown/.txt files")
    _add_config_args(chunk)
    chunk.add_argument("--out", required=True, help="output .jsonl file")

    summary = sub.add_parser("summary", help="chunk a corpus with every strategy; print a table")
    summary.add_argument("--corpus", default="data/sample")
    summary.add_argument("--size", type=int, default=1000)
    summary.add_argument("--unit", default="chars")
    return parser


def _add_config_args(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--strategy", help="strategy name (see: chunklab strategies)")
    group.add_argument("--config", help="a config YAML written by save_config / notebook 06")
    parser.add_argument("--size", type=int, help="chunk size in --unit (default 1000)")
    parser.add_argument("--unit", choices=["chars", "words", "tokens"])
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="any other option"
    )


def config_from_args(args):
    if args.config:
        if args.size or args.unit or args.set:
            raise ChunklabError("--config cannot be combined with --size, --unit or --set")
        return load_config(args.config)
    values = {"strategy": args.strategy}
    if args.size is not None:
        values["size"] = args.size
    if args.unit:
        values["unit"] = args.unit
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            raise ChunklabError(f"--set expects KEY=VALUE; got {item!r}")
        values[key.strip()] = parse_value(value)
    return make_config(values)


def cmd_strategies(args) -> int:
    width = max(len(n) for n in REGISTRY)
    for name, strategy in REGISTRY.items():
        print(f"{name:<{width}}  [{strategy.family}] {strategy.description}")
    return 0


def cmd_chunk(args) -> int:
    config = config_from_args(args)
    corpus = load_corpus(args.corpus, infer_headings=config.infer_headings)
    chunks = chunk_corpus(corpus, config)
    lines = [json.dumps(c.as_dict(), ensure_ascii=False) for c in chunks]
    write_text_atomic(args.out, "\n".join(lines) + ("\n" if lines else ""))
    for skipped in corpus.skipped:
        print(f"skipped {skipped.path}: {skipped.reason}", file=sys.stderr)
    print(
        f"{len(chunks)} chunks from {len(corpus)} documents ({config.strategy}, "
        f"config {config.config_id}) -> {args.out}"
    )
    return 0


def cmd_summary(args) -> int:
    from .summary import strategy_summary

    corpus = load_corpus(args.corpus)
    table = strategy_summary(corpus, size=args.size, unit=args.unit)
    print(f"corpus {args.corpus}: {len(corpus)} documents, {len(corpus.skipped)} skipped")
    print(table.to_string(index=False))
    return 0


HANDLERS = {"strategies": cmd_strategies, "chunk": cmd_chunk, "summary": cmd_summary}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return HANDLERS[args.command](args)
    except (ChunklabError, FileNotFoundError) as err:
        print(f"chunklab: error: {err}", file=sys.stderr)
        return 2
