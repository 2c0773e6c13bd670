"""Identifier queries: the sentence around a code span naming an API symbol that another page
defines (a heading, table row or definition list term), the symbol moved to the end and the
words of the defining section's heading path dropped; gold is that section."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..reading import Reading, Site
from .context import context_query
from .found import Found

_CODE_SPAN = re.compile(r"(`+)([^`]+?)\1")


def identifier_queries(reading: Reading, site: Site) -> Iterator[Found]:
    for paragraph in reading.paragraphs:
        for sentence in paragraph.sentences:
            for match in _CODE_SPAN.finditer(sentence.raw):
                symbol = match.group(2).strip()
                gold = site.symbols.get(symbol.casefold().removesuffix("()"))
                if gold is not None and gold.doc != reading.doc.id:
                    found = context_query("identifier", site, sentence, symbol, gold,
                                          moved=True)
                    if found:
                        yield found
