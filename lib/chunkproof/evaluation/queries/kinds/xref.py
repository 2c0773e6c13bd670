"""Xref queries: the sentence around a link into another page, the link text and the words of
the target's heading path dropped; gold is the section the link names (by its anchor; the
page's lead without one)."""

from __future__ import annotations

from collections.abc import Iterator

from ....document.inline import links
from ..reading import Reading, Site
from .context import context_query
from .found import Found


def xref_queries(reading: Reading, site: Site) -> Iterator[Found]:
    doc = reading.doc
    for paragraph in reading.paragraphs:
        for sentence in paragraph.sentences:
            for text, href in links(sentence.raw, doc.references):
                resolved = site.resolve(doc.id, href)
                target = resolved and site.target(*resolved)
                found = target and context_query("xref", site, sentence, text, target)
                if found:
                    yield found
