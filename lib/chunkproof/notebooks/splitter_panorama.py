"""Notebook 02, the splitter panorama: every registered splitter on one document at one size,
scored by measurement on five axes."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..chunking.build import chunk_document
from ..chunking.config import make_config
from ..chunking.registry import REGISTRY, available_names
from ..chunking.sizes import measure_all
from ..document.blocks import inside_block
from ..document.corpus import Corpus, Document
from ..errors import ConfigError, DocumentNotFoundError
from ..evaluation.queries.queries import Query
from ..evaluation.scoring import invariants
from ..evaluation.scoring.chunk_stats import label_share
from ..util.atomic import write_text_atomic
from ..util.sheets import csv_text
from ..util.values import missing
from ..viz.strip import BoundaryStrip
from .params import (
    CorpusFolder,
    NotebookParams,
    OutputFolder,
    PositiveInt,
    QueryFile,
    Unit,
    load_corpus_param,
    load_queries_param,
)
from .params import validate as validate_params

AXES = ("controls_size", "preserves_structure", "code_integrity", "label_kept",
        "heading_metadata")
THRESHOLDS = {
    # axis: (measure, "yes" at or above, "partial" at or above; "no" below)
    "controls_size": ("within_size", 0.95, 0.80),
    "preserves_structure": ("on_block_boundary", 0.95, 0.60),
    "code_integrity": ("intact_blocks", 1.0, 0.80),
    "label_kept": ("label_kept", 1.0, 0.80),
    # 0.90, not 0.95: the chunk right under the document's H1 has an empty breadcrumb on
    # purpose (the H1 only repeats the title, which every rendering carries anyway)
    "heading_metadata": ("with_breadcrumb", 0.90, 0.50),
}
MAX_OVERSHOOT = 1.5
"""``controls_size`` is ``yes`` only when the largest chunk is at most 1.5 x the size too."""


def representative(corpus: Corpus) -> Document:
    """The page with the most fences and tables, then the most headings, then the longest,
    then the first id (``invariants.block_weight``): where splitters differ most."""
    if not len(corpus):
        raise ConfigError(f"CORPUS: {corpus.root} holds no document")
    return min(corpus, key=invariants.block_weight)


class PanoramaParams(NotebookParams):
    """Notebook 02's parameters."""

    CORPUS: CorpusFolder
    QUERIES: QueryFile
    DOC: str
    SIZE: PositiveInt
    UNIT: Unit
    OUT_DIR: OutputFolder


@dataclass(frozen=True, slots=True)
class PanoramaSetup:
    """Notebook 02's parameters, checked and loaded."""

    corpus: Corpus
    queries: list[Query]
    doc: Document
    """The page (DOC, or ``representative`` when DOC is "")."""
    size: int
    unit: str
    out_dir: Path

    def describe(self) -> str:
        return (f"{self.doc.id}: {self.doc.title!r}, {len(self.doc.text)} chars, "
                f"{len(self.doc.blocks)} blocks; size {self.size} {self.unit}; "
                f"export to {self.out_dir}")


def validate(**params: object) -> PanoramaSetup:
    """Check notebook 02's parameters and load what they name (errors name the parameter)."""
    checked = validate_params(PanoramaParams, **params)
    corpus = load_corpus_param(checked.CORPUS)
    queries = load_queries_param(checked.QUERIES, corpus)
    return PanoramaSetup(corpus, queries, pick_document(corpus, checked.DOC), checked.SIZE,
                         checked.UNIT, Path(checked.OUT_DIR))


def pick_document(corpus: Corpus, doc: str) -> Document:
    """The document ``doc`` of ``corpus`` ("" picks ``representative``); errors name DOC."""
    if doc == "":
        return representative(corpus)
    try:
        return corpus.get(doc)
    except DocumentNotFoundError:
        ids = [d.id for d in corpus]
        shown = ", ".join(ids[:30]) + (" ..." if len(ids) > 30 else "")
        raise ConfigError(f"DOC: {doc!r} is not a document of the corpus; "
                          f"documents: {shown}") from None


