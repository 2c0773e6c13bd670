"""The command line's arguments: every command, its options and its help, built from the
defaults alone (nothing else is imported, so ``chunkproof --help`` stays quick)."""

from __future__ import annotations

import argparse
import functools

from . import __version__
from .evaluation.queries.queries import MAX_SOURCES
from .evaluation.run.defaults import (
    DEFAULT_BUDGETS,
    DEFAULT_CONTRASTS,
    DEFAULT_CORPUS,
    DEFAULT_K,
    DEFAULT_RETRIEVERS,
    DEFAULT_SIZES,
    DEFAULT_STRATEGIES,
    STUDY_SIZES,
)

DESCRIPTION = ("Compare ways of splitting Markdown for retrieval: chunk a corpus, measure every "
               "strategy, sweep strategies x sizes x retrievers, draw chunk boundaries, and run "
               "the six notebooks into one shareable report.")


EXAMPLES = {
    "strategies": "chunkproof strategies",
    "chunk": "chunkproof chunk --corpus data/sample --strategy ast_breadcrumb --size 800 "
             "--out chunks.jsonl\n  chunkproof chunk --corpus docs/ --config chosen_config.yaml "
             "--engine ray --out chunks/",
    "summary": "chunkproof summary --corpus data/sample --size 1000",
    "mine": "chunkproof queries mine --corpus data/sample --out queries.jsonl",
    "check": "chunkproof queries check my-questions.jsonl --corpus docs/",
    "sweep": "chunkproof sweep --corpus data/sample --queries data/sample/queries.jsonl "
             "--sizes 400,800 --out results/my-sweep",
    "view": "chunkproof view --corpus data/sample --doc api/client.md --strategy ast_breadcrumb "
            "--vs rct --out client.html",
    "report": "chunkproof report --corpus docs/ --sizes 400,800 --out results/docs-report",
    "study": "chunkproof study data/study --out results/study",
}


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Every option's help ends with its default (when it has one worth showing: not a flag's,
    which its name already says); the epilog's example keeps its line breaks."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        nothing = default is None or default is False or (
            isinstance(default, str | list) and not default)
        if "%(default)" in text or "(default" in text or not action.option_strings or \
                nothing or default is argparse.SUPPRESS or action.nargs == 0:
            return text
        return f"{text} (default: %(default)s)"


def _command(sub, name: str, text: str, example: str | None = None, *,
             parents=()) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".",
                          formatter_class=HelpFormatter, parents=list(parents),
                          epilog=f"example:\n  {example or EXAMPLES[name]}")


DEBUG_HELP = "show the traceback of an error instead of its one-line message"
MAX_FILE_HELP = ("the largest file read, in MiB: a larger one is skipped unread and reported "
                 "(default 8, or CHUNKPROOF_MAX_FILE_MIB)")
TOKENIZER_HELP = ("a tokenizer.json (any HuggingFace tokenizer), or a sentence-transformers "
                  "model folder holding one: sizes in tokens and the encoder window's overflow "
                  "are counted in its tokens (default: the bundled all-MiniLM-L6-v2 "
                  "tokenizer; chunk --config: the one chosen_config.yaml records)")
WINDOW_HELP = ("tokens the encoder reads, for the share of chunks over it (default: the model "
               "folder's max_seq_length, else the tokenizer's truncation length, else 256)")
