"""Notebook 01, the corpus profile: documents, heading provenance and depth, section lengths,
skipped files, the load's warnings and the query mix."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..chunking.section_lengths import CEILING_PERCENTILE, length_stats
from ..chunking.sizes import encoder_window
from ..document.blocks import ATOMIC
from ..document.corpus import Corpus
from ..document.dialect_profile import construct_counts, constructs
from ..document.headings import EXPLICIT
from ..evaluation.queries.queries import Query
from ..evaluation.run import tables
from ..util.atomic import write_text_atomic
from ..util.sheets import csv_text
from ..util.values import missing
from .params import (
    CorpusFolder,
    NotebookParams,
    OutputFolder,
    QueryFile,
    load_corpus_param,
    load_queries_param,
)
from .params import validate as validate_params


class ProfileParams(NotebookParams):
    """Notebook 01's parameters."""

    CORPUS: CorpusFolder
    QUERIES: QueryFile
    OUT_DIR: OutputFolder


@dataclass(frozen=True, slots=True)
class ProfileSetup:
    """Notebook 01's parameters, checked and loaded."""

    corpus: Corpus
    queries: list[Query]
    out_dir: Path

    def describe(self) -> str:
        return (f"{len(self.corpus)} documents, {len(self.corpus.skipped)} skipped (files "
                f"over {self.corpus.max_file_bytes / 2**20:g} MiB among them), from "
                f"{self.corpus.root}; {len(self.queries)} queries; corpus fingerprint "
                f"{self.corpus.fingerprint}; export to {self.out_dir}")


def validate(**params: object) -> ProfileSetup:
    """Check notebook 01's parameters and load what they name (errors name the parameter)."""
    checked = validate_params(ProfileParams, **params)
    corpus = load_corpus_param(checked.CORPUS)
    return ProfileSetup(corpus, load_queries_param(checked.QUERIES, corpus),
                        Path(checked.OUT_DIR))


COUNTED_BLOCKS = {"fence": "fences", "code": "indented_code", "table": "tables",
                  "list": "lists", "html": "html_blocks"}


def documents_table(corpus: Corpus) -> pd.DataFrame:
    """One row per document: size, headings, where they came from, front matter, code, tables
    (fences, code blocks and tables nested in lists, quotes and containers counted too)."""
    rows = []
    for doc in corpus:
        kinds = Counter(b.kind for b in doc.blocks if b.kind not in ATOMIC)
        kinds.update(a.kind for a in doc.atoms)  # every fence, code block and table
        rows.append({
            "doc_id": doc.id, "title": doc.title, "chars": len(doc.text),
            "lines": doc.text.count("\n") + 1, "headings": kinds["heading"],
            "structure_source": doc.structure_source,
            "front_matter_keys": ", ".join(sorted(map(str, doc.front_matter))),
            **{column: kinds[kind] for kind, column in COUNTED_BLOCKS.items()},
        })
    return pd.DataFrame(rows, columns=["doc_id", "title", "chars", "lines", "headings",
                                       "structure_source", "front_matter_keys",
                                       *COUNTED_BLOCKS.values()])


def headings_table(corpus: Corpus) -> pd.DataFrame:
    """One row per heading: document, level, title, provenance, explicit or inferred."""
    rows = [
        {"doc_id": doc.id, "level": b.level, "title": b.title, "provenance": b.provenance,
         "explicit": b.provenance in EXPLICIT}
        for doc in corpus for b in doc.blocks if b.is_heading
    ]
    return pd.DataFrame(rows, columns=["doc_id", "level", "title", "provenance", "explicit"])


def provenance_mix(corpus: Corpus) -> pd.DataFrame:
    """Headings and documents per heading provenance (how each heading was found)."""
    headings = headings_table(corpus)
    if headings.empty:
        return pd.DataFrame(columns=["provenance", "explicit", "headings", "share", "documents"])
    mix = headings.groupby(["provenance", "explicit"]).agg(
        headings=("level", "size"), documents=("doc_id", "nunique")).reset_index()
    mix.insert(3, "share", mix["headings"] / mix["headings"].sum())
    return mix.sort_values("headings", ascending=False, ignore_index=True)


def structure_mix(corpus: Corpus) -> pd.DataFrame:
    """Documents per document-level structure source (explicit, inferred, mixed, none)."""
    counts = Counter(doc.structure_source for doc in corpus)
    frame = pd.DataFrame(sorted(counts.items()), columns=["structure_source", "documents"])
    frame["share"] = frame["documents"] / max(len(corpus), 1)
    return frame


def heading_depths(corpus: Corpus) -> pd.DataFrame:
    """Heading count per depth (1-6) and provenance."""
    headings = headings_table(corpus)
    return (headings.groupby(["level", "provenance"]).size().rename("headings").reset_index()
            if not headings.empty else pd.DataFrame(columns=["level", "provenance", "headings"]))


