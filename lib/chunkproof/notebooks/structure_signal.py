"""Notebook 05's tables: heading detection per structure source, and routed retrieval split."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..chunking.section_lengths import CEILING_PERCENTILE, length_stats, sections_table
from ..chunking.sizes import encoder_window
from ..chunking.strategies.routed import routed_strategy
from ..document.corpus import Corpus
from ..errors import ConfigError
from ..evaluation.run.sweep import SweepParams
from ..evaluation.scoring.structure import (
    GOLD_FILE,
    SOURCES,
    errors_by_document,
    gold_draft,
    in_order,
    load_gold,
    score_documents,
    score_table,
    stratified_sample,
)
from ..util.atomic import write_text_atomic
from ..util.markdown import markdown_block, markdown_code
from ..util.paths import shared_path
from ..util.sheets import csv_text
from ..util.values import missing, plain
from .params import (
    CorpusFolder,
    Flag,
    ModelFolder,
    NonNegativeInt,
    NotebookParams,
    OptionalFolder,
    OptionalOutput,
    PositiveInt,
    QueryFile,
    RetrieverName,
    load_corpus_param,
    load_queries_param,
    parameter,
    shared_parameters,
)
from .params import validate as validate_params
from .routed_retrieval import COMPARED
from .sweep_inputs import SweepInputs, sweep_params

SCORE_COLUMNS = ["structure_source", "documents", "fully_correct_pages", "pages_fully_correct",
                 "precision", "recall", "tp", "fp", "fn"]
PROVENANCE_COLUMNS = ["provenance", "documents", "tp", "fp", "precision"]
ERROR_COLUMNS = ["doc_id", "structure_source", "error", "line", "level", "text", "provenance"]
EXPORT_FOLDER = "structure_signal"
DRAFT_FILE = "headings.gold.draft.yaml"
"""Written by the export when GOLD is empty: the detector's headings on the sample, to correct."""
NOT_SCORED = ("*Not scored: GOLD is empty, so there are no true headings to compare with "
              "(section 2 says how to write a gold file).*")


@dataclass(frozen=True)
class StructureSignalSetup:
    """Notebook 05's parameters, checked and loaded."""

    corpus: Corpus
    """Loaded with ``infer_headings`` as asked, so structure sources follow that setting."""
    queries: list
    """The checked query file; empty when queries are mined from the corpus by the sweep."""
    gold: dict
    """Document id -> true headings; empty when GOLD is "" (heading detection not scored)."""
    sample: list
    """The stratified sample: up to ``quota`` documents per structure source."""
    sweep: SweepParams
    """The routed strategy and the two it routes between, at one size, one retriever."""
    metric: str
    """The retrieval metric reported: ``answer_hit@k`` when every query has an answer span,
    else ``hit@k``."""
    quota: int
    seed: int
    infer_headings: bool
    size: int
    retriever: str
    out_dir: Path | None
    """None: the export cell writes nothing."""
    gold_file: Path | None = None
    """The gold file read; None when GOLD is "" (no gold annotations)."""
    parameters: dict[str, Any] = field(default_factory=dict)
    """The parameters, checked, for the export (paths as shared files name them)."""
    run_dir: Path | None = None
    """A sweep folder whose mined queries the retrieval comparison reads back when they were
    mined from this corpus as read here (RUN_DIR); None: mined again."""

    @property
    def scored(self) -> bool:
        """Whether heading detection is scored (a gold file was given)."""
        return self.gold_file is not None


def primary_metric(queries: list, k: int) -> str:
    """``answer_hit@k`` when there are queries and each carries an answer span, else ``hit@k``
    (mined queries have no answer span)."""
    answered = bool(queries) and all(q.answer is not None for q in queries)
    return f"{'answer_hit' if answered else 'hit'}@{k}"


class StructureSignalParams(NotebookParams):
    """Notebook 05's parameters."""

    CORPUS: CorpusFolder
    QUERIES: QueryFile
    GOLD: QueryFile
    QUOTA: PositiveInt
    SEED: NonNegativeInt
    INFER_HEADINGS: Flag
    SIZE: PositiveInt
    RETRIEVER: RetrieverName
    OUT_DIR: OptionalOutput
    EMBEDDER: ModelFolder = ""
    RUN_DIR: OptionalFolder = ""


