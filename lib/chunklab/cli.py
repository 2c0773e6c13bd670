"""Command line: chunklab strategies | chunk | summary | queries | sweep | view | report.

Thin wrappers over the library. Every stage is imported inside the command that uses it, so
that ``chunklab --help`` loads the parser's defaults only (no Markdown parser, no strategy,
no pandas, scipy, bm25s or torch)."""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import warnings
from pathlib import Path

from . import __version__
from .errors import (
    ChunklabError,
    ConfigError,
    FileValidationError,
    GridWarning,
    disk_fault,
    validation_message,
)
from .evaluation.defaults import (
    DEFAULT_BUDGETS,
    DEFAULT_CONTRASTS,
    DEFAULT_CORPUS,
    DEFAULT_K,
    DEFAULT_RETRIEVERS,
    DEFAULT_SIZES,
    DEFAULT_STRATEGIES,
    default_contrasts,
)
from .evaluation.queries import MAX_SOURCES

DESCRIPTION = ("Compare ways of splitting Markdown for retrieval: chunk a corpus, measure every "
               "strategy, sweep strategies x sizes x retrievers, draw chunk boundaries, and run "
               "the six notebooks into one shareable report.")


EXAMPLES = {
    "strategies": "chunklab strategies",
    "chunk": "chunklab chunk --corpus data/sample --strategy ast_breadcrumb --size 800 "
             "--out chunks.jsonl",
    "summary": "chunklab summary --corpus data/sample --size 1000",
    "mine": "chunklab queries mine --corpus data/sample --out queries.jsonl",
    "sweep": "chunklab sweep --corpus data/sample --queries data/sample/queries.jsonl "
             "--sizes 400,800 --out results/my-sweep",
    "view": "chunklab view --corpus data/sample --doc api/client.md --strategy ast_breadcrumb "
            "--vs rct --out client.html",
    "report": "chunklab report --corpus docs/ --sizes 400,800 --out results/docs-report",
}


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every option's help ends with its default (when it has one worth showing); the
    epilog's example keeps its line breaks."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        nothing = default is None or default is False or (
            isinstance(default, str | list) and not default)
        if "%(default)" in text or "(default" in text or not action.option_strings or \
                nothing or default is argparse.SUPPRESS:
            return text
        return f"{text} (default: %(default)s)"


def _command(sub, name: str, text: str, example: str | None = None, *,
             parents=()) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".",
                          formatter_class=HelpFormatter, parents=list(parents),
                          epilog=f"example:\n  {example or EXAMPLES[name]}")


