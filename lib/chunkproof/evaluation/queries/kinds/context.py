"""A query from the sentence around a link or a code span that names another page's section:
the sentence as a reader sees it, the named text cut out and the words of the target's heading
path dropped; the first answer sentence of the target section answers it."""

from __future__ import annotations

from ..queries import GoldSpan
from ..query_terms import without_terms
from ..reading import Sentence, Site
from .found import Found


def context_text(sentence: Sentence, removed: list[str], banned: frozenset[str]) -> str:
    """The sentence as a reader sees it, each of ``removed`` cut out, then the words of
    ``banned`` stems dropped."""
    text = sentence.plain
    for part in sorted(removed, key=len, reverse=True):
        if part:
            text = text.replace(part, " ")
    return without_terms(text, banned)


def context_query(kind: str, site: Site, sentence: Sentence, removed: str, gold: GoldSpan, *,
                  moved: bool = False) -> Found | None:
    """The query of ``kind`` from ``sentence`` into the section ``gold``, ``removed`` cut out;
    ``moved``: the cut text goes to the end (its heading-path words dropped), so the query is
    never the sentence as written. None when the section has no answer sentence."""
    target = site.reading(gold.doc)
    answer = target.first_answer(gold.start, gold.end)
    if answer is None or not removed.strip():
        return None
    banned = target.span_stems(gold.start, gold.end)
    text = context_text(sentence, [removed], banned)
    if moved:
        text = f"{text} {without_terms(removed, banned)}"
    return Found(kind, text, gold, answer=answer)
