"""Queries mined from a corpus, each with the sections that answer it: document titles (the
lead section), section headings and API symbols (the section the heading opens, or the one
holding a definition list or option table), and body sentences (their section), with what
was dropped and why, and how many queries each source gave."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TypedDict

from ...chunking.sentences import sentence_spans
from ...document.inline import plain_text
from ...document.sections import Sections
from ...document.terms import defined_terms
from ...errors import QueryValidationError, SegmenterError
from .queries import MAX_SOURCES, MINED_KINDS, GoldSpan, Query, documents_by_id
from .query_text import (
    heading_text,
    is_navigational,
    junk_reason,
    key,
    only_symbols,
    symbol_key,
    symbols,
)

BODY_WORDS = (6, 30)
"""A body query is the first sentence of a section's first paragraph with this many words
(inclusive): shorter ones ask nothing, longer ones are paragraphs."""
_SPACE = {"title": "text", "section": "text", "symbol": "symbol", "body": "body"}
"""Kinds sharing a space share gold: a title and a heading with the same text are one topic."""
TOO_MANY = "too many gold documents"
NAVIGATIONAL_HEADING = "navigational heading"


class DroppedQueries(TypedDict):
    """run.json ``queries_dropped``: mined queries left out, why, how many for each reason,
    and a few of them."""

    count: int
    reason: str
    examples: list[str]
    by_reason: dict[str, int]


class _Miner:
    """Collects mined texts in first-seen order with every document and gold span defining
    them, where each was first found, and the texts dropped as junk."""

    def __init__(self) -> None:
        self.texts: dict[str, dict[str, str]] = {kind: {} for kind in MINED_KINDS}
        self.where: dict[tuple[str, str], list[str]] = {}
        self.spans: dict[tuple[str, str], list[GoldSpan]] = {}
        self.origin: dict[tuple[str, str], str] = {}
        self.junk: dict[str, list[str]] = {}

    def drop(self, reason: str, text: str) -> None:
        texts = self.junk.setdefault(reason, [])
        if text not in texts:
            texts.append(text)

    def add(self, kind: str, text: str, span: GoldSpan, origin: str) -> None:
        reason = junk_reason(text)
        if reason:
            self.drop(reason, text)
            return
        found = symbol_key(text) if kind == "symbol" else key(text)
        if not found:  # punctuation only: nothing to search for
            self.drop("too short", text)
            return
        place = (_SPACE[kind], found)
        docs = self.where.setdefault(place, [])
        if span.doc not in docs:
            docs.append(span.doc)
        spans = self.spans.setdefault(place, [])
        if span not in spans:
            spans.append(span)
        self.texts[kind].setdefault(found, text)
        self.origin.setdefault((kind, found), origin)

    def queries(self) -> tuple[list[Query], dict[str, str]]:
        """The queries, numbered per kind, and where each was first found (id -> source)."""
        titles = self.texts["title"]
        result, origins = [], {}
        for kind in MINED_KINDS:
            keys = [k for k in self.texts[kind] if kind != "section" or k not in titles]
            for number, found in enumerate(keys, start=1):
                place = (_SPACE[kind], found)
                query = Query(id=f"mined-{kind}-{number:04d}", query=self.texts[kind][found],
                              sources=tuple(self.where[place]), kind=kind,
                              gold_spans=tuple(self.spans[place]))
                result.append(query)
                origins[query.id] = self.origin[(kind, found)]
        return result, origins


@dataclass(frozen=True, slots=True)
class Mined:
    """Queries mined from a corpus; those dropped for naming too many gold documents; texts
    dropped as no query (reason -> texts); where each kept query was first found."""

    queries: list[Query]
    dropped: list[Query]
    max_sources: int
    junk: dict[str, list[str]] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)

    def by_reason(self) -> dict[str, int]:
        counts = {reason: len(texts) for reason, texts in self.junk.items()}
        if self.dropped:
            counts[TOO_MANY] = len(self.dropped)
        return counts

    def reason(self) -> str:
        parts = []
        if self.dropped:
            widest = max(self.dropped, key=lambda q: len(q.sources))
            parts.append(f"{_count(len(self.dropped))} dropped: each names more than "
                         f"{self.max_sources} gold documents (widest: {widest.query!r} in "
                         f"{len(widest.sources)}), so any of many pages answers it")
        for reason, texts in sorted(self.junk.items()):
            parts.append(f"{_count(len(texts))} dropped as {reason} (e.g. {texts[0]!r})")
        return "; ".join(parts)

    def require(self, root: str) -> Mined:
        """Itself when it holds a query; QueryValidationError saying why none was mined."""
        if not self.queries:
            why = self.reason() or ("no document has a title, heading, API symbol or body "
                                    "sentence that a query could name")
            raise QueryValidationError(root, [f"no queries could be mined: {why}; write a "
                                              "query file instead (--queries)"])
        return self

    def report(self) -> DroppedQueries:
        """``{count, reason, examples, by_reason}`` for run.json."""
        counts = self.by_reason()
        examples = [f"{q.query} ({len(q.sources)} documents)" for q in self.dropped[:5]]
        examples += [f"{texts[0]} ({reason})" for reason, texts in sorted(self.junk.items())]
        return {"count": sum(counts.values()), "reason": self.reason(), "examples": examples,
                "by_reason": counts}

    def sources(self) -> dict[str, int]:
        """Kept queries per source they were first found in (title, section heading, heading
        code span, heading signature, heading identifier, definition list, table, body
        sentence), in that order."""
        counts = Counter(self.origins.values())
        return {name: counts[name] for name in ORIGINS if counts[name]}


ORIGINS = ("title", "section heading", "heading code span", "heading signature",
           "heading identifier", "definition list", "table", "body sentence", "keyword query",
           "partial query", "xref query", "identifier query")
"""Where a mined query was first found; the last four are the free kinds (``free_queries``)."""


def _count(n: int) -> str:
    return f"{n} mined quer{'y' if n == 1 else 'ies'}"


def mine(corpus, *, max_sources: int = MAX_SOURCES) -> Mined:
    """``mine_queries``, keeping what it drops (too many gold documents, file names, URLs,
    too short, navigational headings) and where each query came from, so a run can say how
    many and why."""
    miner = _Miner()
    for doc in documents_by_id(corpus).values():
        _mine_document(miner, doc)
    found, origins = miner.queries()
    keep = [q for q in found if len(q.sources) <= max_sources]
    dropped = [q for q in found if len(q.sources) > max_sources]
    return Mined(keep, dropped, max_sources, miner.junk,
                 {q.id: origins[q.id] for q in keep})


def mine_queries(corpus, *, max_sources: int = MAX_SOURCES) -> list[Query]:
    """One query per document title, section heading, API symbol (named in a heading, a
    definition list or a table's first column) and section body sentence.

    Gold sources are every document whose title or a heading has the same text (the same
    symbol, for symbol queries); gold spans are the sections: a title's lead section (the
    whole document when it has none), the section a heading opens (heading line to the next
    heading of the same or a shallower level), the section holding a defined term or a body
    sentence. A query with more than ``max_sources`` gold documents is dropped (see ``mine``),
    and so are file names, URLs and texts under a few characters. Navigational headings
    ("Overview", "See also", ...) are skipped; a heading that is nothing but symbols gives
    symbol queries only.
    """
    return mine(corpus, max_sources=max_sources).queries


def _mine_document(miner: _Miner, doc) -> None:
    sections = Sections(doc.blocks)
    title = _doc_title(doc)
    title_heading = _title_heading(doc, sections)
    lead = lead_span(doc, sections, title_heading)
    if title and not is_navigational(doc.title):
        miner.add("title", title, lead, "title")
    elif title:
        miner.drop(NAVIGATIONAL_HEADING, title)
    for heading in sections.headings:
        span = GoldSpan(doc.id, *sections.span(heading))
        _mine_heading(miner, heading, span, skip_text=heading is title_heading)
    terms = defined_terms(doc.text, doc.lines)
    for term in terms:
        span = _holding(doc, sections, term.offset, title_heading, lead)
        found = symbols(term.raw)
        if found and only_symbols(term.raw, found):
            for symbol, _where, _text in found:
                miner.add("symbol", symbol, span, term.where)
    _mine_bodies(miner, doc, sections, (title_heading, lead), {t.offset for t in terms})


def _holding(doc, sections: Sections, offset: int, title_heading, lead: GoldSpan) -> GoldSpan:
    """The innermost section holding ``offset`` (the lead, under the title heading)."""
    heading, start, end = sections.holding(offset)
    if heading is None or heading is title_heading:
        return lead
    return GoldSpan(doc.id, start, end)


def _title_heading(doc, sections: Sections):
    """The first heading when it is the level-1 heading the document's title repeats."""
    first = sections.headings[0] if sections.headings else None
    if first is not None and first.level == 1 and key(first.title) == key(doc.title):
        return first
    return None