DEBUG_HELP = "show the traceback of an error instead of its one-line message"
PARSE_HELP = ("seconds one file may take to be read and parsed before it is skipped and "
              "reported (default 60, or CHUNKLAB_PARSE_SECONDS; 0: no limit)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chunklab", description=DESCRIPTION,
                                     formatter_class=HelpFormatter,
                                     epilog="example:\n  chunklab report --corpus docs/ "
                                            "(then open the index.html it names)")
    parser.add_argument("--version", action="version", version=f"chunklab {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    common = argparse.ArgumentParser(add_help=False)  # --debug after the command works too
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help=DEBUG_HELP)
    for where in (parser, common):
        where.add_argument("--parse-seconds", type=float, default=argparse.SUPPRESS,
                           metavar="S", help=PARSE_HELP)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    command = functools.partial(_command, sub, parents=[common])
    command("strategies", "list strategies with a one-line description")

    chunk = command("chunk", "chunk a corpus and write one JSON object per chunk")
    chunk.add_argument("--corpus", required=True, help="folder of .md/.markdown/.txt files")
    _add_config_args(chunk)
    chunk.add_argument("--out", required=True, help="output .jsonl file")

    summary = command("summary", "chunk a corpus with every strategy; print a table")
    summary.add_argument("--corpus", default=DEFAULT_CORPUS,
                         help="folder of .md/.markdown/.txt files")
    summary.add_argument("--size", type=int, default=1000, help="chunk size in --unit")
    summary.add_argument("--unit", default="chars", help="what --size counts: chars, words or "
                                                          "tokens")
    summary.add_argument("--strategies", default=None,
                         help="comma-separated strategy names (default: every available one; "
                              "see: chunklab strategies)")
    queries = command("queries", "query files: mine queries from a corpus",
                       EXAMPLES["mine"])
    queries_sub = queries.add_subparsers(dest="queries_command", required=True,
                                         metavar="COMMAND")
    mine = _command(queries_sub, "mine", "queries from titles, headings and API symbols",
                    parents=[common])
    mine.add_argument("--corpus", required=True, help="folder of .md/.markdown/.txt files")
    mine.add_argument("--out", required=True, help="output .jsonl file")
    mine.add_argument("--max-sources", type=int, default=MAX_SOURCES,
                      help="drop a mined query naming more gold documents than this")

    sweep = command("sweep", "strategies x sizes x retrievers, scored per query")
    sweep.add_argument("--corpus", default=DEFAULT_CORPUS,
                       help="folder of .md/.markdown/.txt files")
    source = sweep.add_mutually_exclusive_group(required=True)
    source.add_argument("--queries", "--dev-queries", dest="queries",
                        help="JSONL query file (the tuning set when --test-queries is given)")
    source.add_argument("--mine-queries", action="store_true", help="mine queries instead")
    _add_query_split_args(sweep)
    _add_grid_args(sweep)
    sweep.add_argument("--unit", default="chars", choices=["chars", "words", "tokens"],
                       help="what --sizes count")
    sweep.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="an option applied to every config (repeatable)")
    _add_engine_args(sweep)
    sweep.add_argument("--out", required=True,
                       help="run folder (created; an identical run there is reused, a run of "
                            "other parameters is kept and this one goes into run-<id> inside)")
    _add_overwrite_arg(sweep)

    view = command("view", "write a standalone HTML view of one document's chunks")
    view.add_argument("--corpus", required=True, help="folder of .md/.markdown/.txt files")
    view.add_argument("--doc", required=True, help="document id: its path relative to --corpus")
    _add_config_args(view, extra=False)
    other = view.add_mutually_exclusive_group()
    other.add_argument("--vs", metavar="STRATEGY", help="draw this strategy side by side")
    other.add_argument("--vs-config", metavar="FILE", help="draw this config side by side")
    view.add_argument("--out", required=True, help="output .html file")

    report = command("report", "run every notebook headless into one folder: "
                                     "executed .ipynb, offline .html, index.html")
    report.add_argument("--corpus", default=DEFAULT_CORPUS,
                        help="folder of .md/.markdown/.txt files")
    report.add_argument("--queries", "--dev-queries", dest="queries", default=None,
                        help="JSONL query file (default: <corpus>/queries.jsonl if present, "
                             "else queries mined from the corpus)")
    _add_query_split_args(report)
    _add_grid_args(report)
    _add_engine_args(report)
    report.add_argument("--strict", action="store_true",
                        help="exit non-zero when no config meets the choice rule (the report "
                             "is written either way, naming the closest config)")
    report.add_argument("--out", help="report folder (default: results/<date-time>; a report "
                                      "of other parameters there is kept and this one goes "
                                      "into run-<id> inside)")
    report.add_argument("--no-document-text", dest="share_text", action="store_false",
                        help="leave the documents' text out of the report's pages (the chunk "
                             "explorer draws boundary positions and counts only), for a "
                             "report shared outside")
    _add_overwrite_arg(report)
    return parser


def _add_overwrite_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a run of other parameters that --out holds instead of "
                             "writing into a subfolder")


def _add_query_split_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--test-queries", default="", metavar="FILE",
                        help="held-out JSONL queries: the config is chosen on --queries and "
                             "reported on these (default: one query set split in two, seeded)")
    parser.add_argument("--split-seed", type=int, default=0,
                        help="seed of the tuning / held-out split of one query set")


