"""Notebook 04, the chunk explorer: its parameters, the documents it draws as static views,
and the views it saves."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator

from ..chunking.build import chunk_document
from ..chunking.config import ChunkerConfig, make_config
from ..chunking.registry import strategy_names
from ..document.corpus import Corpus, Document
from ..document.sections import Breadcrumbs
from ..evaluation.queries.queries import Query
from ..evaluation.scoring.invariants import block_weight
from ..viz.boundaries import BoundaryView, _View, find_document
from ..viz.budget import PAGE_BUDGET, Boxed, Budgeted, share
from ..viz.positions import Positions
from ..viz.side_by_side import SideBySide
from .params import (
    CorpusFolder,
    Flag,
    NotebookParams,
    OptionalOutput,
    PositiveInt,
    QueryFile,
    SlugRuleName,
    StrategyName,
    TextsOrNone,
    load_corpus_param,
    load_queries_param,
    one_of,
    parameter,
)
from .params import validate as validate_params

_one_strategy = one_of(strategy_names)


def _optional_strategy(value: Any) -> str:
    return "" if value == "" else _one_strategy(value)


def heading_depth(doc: Document) -> int:
    """The deepest heading path of ``doc`` (skipped levels do not count; 0 with no heading)."""
    return max(map(len, Breadcrumbs(doc.blocks).paths))


def representative_documents(corpus: Corpus) -> list[str]:
    """Up to three document ids worth a static view, each pick skipping the ones already
    made: the page with the most fences and tables (``invariants.block_weight``), the longest,
    and the one with the deepest heading nesting (none when no document has a heading).
    Ties go to the first id, so the picks are the same on every run."""
    picks: list[str] = []
    for key, wanted in ((block_weight, lambda d: True),
                        (lambda d: (-len(d.text), d.id), lambda d: True),
                        (lambda d: (-heading_depth(d), d.id), lambda d: heading_depth(d) > 0)):
        left = [d for d in corpus if d.id not in picks and wanted(d)]
        if left:
            picks.append(min(left, key=key).id)
    return picks


class ExplorerParams(NotebookParams):
    """Notebook 04's parameters."""

    CORPUS: CorpusFolder
    QUERIES: QueryFile
    STRATEGY: StrategyName
    SIZE: PositiveInt
    VS_STRATEGY: Annotated[str, BeforeValidator(_optional_strategy)]
    PRESET_DOCS: TextsOrNone
    OUT_DIR: OptionalOutput
    SHARE_TEXT: Flag = True
    SLUG_RULE: SlugRuleName = "github"
    URL_TEMPLATE: str = ""


@dataclass(frozen=True, slots=True)
class ExplorerSetup:
    """Notebook 04's parameters, validated into the objects its cells use."""

    corpus: Corpus
    queries: list[Query]
    config: ChunkerConfig
    vs_config: ChunkerConfig | None
    """None when no comparison strategy is given."""
    docs: list[str]
    out_dir: Path | None
    picked: bool = False
    """True when ``docs`` were chosen by ``representative_documents`` (PRESET_DOCS empty)."""
    share_text: bool = True
    """False: the views give boundary positions and counts, never the document's text."""

    @property
    def view_bytes(self) -> int:
        """Bytes each view shown in the notebook may take: the page budget shared by the
        shown views and the explorer, which counts twice (its output and its widget
        state)."""
        return share(len(self.docs) + 2)

    def how_to_see(self, doc_id: str, vs: bool = False) -> str:
        """The command that draws ``doc_id``'s view whole, as a page of its own."""
        other = f" --vs {self.vs_config.strategy}" if vs and self.vs_config else ""
        return (f"chunkproof view --corpus {self.corpus.root} --doc {doc_id} --strategy "
                f"{self.config.strategy} --size {self.config.size}{other} --out view.html")

    @property
    def first_doc(self) -> str:
        return self.docs[0] if self.docs else self.corpus.documents[0].id

    def describe(self) -> str:
        vs = self.vs_config.strategy if self.vs_config else "none"
        how = " (PRESET_DOCS is empty: picked as the page with most fences and tables, the " \
              "longest, the deepest heading nesting)" if self.picked else ""
        return (f"{len(self.corpus)} documents from {self.corpus.root}, {len(self.queries)} "
                f"queries, {self.config.strategy} at {self.config.size} {self.config.unit} "
                f"vs {vs}; preset documents: {', '.join(self.docs) or 'none'}{how}"
                + ("" if self.share_text else "; document text left out (SHARE_TEXT is "
                   "False): boundary positions and counts only"))


