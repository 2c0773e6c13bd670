"""The sentences a section offers the keyword and partial kinds: ``SENTENCE_WORDS`` words,
each a valid answer span, grouped by the section holding their paragraph, rarest first."""

from __future__ import annotations

from ..query_terms import Rarity
from ..reading import Reading, Sentence

SENTENCE_WORDS = (8, 45)
"""Sentences with this many words (inclusive) give keyword and partial queries."""
KEYWORDS = 4
"""Terms in a keyword query, and the rarest terms a sentence is ranked by."""


def section_sentences(reading: Reading) -> dict[tuple[int, int], list[Sentence]]:
    """Candidate sentences by holding section ([start, end) of the innermost section)."""
    found: dict[tuple[int, int], list[Sentence]] = {}
    low, high = SENTENCE_WORDS
    for paragraph in reading.paragraphs:
        _heading, start, end = reading.sections.holding(paragraph.block.start)
        for sentence in paragraph.sentences:
            if low <= len(sentence.plain.split()) <= high and reading.answers(sentence):
                found.setdefault((start, end), []).append(sentence)
    return found


def mean_rarity(reading: Reading, sentence: Sentence, banned: frozenset[str],
                rare: Rarity) -> float:
    """The mean rarity of the sentence's ``KEYWORDS`` rarest terms outside ``banned``."""
    found = sorted((rare.idf(s) for _w, s in reading.sentence_terms(sentence)
                    if s not in banned), reverse=True)[:KEYWORDS]
    return sum(found) / len(found) if found else 0.0


def rarest(reading: Reading, sentences: list[Sentence], banned: frozenset[str],
           rare: Rarity) -> Sentence:
    """The sentence whose rarest terms are rarest (the first among equals)."""
    return max(sentences, key=lambda s: mean_rarity(reading, s, banned, rare))
