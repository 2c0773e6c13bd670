"""Title, section and symbol queries: a document's title (its gold the lead section), each
section heading (the section it opens) and each API symbol a heading, a definition list or a
table's first column names (the section it opens, or the one holding the term)."""

from __future__ import annotations

from collections.abc import Iterator

from ..queries import GoldSpan
from ..query_text import heading_text, is_navigational, only_symbols, symbols
from ..reading import Reading, Site
from .found import Found, dropped

NAVIGATIONAL_HEADING = "navigational heading"


def heading_queries(reading: Reading, site: Site) -> Iterator[Found]:
    """The document's title, then each heading's symbols and text, then the symbols its
    definition lists and tables define."""
    doc, title = reading.doc, reading.title
    if title and not is_navigational(doc.title):
        yield Found("title", title, reading.lead, "title")
    elif title:
        yield dropped(NAVIGATIONAL_HEADING, title)
    for heading in reading.sections.headings:
        span = GoldSpan(doc.id, *reading.sections.span(heading))
        yield from _heading(heading, span, skip_text=heading is reading.title_heading)
    for term in reading.defined:
        span = reading.holding(term.offset)
        found = symbols(term.raw)
        if found and only_symbols(term.raw, found):
            for symbol, _where, _text in found:
                yield Found("symbol", symbol, span, term.where)


def _heading(heading, span: GoldSpan, *, skip_text: bool) -> Iterator[Found]:
    """Symbols of the heading as written (code spans kept in ``raw_title``), then its plain
    text (``title``, inline Markdown rendered) as a section query."""
    raw = heading.raw_title or heading.title
    found = symbols(raw)
    for symbol, where, _text in found:
        yield Found("symbol", symbol, span, where)
    text = heading_text(heading.title)
    if skip_text or not text or (found and only_symbols(raw, found)):
        return
    if is_navigational(text):
        yield dropped(NAVIGATIONAL_HEADING, text)
        return
    yield Found("section", text, span, "section heading")