def validate(**params: Any) -> StructureSignalSetup:
    """Check notebook 05's parameters and load what they name; a bad one raises ConfigError
    naming the parameter (upper case), what was wrong and what was received."""
    checked = validate_params(StructureSignalParams, **params)
    loaded = load_corpus_param(checked.CORPUS, infer_headings=checked.INFER_HEADINGS,
                               nonempty=True)
    queries = load_queries_param(checked.QUERIES, loaded)
    gold_file = Path(checked.GOLD) if checked.GOLD else None
    with parameter("GOLD"):
        marks = load_gold(gold_file) if gold_file else {}
    sample = stratified_sample(loaded, checked.QUOTA, seed=checked.SEED)
    unmarked = [d.id for d in sample if d.id not in marks] if gold_file else []
    if unmarked:
        raise ConfigError(f"GOLD: no headings marked for {len(unmarked)} sampled document(s) "
                          f"of CORPUS: {', '.join(unmarked)} (mark them, [] for none)")
    inputs = validate_params(SweepInputs, CORPUS=checked.CORPUS, QUERIES=checked.QUERIES,
                             STRATEGIES=list(COMPARED), SIZES=[checked.SIZE],
                             RETRIEVERS=[checked.RETRIEVER], EMBEDDER=checked.EMBEDDER)
    sweep = sweep_params(inputs, options={"infer_headings": checked.INFER_HEADINGS})
    return StructureSignalSetup(
        corpus=loaded, queries=queries, gold=marks, sample=sample, sweep=sweep,
        metric=primary_metric(queries, sweep.k), quota=checked.QUOTA, seed=checked.SEED,
        infer_headings=checked.INFER_HEADINGS, size=checked.SIZE, retriever=checked.RETRIEVER,
        out_dir=Path(checked.OUT_DIR) if checked.OUT_DIR else None, gold_file=gold_file,
        parameters=shared_parameters(checked),
        run_dir=Path(checked.RUN_DIR) if checked.RUN_DIR else None)


def describe(setup: StructureSignalSetup) -> str:
    """One line saying what was loaded and where the export goes."""
    queries = f"{len(setup.queries)} queries" if setup.queries else "queries mined by the sweep"
    target = setup.out_dir or "nowhere (OUT_DIR is empty)"
    gold = (f"gold marks {len(setup.gold)} documents" if setup.scored
            else "no gold file (GOLD is empty): heading detection is not scored")
    return (f"{len(setup.corpus)} documents ({len(setup.corpus.skipped)} skipped) from "
            f"{setup.corpus.root}, fingerprint {setup.corpus.fingerprint}; {queries}; "
            f"{gold}; sample of {len(setup.sample)}; metric {setup.metric}; export to {target}")


# --- without gold ------------------------------------------------------------------------


def gold_note(setup: StructureSignalSetup, *, shown: int = 8) -> str:
    """Markdown: why heading detection is not scored without GOLD, how to write a gold file
    (the format of data/sample/headings.gold.yaml) and a start for it from the detector's
    headings on the first sampled document (at most ``shown`` of them); "" when scored."""
    if setup.scored:
        return ""
    first = setup.sample[0]
    draft = gold_draft([first]).splitlines()
    more = len(draft) - 1 - shown
    snippet = "\n".join(draft[:shown + 1] + ([f"  # ... {more} more"] if more > 0 else []))
    written = (f"The export writes this draft for all {len(setup.sample)} sampled documents to "
               f"`{EXPORT_FOLDER}/{DRAFT_FILE}` in OUT_DIR." if setup.out_dir else
               "Set OUT_DIR and the export writes this draft for every sampled document.")
    return (
        "**Heading detection is not scored: GOLD is empty.** Precision, recall and pages fully "
        "correct compare the headings the parser finds with the true ones, which only a person "
        "can mark. To score them, write a YAML file in the format of "
        "`data/sample/headings.gold.yaml`: each document id (its path inside CORPUS) maps to "
        "the list of its true headings, `[]` for a document with none; `line` is the 1-based "
        "line holding the heading text (for a setext heading, not the underline), `level` its "
        "depth 1-6, `text` the heading without its marks. Mark at least the "
        f"{len(setup.sample)} sampled documents "
        f"({', '.join(markdown_code(d.id) for d in setup.sample)}), "
        f"save the file as `{GOLD_FILE}` in CORPUS (`chunkproof report` then uses it) or pass "
        f"its path as GOLD. The headings the parser found in {markdown_code(first.id)}, as a "
        f"start to correct by hand:\n\n{markdown_block(snippet, 'yaml')}\n\n{written}")


