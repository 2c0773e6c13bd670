"""The declared schema of every result table a sweep writes: file, meaning, and each column's
type and meaning. The sweep writes through it, the run reader reads through it, the table of
files in docs/results.md is made from it, and a test checks written files against it."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ...errors import SchemaError
from ...util.atomic import write_atomic, write_text_atomic
from ...util.sheets import csv_text, read_csv
from .defaults import MIN_INTERVAL_N

KINDS = {"str": "object", "int": "int", "float": "float", "bool": "bool",
         "list[str]": "object"}
"""Column types; a list column holds a list (an array once read back from Parquet)."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a result table."""

    name: str
    kind: str
    """One of ``KINDS``."""
    meaning: str


@dataclass(frozen=True, slots=True)
class Table:
    """One file of a run folder and its columns, in the order they are written."""

    file: str
    meaning: str
    columns: tuple[Column, ...]

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def frame(self, rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
        """Rows (dicts holding every column) as a frame with the declared columns in order."""
        return self._declared(pd.DataFrame(list(rows), columns=None))

    def frame_of(self, columns: Mapping[str, list]) -> pd.DataFrame:
        """Columns (name -> one value a row, every column) as a frame with the declared
        columns in order: what ``frame`` makes of the same rows."""
        return self._declared(pd.DataFrame(dict(columns)))

    def _declared(self, frame: pd.DataFrame) -> pd.DataFrame:
        return pd.DataFrame(columns=self.names) if frame.empty else self.conform(frame)

    def conform(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` with the declared columns in order; SchemaError when it lacks one or has
        one more."""
        problems = self.problems(frame, dtypes=False)
        if problems:
            raise SchemaError(self.file, problems)
        return frame[self.names]

    def problems(self, frame: pd.DataFrame, *, dtypes: bool = True) -> list[str]:
        """How ``frame`` differs from the schema: missing, extra or misordered columns and,
        with ``dtypes``, numeric columns that are not numeric."""
        found: list[str] = []
        missing = [n for n in self.names if n not in frame.columns]
        extra = [n for n in frame.columns if n not in self.names]
        if missing:
            found.append(f"missing column(s) {missing}")
        if extra:
            found.append(f"undeclared column(s) {extra}")
        if not found and list(frame.columns) != self.names and dtypes:
            found.append(f"columns out of order: {list(frame.columns)}")
        if dtypes and not missing:
            found += [f"column {c.name!r} should be {c.kind}, is {frame[c.name].dtype}"
                      for c in self.columns if not _fits(frame[c.name], c.kind)]
        return found

    def write(self, run_dir: str | os.PathLike, frame: pd.DataFrame) -> Path:
        """Write ``frame`` (conformed) to ``run_dir/file`` atomically, Parquet or CSV."""
        frame = self.conform(frame) if len(frame.columns) else pd.DataFrame(columns=self.names)
        path = Path(run_dir) / self.file
        if self.file.endswith(".parquet"):
            return write_atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))
        return write_text_atomic(path, csv_text(frame))

    def write_parts(self, run_dir: str | os.PathLike, parts: Sequence[Path]) -> Path:
        """Parquet ``parts`` (frames of this table, in order) concatenated into ``run_dir/file``
        atomically, one part in memory at a time."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not parts:
            return self.write(run_dir, pd.DataFrame(columns=self.names))
        schema = pa.unify_schemas([pq.read_schema(p) for p in parts],
                                  promote_options="permissive")
        schema = pa.schema([schema.field(n) for n in self.names],
                           metadata=pq.read_schema(parts[0]).metadata)

        def write(tmp: Path) -> None:
            with pq.ParquetWriter(tmp, schema) as writer:
                for part in parts:
                    table = pq.read_table(part)
                    writer.write_table(table.select(self.names).cast(schema))

        return write_atomic(Path(run_dir) / self.file, write)

    def read(self, run_dir: str | os.PathLike) -> pd.DataFrame:
        """The file read back from ``run_dir`` (an empty CSV gives an empty frame)."""
        path = Path(run_dir) / self.file
        if self.file.endswith(".parquet"):
            return pd.read_parquet(path)
        try:
            if self is SUMMARY:  # split values such as "none" must stay text
                return read_csv(path, keep_default_na=False, na_values=[""])
            return read_csv(path)
        except pd.errors.EmptyDataError:
            return pd.DataFrame(columns=self.names)




def _fits(series: pd.Series, kind: str) -> bool:
    if series.empty or series.isna().all():
        return True
    if kind == "int":
        return pd.api.types.is_integer_dtype(series)
    if kind == "float":
        return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
    if kind == "bool":
        return pd.api.types.is_bool_dtype(series)
    return not pd.api.types.is_numeric_dtype(series)


def _columns(*spec: tuple[str, str, str]) -> tuple[Column, ...]:
    return tuple(Column(*item) for item in spec)


CONFIG = _columns(
    ("config_id", "str", "short hash of every field of the chunker config"),
    ("strategy", "str", "the config's strategy"),
    ("size", "int", "the config's target chunk size, in `unit`"),
    ("unit", "str", "the unit of size: chars, words or tokens"),
    ("options", "str", "JSON of the config's other fields that differ from their defaults"),
)
CONFIG_NAMES = tuple(c.name for c in CONFIG)

CHUNKS = Table("chunks.parquet", "every chunk of every config, one row each", (
    *CONFIG,
    *_columns(
        ("id", "str", "stable chunk id: sha256 of config id, document id, span and text"),
        ("doc_id", "str", "the document: its path relative to the corpus root"),
        ("ordinal", "int", "position among the document's chunks (0-based)"),
        ("start", "int", "char offset of the chunk's span in the document (inclusive)"),
        ("end", "int", "char offset of the span's end (exclusive)"),
        ("text", "str", "the chunk's text"),
        ("breadcrumb", "list[str]", "heading path in force for the chunk's content"),
        ("part", "str", "`i of n` when a section was split into n pieces, else empty"),
        ("kind", "str", "prose, code, table, mixed, heading or front_matter"),
        ("structure_source", "str", "where the document's headings came from"),
        ("verbatim", "bool", "whether text equals the document's text over the span"),
        ("start_line", "int", "first line of the span (1-based)"),
        ("end_line", "int", "last line of the span (1-based, inclusive)"),
        ("embed_text", "str", "what an index sees (breadcrumb prefix when used, then text)"),
        ("context_text", "str", "what a reader is handed (source label when used, then text)"),
        ("heading_provenance", "list[str]", "how each heading of the breadcrumb was found"),
        ("title", "str", "the title of the chunk's document"),
        ("section_id", "str", "the deepest section holding the chunk's content: sha256 of the "
                              "document id, the heading path and the heading's offset (the "
                              "document's root section before any heading); the same in every "
                              "run"),
        ("parent_section_id", "str", "that section's parent (the root section for a top "
                                     "heading, empty for the root)"),
        ("anchor", "str", "the anchor of that section's heading as the config's slug_rule "
                          "makes it (empty for the root section: docs/anchors.md)"),
        ("href", "str", "the config's url_template rendered for the chunk's page and anchor; "
                        "empty without one"),
        ("applied_strategy", "str", "the strategy that produced the chunk (for "
                                    "structure_routed, the one it applied to the document)"),
        ("n_chars", "int", "size of `text` in chars"),
        ("n_words", "int", "size of `text` in whitespace-separated words"),
        ("n_tokens", "int", "size of `text` in encoder tokens (words x 1.3 when the tokenizer "
                            "is not installed: run.json `token_method` says which)"),
    ),
))
RETRIEVED = Table("retrieved.parquet", "the ranked chunks of every query, config and "
                                       "retriever", (
    *CONFIG,
    *_columns(
        ("retriever", "str", "bm25, dense or hybrid"),
        ("mode", "str", "retrieval mode: plain, boost (heading-path match raises a chunk), "
                        "expand=parent (each hit's section, then its parent's) or "
                        "expand=siblings (the parts beside it), the last two at token budgets "
                        "only"),
        ("query_id", "str", "the query's id in the query set"),
        ("rank", "int", "the chunk's rank, 1 for the best"),
        ("chunk_id", "str", "the chunk (`id` in chunks.parquet)"),
        ("score", "float", "the retriever's score"),
    ),
))
PER_QUERY = Table("per_query.parquet", "every metric of every query, config and retriever", (
    *CONFIG,
    *_columns(
        ("retriever", "str", "bm25, dense or hybrid"),
        ("mode", "str", "retrieval mode: plain, boost (heading-path match raises a chunk), "
                        "expand=parent (each hit's section, then its parent's) or "
                        "expand=siblings (the parts beside it), the last two at token budgets "
                        "only"),
        ("query_id", "str", "the query's id in the query set"),
        ("query_kind", "str", "the query file's kind (manual by default), or the mined kind: "
                              "title, section, symbol, body, keyword, partial, xref, "
                              "identifier"),
        ("metric", "str", "metric name at k (answer_hit@5), at a token budget of the top chunks "
                          "that fill it (span_iou@b1024), or neither (precision_omega)"),
        ("value", "float", "the query's value (NaN where it is undefined, e.g. empty bundle)"),
        ("structure_source", "str", "structure source of the query's first gold document"),
        ("applied_strategy", "str", "the strategy applied to that document"),
        ("source", "str", "the query's first gold document: the page it asks about, which "
                          "groups it with the other questions of that page in paired tests"),
        ("query_set", "str", "tuning (configs are chosen on it), held_out (the choice is "
                             "reported on it) or all (too few queries to split)"),
        ("query_group", "str", "heading_derived (title, section and symbol queries: their text "
                               "can be the heading a breadcrumb injects) or leak_free (body "
                               "sentences and every other kind)"),
    ),
))
SUMMARY = Table("summary.csv", "mean of every metric per config and retriever with a 95% "
                               "interval, blended and split", (
    *CONFIG,
    *_columns(
        ("retriever", "str", "bm25, dense or hybrid"),
        ("mode", "str", "retrieval mode: plain, boost (heading-path match raises a chunk), "
                        "expand=parent (each hit's section, then its parent's) or "
                        "expand=siblings (the parts beside it), the last two at token budgets "
                        "only"),
        ("metric", "str", "metric name at k"),
        ("split", "str", "all (the blend), structure_source, applied_strategy, query_kind, "
                         "query_set or query_group"),
        ("split_value", "str", "the split's value (all for the blend)"),
        ("mean", "float", "mean over the queries (NaN values left out)"),
        ("ci_low", "float", "lower end of the 95% interval of the mean: Wilson's when every "
                            "value is 0 or 1, else Student's t "
                            f"(NaN, no interval, below {MIN_INTERVAL_N} queries)"),
        ("ci_high", "float", "upper end of that interval"),
        ("n", "int", "queries with a value"),
        ("tokens_p50", "float", "the config's realised median chunk size in tokens"),
        ("tokens_p95", "float", "the config's realised 95th percentile chunk size in tokens"),
    ),
))
CHUNK_STATS = Table("chunk_stats.csv", "structural figures of each config's chunks", (
    *CONFIG,
    *_columns(
        ("documents", "int", "documents chunked"),
        ("chunks", "int", "chunks the config made"),
        ("size_p50", "float", "median chunk size in the config's unit"),
        ("size_p95", "float", "95th percentile of chunk size in the unit"),
        ("size_max", "float", "largest chunk in the unit"),
        ("chars_p50", "float", "median chunk size in chars"),
        ("chars_p95", "float", "95th percentile of chunk size in chars"),
        ("chars_max", "float", "largest chunk in chars"),
        ("tokens_p50", "float", "realised median chunk size in encoder tokens"),
        ("tokens_p95", "float", "realised 95th percentile of chunk size in encoder tokens"),
        ("code_integrity", "float",
         "share of chunks no boundary of which falls inside a fenced code block (nested in a "
         "list, quote or container too), from the blocks' spans"),
        ("label_kept", "float",
         "share of chunks inside a labelled container (a tab, an admonition, a directive) "
         "whose breadcrumb, prefix or text carries its label; NaN when none is inside one"),
        ("heading_only", "int", "chunks holding only headings (a trailing one excepted)"),
        ("heading_only_share", "float", "heading_only / chunks"),
        ("oversize", "int", "chunks larger than the configured size"),
        ("oversize_share", "float", "oversize / chunks"),
        ("lost_chars", "int", "non-whitespace document chars inside no chunk span"),
        ("lost_share", "float", "lost_chars / non-whitespace document chars"),
        ("verbatim_share", "float", "share of chunks whose text is their source span"),
        ("single_chunk_docs_share", "float", "share of documents the config left in one chunk"),
        ("over_encoder_limit", "float", "share of embed texts longer than the encoder window"),
        ("over_encoder_limit_method", "str", "tokenizer (counted) or estimate (words x 1.3)"),
        ("index_tokens", "int", "encoder tokens of every chunk's embed text, summed: what the "
                                "index costs to embed and store (the cost the verdict names)"),
    ),
))
SIGNIFICANCE = Table("significance.csv", "paired tests on the key metrics, per retriever: the "
                                         "planned contrasts and every pair of configs, each "
                                         "family Holm-corrected on its own", _columns(
    ("retriever", "str", "bm25, dense or hybrid"),
    ("mode", "str", "retrieval mode both sides were scored in; in the modes family, the "
                    "mode (A) compared with plain (B) on the same config"),
    ("family", "str", "planned (a contrast declared before the run, e.g. --contrast "
                      "ast_breadcrumb:ast_merge), exploratory (every pair of configs) or "
                      "modes (each retrieval mode against plain, config by config)"),
    ("query_group", "str", "the queries tested: all, or (planned contrasts, when the run has "
                           "both) only heading_derived or only leak_free kinds, each its own "
                           "Holm family"),
    ("metric", "str", "the key metric compared"),
    ("role", "str", "primary (the metric declared before the run, run.json primary_metric: "
                    "by default the answer found within the middle token budget) or "
                    "secondary (every other metric, read as supporting evidence)"),
    ("config_a", "str", "config id of A"),
    ("config_b", "str", "config id of B"),
    ("n", "int", "queries both configs scored"),
    ("mean_a", "float", "mean of config A over those queries"),
    ("mean_b", "float", "mean of config B over those queries"),
    ("mean_diff", "float", "mean of A - B over the queries"),
    ("ci_low", "float", "lower end of the 95% interval of mean_diff (see interval), widened "
                        "to hold 0 when the test does not reject"),
    ("ci_high", "float", "upper end of that interval"),
    ("p_value", "float", "two-sided paired p-value (uncorrected; see test)"),
    ("test", "str", "exact sign test (a 0/1 metric: binomial test of the discordant queries), "
                    "sign-flip (a continuous metric: permutation test, with the sign vectors "
                    "drawn or exact) or sign-flip bound (Hoeffding's bound on its p-value, "
                    "below every Holm level)"),
    ("interval", "str", "Tango score (0/1 metric), t, or t (rough): fewer than 30 queries or "
                        "10 non-zero differences"),
    ("wins_a", "int", "queries on which A scores higher"),
    ("wins_b", "int", "queries on which B scores higher"),
    ("p_holm", "float", "p_value Holm-corrected within its family, query group, metric and "
                        "retriever"),
    ("verdict", "str", "A better, B better or no significant difference (at p_holm < 0.05)"),
))
DOCUMENT_WARNINGS = Table("document_warnings.csv", "what the corpus load did other than "
                                                   "read a file as marked up, one row each",
                          _columns(
    ("doc_id", "str", "the document, or the skipped file: its path relative to the corpus root"),
    ("kind", "str", "no_headings (its chunks get line anchors), inferred_headings, "
                    "nesting_limit (a region parsed on its own), front_matter (not a YAML "
                    "mapping: read as none), parse_time_limit, size_limit, unsupported_format "
                    "or not_loaded (the last four: the file was skipped)"),
    ("message", "str", "what happened and what was done instead"),
    ("line", "int", "the 1-based line it concerns; 0 for the whole file"),
))
RESULT_TABLES = (CHUNKS, RETRIEVED, PER_QUERY, SUMMARY, CHUNK_STATS, SIGNIFICANCE,
                 DOCUMENT_WARNINGS)
OPTIONAL_TABLES = (SIGNIFICANCE, DOCUMENT_WARNINGS)
"""Tables a finished run may lack: significance.csv may be empty; a run made before the load
recorded its warnings has no document_warnings.csv."""
RUN_FILES = ("run.json", *(t.file for t in RESULT_TABLES if t not in OPTIONAL_TABLES))
"""What a finished run folder holds."""


def markdown() -> str:
    """docs/results.md's table of result files, then each file's columns (type and meaning)."""
    lines = ["| file | what it holds |", "|---|---|"]
    lines += [f"| `{t.file}` | {t.meaning} |" for t in RESULT_TABLES]
    for table in RESULT_TABLES:
        lines += ["", f"<details><summary><code>{table.file}</code> columns</summary>", "",
                  "| column | type | meaning |", "|---|---|---|"]
        lines += [f"| `{c.name}` | {c.kind} | {c.meaning} |" for c in table.columns]
        lines += ["", "</details>"]
    return "\n".join(lines)
