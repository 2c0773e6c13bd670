"""Queries mined from a corpus, each with the sections that answer it, with what was dropped
and why, and how many queries each source gave. Each document is read once (``reading``) and
each kind (``kinds``) chooses from that reading: document titles (the lead section), section
headings and API symbols (the section the heading opens, or the one holding a definition list
or option table), body sentences (their section), and the free kinds, each with an answer span:
keyword, partial, xref and identifier queries."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypedDict

from ...errors import QueryValidationError
from .kinds import FREE_KINDS, body, headings, identifier, keyword, partial, xref
from .kinds.found import MIN_TERMS, Found
from .queries import MAX_SOURCES, MINED_KINDS, GoldSpan, Query
from .query_terms import surface_tokens
from .query_text import junk_reason, key, symbol_key
from .reading import Reading, Site

_SPACE = {"title": "text", "section": "text", "symbol": "symbol", "body": "body"}
"""Kinds sharing a space share gold: a title and a heading with the same text are one topic."""
TOO_MANY = "too many gold documents"


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
"""Where a mined query was first found; the last four are the free kinds (``kinds.FREE``)."""


def _count(n: int) -> str:
    return f"{n} mined quer{'y' if n == 1 else 'ies'}"


def mine(corpus, *, max_sources: int = MAX_SOURCES) -> Mined:
    """``mine_queries``, keeping what it drops (too many gold documents, file names, URLs,
    too short, navigational headings) and where each query came from, so a run can say how
    many and why."""
    return _headed(Site(corpus), max_sources)


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


def mine_all(corpus, *, max_sources: int = MAX_SOURCES) -> Mined:
    """``mine`` with the free kinds added (each named where it was found), every document
    read once for both."""
    site = Site(corpus)
    mined = _headed(site, max_sources)
    free = _free(site, mined)
    origins = {**mined.origins, **{q.id: f"{q.kind} query" for q in free}}
    return Mined([*mined.queries, *free], mined.dropped, mined.max_sources, mined.junk, origins)


def free_queries(corpus, mined: Mined | None = None) -> list[Query]:
    """Every free query of ``corpus`` (``mined``: its mined queries, for the defined symbols)."""
    site = Site(corpus)
    return _free(site, mined or _headed(site, MAX_SOURCES))


def _headed(site: Site, max_sources: int) -> Mined:
    miner = _Miner()
    for reading in site.readings():
        for found in _headed_found(reading, site):
            if found.dropped:
                miner.drop(found.dropped, found.text)
            else:
                assert found.gold is not None
                miner.add(found.kind, found.text, found.gold, found.origin)
    queries, origins = miner.queries()
    keep = [q for q in queries if len(q.sources) <= max_sources]
    dropped = [q for q in queries if len(q.sources) > max_sources]
    return Mined(keep, dropped, max_sources, miner.junk, {q.id: origins[q.id] for q in keep})


def _free(site: Site, mined: Mined) -> list[Query]:
    site.symbols = defined_symbols(mined)
    collected = _Free()
    for reading in site.readings():
        for found in _free_found(reading, site):
            collected.add(found)
    return collected.queries()


def _headed_found(reading: Reading, site: Site) -> Iterator[Found]:
    """What the kinds sharing gold by text find in one document: its headings (title, section,
    symbol), then its body sentences."""
    yield from headings.heading_queries(reading, site)
    yield from body.body_queries(reading, site)


def _free_found(reading: Reading, site: Site) -> Iterator[Found]:
    """What the free kinds find in one document, each with an answer span."""
    yield from keyword.keyword_queries(reading, site)
    yield from partial.partial_queries(reading, site)
    yield from xref.xref_queries(reading, site)
    yield from identifier.identifier_queries(reading, site)


def defined_symbols(mined: Mined) -> dict[str, GoldSpan]:
    """Symbol (casefolded) -> the one section defining it, for symbols one section defines."""
    found = {}
    for query in mined.queries:
        if query.kind == "symbol" and len(query.gold_spans) == 1:
            found[query.query.casefold().removesuffix("()")] = query.gold_spans[0]
    return found


class _Free:
    """Collects free queries of every kind, numbered per kind in first-seen order; a text
    with fewer than ``MIN_TERMS`` terms, or seen before for its kind, is left out."""

    def __init__(self) -> None:
        self.found: dict[str, list[Query]] = {kind: [] for kind in FREE_KINDS}
        self.seen: set[tuple[str, str]] = set()

    def add(self, found: Found) -> None:
        text = " ".join(found.text.split())
        if junk_reason(text) or len(surface_tokens([text])[0]) < MIN_TERMS:
            return
        if (found.kind, text.casefold()) in self.seen:
            return
        assert found.answer is not None and found.gold is not None
        self.seen.add((found.kind, text.casefold()))
        number = len(self.found[found.kind]) + 1
        self.found[found.kind].append(Query(
            id=f"mined-{found.kind}-{number:04d}", query=text, sources=(found.gold.doc,),
            answer=found.answer.raw, kind=found.kind, gold_spans=(found.gold,)))

    def queries(self) -> list[Query]:
        return [q for kind in FREE_KINDS for q in self.found[kind]]