def scored(setup: StructureSignalSetup, shown, *, note: bool = True):
    """``shown`` (a table) when heading detection is scored; without gold, a one-line Markdown
    note instead (or None with ``note=False``), so no table of zeros stands in for a score."""
    if setup.scored:
        return shown
    if not note:
        return None
    from IPython.display import Markdown

    return Markdown(NOT_SCORED)


def heading_scores(setup: StructureSignalSetup) -> pd.DataFrame:
    """``source_table`` of the sample; empty (same columns) when there is no gold."""
    return _on_sample(setup, source_table, SCORE_COLUMNS)


def heading_provenance(setup: StructureSignalSetup) -> pd.DataFrame:
    """``provenance_table`` of the sample; empty (same columns) when there is no gold."""
    return _on_sample(setup, provenance_table, PROVENANCE_COLUMNS)


def heading_errors(setup: StructureSignalSetup) -> pd.DataFrame:
    """``error_table`` of the sample; empty (same columns) when there is no gold."""
    return _on_sample(setup, error_table, ERROR_COLUMNS)


def _on_sample(setup: StructureSignalSetup, table, columns: list[str]) -> pd.DataFrame:
    if not setup.scored:
        return pd.DataFrame(columns=columns)
    return table(setup.sample, setup.gold)


def scores_line(setup: StructureSignalSetup, scores: pd.DataFrame) -> str:
    """``pages_line`` when scored, else ``gold_note``: what section 2 says first."""
    return pages_line(scores) if setup.scored else gold_note(setup)


# --- 1. the sample and the per-source table ----------------------------------------------


def sample_table(corpus: Corpus, sample: list) -> pd.DataFrame:
    """Per structure source: documents in the corpus, documents sampled, and which."""
    rows = []
    chosen = {d.id for d in sample}
    for source in in_order({d.structure_source for d in corpus}, SOURCES):
        ids = [d.id for d in corpus if d.structure_source == source]
        picked = [i for i in ids if i in chosen]
        rows.append({"structure_source": source, "in_corpus": len(ids), "sampled": len(picked),
                     "documents": ", ".join(picked)})
    return pd.DataFrame(rows, columns=["structure_source", "in_corpus", "sampled", "documents"])


def source_table(sample: list, gold: dict, *, match_level: bool = False) -> pd.DataFrame:
    """Detection rates on the sample, overall (``all``) then per structure source: documents,
    fully correct pages (count and share), precision, recall, and tp/fp/fn."""
    table = score_table(sample, gold, match_level=match_level)
    table = table[table["group"].isin(["overall", "structure_source"])]
    scores = score_documents(sample, gold, match_level=match_level)
    clean = {key: sum(s.fully_correct for s in scores
                      if key == "all" or s.structure_source == key) for key in table["key"]}
    table = table.assign(structure_source=table["key"],
                         fully_correct_pages=table["key"].map(clean))
    return table[SCORE_COLUMNS].astype({"fn": int}).reset_index(drop=True)