def _cuts(doc: Document, chunks) -> list[int]:
    """Distinct chunk starts and ends strictly inside the document's content."""
    blocks = doc.blocks
    if not blocks:
        return []
    first, last = blocks[0].start, max(b.end for b in blocks)
    offsets = {c.start for c in chunks} | {c.end for c in chunks}
    return sorted(o for o in offsets if first < o < last)


def on_block_boundary(doc: Document, chunks) -> float:
    """Share of chunk boundaries that fall between blocks, not inside one: between top-level
    blocks, or between the items of a list or the blocks of a quote (NaN when no boundary
    falls inside the content: a single chunk)."""
    cuts = _cuts(doc, chunks)
    if not cuts:
        return math.nan
    inside = [inside_block(doc.blocks, cut) for cut in cuts]
    return 1.0 - float(np.mean(inside))


def intact_blocks(doc: Document, chunks) -> float:
    """Share of fences and tables, nested ones included, that no chunk boundary cuts (NaN
    when there are none)."""
    total = len(invariants.intact_blocks(doc))
    if not total:
        return math.nan
    return 1.0 - invariants.split_blocks(doc, chunks) / total


def answers_whole(doc: Document, chunks, queries) -> float:
    """Share of the answers of ``queries`` sourced in ``doc`` that lie whole in one chunk."""
    spans = []
    for query in queries or ():
        if query.answer and query.sources and query.sources[0] == doc.id:
            start = doc.text.find(query.answer)
            if start >= 0:
                spans.append((start, start + len(query.answer)))
    if not spans:
        return math.nan
    whole = [any(c.start <= a and b <= c.end for c in chunks) for a, b in spans]
    return float(np.mean(whole))


def measure_strategy(doc: Document, name: str, size: int, unit: str = "chars",
                     queries: list[Query] | None = None, chunks=None) -> dict:
    """One strategy on one document: the five axes as numbers, plus the invariant counts
    (``chunks``: its chunks of ``doc`` at ``size`` when already made)."""
    config = make_config(strategy=name, size=size, unit=unit)
    chunks = chunk_document(doc, config) if chunks is None else chunks
    sizes = np.asarray(measure_all([c.text for c in chunks], unit), dtype=float)
    report = invariants.check(doc, chunks, config)
    strategy = REGISTRY[name]
    return {
        "strategy": name, "family": strategy.family, "chunks": len(chunks),
        "median_size": float(np.median(sizes)) if len(sizes) else math.nan,
        "within_size": float(np.mean(sizes <= size)) if len(sizes) else math.nan,
        "max_over_size": float(sizes.max() / size) if len(sizes) else math.nan,
        "on_block_boundary": on_block_boundary(doc, chunks),
        "intact_blocks": intact_blocks(doc, chunks),
        "split_blocks": report.split_blocks,
        "label_kept": label_share(chunks, {doc.id: doc}),
        "with_breadcrumb": float(np.mean([bool(c.breadcrumb) for c in chunks]))
        if chunks else math.nan,
        "lost_chars": report.lost_chars, "heading_only": report.heading_only,
        "wrong_breadcrumbs": report.wrong_breadcrumbs, "non_verbatim": report.non_verbatim,
        "answers_whole": answers_whole(doc, chunks, queries),
        "description": strategy.description,
    }


def strategy_chunks(doc: Document, size: int, *, unit: str = "chars",
                    strategies=None) -> dict[str, list]:
    """Every available strategy's (or ``strategies``') chunks of ``doc`` at ``size``."""
    return {name: chunk_document(doc, make_config(strategy=name, size=size, unit=unit))
            for name in list(strategies or available_names())}


def boundary_strip(doc: Document, chunks: dict[str, list], size: int) -> BoundaryStrip:
    """One bar per strategy across the page, a tick at each cut, fences and tables shaded."""
    return BoundaryStrip(doc, {f"{name}/{size}": found for name, found in chunks.items()},
                         title=f"{doc.id}: where each splitter cuts at size {size}")


