"""Partial queries: the middle of a section's longest sentence other than the one its keyword
query takes (from a quarter in, half its words, at least five), heading-path words dropped;
the sentence answers it."""

from __future__ import annotations

from collections.abc import Iterator

from ..queries import GoldSpan
from ..query_terms import without_terms
from ..reading import Reading, Sentence, Site
from .found import Found
from .section_sentences import rarest, section_sentences


def partial_queries(reading: Reading, site: Site) -> Iterator[Found]:
    for (start, end), found in section_sentences(reading).items():
        banned = reading.span_stems(start, end)
        taken = rarest(reading, found, banned, site.rarity)
        longest = max([s for s in found if s is not taken] or found, key=lambda s: len(s.plain))
        yield Found("partial", partial_text(longest, banned),
                    GoldSpan(reading.doc.id, start, end), answer=longest)


def partial_text(sentence: Sentence, banned: frozenset[str]) -> str:
    """The middle of the sentence (from a quarter in, half its words, at least five),
    heading-path words dropped."""
    words = sentence.plain.split()
    start = len(words) // 4
    window = words[start : start + max(5, (len(words) + 1) // 2)]
    return without_terms(" ".join(window), banned)
