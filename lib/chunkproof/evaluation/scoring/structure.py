"""Heading detection scored against hand-marked gold, stratified samples, routing by provenance."""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
import yaml

from ...document.headings import EXPLICIT, INFERRED
from ...errors import ConfigError, GoldValidationError, MetricError

SOURCES = ("explicit", "inferred", "mixed", "none")
PROVENANCES = (*EXPLICIT, *INFERRED)
GOLD_FIELDS = ("line", "level", "text")
GOLD_FILE = "headings.gold.yaml"
"""The gold file's name inside a corpus folder (``chunkproof report`` uses it when present)."""


@dataclass(frozen=True, slots=True)
class GoldHeading:
    """One heading a person marked as true."""

    line: int
    """1-based line of the heading text (for setext, the line above the underline)."""
    level: int
    text: str

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class PredictedHeading:
    """One heading the parser would cut at, and how it was found."""

    line: int
    """1-based line where the heading block starts (for setext, the text line)."""
    level: int
    text: str
    provenance: str

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class DocumentScore:
    """Gold against predicted headings on one document."""

    doc_id: str
    structure_source: str
    """The document's structure source under the loader settings used for prediction."""
    tp: int
    fp: int
    fn: int
    found: tuple[PredictedHeading, ...]
    """True positives, with the provenance that found them."""
    false_boundaries: tuple[PredictedHeading, ...]
    """Predicted headings that are not in the gold set: cuts at lines that are not headings."""
    missed: tuple[GoldHeading, ...]
    """Gold headings that were not predicted: sections merged into their neighbour."""
    match_level: bool = False
    """Whether a predicted heading also had to have the gold level to count."""

    @property
    def fully_correct(self) -> bool:
        """The predicted set equals the gold set (two empty sets are equal)."""
        return self.fp == 0 and self.fn == 0

    def as_dict(self) -> dict:
        return {**asdict(self), "fully_correct": self.fully_correct}


@dataclass(frozen=True, slots=True)
class HeadingScore:
    """Detection rates of one group of documents (or of one heading provenance)."""

    group: str
    """``overall``, ``structure_source`` or ``provenance``."""
    key: str
    """``all``, a structure source (explicit, inferred, mixed, none) or a provenance kind."""
    documents: int
    tp: int
    fp: int
    fn: int | None
    """None for a provenance row: a missed heading has no provenance."""
    precision: float | None
    """tp / (tp + fp); None when nothing was predicted."""
    recall: float | None
    """tp / (tp + fn); None when there is nothing to find (or for a provenance row)."""
    pages_fully_correct: float | None
    """Share of documents whose predicted set equals the gold set (None for provenance rows)."""
    match_level: bool

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class DocumentErrors:
    """What was wrong on one document: false boundaries and missed headings."""

    doc_id: str
    structure_source: str
    false_boundaries: tuple[PredictedHeading, ...]
    missed: tuple[GoldHeading, ...]

    def as_dict(self) -> dict:
        return asdict(self)


# --- gold ---------------------------------------------------------------------------------


