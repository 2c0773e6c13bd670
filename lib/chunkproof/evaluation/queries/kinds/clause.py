"""Answers of a clause rather than a whole sentence: the run of adjacent clauses of a kind's
answer sentence (cut at a comma, semicolon, colon, dash or opening parenthesis) holding most
of the query's terms, shortest among equals, at least 20 chars and found once in its page;
the sentence itself when no shorter run holds a query term. Written answers are a clause as
often as a sentence (median 90 chars against 126 for keyword answer sentences)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ....document.inline import plain_text
from ..query_terms import terms
from ..question_check import ANSWER_CHARS, valid_answer
from ..reading import Reading, Sentence
from .found import Found

CUT = re.compile(r"(?<=[,;:])\s+|\s+[\u2014\u2013]\s+|\s+-\s+|\s+\((?=[^)]*\))")
SUFFIX = "_clause"


def fragments(raw: str) -> list[tuple[int, int]]:
    """[start, end) of each clause of ``raw``."""
    spans, at = [], 0
    for match in CUT.finditer(raw):
        spans.append((at, match.start()))
        at = match.end()
    spans.append((at, len(raw)))
    return [(a, b) for a, b in spans if b > a]


def clause(reading: Reading, sentence: Sentence, weights: dict[str, float]) -> Sentence:
    """The clause run of ``sentence`` holding most of ``weights`` (stem -> weight)."""
    raw, parts = sentence.raw, fragments(sentence.raw)
    best: tuple[tuple[float, int, int], int, int] | None = None
    for i in range(len(parts)):
        for j in range(i, len(parts)):
            if i == 0 and j == len(parts) - 1:
                continue
            a = parts[i][0]
            text = raw[a : parts[j][1]].rstrip(" ,;:")
            if len(text) < ANSWER_CHARS[0]:
                continue
            held = {s for _w, s in terms(plain_text(text, reading.doc.references))}
            key = (sum(w for s, w in weights.items() if s in held), -len(text), -a)
            if best is None or key > best[0]:
                best = (key, a, a + len(text))
    if best is None or best[0][0] <= 0:
        return sentence
    _key, a, b = best
    text = raw[a:b]
    if not valid_answer(text, reading.doc):
        return sentence
    start = sentence.start + a
    return Sentence(start, start + len(text), text, plain_text(text, reading.doc.references))


def with_clauses(found: Iterable[Found], reading_of) -> Iterator[Found]:
    """Each found query, then the same query of kind ``<kind>_clause`` answered by a clause
    (``reading_of(found)``: the reading holding its answer)."""
    for item in found:
        yield item
        assert item.answer is not None
        weights = {s: 1.0 for _w, s in terms(item.text)}
        yield Found(item.kind + SUFFIX, item.text, item.gold, item.origin,
                    answer=clause(reading_of(item), item.answer, weights))