def emphasise_pages(table: pd.DataFrame):
    """``source_table`` styled: the pages-fully-correct column highlighted and in bold, the
    figure to read hardest (one error on a page makes at least one bad chunk)."""
    rates = {"pages_fully_correct": "{:.3f}", "precision": "{:.3f}", "recall": "{:.3f}"}
    return (table.style.format(rates, na_rep="n/a").hide(axis="index")
            .set_properties(subset=["pages_fully_correct", "fully_correct_pages"],
                            **{"font-weight": "bold", "background-color": "#fef3c7"}))


def pages_line(table: pd.DataFrame) -> str:
    """The pages-fully-correct figure per source as one bold Markdown line."""
    parts = []
    for row in table.itertuples():
        rate = ("n/a" if missing(row.pages_fully_correct)
                else f"{row.pages_fully_correct:.3f}")
        parts.append(f"{row.structure_source} {rate} ({row.fully_correct_pages} of "
                     f"{row.documents})")
    return "**Pages fully correct on the sample: " + "; ".join(parts) + ".**"


def provenance_table(sample: list, gold: dict, *, match_level: bool = False) -> pd.DataFrame:
    """Per heading provenance (how a heading was found): cuts made, how many were real."""
    table = score_table(sample, gold, match_level=match_level)
    table = table[table["group"] == "provenance"].rename(columns={"key": "provenance"})
    return table[PROVENANCE_COLUMNS].reset_index(drop=True)


# --- 2. what was wrong -----------------------------------------------------------------------


def error_table(sample: list, gold: dict, *, match_level: bool = False) -> pd.DataFrame:
    """One row per wrong heading on the sample: a false boundary (a cut at a line that is not
    a heading, with the detector that made it) or a missed heading, with line and text."""
    rows = []
    for doc in errors_by_document(sample, gold, match_level=match_level):
        wrong = [(h.line, "false boundary", h.level, h.text, h.provenance)
                 for h in doc.false_boundaries]
        wrong += [(h.line, "missed heading", h.level, h.text, "") for h in doc.missed]
        rows += [{"doc_id": doc.doc_id, "structure_source": doc.structure_source,
                  "error": error, "line": line, "level": level, "text": text,
                  "provenance": provenance}
                 for line, error, level, text, provenance in sorted(wrong)]
    return pd.DataFrame(rows, columns=ERROR_COLUMNS)


# --- 4. the section-length tail ----------------------------------------------------------


def heading_aware_documents(corpus: Iterable) -> list:
    """The documents ``structure_routed`` splits at headings (its verified half)."""
    return [d for d in corpus if routed_strategy(d) == "ast_breadcrumb"]


def tail_sections(corpus: Iterable) -> pd.DataFrame:
    """``section_lengths.sections_table`` of the heading-aware half: one row per section as
    a heading splitter with no ceiling would cut it, with its length in chars and tokens."""
    return sections_table(heading_aware_documents(corpus))


def tail_stats(sections: pd.DataFrame, *, size: int, window: int | None = None
               ) -> pd.DataFrame:
    """``section_lengths.length_stats`` (median, p97, max; sections over the encoder window) plus
    the window (None: ``sizes.encoder_window``), the ceiling ``size`` in chars and the
    sections the ceiling would cut."""
    window = window or encoder_window()
    stats = length_stats(sections, window=window)
    over = int((sections["chars"] > size).sum())
    stats["window_tokens"] = window
    stats["ceiling_chars"] = size
    stats["over_ceiling"] = pd.array([over if unit == "chars" else None
                                      for unit in stats["unit"]], dtype="Int64")
    return stats.astype({"over_window": "Int64"})


def tail_line(stats: pd.DataFrame) -> str:
    """The tail in one Markdown sentence, every figure read from ``stats``."""
    tokens = stats.set_index("unit").loc["tokens"]
    chars = stats.set_index("unit").loc["chars"]
    p = f"p{CEILING_PERCENTILE}"
    if not tokens["sections"]:
        return "**No sections: no document is routed to heading-aware splitting.**"
    ratio = tokens[p] / tokens["window_tokens"]
    return (f"**Heading-aware half: {tokens['sections']} sections; median "
            f"{tokens['median']:.0f} tokens, {p} {tokens[p]:.0f} tokens = {ratio:.2f}x the "
            f"{tokens['window_tokens']}-token encoder window; {int(tokens['over_window'])} "
            f"sections "
            f"({tokens['over_window_share']:.1%}) run past the window "
            f"(tokens: {tokens['method']}). A ceiling of {chars['ceiling_chars']} chars "
            f"subdivides {int(chars['over_ceiling'])} of the {chars['sections']} sections.**")


