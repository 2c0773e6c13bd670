"""Body queries: the first sentence of a section's first top-level paragraph with
``BODY_WORDS`` words, as plain text; its gold is that section."""

from __future__ import annotations

from collections.abc import Iterator

from ..query_text import junk_reason
from ..reading import Paragraph, Reading, Site
from .found import Found

BODY_WORDS = (6, 30)
"""A body query is the first sentence of a section's first paragraph with this many words
(inclusive): shorter ones ask nothing, longer ones are paragraphs."""


def body_queries(reading: Reading, site: Site) -> Iterator[Found]:
    """One body query a section. A paragraph holding a definition-list term is a definition
    list, not prose."""
    terms = {t.offset for t in reading.defined}
    used: set[tuple[int, int]] = set()
    for paragraph in reading.paragraphs:
        block = paragraph.block
        if not paragraph.top or any(block.start <= t < block.end for t in terms):
            continue
        span = reading.holding(block.start)
        if (span.start, span.end) in used:
            continue
        sentence = _sentence(paragraph)
        if sentence:
            used.add((span.start, span.end))
            yield Found("body", sentence, span, "body sentence")


def _sentence(paragraph: Paragraph) -> str | None:
    low, high = BODY_WORDS
    for sentence in paragraph.sentences:
        text = sentence.plain
        if low <= len(text.split()) <= high and not junk_reason(text):
            return text
    return None