def _add_grid_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES),
                        help="comma-separated strategy names (see: chunklab strategies)")
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                        help="comma-separated chunk sizes")
    parser.add_argument("--retrievers", default=",".join(DEFAULT_RETRIEVERS),
                        help="comma-separated: bm25,dense,hybrid")
    parser.add_argument("--k", type=int, default=DEFAULT_K, help="top-k chunks scored per query")
    parser.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)),
                        help="comma-separated token budgets, each scoring the top chunks that "
                             "fill it (the last one truncated); 'none' for none")
    parser.add_argument("--contrast", action="append", default=None, metavar="A:B",
                        help="a planned comparison of strategy A with B at each size, tested "
                             "as its own Holm family (repeatable; 'none' for none; default "
                             f"{', '.join(DEFAULT_CONTRASTS)} when both are swept)")


def _add_engine_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--all-pairs", action="store_true",
                        help="test every pair of configs (default: every pair up to 12 "
                             "configs, else each config against the best)")
    parser.add_argument("--engine", default="local", choices=["local", "ray"],
                        help="where the sweep runs: local processes, or a Ray cluster "
                             "(needs the ray extra); the results are the same")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="processes (local) or actors (ray); default: every core, or "
                             "every CPU of the cluster; 1: in this process")
    parser.add_argument("--address", default="", metavar="ADDR",
                        help="ray: the cluster to join (e.g. auto, or ray://head:10001); "
                             "default: a running instance, else a new local one")


def engine_from_args(args):
    """The Engine the --engine, --workers and --address options describe."""
    from .evaluation.engine import Engine

    return make_sweep_params(Engine, kind=args.engine, workers=args.workers,
                             address=args.address)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.replace(" ", ",").split(",") if part.strip()]


def _options(items: list[str]) -> dict:
    from .chunking.config import parse_value

    options = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ChunklabError(f"--set expects KEY=VALUE; got {item!r}")
        options[key.strip()] = parse_value(value)
    return options


def _add_config_args(parser: argparse.ArgumentParser, *, extra: bool = True) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--strategy", help="strategy name (see: chunklab strategies)")
    group.add_argument("--config", help="a config YAML written by save_config / notebook 06")
    parser.add_argument("--size", type=int, help="chunk size in --unit (default 1000)")
    parser.add_argument("--unit", choices=["chars", "words", "tokens"])
    if extra:
        parser.add_argument(
            "--set", action="append", default=[], metavar="KEY=VALUE", help="any other option"
        )


def config_from_args(args):
    from .chunking.config import load_config, make_config

    if args.config:
        if args.size or args.unit or args.set:
            raise ChunklabError("--config cannot be combined with --size, --unit or --set")
        return load_config(args.config)
    values = {"strategy": args.strategy}
    if args.size is not None:
        values["size"] = args.size
    if args.unit:
        values["unit"] = args.unit
    return make_config({**values, **_options(args.set)})


def cmd_strategies(args) -> int:
    from .chunking.registry import REGISTRY

    width = max(len(n) for n in REGISTRY)
    for name, strategy in REGISTRY.items():
        status = strategy.status()
        print(f"{name:<{width}}  [{strategy.family}] {strategy.description}"
              + (f" [{status}]" if status else ""))
    return 0


def out_file(text: str, example: str) -> str:
    """``--out`` naming a file that can be written; ChunklabError saying what is wrong."""
    if not text.strip():
        raise ChunklabError(f"--out: name a file, e.g. --out {example}")
    path = Path(text)
    if path.is_dir():
        raise ChunklabError(f"--out: {text} is a folder; name a file in it, e.g. "
                            f"{path / example}")
    _parents_are_folders(path)
    return text


def out_folder(text: str, example: str = "results/run1") -> str:
    """``--out`` naming a folder for a run or report; ChunklabError saying what is wrong."""
    if not text.strip():
        raise ChunklabError(f"--out: name a folder for the results, e.g. --out {example}")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise ChunklabError(f"--out: {text} is a file, not a folder: name a folder")
    _parents_are_folders(path)
    return text


def _parents_are_folders(path: Path) -> None:
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise ChunklabError(f"--out: {parent} is a file, not a folder, so {path} cannot "
                                "be made")