PARSE_HELP = ("seconds one file may take to be read and parsed before it is skipped and "
              "reported (default 60, or CHUNKPROOF_PARSE_SECONDS; 0: no limit)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="chunkproof", description=DESCRIPTION,
                                     formatter_class=HelpFormatter,
                                     epilog="example:\n  chunkproof report --corpus docs/ "
                                            "(then open the index.html it names)")
    parser.add_argument("--version", action="version", version=f"chunkproof {__version__}")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    common = argparse.ArgumentParser(add_help=False)  # --debug after the command works too
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help=DEBUG_HELP)
    for where in (parser, common):
        where.add_argument("--parse-seconds", type=float, default=argparse.SUPPRESS,
                           metavar="S", help=PARSE_HELP)
        where.add_argument("--max-file-mib", type=float, default=argparse.SUPPRESS,
                           metavar="MIB", help=MAX_FILE_HELP)
        where.add_argument("--tokenizer", default=argparse.SUPPRESS, metavar="PATH",
                           help=TOKENIZER_HELP)
        where.add_argument("--encoder-window", type=int, default=argparse.SUPPRESS,
                           metavar="N", help=WINDOW_HELP)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    command = functools.partial(_command, sub, parents=[common])
    command("strategies", "list strategies with a one-line description")

    chunk = command("chunk", "chunk a corpus and write one JSON object per chunk")
    chunk.add_argument("--corpus", required=True, help="folder of .md/.markdown/.mdx/.txt files")
    add_config_args(chunk)
    chunk.add_argument("--engine", default="local", choices=["local", "ray"],
                       help="where the chunking runs: this process, or a Ray cluster with Ray "
                            "Data (needs the ray extra; --out a folder); the chunks are the "
                            "same")
    chunk.add_argument("--address", default="", metavar="ADDR",
                       help="ray: the cluster to join (e.g. auto, or head:6379); default: a "
                            "running instance, else a new local one")
    chunk.add_argument("--out", required=True,
                       help="output .jsonl file, or a folder ending in / for Parquet shards "
                            "and a manifest (docs/scale.md)")

    summary = command("summary", "chunk a corpus with every strategy; print a table")
    summary.add_argument("--corpus", default=DEFAULT_CORPUS,
                         help="folder of .md/.markdown/.mdx/.txt files")
    summary.add_argument("--size", type=int, default=1000, help="chunk size in --unit")
    summary.add_argument("--unit", default="chars", help="what --size counts: chars, words or "
                                                          "tokens")
    summary.add_argument("--strategies", default=None,
                         help="comma-separated strategy names (default: every available one; "
                              "see: chunkproof strategies)")
    queries = command("queries", "query files: mine queries from a corpus, check written ones",
                       f"{EXAMPLES['mine']}\n  {EXAMPLES['check']}")
    queries_sub = queries.add_subparsers(dest="queries_command", required=True,
                                         metavar="COMMAND")
    mine = _command(queries_sub, "mine", "queries from titles, headings and API symbols",
                    parents=[common])
    mine.add_argument("--corpus", required=True, help="folder of .md/.markdown/.mdx/.txt files")
    mine.add_argument("--out", required=True, help="output .jsonl file")
    mine.add_argument("--max-sources", type=int, default=MAX_SOURCES,
                      help="drop a mined query naming more gold documents than this")
    check = _command(queries_sub, "check", "written questions: each answer an exact span found "
                     "once in its document, 20-300 chars, no heading line, the question not "
                     "repeating the section heading; one line per problem, exit 2 if any",
                     parents=[common])
    check.add_argument("file", metavar="FILE", help="JSONL query file")
    check.add_argument("--corpus", required=True, help="folder of .md/.markdown/.txt files")

    sweep = command("sweep", "strategies x sizes x retrievers, scored per query")
    sweep.add_argument("--corpus", default=DEFAULT_CORPUS,
                       help="folder of .md/.markdown/.mdx/.txt files")
    source = sweep.add_mutually_exclusive_group(required=True)
    source.add_argument("--queries", "--dev-queries", dest="queries",
                        help="JSONL query file (the tuning set when --test-queries is given)")
    source.add_argument("--mine-queries", action="store_true", help="mine queries instead")
    add_query_split_args(sweep)
    add_grid_args(sweep)
    sweep.add_argument("--unit", default="chars", choices=["chars", "words", "tokens"],
                       help="what --sizes count")
    sweep.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                       help="an option applied to every config (repeatable)")
    add_engine_args(sweep)
    sweep.add_argument("--out", required=True,
                       help="run folder (created; an identical run there is reused, a run of "
                            "other parameters is kept and this one goes into run-<id> inside)")
    add_overwrite_arg(sweep)

    view = command("view", "write a standalone HTML view of one document's chunks")
    view.add_argument("--corpus", required=True, help="folder of .md/.markdown/.mdx/.txt files")
    view.add_argument("--doc", required=True, help="document id: its path relative to --corpus")
    add_config_args(view, extra=False)
    other = view.add_mutually_exclusive_group()
    other.add_argument("--vs", metavar="STRATEGY", help="draw this strategy side by side")
    other.add_argument("--vs-config", metavar="FILE", help="draw this config side by side")
    view.add_argument("--out", required=True, help="output .html file")

    report = command("report", "run every notebook headless into one folder: "
                                     "executed .ipynb, offline .html, index.html")
    report.add_argument("--corpus", default=DEFAULT_CORPUS,
                        help="folder of .md/.markdown/.mdx/.txt files")
    report.add_argument("--queries", "--dev-queries", dest="queries", default=None,
                        help="JSONL query file (default: <corpus>/queries.jsonl if present, "
                             "else queries mined from the corpus)")
    add_query_split_args(report)
    add_grid_args(report)
    add_engine_args(report)
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
    report.add_argument("--constraint", action="append", default=None, metavar="EXPR",
                        help="a constraint of the choice rule, 'name op number [on "
                             "retrievers]', e.g. 'code_integrity >= 0.95' (repeatable; the "
                             "ones given replace the defaults, 'none' for no constraint; "
                             "docs/choosing.md)")
    report.add_argument("--slug-rule", default="github",
                        choices=["github", "mkdocs", "vitepress", "docusaurus"],
                        help="how the site makes heading anchors: every chunk's anchor in the "
                             "sweep and in chosen_config.yaml (docs/anchors.md)")
    report.add_argument("--url-template", default="", metavar="TEMPLATE",
                        help="every chunk's href into the site, in the sweep, chosen_config.yaml "
                             "and the chunk explorer's hits, e.g. "
                             "'https://docs.example.com/{route}#{anchor}' (fields: path, "
                             "path_without_ext, route, dir, stem, anchor)")
    add_overwrite_arg(report)

    study = command("study", "the same grid on every site of a study folder (its written "
                             "questions), each site's paired effects pooled by random effects, "
                             "the rule calibrated by simulation: the results file the verdict "
                             "reads as its prior")
    study.add_argument("folder", metavar="DIR", help="study folder: a subfolder per site "
                                                     "holding docs/, queries.jsonl and "
                                                     "SOURCE.md")
    study.add_argument("--sites", default="", help="comma-separated site names (default: "
                                                   "every site of DIR)")
    study.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES),
                       help="comma-separated strategy names (see: chunkproof strategies)")
    study.add_argument("--sizes", default=",".join(map(str, STUDY_SIZES)),
                       help="comma-separated chunk sizes, in chars")
    study.add_argument("--retrievers", default=",".join(DEFAULT_RETRIEVERS),
                       help="comma-separated: bm25,dense,hybrid")
    study.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)),
                       help="comma-separated token budgets")
    study.add_argument("--draws", type=int, default=60,
                       help="simulated draws of questions per site and size")
    add_engine_args(study, pairs=False)
    study.add_argument("--out", required=True, help="study folder to write: a run folder per "
                                                    "site, study.json, its tables as CSV and "
                                                    "the forest plots")
    return parser