def load_gold(path: str | os.PathLike) -> dict[str, list[GoldHeading]]:
    """Read ``doc_id: [{line, level, text}, ...]``; every bad entry is listed in one error."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise GoldValidationError(str(path), [f"cannot read: {err}"]) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise GoldValidationError(
            str(path), [f"must map document ids to lists of headings (got {type(data).__name__})"]
        )
    problems: list[str] = []
    gold = {str(doc): _gold_list(str(doc), entries, problems) for doc, entries in data.items()}
    if problems:
        raise GoldValidationError(str(path), problems)
    return gold


def gold_draft(documents: Iterable) -> str:
    """The headings the detector finds in ``documents``, written as a gold file (the format
    ``load_gold`` reads, one flow mapping per heading, ``[]`` for none): a start for marking
    the true headings by hand, never a gold file as it stands."""
    lines = []
    for doc in documents:
        key = doc.id if re.fullmatch(r"[\w./-]+", doc.id) else json.dumps(doc.id)
        found = predicted_headings(doc)
        lines.append(f"{key}:" if found else f"{key}: []")
        lines += [f"  - {{line: {h.line}, level: {h.level}, "
                  f"text: {json.dumps(h.text, ensure_ascii=False)}}}" for h in found]
    return "\n".join(lines) + "\n"


def _gold_list(doc_id: str, entries, problems: list[str]) -> list[GoldHeading]:
    if not isinstance(entries, list):
        problems.append(f"{doc_id}: must be a list of headings, [] for none (got {entries!r})")
        return []
    parsed = (_gold_entry(f"{doc_id}[{i}]", entry, problems) for i, entry in enumerate(entries))
    headings = [h for h in parsed if h is not None]
    seen: set[int] = set()
    for heading in headings:
        if heading.line in seen:
            problems.append(f"{doc_id}: line {heading.line} is marked twice")
        seen.add(heading.line)
    return sorted(headings, key=lambda h: h.line)


def _gold_entry(where: str, entry, problems: list[str]) -> GoldHeading | None:
    if not isinstance(entry, dict):
        problems.append(f"{where}: must be a mapping with {', '.join(GOLD_FIELDS)} (got {entry!r})")
        return None
    found = len(problems)
    unknown = sorted(str(k) for k in entry if k not in GOLD_FIELDS)
    missing = [k for k in GOLD_FIELDS if k not in entry]
    if unknown:
        problems.append(f"{where}: unknown field(s) {', '.join(unknown)}")
    if missing:
        problems.append(f"{where}: missing field(s) {', '.join(missing)}")
    line, level, text = (entry.get(k) for k in GOLD_FIELDS)
    line_ok = _is_int(line) and line >= 1  # type: ignore[operator]
    level_ok = _is_int(level) and 1 <= level <= 6  # type: ignore[operator]
    if "line" in entry and not line_ok:
        problems.append(f"{where}: line must be an integer >= 1 (got {line!r})")
    if "level" in entry and not level_ok:
        problems.append(f"{where}: level must be an integer from 1 to 6 (got {level!r})")
    if "text" in entry and not isinstance(text, str):
        problems.append(f"{where}: text must be a string (got {text!r})")
    if len(problems) != found:
        return None
    assert isinstance(line, int) and isinstance(level, int) and isinstance(text, str)
    return GoldHeading(line, level, text)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- scoring ------------------------------------------------------------------------------


def predicted_headings(doc) -> list[PredictedHeading]:
    """The headings of ``doc.blocks``, each at the 1-based line where its block starts."""
    lines = doc.lines
    return [
        PredictedHeading(lines.line_of(b.start), b.level, b.title, b.provenance)
        for b in doc.blocks
        if b.is_heading
    ]


def score_document(doc, gold: list[GoldHeading], *, match_level: bool = False) -> DocumentScore:
    """tp, fp and fn of one document, on sets of heading lines (or of (line, level) pairs)."""

    def key(heading):
        return (heading.line, heading.level) if match_level else heading.line

    predicted = predicted_headings(doc)
    gold_keys = {key(h) for h in gold}
    predicted_keys = {key(h) for h in predicted}
    found = tuple(h for h in predicted if key(h) in gold_keys)
    false = tuple(h for h in predicted if key(h) not in gold_keys)
    missed = tuple(h for h in gold if key(h) not in predicted_keys)
    return DocumentScore(
        doc.id,
        doc.structure_source,
        len(found),
        len(false),
        len(missed),
        found,
        false,
        missed,
        match_level,
    )


def score_documents(
    documents: Iterable, gold: dict[str, list[GoldHeading]], *, match_level: bool = False
) -> list[DocumentScore]:
    """One DocumentScore per document; every document must have a gold entry."""
    documents = list(documents)
    unmarked = [d.id for d in documents if d.id not in gold]
    if unmarked:
        raise MetricError(
            f"{len(unmarked)} document(s) have no gold headings: {', '.join(unmarked)}; "
            "mark them ([] for none) or score only the marked ones"
        )
    return [score_document(d, gold[d.id], match_level=match_level) for d in documents]


def group_rates(scores: list[DocumentScore]) -> list[HeadingScore]:
    """Overall, per structure source and per heading provenance rates of scored documents."""
    match_level = any(s.match_level for s in scores)
    rows = [_group_score("overall", "all", scores, match_level)]
    for source in in_order({s.structure_source for s in scores}, SOURCES):
        members = [s for s in scores if s.structure_source == source]
        rows.append(_group_score("structure_source", source, members, match_level))
    kinds = {h.provenance for s in scores for h in (*s.found, *s.false_boundaries)}
    rows += [_provenance_score(kind, scores, match_level) for kind in in_order(kinds, PROVENANCES)]
    return rows


def score_headings(
    documents: Iterable, gold: dict[str, list[GoldHeading]], *, match_level: bool = False
) -> list[HeadingScore]:
    """Score heading detection on ``documents`` against ``gold`` and summarise it."""
    scores = score_documents(documents, gold, match_level=match_level)
    return group_rates(scores)


def score_table(
    documents: Iterable, gold: dict[str, list[GoldHeading]], *, match_level: bool = False
) -> pd.DataFrame:
    """``score_headings`` as a pandas DataFrame (one row per group)."""
    rows = score_headings(documents, gold, match_level=match_level)
    return pd.DataFrame([row.as_dict() for row in rows])


def errors_by_document(
    documents: Iterable, gold: dict[str, list[GoldHeading]], *, match_level: bool = False
) -> list[DocumentErrors]:
    """The documents that are not fully correct, with their false boundaries and misses."""
    scores = score_documents(documents, gold, match_level=match_level)
    return [
        DocumentErrors(s.doc_id, s.structure_source, s.false_boundaries, s.missed)
        for s in scores
        if not s.fully_correct
    ]


def _rate(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def in_order(found: set[str], order: tuple[str, ...]) -> list[str]:
    """``found`` in the given order, anything unforeseen after it, sorted."""
    return [k for k in order if k in found] + sorted(found - set(order))


def _group_score(group: str, key: str, scores: list[DocumentScore], match_level: bool):
    tp, fp, fn = (sum(getattr(s, f) for s in scores) for f in ("tp", "fp", "fn"))
    clean = sum(s.fully_correct for s in scores)
    return HeadingScore(
        group,
        key,
        len(scores),
        tp,
        fp,
        fn,
        _rate(tp, tp + fp),
        _rate(tp, tp + fn),
        _rate(clean, len(scores)),
        match_level,
    )


def _provenance_score(kind: str, scores: list[DocumentScore], match_level: bool):
    tp = sum(h.provenance == kind for s in scores for h in s.found)
    fp = sum(h.provenance == kind for s in scores for h in s.false_boundaries)
    documents = sum(
        any(h.provenance == kind for h in (*s.found, *s.false_boundaries)) for s in scores
    )
    return HeadingScore(
        "provenance", kind, documents, tp, fp, None, _rate(tp, tp + fp), None, None, match_level
    )


# --- sampling and routing -----------------------------------------------------------------


def stratified_sample(corpus: Iterable, quota_per_source: int, *, seed: int = 0) -> list:
    """Up to ``quota_per_source`` documents of each structure source, in corpus order.

    Each source is drawn with its own ``random.Random(seed)`` from its documents sorted by
    id, so a source's sample depends only on the seed and that source's documents. A source
    with fewer documents than the quota is taken whole.
    """
    if not _is_int(quota_per_source) or quota_per_source < 1:
        raise ConfigError(f"quota_per_source must be an integer >= 1 (got {quota_per_source!r})")
    documents = list(corpus)
    chosen: set[str] = set()
    for source in in_order({d.structure_source for d in documents}, SOURCES):
        ids = sorted(d.id for d in documents if d.structure_source == source)
        if len(ids) > quota_per_source:
            ids = random.Random(seed).sample(ids, quota_per_source)
        chosen.update(ids)
    return [d for d in documents if d.id in chosen]
