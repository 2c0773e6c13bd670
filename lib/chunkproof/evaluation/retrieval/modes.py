"""Retrieval modes: what is done with a ranking before the reader gets it. ``plain`` hands over
the ranked chunks; ``boost`` raises chunks whose heading path holds the query's terms (the
retriever's own terms); ``expand=parent`` hands over each hit's whole section and then the
rest of its parent section (the sibling sections, with theirs), nearest first, and
``expand=siblings`` the parts either side of it. A budget bundle of any mode is
filled by ``budget.fill_budget``, so every mode is charged the same tokens as ``plain``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from ...chunking.records import Chunk
from ...errors import ConfigError, UnknownModeError
from .budget import fill_budget
from .retrieve import Hits, lexical_terms

PLAIN, BOOST, PARENT, SIBLINGS = "plain", "boost", "expand=parent", "expand=siblings"
MODES = (PLAIN, BOOST, PARENT, SIBLINGS)
EXPANSIONS = (PARENT, SIBLINGS)
"""Modes that change what the reader is handed, not the ranking: scored at token budgets only
(at a fixed k an expansion hands over more text than plain, which is no comparison)."""
BOOST_WEIGHT = 0.25
"""A chunk whose heading path holds every query term has its score raised by a quarter of
its magnitude; one holding a share s of the terms, by s times that."""
BOOST_POOL = 100
"""How deep the ranking a boost reorders is (a chunk below it cannot be raised)."""
Reader = Callable[[list[Chunk]], list[Chunk]]
"""A ranking (chunks, best first) -> the chunks a reader is handed, in the order a budget
fills with them."""


def check_modes(names: Iterable[str], *, budgets: Sequence[int]) -> tuple[str, ...]:
    """``names`` as a tuple once each is known; an expansion needs a token budget to be
    compared with plain (ConfigError otherwise)."""
    names = tuple(dict.fromkeys(names))
    if not names:
        raise ConfigError(f"give at least one retrieval mode ({', '.join(MODES)})")
    for name in names:
        if name not in MODES:
            raise UnknownModeError(name, list(MODES))
    expansions = [n for n in names if n in EXPANSIONS]
    if expansions and not budgets:
        raise ConfigError(f"retrieval mode {expansions[0]} is compared with plain at a token "
                          "budget; give --budgets (e.g. 512,1024,2048)")
    return names


# --- sections ---------------------------------------------------------------------------


def section_key(chunk: Chunk) -> tuple[str, str | tuple[str, ...]]:
    """What a chunk's section is known by: its document and ``section_id`` (a chunk record
    made without one, by its heading path instead)."""
    return chunk.doc_id, chunk.section_id or tuple(chunk.breadcrumb)


def sections(chunks: Iterable[Chunk]) -> dict[str, tuple[Chunk, ...]]:
    """Chunk id -> the parts of its section in document order: the run of chunks of
    consecutive ordinals that share its ``section_key`` (a section whose parts are parted by
    a chunk of a subsection is two runs: its neighbouring parts are the ones handed over)."""
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    found: dict[str, tuple[Chunk, ...]] = {}
    for parts in by_doc.values():
        parts.sort(key=lambda c: c.ordinal)
        run: list[Chunk] = []
        for chunk in parts:
            if run and (section_key(chunk) != section_key(run[-1])
                        or chunk.ordinal != run[-1].ordinal + 1):
                found.update(dict.fromkeys((c.id for c in run), tuple(run)))
                run = []
            run.append(chunk)
        found.update(dict.fromkeys((c.id for c in run), tuple(run)))
    return found


def parent_sections(chunks: Iterable[Chunk]) -> dict[str, tuple[Chunk, ...]]:
    """Chunk id -> the chunks of its parent section, in document order: those whose section
    is its ``parent_section_id`` or lies under it (its own section's and its sibling
    sections', with theirs). A section's chunks are consecutive, so they are the run from the
    first chunk found under the parent to the last; a chunk is found under it through the
    sections the chunks name (``section_id`` -> ``parent_section_id``). A chunk of a page's
    root section, or one made without section ids, has no entry."""
    by_doc: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    found: dict[str, tuple[Chunk, ...]] = {}
    for parts in by_doc.values():
        parts.sort(key=lambda c: c.ordinal)
        parent_of = {c.section_id: c.parent_section_id for c in parts if c.section_id}
        reach: dict[str, list[int]] = {}  # section id -> [first, last] index of a chunk under it
        for i, chunk in enumerate(parts):
            section, seen = chunk.section_id, set()
            while section and section not in seen:
                seen.add(section)
                reach.setdefault(section, [i, i])[1] = i
                section = parent_of.get(section, "")
        runs: dict[str, tuple[Chunk, ...]] = {}
        for chunk in parts:
            parent = chunk.parent_section_id
            if chunk.section_id and parent in reach:
                if parent not in runs:
                    first, last = reach[parent]
                    runs[parent] = tuple(parts[first : last + 1])
                found[chunk.id] = runs[parent]
    return found


@dataclass(frozen=True, slots=True)
class Groups:
    """What an expansion reads of a set of chunks, each made once: chunk id -> its
    section's parts (``sections``), and -> its parent section's chunks (``parent_sections``,
    for ``expand=parent`` alone)."""

    sections: dict[str, tuple[Chunk, ...]]
    parents: dict[str, tuple[Chunk, ...]]

    @classmethod
    def of(cls, chunks: Iterable[Chunk], mode: str) -> Groups:
        chunks = list(chunks)
        return cls(sections(chunks), parent_sections(chunks) if mode == PARENT else {})


# --- expansion --------------------------------------------------------------------------


def by_distance(run: Sequence[Chunk], hit: Chunk, reach: int | None = None) -> list[Chunk]:
    """The chunks of ``run`` (holding ``hit``) by distance from it, the hit first and the
    following one before the preceding one at equal distance; ``reach``: how far (None: all)."""
    at = next(i for i, c in enumerate(run) if c.id == hit.id)
    found = [hit]
    for step in range(1, (len(run) if reach is None else reach) + 1):
        found += [run[i] for i in (at + step, at - step) if 0 <= i < len(run)]
    return found


def expansion(hit: Chunk, groups: Groups, mode: str) -> list[Chunk]:
    """What ``mode`` hands over for ``hit``: the hit, then the other parts of its section by
    distance from it, those next to it for ``expand=siblings``, all of them for
    ``expand=parent``, which then goes on to the rest of the parent section by distance from
    the hit (``parent_sections``; a hit of a page's root section stops at its section)."""
    section = groups.sections.get(hit.id, (hit,))
    found = by_distance(section, hit, 1 if mode == SIBLINGS else None)
    family = groups.parents.get(hit.id) if mode == PARENT else None
    if family and len(family) > len(section):
        own = {c.id for c in section}
        found += [c for c in by_distance(family, hit) if c.id not in own]
    return found


def expanded(ranked: Sequence[Chunk], groups: Groups, mode: str) -> list[Chunk]:
    """Each hit's ``expansion`` in rank order, a chunk handed over once."""
    seen: dict[str, Chunk] = {}
    for hit in ranked:
        for chunk in expansion(hit, groups, mode):
            seen.setdefault(chunk.id, chunk)
    return list(seen.values())


def reader(mode: str, chunks: Iterable[Chunk]) -> Reader | None:
    """What ``mode`` hands a reader from a ranking of ``chunks`` (None: the ranking itself)."""
    if mode not in EXPANSIONS:
        return None
    groups = Groups.of(chunks, mode)
    return lambda ranked: expanded(ranked, groups, mode)


# --- boost ------------------------------------------------------------------------------


def query_terms(queries: Sequence[str]) -> list[frozenset[str]]:
    """Each query's distinct terms, as the BM25 retriever reads them."""
    return [frozenset(t) for t in lexical_terms(list(queries))]


def heading_terms(chunks: Iterable[Chunk]) -> dict[str, frozenset[str]]:
    """Chunk id -> the terms of its heading path (each distinct path tokenised once)."""
    chunks = list(chunks)
    paths = list(dict.fromkeys(" ".join(c.breadcrumb) for c in chunks))
    terms = dict(zip(paths, (frozenset(t) for t in lexical_terms(paths)), strict=True))
    return {c.id: terms[" ".join(c.breadcrumb)] for c in chunks}


def boosted(hits: Hits, terms: frozenset[str], crumbs: dict[str, frozenset[str]], *,
            weight: float = BOOST_WEIGHT) -> Hits:
    """``hits`` re-scored and re-sorted: a chunk whose heading path holds a share s of the
    query's ``terms`` gets ``score + weight * s * |score|``; ties keep the retriever's order."""
    if not terms:
        return list(hits)
    scored = []
    for chunk_id, score in hits:
        share = len(terms & crumbs.get(chunk_id, frozenset())) / len(terms)
        scored.append((chunk_id, score + weight * share * abs(score) if share else score))
    order = sorted(range(len(scored)), key=lambda i: (-scored[i][1], i))
    return [scored[i] for i in order]


def boost_all(results: Sequence[Hits], queries: Sequence[str],
              crumbs: dict[str, frozenset[str]], *, weight: float = BOOST_WEIGHT) -> list[Hits]:
    """``boosted`` rankings of every query."""
    return [boosted(hits, terms, crumbs, weight=weight)
            for hits, terms in zip(results, query_terms(queries), strict=True)]


# --- a mode applied to one query, for the adapters ----------------------------------------


class ModeReader:
    """A retrieval mode over a fixed set of chunks (those an index holds): for one query's
    ranking, what the reader is handed, filled into ``budget`` tokens when one is given
    (``budget.fill_budget``, as the sweep scored it)."""

    def __init__(self, chunks: Iterable[Chunk], mode: str = PLAIN, *,
                 budget: int | None = None, weight: float = BOOST_WEIGHT):
        if mode not in MODES:
            raise UnknownModeError(mode, list(MODES))
        self.mode = mode
        self.by_id = {c.id: c for c in chunks}
        self.budget, self.weight = budget, weight
        self.groups = Groups.of(self.by_id.values(), mode) if mode in EXPANSIONS else None
        self.crumbs = heading_terms(self.by_id.values()) if self.mode == BOOST else {}

    def hand_over(self, query: str, hits: Hits) -> list[Chunk]:
        """The chunks ``mode`` hands a reader for ``query`` given its ranking ``hits`` ((chunk
        id, score), best first; ids of chunks not held are left out)."""
        if self.mode == BOOST:
            hits = boosted(hits, query_terms([query])[0], self.crumbs, weight=self.weight)
        ranked = [self.by_id[i] for i, _ in hits if i in self.by_id]
        if self.groups is not None:
            ranked = expanded(ranked, self.groups, self.mode)
        return fill_budget(ranked, self.budget) if self.budget else ranked
