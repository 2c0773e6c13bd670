"""Command line: chunkproof strategies | chunk | summary | queries | sweep | view | report |
study | cache | gate.

Thin wrappers over the library (their arguments: ``cli_args.py``). Every stage is imported
inside the command that uses it, so that ``chunkproof --help`` loads the parser's defaults only
(no Markdown parser, no strategy, no pandas, scipy, bm25s or torch)."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from .cli_args import build_parser
from .errors import (
    ChunkproofError,
    ConfigError,
    FileValidationError,
    GridWarning,
    disk_fault,
    validation_message,
)
from .evaluation.run.defaults import contrasts_for


def engine_from_args(args):
    """The Engine the --engine, --workers and --address options describe."""
    from .evaluation.run.engine import Engine

    return make_sweep_params(Engine, kind=args.engine, workers=args.workers,
                             address=args.address)


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.replace(" ", ",").split(",") if part.strip()]


OWN_FLAGS = {"strategy": "--strategy", "size": "--size", "unit": "--unit"}
"""Config fields with an option of their own, which ``--set`` may not give a second time."""
GRID_FLAGS = {"strategy": "--strategies", "size": "--sizes", "unit": "--unit"}
"""The same fields in a sweep, where the grid's options give them."""


def _options(items: list[str], flags: dict[str, str] = OWN_FLAGS) -> dict:
    from .chunking.config import parse_value

    options = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ChunkproofError(f"--set expects KEY=VALUE; got {item!r}")
        if key.strip() in flags:
            raise ChunkproofError(f"--set {item}: {key.strip()} has its own option; give it "
                                f"with {flags[key.strip()]} alone")
        options[key.strip()] = parse_value(value)
    return options


def config_from_args(args):
    from .chunking.config import LINK_FIELDS, load_config, make_config

    if args.config:
        links = _options(args.set)
        if args.size or args.unit or set(links) - set(LINK_FIELDS):
            raise ChunkproofError("--config cannot be combined with --size, --unit or --set "
                                f"(but --set of {' or '.join(LINK_FIELDS)}: how chunks link "
                                "into the site)")
        config = load_config(args.config)
        return config.replace(**links) if links else config
    values = {"strategy": args.strategy}
    if args.size is not None:
        values["size"] = args.size
    if args.unit:
        values["unit"] = args.unit
    return make_config({**values, **_options(args.set)})


def cmd_strategies(args) -> int:
    """Every registered strategy, then the plug-ins of the ``chunkproof.strategies`` entry
    points installed here (by name, with their import path)."""
    from .chunking.registry import REGISTRY
    from .chunking.strategies.plugins import FAMILY, entry_points, resolve

    rows = []
    for name, strategy in REGISTRY.items():
        status = strategy.status()
        rows.append((name, f"[{strategy.family}] {strategy.description}"
                     + (f" [{status}]" if status else "")))
    for name, path in entry_points().items():
        try:
            found = resolve(name)
            text = f"{found.description} ({path})" if found else path
        except ChunkproofError as err:
            text = f"{path} [unavailable: {err}]"
        rows.append((name, f"[{FAMILY}] {text}"))
    width = max(len(name) for name, _ in rows)
    for name, text in rows:
        print(f"{name:<{width}}  {text}")
    return 0


def out_file(text: str, example: str) -> str:
    """``--out`` naming a file that can be written; ChunkproofError saying what is wrong."""
    if not text.strip():
        raise ChunkproofError(f"--out: name a file, e.g. --out {example}")
    path = Path(text)
    if path.is_dir():
        raise ChunkproofError(f"--out: {text} is a folder; name a file in it, e.g. "
                            f"{path / example}")
    _parents_are_folders(path)
    return text


def out_folder(text: str, example: str = "results/run1") -> str:
    """``--out`` naming a folder for a run or report; ChunkproofError saying what is wrong."""
    if not text.strip():
        raise ChunkproofError(f"--out: name a folder for the results, e.g. --out {example}")
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise ChunkproofError(f"--out: {text} is a file, not a folder: name a folder")
    _parents_are_folders(path)
    return text


def _parents_are_folders(path: Path) -> None:
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise ChunkproofError(f"--out: {parent} is a file, not a folder, so {path} cannot "
                                "be made")


