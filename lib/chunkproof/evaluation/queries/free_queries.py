"""Mined queries that neither carry heading words nor copy a sentence whole, each with an
answer span found once in its document and the section holding it as gold:

- ``keyword``: a section sentence's rarest terms (inverse section frequency), none of the
  words of its heading path, rarest first (not the sentence's order);
- ``partial``: the middle of another sentence of the section, heading-path words dropped;
- ``xref``: the sentence around a link into another page, the link text and the words of
  the target's heading path dropped; gold is the section the link points to;
- ``identifier``: the sentence around a code span naming an API symbol that another page
  defines (a heading, table row or definition list term), the words of the defining
  section's heading path dropped; gold is that section.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote, urlsplit

from ...chunking.sentences import sentence_spans
from ...document.inline import links, plain_text
from ...errors import SegmenterError
from .mining import Mined, lead_span, mine
from .queries import MAX_SOURCES, GoldSpan, Query, documents_by_id
from .query_terms import HeadingPaths, Rarity, rarity, surface_tokens, terms, without_terms
from .query_text import junk_reason
from .question_check import valid_answer

FREE_KINDS = ("keyword", "partial", "xref", "identifier")
KEYWORDS = 4
"""Terms in a keyword query (at least ``MIN_TERMS``)."""
MIN_TERMS = 3
"""A free query with fewer BM25 terms than this asks too little to tell sections apart."""
SENTENCE_WORDS = (8, 45)
"""Sentences with this many words (inclusive) give keyword and partial queries."""
_CODE_SPAN = re.compile(r"(`+)([^`]+?)\1")


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence of a paragraph: its raw span and its text as a reader sees it."""

    start: int
    end: int
    raw: str
    plain: str


def paragraphs(blocks) -> Iterator:
    """Every paragraph block, top level or nested in a list, quote or container, in order."""
    for block in blocks:
        if block.kind == "paragraph":
            yield block
        elif block.children:
            yield from paragraphs(block.children)


def sentences(doc, block) -> tuple[Sentence, ...]:
    """The sentences of a paragraph block (none when no sentence breaker is installed); each
    paragraph is read once however many kinds of query look at it."""
    return _sentences(doc.text, block.start, block.end, tuple(doc.references.items()))


@lru_cache(maxsize=8192)
def _sentences(text: str, start: int, end: int,
               references: tuple[tuple[str, str], ...]) -> tuple[Sentence, ...]:
    try:
        spans = sentence_spans(text, start, end)
    except SegmenterError:
        return ()
    return tuple(Sentence(a, b, text[a:b], plain_text(text[a:b], dict(references)))
                 for a, b in spans)


def first_answer(doc, start: int, end: int) -> Sentence | None:
    """The first sentence of a paragraph inside [start, end) that is a valid answer span."""
    for block in paragraphs(doc.blocks):
        if start <= block.start < end:
            for sentence in sentences(doc, block):
                if valid_answer(sentence.raw, doc):
                    return sentence
    return None


class _Kinds:
    """Collects free queries of every kind, numbered per kind in first-seen order."""

    def __init__(self) -> None:
        self.found: dict[str, list[Query]] = {kind: [] for kind in FREE_KINDS}
        self.seen: set[tuple[str, str]] = set()

    def add(self, kind: str, text: str, answer: Sentence, gold: GoldSpan) -> None:
        text = " ".join(text.split())
        if junk_reason(text) or len(surface_tokens([text])[0]) < MIN_TERMS:
            return
        if (kind, text.casefold()) in self.seen:
            return
        self.seen.add((kind, text.casefold()))
        number = len(self.found[kind]) + 1
        self.found[kind].append(Query(
            id=f"mined-{kind}-{number:04d}", query=text, sources=(gold.doc,),
            answer=answer.raw, kind=kind, gold_spans=(gold,)))

    def queries(self) -> list[Query]:
        return [q for kind in FREE_KINDS for q in self.found[kind]]


