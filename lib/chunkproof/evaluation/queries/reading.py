"""One reading of each document for mining: its sections and the heading paths in force, its
title's lead section, the terms it defines, its paragraphs split into sentences (as written
and as a reader sees them), and the text of its leaf sections; and of a site, every
document's reading, the rarity of each term across the site's sections and where a link
lands. Every mined kind chooses from these and reads nothing again."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from ...chunking.sentences import sentence_spans
from ...document.blocks import Block
from ...document.inline import plain_text
from ...document.sections import Breadcrumbs, Sections
from ...document.terms import Term, defined_terms
from ...errors import SegmenterError
from .queries import GoldSpan, documents_by_id
from .query_terms import Rarity, rarity, stem_set, terms
from .query_text import heading_text, key
from .question_check import valid_answer


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of a paragraph: its raw span and its text as a reader sees it."""

    start: int
    end: int
    raw: str
    plain: str


@dataclass(frozen=True, slots=True)
class Paragraph:
    """A paragraph block (top level, or nested in a list, quote or container) and its
    sentences (none when no sentence breaker is installed)."""

    block: Block
    top: bool
    """Whether the paragraph is a top-level block of its document."""
    sentences: tuple[Sentence, ...]


def paragraph_blocks(blocks, *, top: bool = True) -> Iterator[tuple[Block, bool]]:
    """(block, top level) of every paragraph, top level or nested, in document order."""
    for block in blocks:
        if block.kind == "paragraph":
            yield block, top
        elif block.children:
            yield from paragraph_blocks(block.children, top=False)


class Reading:
    """One document read once for mining."""

    def __init__(self, doc):
        self.doc = doc
        self.sections = Sections(doc.blocks)
        self.crumbs = Breadcrumbs(doc.blocks)
        first = self.sections.headings[0] if self.sections.headings else None
        self.title_heading = (first if first is not None and first.level == 1
                              and key(first.title) == key(doc.title) else None)
        """The first heading when it is the level-1 heading the document's title repeats."""
        self.lead = lead_span(doc, self.sections, self.title_heading)
        self._stems: dict[tuple[str, ...], frozenset[str]] = {}
        self._valid: dict[tuple[int, int], bool] = {}
        self._terms: dict[tuple[int, int], list[tuple[str, str]]] = {}

    @property
    def title(self) -> str:
        """The title as query text; a file-stem fallback ``q2-notes`` reads ``q2 notes``."""
        doc = self.doc
        if doc.title == PurePosixPath(doc.id).stem:
            return " ".join(doc.title.replace("_", " ").replace("-", " ").split())
        return heading_text(doc.title)

    @cached_property
    def defined(self) -> list[Term]:
        """The definition-list terms and table rows' first cells (``defined_terms``)."""
        return defined_terms(self.doc.text, self.doc.lines)

    @cached_property
    def paragraphs(self) -> list[Paragraph]:
        """Every paragraph with its sentences, in document order."""
        return [Paragraph(block, top, self._sentences(block))
                for block, top in paragraph_blocks(self.doc.blocks)]

    def _sentences(self, block) -> tuple[Sentence, ...]:
        doc = self.doc
        try:
            spans = sentence_spans(doc.text, block.start, block.end)
        except SegmenterError:
            return ()
        return tuple(Sentence(a, b, doc.text[a:b], plain_text(doc.text[a:b], doc.references))
                     for a, b in spans)

    @cached_property
    def leaf_texts(self) -> list[str]:
        """The text of each heading-to-heading stretch (its leaf sections)."""
        doc = self.doc
        cuts = [b.start for b in doc.blocks if b.is_heading]
        bounds = [0, *cuts, len(doc.text)]
        return [doc.text[a:b] for a, b in zip(bounds, bounds[1:], strict=False) if b > a]

    def holding(self, offset: int) -> GoldSpan:
        """The innermost section holding ``offset`` (the lead, under the title heading)."""
        heading, start, end = self.sections.holding(offset)
        if heading is None or heading is self.title_heading:
            return self.lead
        return GoldSpan(self.doc.id, start, end)

    def answers(self, sentence: Sentence) -> bool:
        """Whether the sentence is a valid answer span of the document (``valid_answer``)."""
        where = (sentence.start, sentence.end)
        if where not in self._valid:
            self._valid[where] = valid_answer(sentence.raw, self.doc)
        return self._valid[where]

    def sentence_terms(self, sentence: Sentence) -> list[tuple[str, str]]:
        """(surface word, stem) of each BM25 term of the sentence as a reader sees it."""
        where = (sentence.start, sentence.end)
        if where not in self._terms:
            self._terms[where] = terms(sentence.plain)
        return self._terms[where]

    def first_answer(self, start: int, end: int) -> Sentence | None:
        """The first sentence of a paragraph starting inside [start, end) that is a valid
        answer span."""
        for paragraph in self.paragraphs:
            if start <= paragraph.block.start < end:
                for sentence in paragraph.sentences:
                    if self.answers(sentence):
                        return sentence
        return None

    def path(self, offset: int) -> tuple[str, ...]:
        """The heading path in force at ``offset``: the document's title, then each heading."""
        return (self.doc.title, *self.crumbs.at(offset))

    def stems(self, offset: int) -> frozenset[str]:
        """The stems of the heading path in force at ``offset``."""
        return self._stems_of(self.path(offset))

    def span_stems(self, start: int, end: int) -> frozenset[str]:
        """The stems of every heading path in force inside [start, end): the path at ``start``
        and the titles of the headings within the span (a chunk of a subsection carries its
        heading too): the words any strategy's breadcrumb may inject there."""
        inner = tuple(h.title for h in self.sections.headings if start < h.start < end)
        return self._stems_of((*self.path(start), *inner))

    def _stems_of(self, titles: tuple[str, ...]) -> frozenset[str]:
        if titles not in self._stems:
            self._stems[titles] = stem_set(titles)
        return self._stems[titles]


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