def cmd_chunk(args) -> int:
    from importlib import metadata

    from .chunking.apply import chunk_to_jsonl
    from .chunking.config import provenance_warnings
    from .document.corpus import load_corpus

    if args.engine == "ray" or args.out.endswith(("/", os.sep)):
        return cmd_chunk_folder(args)
    if args.address:
        raise ChunkproofError("--address names a Ray cluster: give it with --engine ray")
    out_file(args.out, "chunks.jsonl")
    config = config_from_args(args)
    corpus = load_corpus(args.corpus, infer_headings=config.infer_headings).require_documents()
    if args.config:
        for warning in provenance_warnings(args.config, fingerprint=corpus.fingerprint,
                                           version=metadata.version("chunkproof")):
            print(f"chunkproof: warning: {warning}", file=sys.stderr)
    written = chunk_to_jsonl(corpus, config, args.out)
    for skipped in corpus.skipped:
        print(f"skipped {skipped.path}: {skipped.reason}", file=sys.stderr)
    print_warnings([{"doc_id": d.id, **w.as_dict()} for d in corpus for w in d.warnings])
    print(
        f"{written} chunks from {len(corpus)} documents ({config.strategy}, "
        f"config {config.config_id}) -> {args.out}"
    )
    return 0


SHOWN_WARNINGS = 10
"""Document warnings ``chunkproof chunk`` prints one per line; the rest are counted."""


def print_warnings(rows: list[dict], *, where: str = "") -> None:
    """The load's warnings of the documents chunked (``Corpus.warning_rows``) on stderr: how
    many of each kind, then the first ``SHOWN_WARNINGS`` one per line (``where``: where the
    rest are listed)."""
    if not rows:
        return
    kinds: dict[str, int] = {}
    for row in rows:
        kinds[row["kind"]] = kinds.get(row["kind"], 0) + 1
    counts = ", ".join(f"{kind} {n}" for kind, n in kinds.items())
    print(f"chunkproof: {len(rows)} document warning(s) ({counts}; docs/chunking.md says what "
          "each means)", file=sys.stderr)
    for row in rows[:SHOWN_WARNINGS]:
        line = f":{row['line']}" if row["line"] else ""
        print(f"warning {row['doc_id']}{line}: {row['kind']}: {row['message']}", file=sys.stderr)
    if len(rows) > SHOWN_WARNINGS:
        rest = f"; {where}" if where else ""
        print(f"... and {len(rows) - SHOWN_WARNINGS} more{rest}", file=sys.stderr)


def cmd_chunk_folder(args) -> int:
    """``chunkproof chunk --out DIR/``: Parquet shards and a manifest, in this process or on
    Ray Data (``--engine ray``)."""
    from importlib import metadata

    from .chunking.apply import chunk_to_folder
    from .chunking.config import provenance_warnings
    from .chunking.shards import MANIFEST

    if not args.out.endswith(("/", os.sep)):
        raise ChunkproofError(f"--engine ray writes a folder of Parquet shards: end --out with "
                            f"/, e.g. --out {args.out.rstrip('/') or 'chunks'}/")
    out_folder(args.out, "chunks/")
    config = config_from_args(args)
    made = chunk_to_folder(args.corpus, config, args.out, engine=args.engine,
                           address=args.address)
    if args.config:
        for warning in provenance_warnings(args.config,
                                           fingerprint=made["corpus"]["fingerprint"],
                                           version=metadata.version("chunkproof")):
            print(f"chunkproof: warning: {warning}", file=sys.stderr)
    for skipped in made["skipped"]:
        print(f"skipped {skipped['path']}: {skipped['reason']}", file=sys.stderr)
    skipped_paths = {skipped["path"] for skipped in made["skipped"]}
    print_warnings([w for w in made["warnings"] if w["doc_id"] not in skipped_paths],
                   where=f"{MANIFEST} lists them all")
    print(f"{made['chunks']} chunks from {made['corpus']['documents']} documents "
          f"({config.strategy}, config {config.config_id}, engine {args.engine}) -> "
          f"{args.out} ({len(made['shards'])} Parquet shard(s) and {MANIFEST})")
    return 0


def cmd_summary(args) -> int:
    from .document.corpus import load_corpus
    from .evaluation.scoring.summary import strategy_summary

    corpus = load_corpus(args.corpus).require_documents()
    names = None if args.strategies is None else _split(args.strategies)
    table = strategy_summary(corpus, size=args.size, unit=args.unit, strategies=names,
                             progress=True)
    print(f"corpus {args.corpus}: {len(corpus)} documents, {len(corpus.skipped)} skipped")
    print(table.to_string(index=False))
    return 0


def cmd_queries(args) -> int:
    if args.queries_command == "check":
        return cmd_queries_check(args)
    return cmd_queries_mine(args)