# --- export ------------------------------------------------------------------------------


def signal_numbers(setup: StructureSignalSetup, scores: pd.DataFrame, errors: pd.DataFrame,
                splits: pd.DataFrame, tail: pd.DataFrame) -> dict:
    """The notebook's figures as plain JSON-ready values."""
    tokens = tail.set_index("unit").loc["tokens"]
    chars = tail.set_index("unit").loc["chars"]
    p = f"p{CEILING_PERCENTILE}"
    metric_rows = splits[splits["metric"] == setup.metric]
    retrieval: dict[str, dict] = {}
    for row in metric_rows.itertuples():
        retrieval.setdefault(row.strategy, {}).setdefault(row.split, {})[row.split_value] = {
            "mean": _plain(row.mean), "ci_low": _plain(row.ci_low),
            "ci_high": _plain(row.ci_high), "n": int(row.n)}
    return {
        "parameters": setup.parameters,
        "fingerprint": setup.corpus.fingerprint, "documents": len(setup.corpus),
        "queries": int(metric_rows["n"][metric_rows["split"] == "all"].max()),
        "sample": [d.id for d in setup.sample],
        "gold": shared_path(str(setup.gold_file)) if setup.scored else None,
        "heading_scores": {
            row["structure_source"]: {k: _plain(v) for k, v in row.items()
                                      if k != "structure_source"}
            for row in scores.to_dict("records")} if setup.scored else None,
        "errors": {"documents": int(errors["doc_id"].nunique()),
                   "false_boundaries": int((errors["error"] == "false boundary").sum()),
                   "missed_headings": int((errors["error"] == "missed heading").sum())}
        if setup.scored else None,
        "retrieval": {"metric": setup.metric, "k": setup.sweep.k, "size": setup.size,
                      "unit": setup.sweep.unit, "retriever": setup.retriever,
                      "configs": retrieval},
        "section_tail": {"sections": int(tokens["sections"]), "token_method": tokens["method"],
                         "median_tokens": _plain(tokens["median"]),
                         f"{p}_tokens": _plain(tokens[p]), "max_tokens": _plain(tokens["max"]),
                         "encoder_window": int(tokens["window_tokens"]),
                         "over_window": int(tokens["over_window"]),
                         "ceiling_chars": int(chars["ceiling_chars"]),
                         "over_ceiling": int(chars["over_ceiling"])},
    }


def export(out_dir: str | os.PathLike | None, setup: StructureSignalSetup,
           scores: pd.DataFrame, errors: pd.DataFrame, splits: pd.DataFrame,
           tail: pd.DataFrame) -> list[Path]:
    """Write heading_scores.csv, heading_errors.csv (without gold instead the detector's
    headings on the sample as a draft gold file, DRAFT_FILE), retrieval_splits.csv and
    structure_signal.json (key numbers) under ``out_dir/structure_signal/``, each atomically;
    with no ``out_dir``, write nothing. Returns the paths written."""
    if not out_dir:
        return []
    folder = Path(out_dir) / EXPORT_FOLDER
    numbers = signal_numbers(setup, scores, errors, splits, tail)
    headings = ({"heading_scores.csv": csv_text(scores),
                 "heading_errors.csv": csv_text(errors)} if setup.scored
                else {DRAFT_FILE: gold_draft(setup.sample)})
    texts = {**headings, "retrieval_splits.csv": csv_text(splits),
             "structure_signal.json": json.dumps(numbers, indent=2)}
    return [write_text_atomic(folder / name, text) for name, text in texts.items()]


def _plain(value):
    """A JSON-ready scalar: NaN and None as None, numpy numbers as Python ones, 6 digits."""
    return plain(value, digits=6)