def panorama(doc: Document, size: int, *, unit: str = "chars", strategies=None,
             queries=None, chunks: dict[str, list] | None = None) -> pd.DataFrame:
    """Every available strategy (or ``strategies``) on ``doc`` at ``size``, one row each:
    a peer whose optional extra is not installed is left out.

    Columns: ``within_size`` (share of chunks no bigger than ``size``), ``max_over_size``
    (largest chunk / size), ``median_size``; ``on_block_boundary`` (share of boundaries
    between blocks at any depth); ``intact_blocks`` (share of fences and tables, nested ones
    included, not cut) and
    ``split_blocks``; ``label_kept`` (share of chunks inside a labelled container that carry
    its label, NaN when none lies inside one); ``with_breadcrumb`` (share of chunks with a
    non-empty breadcrumb);
    the invariant counts ``lost_chars``, ``heading_only``, ``wrong_breadcrumbs``,
    ``non_verbatim``; ``answers_whole`` (share of this document's query answers held whole
    by one chunk, NaN without queries). ``chunks`` (``strategy_chunks``) saves chunking
    again.
    """
    names = list(chunks or strategies or available_names())
    return pd.DataFrame([measure_strategy(doc, n, size, unit, queries,
                                          (chunks or {}).get(n)) for n in names])


def reading(axis: str, row) -> str:
    """``yes``, ``partial`` or ``no`` for one axis of one panorama row (see THRESHOLDS);
    ``n/a`` when the document gives nothing to measure (no fence or table, one chunk)."""
    column, yes, partial = THRESHOLDS[axis]
    value = row[column]
    if missing(value):
        return "n/a"
    if axis == "controls_size" and row["max_over_size"] > MAX_OVERSHOOT:
        return "partial" if value >= partial else "no"
    return "yes" if value >= yes else "partial" if value >= partial else "no"


def readings(frame: pd.DataFrame) -> pd.DataFrame:
    """The five axes as yes/partial/no next to the numbers they are read from."""
    rows = []
    for _, row in frame.iterrows():
        record = {"strategy": row["strategy"]}
        for axis in AXES:
            column = THRESHOLDS[axis][0]
            record[axis] = f"{reading(axis, row)} ({_fmt(row[column])})"
        rows.append(record)
    return pd.DataFrame(rows)


def thresholds_table() -> pd.DataFrame:
    """The reading rules, for display next to the readings."""
    return pd.DataFrame([
        {"axis": axis, "measure": column, "yes": f">= {yes}", "partial": f">= {partial}",
         "no": f"< {partial}"}
        for axis, (column, yes, partial) in THRESHOLDS.items()
    ])


def panorama_numbers(frame: pd.DataFrame) -> dict:
    """The panorama as plain JSON-ready values, one entry per strategy."""
    numeric = frame.drop(columns=["family", "description"]).set_index("strategy")
    return {
        name: {k: (None if missing(v) else v) for k, v in row.items()}
        for name, row in numeric.astype(object).to_dict("index").items()
    }


def _fmt(value) -> str:
    return "n/a" if missing(value) else f"{value:.3f}"


def page_outline(doc: Document) -> pd.DataFrame:
    """The page's top-level blocks: kind, heading level and title (fence language), length."""
    return pd.DataFrame([
        {"kind": b.kind, "level": b.level or "", "title": b.title, "chars": b.end - b.start,
         "first_line": doc.text[b.start:b.end].split("\n", 1)[0][:80]}
        for b in doc.blocks
    ], columns=["kind", "level", "title", "chars", "first_line"])


def export_panorama(out_dir, frame: pd.DataFrame, *, doc: Document, size: int,
                    unit: str = "chars") -> list:
    """Write panorama.csv and splitter_panorama.json (the document, size and every
    strategy's numbers) under ``out_dir/splitter_panorama/``; returns the paths."""
    folder = Path(out_dir) / "splitter_panorama"
    numbers = {"doc": doc.id, "size": size, "unit": unit,
               "strategies": panorama_numbers(frame)}
    return [
        write_text_atomic(folder / "panorama.csv", csv_text(frame)),
        write_text_atomic(folder / "splitter_panorama.json", json.dumps(numbers, indent=2)),
    ]