def cmd_queries_check(args) -> int:
    """Every problem of a written query file, one line each; exit 2 when there is one."""
    from .document.corpus import load_corpus
    from .evaluation.queries.question_check import check_file

    corpus = load_corpus(args.corpus).require_documents()
    problems = check_file(args.file, corpus)
    for problem in problems:
        print(f"{args.file}: {problem}")
    if problems:
        print(f"chunkproof: {len(problems)} problem(s) in {args.file}", file=sys.stderr)
        return 2
    print(f"{args.file}: every question passes ({len(corpus)} documents)")
    return 0


def cmd_queries_mine(args) -> int:
    from .document.corpus import load_corpus
    from .evaluation.queries.mining import mine_all
    from .evaluation.queries.queries import save_queries

    out_file(args.out, "queries.jsonl")
    if args.max_sources < 1:
        raise ChunkproofError(f"--max-sources must be at least 1 (gold documents a mined query "
                            f"may name); got {args.max_sources}")
    corpus = load_corpus(args.corpus).require_documents()
    mined = mine_all(corpus, max_sources=args.max_sources).require(args.corpus)
    queries = mined.queries
    save_queries(queries, args.out)
    if mined.dropped:
        print(f"chunkproof: warning: {mined.reason()}", file=sys.stderr)
    kinds: dict[str, int] = {}
    for query in queries:
        kinds[query.kind] = kinds.get(query.kind, 0) + 1
    print(f"{len(queries)} queries mined from {len(corpus)} documents {kinds} -> {args.out}")
    print("by source: " + ", ".join(f"{name} {n}" for name, n in mined.sources().items()))
    dropped = mined.by_reason()
    print("dropped: " + (", ".join(f"{why} {n}" for why, n in dropped.items()) or "none"))
    return 0


def cmd_sweep(args) -> int:
    from .evaluation.run.run_folder import run_folder
    from .evaluation.run.sweep import SweepParams, headline, run_sweep

    out_folder(args.out)
    strategies = _strategy_names(args.strategies)
    params = make_sweep_params(SweepParams, corpus=args.corpus, queries=args.queries or "",
                               held_out_queries=args.test_queries, split_seed=args.split_seed,
                               strategies=tuple(strategies), sizes=tuple(_sizes(args.sizes)),
                               retrievers=tuple(_split(args.retrievers)), unit=args.unit,
                               k=args.k, budgets=tuple(_budgets(args.budgets)),
                               contrasts=tuple(_contrasts(args.contrast, strategies)),
                               modes=_modes(args.modes), options=_options(args.set, GRID_FLAGS),
                               all_pairs=args.all_pairs)
    engine = engine_from_args(args)
    folder = run_folder(args.out, params, overwrite=args.overwrite)
    if folder.note:
        print(f"chunkproof: {folder.note}", file=sys.stderr)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GridWarning)  # printed below, once, as one line each
        result = run_sweep(params, folder.path, engine=engine, overwrite=folder.overwrite)
    print(headline(result).to_string(index=False))
    info = result.run_info
    for note in [*info["warnings"], info["queries_dropped"]["reason"]]:
        if note:
            print(f"chunkproof: warning: {note}", file=sys.stderr)
    print(f"{info['configs']} configs x {len(params.retrievers)} retriever(s) x "
          f"{len(params.modes)} mode(s), "
          f"{info['queries']} queries, {sum(info['seconds'].values()):.1f} s; "
          f"files in {folder.path}")
    return 0


def _strategy_names(text: str) -> list[str]:
    """The --strategies values by canonical name (a plug-in's entry-point name as its import
    path); an unknown one fails in one line."""
    from .chunking.registry import check_strategy

    return [check_strategy(name) for name in _split(text)]


def _budgets(text: str) -> list[int]:
    if text.strip().lower() in ("", "none"):
        return []
    try:
        return [int(s) for s in _split(text)]
    except ValueError:
        raise ChunkproofError(f"--budgets expects token counts like 512,1024 or 'none'; "
                            f"got {text!r}") from None


def _modes(text: str) -> tuple[str, ...]:
    """The --modes values; 'all' for every retrieval mode."""
    from .evaluation.retrieval.modes import MODES

    return MODES if text.strip().lower() == "all" else tuple(_split(text))


def _contrasts(given: list[str] | None, strategies: list[str]) -> list[str]:
    """The --contrast values ('none' for none), else the defaults whose strategies are swept."""
    if given is not None:
        given = [c for item in given for c in _split(item) if c.lower() != "none"]
    try:
        return contrasts_for(given, strategies)
    except ValueError as err:
        raise ConfigError(f"--{err}") from None