def cmd_chunk(args) -> int:
    from importlib import metadata

    from .chunking.build import chunk_corpus
    from .chunking.config import provenance_warnings
    from .document.corpus import load_corpus
    from .util.atomic import write_text_atomic

    out_file(args.out, "chunks.jsonl")
    config = config_from_args(args)
    corpus = load_corpus(args.corpus, infer_headings=config.infer_headings).require_documents()
    if args.config:
        for warning in provenance_warnings(args.config, fingerprint=corpus.fingerprint,
                                           version=metadata.version("chunklab")):
            print(f"chunklab: warning: {warning}", file=sys.stderr)
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
    from .document.corpus import load_corpus
    from .evaluation.summary import strategy_summary

    corpus = load_corpus(args.corpus).require_documents()
    names = None if args.strategies is None else _split(args.strategies)
    table = strategy_summary(corpus, size=args.size, unit=args.unit, strategies=names,
                             progress=True)
    print(f"corpus {args.corpus}: {len(corpus)} documents, {len(corpus.skipped)} skipped")
    print(table.to_string(index=False))
    return 0


def cmd_queries(args) -> int:
    from .document.corpus import load_corpus
    from .evaluation.mining import mine
    from .evaluation.queries import save_queries

    out_file(args.out, "queries.jsonl")
    if args.max_sources < 1:
        raise ChunklabError(f"--max-sources must be at least 1 (gold documents a mined query "
                            f"may name); got {args.max_sources}")
    corpus = load_corpus(args.corpus).require_documents()
    mined = mine(corpus, max_sources=args.max_sources).require(args.corpus)
    queries = mined.queries
    save_queries(queries, args.out)
    if mined.dropped:
        print(f"chunklab: warning: {mined.reason()}", file=sys.stderr)
    kinds: dict[str, int] = {}
    for query in queries:
        kinds[query.kind] = kinds.get(query.kind, 0) + 1
    print(f"{len(queries)} queries mined from {len(corpus)} documents {kinds} -> {args.out}")
    print("by source: " + ", ".join(f"{name} {n}" for name, n in mined.sources().items()))
    dropped = mined.by_reason()
    print("dropped: " + (", ".join(f"{why} {n}" for why, n in dropped.items()) or "none"))
    return 0


def cmd_sweep(args) -> int:
    from .evaluation.run_folder import run_folder
    from .evaluation.sweep import SweepParams, headline, run_sweep

    out_folder(args.out)
    strategies = _split(args.strategies)
    params = make_sweep_params(SweepParams, corpus=args.corpus, queries=args.queries or "",
                               held_out_queries=args.test_queries, split_seed=args.split_seed,
                               strategies=tuple(strategies), sizes=tuple(_sizes(args.sizes)),
                               retrievers=tuple(_split(args.retrievers)), unit=args.unit,
                               k=args.k, budgets=tuple(_budgets(args.budgets)),
                               contrasts=tuple(_contrasts(args.contrast, strategies)),
                               options=_options(args.set), all_pairs=args.all_pairs)
    engine = engine_from_args(args)
    folder = run_folder(args.out, params, overwrite=args.overwrite)
    if folder.note:
        print(f"chunklab: {folder.note}", file=sys.stderr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridWarning)  # printed below, once, as one line each
        result = run_sweep(params, folder.path, engine=engine, overwrite=folder.overwrite)
    print(headline(result).to_string(index=False))
    info = result.run_info
    for note in [*info["warnings"], info["queries_dropped"]["reason"]]:
        if note:
            print(f"chunklab: warning: {note}", file=sys.stderr)
    print(f"{info['configs']} configs x {len(params.retrievers)} retriever(s), "
          f"{info['queries']} queries, {sum(info['seconds'].values()):.1f} s; "
          f"files in {folder.path}")
    return 0


def _budgets(text: str) -> list[int]:
    if text.strip().lower() in ("", "none"):
        return []
    try:
        return [int(s) for s in _split(text)]
    except ValueError:
        raise ChunklabError(f"--budgets expects token counts like 512,1024 or 'none'; "
                            f"got {text!r}") from None


