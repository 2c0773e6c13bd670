"""Known-item queries: a searcher who has read a section and recalls a few of its terms. Each
section with answer sentences gives one query of ``TERMS`` terms, each drawn (without
replacement, seeded by the section) from the section's heading path with probability
``HEADING_SHARE``, else from its body, a body term by its weight in the section against the
site (count in the section x rarity across the site's sections), a heading term by its rarity.
Both numbers are what the study's written questions do (``written_shape``): how many of a
question's terms its answer's section holds, and what share of those its heading path holds.
The answer is the section's sentence holding most of the drawn body terms' weight (a section
none of whose answer sentences holds one gives no query)."""

from __future__ import annotations

import random
import statistics
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator

from ..queries import GoldSpan
from ..query_terms import Rarity, stem_set, terms
from ..reading import Reading, Sentence, Site
from .found import Found
from .section_sentences import section_sentences

TERMS = 5
"""Terms a known-item query draws: the median number of a study question's terms that its
answer's section holds (``written_shape`` on the 421 questions of data/study: 5; per site
4 to 6.5)."""
HEADING_SHARE = 0.24
"""The share of those terms that the section's heading path holds (``written_shape`` on
data/study: 0.244; per site 0.19 to 0.32)."""


def known_item_queries(reading: Reading, site: Site) -> Iterator[Found]:
    """One known-item query a section that has answer sentences."""
    for (start, end), sentences in section_sentences(reading).items():
        found = known_item(reading, site.rarity, start, end, sentences)
        if found is not None:
            yield found


def known_item(reading: Reading, rare: Rarity, start: int, end: int,
               sentences: list[Sentence]) -> Found | None:
    heading = _pool(terms(" ".join(reading.path(start))), rare, counted=False)
    banned = reading.span_stems(start, end)
    body = _pool(_body_terms(reading, start, end), rare, counted=True, banned=banned)
    rng = random.Random(zlib.crc32(f"{reading.doc.id}\0{start}".encode()))
    drawn: dict[str, str] = {}
    body_drawn: dict[str, float] = {}
    for _ in range(TERMS):
        pool = heading if heading and (not body or rng.random() < HEADING_SHARE) else body
        if not pool:
            break
        stem = _draw(pool, rng)
        word, weight = pool.pop(stem)
        (body if pool is heading else heading).pop(stem, None)
        drawn[stem] = word
        if pool is body:
            body_drawn[stem] = weight
    if not body_drawn:
        return None
    answer = max(sentences, key=lambda s: _held(reading, s, body_drawn))
    if not _held(reading, answer, body_drawn):
        return None
    return Found("known_item", " ".join(drawn.values()), GoldSpan(reading.doc.id, start, end),
                 answer=answer)


def _held(reading: Reading, sentence: Sentence, weights: dict[str, float]) -> float:
    """The summed weight of the drawn body terms the sentence holds."""
    return sum(weights.get(stem, 0.0) for stem in {s for _w, s in
                                                   reading.sentence_terms(sentence)})


def _body_terms(reading: Reading, start: int, end: int) -> list[tuple[str, str]]:
    """(word, stem) of every sentence of the paragraphs in [start, end), in order."""
    found: list[tuple[str, str]] = []
    for paragraph in reading.paragraphs:
        if start <= paragraph.block.start < end:
            for sentence in paragraph.sentences:
                found += reading.sentence_terms(sentence)
    return found


def _pool(found: Iterable[tuple[str, str]], rare: Rarity, *, counted: bool,
          banned: frozenset[str] = frozenset()) -> dict[str, tuple[str, float]]:
    """stem -> (its first word, its weight): rarity, times its count when ``counted``; digits,
    words of two letters and ``banned`` stems left out."""
    counts: Counter[str] = Counter()
    words: dict[str, str] = {}
    for word, stem in found:
        if stem in banned or word.isdigit() or len(word) <= 2:
            continue
        counts[stem] += 1
        words.setdefault(stem, word)
    return {s: (words[s], rare.idf(s) * (counts[s] if counted else 1)) for s in counts
            if rare.idf(s) > 0}


def _draw(pool: dict[str, tuple[str, float]], rng: random.Random) -> str:
    stems = sorted(pool)
    return rng.choices(stems, weights=[pool[s][1] for s in stems])[0]


def written_shape(site: Site, questions: Iterable) -> tuple[list[int], int, int]:
    """(per written question with an answer found in its page: how many of its terms the
    answer's section holds; over all of them, how many of those terms the section's heading
    path holds, and how many it holds in all): what ``TERMS`` and ``HEADING_SHARE`` are made
    from."""
    held, in_heading, total = [], 0, 0
    for question in questions:
        doc = site.docs.get(question.sources[0]) if question.sources else None
        if doc is None or not question.answer or question.answer not in doc.text:
            continue
        offset = doc.text.find(question.answer)
        reading = site.reading(doc.id)
        span = reading.holding(offset)
        heading = reading.span_stems(span.start, span.end)
        section = stem_set([doc.text[span.start:span.end]]) | heading
        asked = stem_set([question.query]) & section
        held.append(len(asked))
        in_heading += len(asked & heading)
        total += len(asked)
    return held, in_heading, total


def shape_figures(held: list[int], in_heading: int, total: int) -> tuple[float, float]:
    """(the median number of terms held, the heading path's share of them)."""
    return float(statistics.median(held)), in_heading / max(total, 1)