def validate(**params: Any) -> ExplorerSetup:
    """Check notebook 04's parameters and load what they name (errors name the parameter);
    an empty PRESET_DOCS picks ``representative_documents``."""
    checked = validate_params(ExplorerParams, **params)
    with parameter("SIZE"):
        config = make_config(strategy=checked.STRATEGY, size=checked.SIZE)
    with parameter("URL_TEMPLATE"):
        config = config.replace(slug_rule=checked.SLUG_RULE, url_template=checked.URL_TEMPLATE)
    vs_config = config.replace(strategy=checked.VS_STRATEGY) if checked.VS_STRATEGY else None
    corpus = load_corpus_param(checked.CORPUS, nonempty=True)
    queries = load_queries_param(checked.QUERIES, corpus)
    with parameter("PRESET_DOCS"):
        docs = [find_document(corpus, d).id for d in checked.PRESET_DOCS]
    target = Path(checked.OUT_DIR) if checked.OUT_DIR else None
    picked = not docs
    return ExplorerSetup(corpus, queries, config, vs_config,
                         representative_documents(corpus) if picked else docs, target,
                         picked=picked, share_text=checked.SHARE_TEXT)


def slug(doc_id: str) -> str:
    """A file-name-safe form of a document id."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", doc_id.replace("/", "__"))


def static_views(setup: ExplorerSetup) -> dict[str, _View]:
    """For each preset document: its boundary view, and a side-by-side when comparing, each
    held to ``PAGE_BUDGET`` as a page of its own; without ``share_text``, one view of
    boundary positions and counts instead."""
    views: dict[str, _View] = {}
    for doc_id in setup.docs:
        doc = find_document(setup.corpus, doc_id)
        chunks = chunk_document(doc, setup.config)
        other = chunk_document(doc, setup.vs_config) if setup.vs_config else None
        name = f"{slug(doc_id)}.{setup.config.strategy}"
        if not setup.share_text:
            configs = [(setup.config, chunks)]
            if setup.vs_config is not None and other is not None:
                configs.append((setup.vs_config, other))
            views[f"{name}.positions"] = Positions(doc, configs)
            continue
        views[name] = Budgeted(BoundaryView(doc, chunks, setup.config), PAGE_BUDGET,
                               setup.how_to_see(doc_id))
        if setup.vs_config is not None and other is not None:
            side = SideBySide(doc, chunks, setup.config, other, setup.vs_config)
            views[f"{name}_vs_{setup.vs_config.strategy}"] = Budgeted(
                side, PAGE_BUDGET, setup.how_to_see(doc_id, vs=True))
    return views


def shown_views(setup: ExplorerSetup, views: dict[str, _View]) -> list[_View]:
    """What the notebook displays: one view per document, its text drawn once (the
    side-by-side when comparing, its left side being the boundary view), each held to its
    share of the page (``ExplorerSetup.view_bytes``) in a box of ``VIEW_HEIGHT`` pixels."""
    shown: list[_View] = []
    for view in views.values():
        if not isinstance(view, Budgeted):
            shown.append(Boxed(view))
        elif setup.vs_config is None or isinstance(view.view, SideBySide):
            shown.append(Boxed(Budgeted(view.view, setup.view_bytes, view.how)))
    return shown


def save_views(views: dict, out_dir: str | os.PathLike) -> list[Path]:
    """Write each view as ``<name>.html`` under ``out_dir``; returns the paths written."""
    return [view.save(Path(out_dir) / f"{name}.html") for name, view in views.items()]