def _contrasts(given: list[str] | None, strategies: list[str]) -> list[str]:
    """The --contrast values ('none' for none), else the defaults whose strategies are swept."""
    if given is None:
        return default_contrasts(strategies)
    return [c for item in given for c in _split(item) if c.lower() != "none"]


def _sizes(text: str) -> list[int]:
    try:
        return [int(s) for s in _split(text)]
    except ValueError:
        raise ChunklabError(f"--sizes expects integers like 300,600; got {text!r}") from None


def cmd_report(args) -> int:
    from .notebooks.report import build_report, default_queries, default_run_name

    out = f"results/{default_run_name()}" if args.out is None else out_folder(args.out)
    queries = default_queries(args.corpus) if args.queries is None else args.queries
    strategies = _split(args.strategies)
    report = build_report(out, corpus=args.corpus,
                          queries=queries, held_out_queries=args.test_queries,
                          split_seed=args.split_seed, sizes=_sizes(args.sizes),
                          strategies=strategies, retrievers=_split(args.retrievers), k=args.k,
                          budgets=_budgets(args.budgets),
                          contrasts=_contrasts(args.contrast, strategies), strict=args.strict,
                          all_pairs=args.all_pairs, engine=engine_from_args(args),
                          overwrite=args.overwrite, share_text=args.share_text)
    for run in report.failed:
        print(f"chunklab: notebook {run.name} failed: {run.error.splitlines()[0]}",
              file=sys.stderr)
    if report.unmet_rule:
        print(f"chunklab: {'error' if args.strict else 'warning'}: {report.unmet_rule}",
              file=sys.stderr)
    print(f"report: {report.index} (each notebook beside it as .ipynb and .html)")
    if report.note:
        print(f"chunklab: {report.note}", file=sys.stderr)
    return report.exit_code


def cmd_view(args) -> int:
    from .viz import render_view

    out_file(args.out, "view.html")
    path = render_view(args.corpus, args.doc, strategy=args.strategy, config_path=args.config,
                       size=args.size, unit=args.unit, vs_strategy=args.vs,
                       vs_config=args.vs_config, out=args.out)
    print(f"view of {args.doc} -> {path}")
    return 0


def make_sweep_params(model, **values):
    """Validate sweep parameters; a bad one raises ConfigError naming it."""
    from pydantic import ValidationError

    try:
        return model(**values)
    except ValidationError as err:
        raise ConfigError(validation_message(err, subject="invalid sweep parameters")) from None


HANDLERS = {"strategies": cmd_strategies, "chunk": cmd_chunk, "summary": cmd_summary,
            "queries": cmd_queries, "sweep": cmd_sweep, "view": cmd_view,
            "report": cmd_report}


def main(argv: list[str] | None = None) -> int:
    """Run one command; every failure is one line on stderr and exit 2 (130 when
    interrupted), its traceback only with ``--debug``."""
    args = _parser().parse_args(argv)
    try:
        limit_parsing(getattr(args, "parse_seconds", None))
        return HANDLERS[args.command](args)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("chunklab: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if args.debug:
            raise
        print(f"chunklab: error: {error_line(err)}", file=sys.stderr)
        return 2


def limit_parsing(seconds: float | None) -> None:
    """``--parse-seconds``: the per-file parse time limit of every corpus this process and
    the notebooks it runs load (through ``CHUNKLAB_PARSE_SECONDS``)."""
    from .document.time_limit import ENV, parse_limit

    if seconds is not None:
        os.environ[ENV] = f"{parse_limit(seconds, name='--parse-seconds'):g}"


def error_line(err: Exception) -> str:
    """One line for a failure: a chunklab error's own message; a write the disk refused with
    the file named; anything else named as unexpected, with the way to see more."""
    if isinstance(err, FileValidationError):
        text = err.one_line()
    elif isinstance(err, ChunklabError):
        text = str(err)
    elif isinstance(err, OSError) and err.filename:
        text = f"{err.filename}: {disk_fault(err)}"
    else:
        text = (f"unexpected {type(err).__name__}: {err} (rerun with --debug for the "
                "traceback, and please report it)")
    return " ".join(text.split())