def add_overwrite_arg(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a run of other parameters that --out holds instead of "
                             "writing into a subfolder")


def add_query_split_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--test-queries", default="", metavar="FILE",
                        help="held-out JSONL queries: the config is chosen on --queries and "
                             "reported on these (default: one query set split in two, seeded)")
    parser.add_argument("--split-seed", type=int, default=0,
                        help="seed of the tuning / held-out split of one query set")


def add_grid_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strategies", default=",".join(DEFAULT_STRATEGIES),
                        help="comma-separated strategy names (see: chunkproof strategies)")
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)),
                        help="comma-separated chunk sizes")
    parser.add_argument("--retrievers", default=",".join(DEFAULT_RETRIEVERS),
                        help="comma-separated: bm25,dense,hybrid")
    parser.add_argument("--k", type=int, default=DEFAULT_K, help="top-k chunks scored per query")
    parser.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)),
                        help="comma-separated token budgets, each scoring the top chunks that "
                             "fill it (the last one truncated); 'none' for none")
    parser.add_argument("--modes", default="plain", metavar="MODES",
                        help="comma-separated retrieval modes, each scored on the same ranking "
                             "and tested against plain at each budget: plain, boost (a "
                             "heading-path match raises a chunk), expand=parent (each hit's "
                             "section, then its parent section's), expand=siblings (the parts "
                             "beside a hit); 'all' for "
                             "every one (default plain)")
    parser.add_argument("--contrast", action="append", default=None, metavar="A:B",
                        help="a planned comparison of strategy A with B at each size, tested "
                             "as its own Holm family (repeatable; 'none' for none; default "
                             f"{', '.join(DEFAULT_CONTRASTS)} when both are swept)")


def workers_count(text: str) -> int | None:
    """``--workers``: a count, or ``auto`` (None: decided from the work)."""
    if text.strip().lower() == "auto":
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or auto; got {text!r}"
                                         ) from None


def add_engine_args(parser: argparse.ArgumentParser, *, pairs: bool = True) -> None:
    if pairs:
        parser.add_argument("--all-pairs", action="store_true",
                            help="test every pair of configs (default: every pair up to 12 "
                                 "configs, else each config against the best)")
    parser.add_argument("--engine", default="local", choices=["local", "ray"],
                        help="where the sweep runs: local processes, or a Ray cluster "
                             "(needs the ray extra); the results are the same")
    parser.add_argument("--workers", type=workers_count, default=None, metavar="N",
                        help="processes (local) or actors (ray); default auto: as many "
                             "local processes as pay for their start on the work (1 on a "
                             "small corpus or a busy machine), or every CPU of the "
                             "cluster; 1: in this process")
    parser.add_argument("--address", default="", metavar="ADDR",
                        help="ray: the cluster to join (e.g. auto, or ray://head:10001); "
                             "default: a running instance, else a new local one")


def add_config_args(parser: argparse.ArgumentParser, *, extra: bool = True) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--strategy", help="strategy name (see: chunkproof strategies)")
    group.add_argument("--config", help="a config YAML written by save_config / notebook 06")
    parser.add_argument("--size", type=int, help="chunk size in --unit (default 1000)")
    parser.add_argument("--unit", choices=["chars", "words", "tokens"])
    if extra:
        parser.add_argument(
            "--set", action="append", default=[], metavar="KEY=VALUE", help="any other option"
        )
