"""Keyword queries: a section sentence's rarest terms (inverse section frequency), none of the
words of its heading path, rarest first (not the sentence's order); the sentence answers it."""

from __future__ import annotations

from collections.abc import Iterator

from ..queries import GoldSpan
from ..query_terms import Rarity
from ..reading import Reading, Site
from .found import MIN_TERMS, Found
from .section_sentences import KEYWORDS, rarest, section_sentences


def keyword_queries(reading: Reading, site: Site) -> Iterator[Found]:
    """One keyword query a section, from its sentence with the rarest terms."""
    for (start, end), found in section_sentences(reading).items():
        banned = reading.span_stems(start, end)
        chosen = rarest(reading, found, banned, site.rarity)
        text = keyword_text(reading.sentence_terms(chosen), banned, site.rarity)
        yield Found("keyword", text, GoldSpan(reading.doc.id, start, end), answer=chosen)


def keyword_text(terms: list[tuple[str, str]], banned: frozenset[str], rare: Rarity) -> str:
    """The ``KEYWORDS`` rarest of a sentence's ``terms`` (word, stem) outside ``banned`` (one
    word per stem; digits and words of two letters left out), rarest first, in an order other
    than the sentence's; "" when fewer than ``MIN_TERMS`` are left."""
    picked: dict[str, str] = {}
    for word, stem in terms:
        if stem not in banned and stem not in picked and not word.isdigit() and len(word) > 2:
            picked[stem] = word
    ranked = sorted(picked, key=lambda s: (-rare.idf(s), s))[:KEYWORDS]
    if len(ranked) < MIN_TERMS:
        return ""
    order = list(picked)
    if sorted(ranked, key=order.index) == ranked:  # rarity kept the sentence's order
        ranked = ranked[1:] + ranked[:1]
    return " ".join(picked[s] for s in ranked)