def _constraints(given: list[str] | None) -> list[str] | None:
    """The --constraint values ('none' for none); None when none is given (notebook 06's
    defaults)."""
    if given is None:
        return None
    return [c for c in given if c.strip().lower() != "none"]


def _sizes(text: str) -> list[int]:
    try:
        return [int(s) for s in _split(text)]
    except ValueError:
        raise ChunkproofError(f"--sizes expects integers like 300,600; got {text!r}") from None


def cmd_report(args) -> int:
    from .notebooks.report import build_report, default_queries, default_run_name

    out = f"results/{default_run_name()}" if args.out is None else out_folder(args.out)
    queries = default_queries(args.corpus) if args.queries is None else args.queries
    strategies = _strategy_names(args.strategies)
    report = build_report(out, corpus=args.corpus,
                          queries=queries, held_out_queries=args.test_queries,
                          split_seed=args.split_seed, sizes=_sizes(args.sizes),
                          strategies=strategies, retrievers=_split(args.retrievers), k=args.k,
                          budgets=_budgets(args.budgets),
                          contrasts=_contrasts(args.contrast, strategies), strict=args.strict,
                          modes=_modes(args.modes),
                          all_pairs=args.all_pairs, engine=engine_from_args(args),
                          overwrite=args.overwrite, share_text=args.share_text,
                          slug_rule=args.slug_rule, url_template=args.url_template,
                          constraints=_constraints(args.constraint))
    for run in report.failed:
        print(f"chunkproof: notebook {run.name} failed: {run.error.splitlines()[0]}",
              file=sys.stderr)
    if report.unmet_rule:
        print(f"chunkproof: {'error' if args.strict else 'warning'}: {report.unmet_rule}",
              file=sys.stderr)
    print(f"report: {report.index} (each notebook beside it as .ipynb and .html)")
    print("\n".join(report.time_lines()))
    if report.note:
        print(f"chunkproof: {report.note}", file=sys.stderr)
    return report.exit_code


def cmd_study(args) -> int:
    from .study_runner import StudyPlan, run_study

    out_folder(args.out, "results/study")
    if args.draws < 1:
        raise ConfigError(f"--draws: expected a positive number of draws; got {args.draws}")
    plan = StudyPlan(args.folder, args.out, sites=tuple(_split(args.sites)),
                     strategies=tuple(_split(args.strategies)), sizes=tuple(_sizes(args.sizes)),
                     retrievers=tuple(_split(args.retrievers)),
                     budgets=tuple(_budgets(args.budgets)), draws=args.draws,
                     mined=args.mined, engine=engine_from_args(args))
    results = run_study(plan, progress=lambda line: print(line, file=sys.stderr, flush=True))
    meta = results.meta
    print(f"{len(meta['sites'])} sites, {meta['questions']} written questions: "
          f"{Path(args.out) / 'study.json'}")
    return 0


def cmd_gate(args) -> int:
    """A candidate config against a baseline: one line, a JSON summary, exit 1 when the
    candidate is worse by more than the margin with significance, else 0."""
    from .evaluation.choice.gate import run_gate, write_summary

    out_file(args.out, "gate.json")
    result = run_gate(args.corpus, args.queries, args.baseline, args.candidate,
                      margin=args.margin)
    write_summary(result, args.out)
    print(result.line(args.out))
    return result.exit_code


def cmd_view(args) -> int:
    from .viz import render_view

    out_file(args.out, "view.html")
    path = render_view(args.corpus, args.doc, strategy=args.strategy, config_path=args.config,
                       size=args.size, unit=args.unit, vs_strategy=args.vs,
                       vs_config=args.vs_config, out=args.out)
    print(f"view of {args.doc} -> {path}")
    return 0


def cmd_cache(args) -> int:
    """``cache info``: what the cache folder holds; ``cache clear``: its content caches gone
    (``--all``: every cache chunkproof keeps there)."""
    from .util.cache_folder import clear, describe

    if args.cache_command == "clear":
        removed = clear(everything=args.all)
        print(f"removed {len(removed)} cache file(s) or folder(s)" + "".join(
            f"\n  {path}" for path in removed))
        return 0
    print("\n".join(describe()))
    return 0


def make_sweep_params(model, **values):
    """Validate sweep parameters; a bad one raises ConfigError naming it."""
    from pydantic import ValidationError

    try:
        return model(**values)
    except ValidationError as err:
        raise ConfigError(validation_message(err, subject="invalid sweep parameters")) from None