class Site:
    """A corpus read once for mining: each document's reading (made when first asked for),
    the rarity of every term across the site's leaf sections, where a link lands, and the API
    symbols one section defines (``symbols``: filled from the mined symbol queries)."""

    def __init__(self, corpus):
        self.docs = documents_by_id(corpus)
        self._readings: dict[str, Reading] = {}
        self.symbols: dict[str, GoldSpan] = {}
        """Symbol (casefolded, ``()`` dropped) -> the one section defining it."""

    def reading(self, doc_id: str) -> Reading:
        if doc_id not in self._readings:
            self._readings[doc_id] = Reading(self.docs[doc_id])
        return self._readings[doc_id]

    def readings(self) -> Iterator[Reading]:
        """Every document's reading, in the corpus's order."""
        return (self.reading(doc_id) for doc_id in self.docs)

    @cached_property
    def rarity(self) -> Rarity:
        return rarity(text for reading in self.readings() for text in reading.leaf_texts)

    def resolve(self, source_id: str, href: str) -> tuple[str, str] | None:
        """(target document id, anchor) of a relative link from ``source_id`` into another
        document of the site, or None (external, same page, or no such document)."""
        return resolve_link(source_id, href, self.docs)

    def target(self, doc_id: str, anchor: str) -> GoldSpan | None:
        """The section a link names (the lead section without an anchor)."""
        reading = self.reading(doc_id)
        if not anchor:
            return lead_span(reading.doc, reading.sections)
        heading = anchored(reading.doc, anchor)
        return None if heading is None else GoldSpan(doc_id, *reading.sections.span(heading))


def resolve_link(source_id: str, href: str, docs: dict) -> tuple[str, str] | None:
    """(target document id, anchor) of a relative link from ``source_id`` into another
    document of ``docs``, or None (external, same page, or no such document)."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(source_id), unquote(parts.path)))
    stem = path.rstrip("/")
    for candidate in (path, f"{stem}.md", f"{stem}/index.md", f"{stem}/README.md"):
        if candidate in docs and candidate != source_id:
            return candidate, parts.fragment
    return None


def _slug_forms(title: str) -> set[str]:
    """Anchors a site generator may give a heading: Python-Markdown's and GitHub's slugs."""
    text = title.casefold().strip()
    cleaned = re.sub(r"[^\w\s-]", "", text)
    return {re.sub(r"[-\s]+", "-", cleaned).strip("-"), re.sub(r"\s", "-", cleaned)}


def anchored(doc, anchor: str):
    """The heading of ``doc`` the anchor names (its slug, or an explicit ``{#id}``)."""
    anchor = unquote(anchor).casefold()
    for heading in (b for b in doc.blocks if b.is_heading):
        line = doc.text[heading.start : heading.end]
        if anchor in _slug_forms(heading.title) or re.search(
                r"\{[^}]*#" + re.escape(anchor) + r"(?![\w-])", line, re.IGNORECASE):
            return heading
    return None