def lead_span(doc, sections: Sections, title_heading=None) -> GoldSpan:
    """A title's gold: the lead section, from the title heading (or the first block) up to
    the first heading below it; the whole document (scope ``document``) when the lead holds
    no content or no heading follows the title."""
    headings = [h for h in sections.headings if h is not title_heading]
    whole = GoldSpan(doc.id, sections.begin, max(sections.end, sections.begin + 1), "document")
    if not headings:
        return whole
    start = title_heading.start if title_heading is not None else sections.begin
    end = sections.ended_by(headings[0].start)
    if end <= start or not sections.has_body(start, end):
        return whole
    return GoldSpan(doc.id, start, end, "lead")


def _doc_title(doc) -> str:
    """The title as query text; a file-stem fallback ``q2-notes`` reads ``q2 notes``."""
    if doc.title == PurePosixPath(doc.id).stem:
        return " ".join(doc.title.replace("_", " ").replace("-", " ").split())
    return heading_text(doc.title)


def _mine_heading(miner: _Miner, heading, span: GoldSpan, *, skip_text: bool) -> None:
    """Symbols of the heading as written (code spans kept in ``raw_title``), then its plain
    text (``title``, inline Markdown rendered) as a section query."""
    raw = heading.raw_title or heading.title
    found = symbols(raw)
    for symbol, where, _text in found:
        miner.add("symbol", symbol, span, where)
    text = heading_text(heading.title)
    if skip_text or not text or (found and only_symbols(raw, found)):
        return
    if is_navigational(text):
        miner.drop(NAVIGATIONAL_HEADING, text)
        return
    miner.add("section", text, span, "section heading")


def _mine_bodies(miner: _Miner, doc, sections: Sections, title: tuple,
                 terms: set[int]) -> None:
    """A body query per section: the first sentence of its first top-level paragraph with
    ``BODY_WORDS`` words, rendered as plain text; its gold is that section. A paragraph
    holding a definition-list term (``terms``: where their lines start) is a definition list,
    not prose."""
    used: set[tuple[int, int]] = set()
    for block in doc.blocks:
        if block.kind != "paragraph" or any(block.start <= t < block.end for t in terms):
            continue
        span = _holding(doc, sections, block.start, *title)
        if (span.start, span.end) in used:
            continue
        sentence = _sentence(doc, block)
        if sentence:
            used.add((span.start, span.end))
            miner.add("body", sentence, span, "body sentence")


def _sentence(doc, block) -> str | None:
    try:
        spans = sentence_spans(doc.text, block.start, block.end)
    except SegmenterError:  # no native sentence breaker on this platform: no body queries
        return None
    low, high = BODY_WORDS
    for start, end in spans:
        text = plain_text(doc.text[start:end], doc.references)
        if low <= len(text.split()) <= high and not junk_reason(text):
            return text
    return None