def block_totals(corpus: Corpus) -> pd.DataFrame:
    """Blocks of each kind over the corpus, and how many documents hold one."""
    rows: Counter[str] = Counter()
    holders: Counter[str] = Counter()
    for doc in corpus:
        kinds = Counter(b.kind for b in doc.blocks)
        rows.update(kinds)
        holders.update(kinds.keys())
    frame = pd.DataFrame([{"kind": k, "blocks": n, "documents": holders[k]}
                          for k, n in rows.items()], columns=["kind", "blocks", "documents"])
    return frame.sort_values("blocks", ascending=False, ignore_index=True)


DIALECT_COLUMNS = ["dialect", "construct", "known", "count", "documents", "example_doc",
                   "example_line", "example"]


def dialects_table(corpus: Corpus) -> pd.DataFrame:
    """One row per documentation-dialect construct found (admonitions, tabs, directives,
    components, alerts, import/export lines, targets), known or not, and per kind of markup no
    rule reads (``dialect`` unknown: template shortcodes and tags, reST directives), with how
    many, in how many documents and a first example line."""
    found = [item for doc in corpus for item in constructs(doc)]
    return pd.DataFrame(construct_counts(found), columns=DIALECT_COLUMNS)


def skipped_table(corpus: Corpus) -> pd.DataFrame:
    """Files the loader could not read, with the reason (empty when every file loaded)."""
    return pd.DataFrame([s.as_dict() for s in corpus.skipped], columns=["path", "reason"])


def warnings_table(corpus: Corpus) -> pd.DataFrame:
    """What the load did other than read a file as marked up, one row each (the columns of
    document_warnings.csv; empty when it read every file as marked up)."""
    return tables.DOCUMENT_WARNINGS.frame(corpus.warning_rows())


def query_mix(queries, corpus: Corpus) -> pd.DataFrame:
    """Queries per kind: how many, how many carry an answer span, documents they point to."""
    known = {doc.id for doc in corpus}
    rows = [{"kind": q.kind, "has_answer": q.answer is not None, "source": q.sources[0],
             "known_source": all(s in known for s in q.sources)} for q in queries]
    frame = pd.DataFrame(rows, columns=["kind", "has_answer", "source", "known_source"])
    return frame.groupby("kind").agg(
        queries=("source", "size"), with_answer=("has_answer", "sum"),
        documents=("source", "nunique"), unknown_source=("known_source", lambda s: int((~s).sum())),
    ).reset_index().sort_values("queries", ascending=False, ignore_index=True)


def profile_numbers(corpus: Corpus, sections: pd.DataFrame, *,
                window: int | None = None) -> dict:
    """The profile's headline figures as plain JSON-ready values (``window``: the encoder
    window, None: ``sizes.encoder_window``)."""
    window = window or encoder_window()
    stats = length_stats(sections, window=window).set_index("unit")
    docs = documents_table(corpus)
    return {
        "fingerprint": corpus.fingerprint, "documents": len(corpus),
        "skipped": len(corpus.skipped), "max_file_bytes": corpus.max_file_bytes,
        "headings": int(docs["headings"].sum()),
        "fences": int(docs["fences"].sum()), "tables": int(docs["tables"].sum()),
        "sections": len(sections), "encoder_window": window,
        "token_method": stats.loc["tokens", "method"],
        "median_tokens": _plain(stats.loc["tokens", "median"]),
        f"p{CEILING_PERCENTILE}_tokens": _plain(stats.loc["tokens", f"p{CEILING_PERCENTILE}"]),
        "max_tokens": _plain(stats.loc["tokens", "max"]),
        "over_window": int(stats.loc["tokens", "over_window"] or 0),
        "over_window_share": _plain(stats.loc["tokens", "over_window_share"]),
        "structure_sources": dict(Counter(doc.structure_source for doc in corpus)),
        "warnings": dict(Counter(warning.kind for _, warning in corpus.warnings())),
        **_dialect_numbers(dialects_table(corpus)),
    }


def _dialect_numbers(dialects: pd.DataFrame) -> dict:
    """Constructs per dialect, and those not understood (unknown markup or names)."""
    return {
        "dialect_constructs": {str(k): int(v) for k, v
                               in dialects.groupby("dialect")["count"].sum().items()
                               if k != "unknown"},
        "not_understood": int(dialects.loc[~dialects["known"].astype(bool), "count"].sum()),
    }


def _plain(value) -> float | None:
    return None if missing(value) else round(float(value), 4)


def export_profile(out_dir, corpus: Corpus, sections: pd.DataFrame) -> list:
    """Write documents.csv, sections.csv, dialects.csv and corpus_profile.json (key numbers) under
    ``out_dir/corpus_profile/``, each atomically; returns the paths."""
    folder = Path(out_dir) / "corpus_profile"
    return [
        write_text_atomic(folder / "documents.csv", csv_text(documents_table(corpus))),
        write_text_atomic(folder / "sections.csv", csv_text(sections)),
        write_text_atomic(folder / "dialects.csv", csv_text(dialects_table(corpus))),
        write_text_atomic(folder / "corpus_profile.json",
                          json.dumps(profile_numbers(corpus, sections), indent=2)),
    ]
