"""Link-text queries: the text of a link into another page whose words name its target (at
least ``LINK_TERMS`` terms, ``NAMES_SHARE`` of them in the target's heading path or its page's
title); gold is the section the link names, its first answer sentence answers it."""

from __future__ import annotations

from collections.abc import Iterator

from ....document.inline import links
from ..query_terms import stem_set, terms
from ..reading import Reading, Site
from .found import Found

NAMES_SHARE = 0.5
"""A link text names its target when this share of its terms are heading-path terms there
(1560 resolved links on the study's sites: 84% reach it, 61% have every term there, 10%
none)."""
LINK_TERMS = 2
"""Terms a link text needs to ask something (a one-word link is a heading's name only)."""


def linktext_queries(reading: Reading, site: Site) -> Iterator[Found]:
    doc = reading.doc
    for paragraph in reading.paragraphs:
        for sentence in paragraph.sentences:
            for text, href in links(sentence.raw, doc.references):
                resolved = site.resolve(doc.id, href)
                gold = resolved and site.target(*resolved)
                if not gold:
                    continue
                target = site.reading(gold.doc)
                named = {s for _w, s in terms(text)}
                heading = target.stems(gold.start) | stem_set([target.doc.title])
                if len(named) < LINK_TERMS or len(named & heading) < NAMES_SHARE * len(named):
                    continue
                answer = target.first_answer(gold.start, gold.end)
                if answer is not None:
                    yield Found("linktext", text, gold, answer=answer)