HANDLERS = {"strategies": cmd_strategies, "chunk": cmd_chunk, "summary": cmd_summary,
            "queries": cmd_queries, "sweep": cmd_sweep, "view": cmd_view, "study": cmd_study,
            "report": cmd_report, "cache": cmd_cache, "gate": cmd_gate}


def main(argv: list[str] | None = None) -> int:
    """Run one command; every failure is one line on stderr and exit 2 (130 when
    interrupted), its traceback only with ``--debug``."""
    args = build_parser().parse_args(argv)
    try:
        check_environment(args)
        return HANDLERS[args.command](args)
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("chunkproof: interrupted", file=sys.stderr)
        return 130
    except Exception as err:
        if args.debug:
            raise
        print(f"chunkproof: error: {error_line(err)}", file=sys.stderr)
        return 2


def check_environment(args) -> None:
    """The settings a command reads from its environment (``CHUNKPROOF_*``), checked once
    before any file is read: a bad one fails the command in one line."""
    from .util.content_cache import bound_bytes

    limit_parsing(getattr(args, "parse_seconds", None))
    limit_file_size(getattr(args, "max_file_mib", None))
    bound_bytes()  # CHUNKPROOF_CONTENT_CACHE_MIB, when set, must be a size
    choose_models(args)
    if args.command in ("sweep", "report"):
        from .evaluation.run.engine import default_workers

        default_workers()


def choose_models(args) -> None:
    """``--embedder``, ``--tokenizer`` and ``--encoder-window``: the dense model retrieval
    embeds with and the tokens sizes are counted in, for this process and the notebooks and
    workers it starts (the model's own tokenizer and window unless given); ``chunk --config``
    without them takes the tokenizer chosen_config.yaml records, and ``gate`` the tokenizer
    and dense model its ``--baseline`` records. Without any, what
    ``CHUNKPROOF_EMBEDDER``, ``CHUNKPROOF_TOKENIZER`` and ``CHUNKPROOF_ENCODER_WINDOW`` name is
    checked."""
    from .chunking.embedder import embedder_choice, use_embedder, use_recorded
    from .chunking.sizes import tokenizer_choice, use_tokenizer

    path, window = getattr(args, "tokenizer", None), getattr(args, "encoder_window", None)
    model = getattr(args, "embedder", None)
    if model is not None:
        use_embedder(model or None, tokenizer=path, window=window)
        return
    embedder_choice()  # what the environment names must be a model folder
    recorded = getattr(args, "config", None) or getattr(args, "baseline", None)
    if path is None and window is None and recorded and \
            use_recorded(recorded, embedder=args.command == "gate"):
        return
    if path is None and window is None:
        tokenizer_choice()  # what the environment names must be usable
        return
    use_tokenizer(path, window)


def limit_file_size(mib: float | None) -> None:
    """``--max-file-mib``: the largest file every corpus this process and the notebooks it
    runs load reads (through ``CHUNKPROOF_MAX_FILE_MIB``); the variable alone is checked."""
    from .document.corpus import MAX_FILE_ENV, file_limit

    if mib is not None:
        os.environ[MAX_FILE_ENV] = repr(mib)
    try:
        file_limit()
    except ConfigError as err:
        if mib is None:
            raise
        raise ConfigError(f"--max-file-mib: expected a number of MiB > 0; got {mib:g}") from err


def limit_parsing(seconds: float | None) -> None:
    """``--parse-seconds``: the per-file parse time limit of every corpus this process and
    the notebooks it runs load (through ``CHUNKPROOF_PARSE_SECONDS``)."""
    from .document.time_limit import ENV, parse_limit

    if seconds is not None:
        os.environ[ENV] = f"{parse_limit(seconds, name='--parse-seconds'):g}"
    else:
        parse_limit()  # CHUNKPROOF_PARSE_SECONDS, when set, must be a number of seconds


def error_line(err: Exception) -> str:
    """One line for a failure: a chunkproof error's own message; a write the disk refused with
    the file named; anything else named as unexpected, with the way to see more."""
    if isinstance(err, FileValidationError):
        text = err.one_line()
    elif isinstance(err, ChunkproofError):
        text = str(err)
    elif isinstance(err, OSError) and err.filename:
        text = f"{err.filename}: {disk_fault(err)}"
    else:
        text = (f"unexpected {type(err).__name__}: {err} (rerun with --debug for the "
                "traceback, and please report it)")
    return " ".join(text.split())