def keyword_text(sentence: Sentence, banned: frozenset[str], rare: Rarity) -> str:
    """The sentence's ``KEYWORDS`` rarest terms outside ``banned`` (one word per stem; digits
    left out), rarest first, in an order other than the sentence's."""
    picked: dict[str, str] = {}
    for word, stem in terms(sentence.plain):
        if stem not in banned and stem not in picked and not word.isdigit() and len(word) > 2:
            picked[stem] = word
    ranked = sorted(picked, key=lambda s: (-rare.idf(s), s))[:KEYWORDS]
    if len(ranked) < MIN_TERMS:
        return ""
    order = list(picked)
    if sorted(ranked, key=order.index) == ranked:  # rarity kept the sentence's order
        ranked = ranked[1:] + ranked[:1]
    return " ".join(picked[s] for s in ranked)


def partial_text(sentence: Sentence, banned: frozenset[str]) -> str:
    """The middle of the sentence (from a quarter in, half its words, at least five),
    heading-path words dropped."""
    words = sentence.plain.split()
    start = len(words) // 4
    window = words[start : start + max(5, (len(words) + 1) // 2)]
    return without_terms(" ".join(window), banned)


def _mean_rarity(sentence: Sentence, banned: frozenset[str], rare: Rarity) -> float:
    found = sorted((rare.idf(s) for _w, s in terms(sentence.plain) if s not in banned),
                   reverse=True)[:KEYWORDS]
    return sum(found) / len(found) if found else 0.0


def _section_sentences(doc, paths: HeadingPaths) -> dict[tuple[int, int], list[Sentence]]:
    """Candidate sentences (``SENTENCE_WORDS`` words, a valid answer) by holding section."""
    found: dict[tuple[int, int], list[Sentence]] = {}
    low, high = SENTENCE_WORDS
    for block in paragraphs(doc.blocks):
        _heading, start, end = paths.sections.holding(block.start)
        for sentence in sentences(doc, block):
            if low <= len(sentence.plain.split()) <= high and valid_answer(sentence.raw, doc):
                found.setdefault((start, end), []).append(sentence)
    return found


def _sentence_kinds(kinds: _Kinds, doc, paths: HeadingPaths, rare: Rarity) -> None:
    """One keyword and one partial query per section, from two of its sentences."""
    for (start, end), found in _section_sentences(doc, paths).items():
        gold = GoldSpan(doc.id, start, end)
        banned = paths.span_stems(start, end)
        ranked = sorted(found, key=lambda s: -_mean_rarity(s, banned, rare))
        kinds.add("keyword", keyword_text(ranked[0], banned, rare), ranked[0], gold)
        rest = [s for s in found if s is not ranked[0]] or found
        longest = max(rest, key=lambda s: len(s.plain))
        kinds.add("partial", partial_text(longest, banned), longest, gold)


def _slug_forms(title: str) -> set[str]:
    """Anchors a site generator may give a heading: Python-Markdown's and GitHub's slugs."""
    text = title.casefold().strip()
    cleaned = re.sub(r"[^\w\s-]", "", text)
    return {re.sub(r"[-\s]+", "-", cleaned).strip("-"), re.sub(r"\s", "-", cleaned)}


def _anchored(doc, anchor: str):
    """The heading of ``doc`` the anchor names (its slug, or an explicit ``{#id}``)."""
    anchor = unquote(anchor).casefold()
    for heading in (b for b in doc.blocks if b.is_heading):
        line = doc.text[heading.start : heading.end]
        if anchor in _slug_forms(heading.title) or re.search(
                r"\{[^}]*#" + re.escape(anchor) + r"(?![\w-])", line, re.IGNORECASE):
            return heading
    return None


def resolve_link(source_id: str, href: str, docs: dict) -> tuple[str, str] | None:
    """(target document id, anchor) of a relative link from ``source_id`` into another
    document of ``docs``, or None (external, same page, or no such document)."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or not parts.path:
        return None
    path = posixpath.normpath(posixpath.join(posixpath.dirname(source_id), unquote(parts.path)))
    stem = path.rstrip("/")
    for candidate in (path, f"{stem}.md", f"{stem}/index.md", f"{stem}/README.md"):
        if candidate in docs and candidate != source_id:
            return candidate, parts.fragment
    return None


def _target(docs: dict, doc_id: str, anchor: str, paths: dict) -> GoldSpan | None:
    """The gold section a link names (the lead section without an anchor)."""
    doc = docs[doc_id]
    at = paths.setdefault(doc_id, HeadingPaths(doc))
    if not anchor:
        return lead_span(doc, at.sections)
    heading = _anchored(doc, anchor)
    return None if heading is None else GoldSpan(doc_id, *at.sections.span(heading))


def context_text(sentence: Sentence, removed: list[str], banned: frozenset[str]) -> str:
    """The sentence as a reader sees it, each of ``removed`` cut out, then the words of
    ``banned`` stems dropped."""
    text = sentence.plain
    for part in sorted(removed, key=len, reverse=True):
        if part:
            text = text.replace(part, " ")
    return without_terms(text, banned)


def _add_context(kinds: _Kinds, kind: str, docs: dict, paths: dict, sentence: Sentence,
                 removed: str, gold: GoldSpan, *, moved: bool = False) -> None:
    """A query from the sentence around a link or code span (``removed``, cut out) into the
    section ``gold``; ``moved``: the cut text goes to the end (unless a heading of the gold
    section holds it), so the query is never the sentence as written."""
    target = docs[gold.doc]
    answer = first_answer(target, gold.start, gold.end)
    if answer is None or not removed.strip():
        return
    banned = paths.setdefault(gold.doc, HeadingPaths(target)).span_stems(gold.start, gold.end)
    text = context_text(sentence, [removed], banned)
    if moved:
        text = f"{text} {without_terms(removed, banned)}"
    kinds.add(kind, text, answer, gold)


def _xrefs(kinds: _Kinds, doc, docs: dict, paths: dict) -> None:
    for block in paragraphs(doc.blocks):
        for sentence in sentences(doc, block):
            for text, href in links(sentence.raw, doc.references):
                resolved = resolve_link(doc.id, href, docs)
                target = resolved and _target(docs, *resolved, paths)
                if target:
                    _add_context(kinds, "xref", docs, paths, sentence, text, target)


def _identifiers(kinds: _Kinds, doc, docs: dict, paths: dict, defined: dict) -> None:
    for block in paragraphs(doc.blocks):
        for sentence in sentences(doc, block):
            for match in _CODE_SPAN.finditer(sentence.raw):
                symbol = match.group(2).strip()
                gold = defined.get(symbol.casefold().removesuffix("()"))
                if gold is not None and gold.doc != doc.id:
                    _add_context(kinds, "identifier", docs, paths, sentence, symbol, gold,
                                 moved=True)


def defined_symbols(mined: Mined) -> dict[str, GoldSpan]:
    """Symbol (casefolded) -> the one section defining it, for symbols one section defines."""
    found = {}
    for query in mined.queries:
        if query.kind == "symbol" and len(query.gold_spans) == 1:
            found[query.query.casefold().removesuffix("()")] = query.gold_spans[0]
    return found


def free_queries(corpus, mined: Mined | None = None) -> list[Query]:
    """Every free query of ``corpus`` (``mined``: its mined queries, for the defined symbols)."""
    docs = documents_by_id(corpus)
    rare = rarity(docs.values())
    defined = defined_symbols(mined or mine(docs))
    kinds, paths = _Kinds(), {}  # type: _Kinds, dict[str, HeadingPaths]
    for doc in docs.values():
        at = paths.setdefault(doc.id, HeadingPaths(doc))
        _sentence_kinds(kinds, doc, at, rare)
        _xrefs(kinds, doc, docs, paths)
        _identifiers(kinds, doc, docs, paths, defined)
    return kinds.queries()


def mine_all(corpus, *, max_sources: int = MAX_SOURCES) -> Mined:
    """``mining.mine`` with the free kinds added (each named where it was found)."""
    mined = mine(corpus, max_sources=max_sources)
    free = free_queries(corpus, mined)
    origins = {**mined.origins, **{q.id: f"{q.kind} query" for q in free}}
    return Mined([*mined.queries, *free], mined.dropped, mined.max_sources, mined.junk, origins)
