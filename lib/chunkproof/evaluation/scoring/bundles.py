"""What the metrics read, as arrays over every query at once: the documents laid on one axis
(``CorpusAxis``: their chars, token starts and fences), one config's chunks as a table of
facts (``ChunkTable``: span, sizes, token span, intact, label kept; a chunk a budget truncates
becomes a row of its own), the bundles a reader is handed as flat (query, rank, row) arrays
(``Bundles``: the top k of each ranking, or the chunks that fill a token budget) and the spans
that answer each query (``Targets``)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ...chunking.records import Chunk
from ...chunking.sizes import kept_token_starts, label_tokens, token_start_arrays
from ..retrieval.budget import cost, fill, truncate
from . import invariants
from .ragged import INT, as_ints


class CorpusAxis:
    """Every document on one axis: document i's char x at ``offsets[i] + x`` (one char apart
    from the next document), its token starts (``sizes.token_starts``) at those places, and
    its fences (any depth) as intervals of the axis."""

    def __init__(self, docs: Sequence):
        self.docs = tuple(docs)
        self.index = {doc.id: i for i, doc in enumerate(self.docs)}
        lengths = as_ints([len(doc.text) + 1 for doc in self.docs])
        self.offsets = np.cumsum(lengths) - lengths
        fences = sorted((offset + fence.start, offset + fence.end)
                        for doc, offset in zip(self.docs, self.offsets, strict=True)
                        for fence in doc.atoms if fence.kind == "fence")
        self.fence_starts = as_ints([a for a, _ in fences])
        self.fence_reach = np.maximum.accumulate(as_ints([b for _, b in fences])) \
            if fences else as_ints([])

    @cached_property
    def starts(self) -> np.ndarray:
        """Where each token of every document starts, on the axis (made when first read)."""
        grids = token_start_arrays([doc.text for doc in self.docs])
        return np.concatenate([grid + offset for grid, offset in
                               zip(grids, self.offsets, strict=True)] or [as_ints([])])

    def place(self, doc, chars) -> np.ndarray:
        """Axis positions of chars ``chars`` of documents ``doc`` (indices)."""
        return self.offsets[as_ints(doc)] + as_ints(chars)

    def tokens(self, doc, lo, hi) -> tuple[np.ndarray, np.ndarray]:
        """Token positions [first, last) of the tokens starting in chars [lo, hi) of ``doc``
        (``sizes.tokens_between`` on one axis: two spans share a token only if it starts in
        both)."""
        return (np.searchsorted(self.starts, self.place(doc, lo), side="left"),
                np.searchsorted(self.starts, self.place(doc, hi), side="left"))

    def in_fence(self, doc, chars) -> np.ndarray:
        """Whether each char position lies strictly inside a fence of its document."""
        at = self.place(doc, chars)
        before = np.searchsorted(self.fence_starts, at, side="left") - 1
        reach = self.fence_reach[np.maximum(before, 0)] if len(self.fence_reach) else at
        return (before >= 0) & (reach > at)


_AXES: list[tuple[tuple, CorpusAxis]] = []
"""The axis last made, with the documents it was made of (held, so their ids stay theirs)."""


def corpus_axis(docs: Iterable) -> CorpusAxis:
    """The ``CorpusAxis`` of ``docs``, made once for the same documents: every config scored
    in one process reads the same axis."""
    docs = tuple(docs)
    if _AXES and len(_AXES[0][0]) == len(docs) and all(
            a is b for a, b in zip(_AXES[0][0], docs, strict=True)):
        return _AXES[0][1]
    axis = CorpusAxis(docs)
    _AXES[:] = [(docs, axis)]
    return axis


class ChunkTable:
    """One config's chunks as arrays, one row a chunk, and the chunks budgets truncate
    appended as rows of their own. A chunk's document is known by a key: the axis index of a
    given document, then one key per other id met (a chunk or a source whose document was
    not given)."""

    doc: np.ndarray
    """The key of the chunk's document."""
    start: np.ndarray
    end: np.ndarray
    text_len: np.ndarray
    context_len: np.ndarray
    """Chars of ``context_text``: what a reader is handed."""
    cost: np.ndarray
    """Tokens a reader is handed (``budget.cost``)."""
    label_cost: np.ndarray
    """Tokens of the context label alone."""
    tok_lo: np.ndarray
    tok_hi: np.ndarray
    """The tokens of the span, as positions on the axis (0, 0 for a document not given)."""
    own_tokens: np.ndarray
    """Tokens of the text of a chunk whose document was not given (else 0)."""
    intact: np.ndarray
    """``intact_flags``."""
    label: np.ndarray
    """1.0 when a chunk inside labelled containers carries their labels, 0.0 when not, NaN
    for a chunk inside none or of a document not given (``invariants.label_kept``)."""
    FIELDS = ("doc", "start", "end", "text_len", "context_len", "cost", "label_cost",
              "tok_lo", "tok_hi", "own_tokens", "intact", "label")

    def __init__(self, chunks: Sequence[Chunk], docs: dict):
        self.docs = docs
        self.axis = corpus_axis(docs.values())
        self.keys = dict(self.axis.index)
        self.chunks: list[Chunk] = []
        self.cut_rows: dict[tuple[int, int], int] = {}
        self.text_starts: dict[int, np.ndarray] = {}
        """Token starts of the text of each chunk a budget truncated."""
        for name in self.FIELDS:
            setattr(self, name, np.zeros(0, dtype=float if name == "label" else INT))
        self.add(chunks)
        self.origin = np.arange(len(self.chunks), dtype=INT)
        """Per row, the row of the chunk as the chunker cut it (a truncated chunk's
        source; a chunk's own row)."""
        self.row_of = {c.id: i for i, c in enumerate(self.chunks)}
        self.ranked = len(self.chunks)
        """Rows of the config's own chunks (the first ones); truncated ones come after."""

    def key_of(self, doc_id: str) -> int:
        """The key of document ``doc_id`` (a new one for an id not seen before)."""
        return self.keys.setdefault(doc_id, len(self.keys))

    def add(self, chunks: Sequence[Chunk]) -> None:
        """Rows for ``chunks``: their facts, measured once."""
        chunks = list(chunks)
        found = self.facts(chunks)
        self.chunks += chunks
        for name in self.FIELDS:
            setattr(self, name, np.concatenate([getattr(self, name), found[name]]))

    def facts(self, chunks: list[Chunk]) -> dict[str, np.ndarray]:
        doc = as_ints([self.key_of(c.doc_id) for c in chunks])
        known = doc < len(self.axis.docs)
        start, end = as_ints([c.start for c in chunks]), as_ints([c.end for c in chunks])
        tok_lo, tok_hi = self.axis.tokens(np.where(known, doc, 0), start, end) \
            if len(self.axis.docs) else (np.zeros(len(chunks), dtype=INT),) * 2
        return {
            "doc": doc, "start": start, "end": end,
            "text_len": as_ints([len(c.text) for c in chunks]),
            "context_len": as_ints([len(c.context_prefix) + len(c.text) for c in chunks]),
            "cost": as_ints([cost(c) for c in chunks]),
            "label_cost": as_ints([label_tokens(c.context_prefix) for c in chunks]),
            "tok_lo": np.where(known, tok_lo, 0), "tok_hi": np.where(known, tok_hi, 0),
            "own_tokens": self.own_tokens_of(chunks, known),
            "intact": intact_flags(chunks, self.docs),
            "label": label_values(chunks, self.docs),
        }

    @staticmethod
    def own_tokens_of(chunks: list[Chunk], known: np.ndarray) -> np.ndarray:
        """Tokens of the text of each chunk whose document was not given, else 0."""
        found = np.zeros(len(chunks), dtype=INT)
        alone = np.flatnonzero(~known)
        found[alone] = [len(s) for s in token_start_arrays([chunks[i].text for i in alone])]
        return found

    def truncated(self, rows: np.ndarray, rooms: np.ndarray) -> np.ndarray:
        """The rows of chunks ``rows`` cut to ``rooms`` tokens (``budget.truncate``), each
        made once, each chunk's text tokenised once (``sizes.kept_token_starts``: once in a
        process, for texts several configs share)."""
        wanted = list(zip(rows.tolist(), rooms.tolist(), strict=True))
        new = list(dict.fromkeys(w for w in wanted if w not in self.cut_rows))
        texts = [r for r in dict.fromkeys(row for row, _ in new) if r not in self.text_starts]
        self.text_starts.update(zip(texts, kept_token_starts([self.chunks[r].text
                                                              for r in texts]), strict=True))
        first = len(self.chunks)
        self.add([truncate(self.chunks[row], room, starts=self.text_starts[row])
                  for row, room in new])
        self.origin = np.concatenate([self.origin, as_ints([row for row, _ in new])])
        self.cut_rows.update((w, first + i) for i, w in enumerate(new))
        return as_ints([self.cut_rows[w] for w in wanted])

    def ranking(self, results: Sequence[Sequence[str]]) -> np.ndarray:
        """Each ranking (chunk ids, best first) as a row of chunk rows, -1 past its end."""
        width = max((len(r) for r in results), default=0)
        matrix = np.full((len(results), width), -1, dtype=INT)
        for i, ids in enumerate(results):
            matrix[i, :len(ids)] = [self.row_of[chunk_id] for chunk_id in ids]
        return matrix


def intact_flags(chunks: Sequence[Chunk], docs: dict) -> np.ndarray:
    """Per chunk: no boundary falls inside a fenced code block of its document, at any depth
    (a fence in a list item, a quote or a ``:::`` container counts as much as a top-level
    one); a chunk whose document is not in ``docs`` is intact when its own fence lines
    balance (``fences_balanced``)."""
    axis = corpus_axis(docs.values())
    known = np.asarray([c.doc_id in axis.index for c in chunks], dtype=bool).reshape(-1)
    doc = as_ints([axis.index.get(c.doc_id, 0) for c in chunks])
    start, end = as_ints([c.start for c in chunks]), as_ints([c.end for c in chunks])
    cut = axis.in_fence(doc, start) | axis.in_fence(doc, end) if axis.docs else known
    return np.asarray([not x if k else fences_balanced(c.text)
                       for c, k, x in zip(chunks, known, cut, strict=True)],
                      dtype=bool).reshape(len(chunks))


def label_values(chunks: Sequence[Chunk], docs: dict) -> np.ndarray:
    """Per chunk: 1.0 when it lies inside labelled containers and carries their labels, 0.0
    when it does not carry them, NaN inside none or for a document not in ``docs``
    (``invariants.label_kept``)."""
    found = (invariants.label_kept(docs[c.doc_id], c) if c.doc_id in docs else None
             for c in chunks)
    return np.asarray([math.nan if kept is None else float(kept) for kept in found],
                      dtype=float).reshape(len(chunks))


@dataclass(frozen=True, slots=True)
class Bundles:
    """What each of ``queries`` queries is handed, flat: entry i is row ``row[i]`` of the
    chunk table at rank ``rank[i]`` (from 1) of query ``query[i]``, sorted by query and rank."""

    queries: int
    query: np.ndarray
    rank: np.ndarray
    row: np.ndarray

    @classmethod
    def top(cls, ranking: np.ndarray, k: int) -> Bundles:
        """The first ``k`` chunks of each ranking."""
        head = ranking[:, :k]
        query, column = np.nonzero(head >= 0)
        return cls(len(ranking), query.astype(INT), column.astype(INT) + 1, head[query, column])

    @classmethod
    def budget(cls, table: ChunkTable, ranking: np.ndarray, budget: int) -> Bundles:
        """The chunks that fill ``budget`` tokens from each ranking (``budget.fill``): those
        that go in whole, then the one truncated, a row of the table of its own."""
        lengths = (ranking >= 0).sum(axis=1)
        safe = np.maximum(ranking, 0)
        whole, room = fill(table.cost[safe], table.label_cost[safe], lengths, budget)
        query, column = np.nonzero(np.arange(ranking.shape[1]) < whole[:, None])
        cut = np.flatnonzero(room)
        rows = table.truncated(ranking[cut, whole[cut]], room[cut])
        query = np.concatenate([query, cut]).astype(INT)
        rank = np.concatenate([column + 1, whole[cut] + 1]).astype(INT)
        row = np.concatenate([ranking[query[:len(column)], column], rows]).astype(INT)
        order = np.lexsort((rank, query))
        return cls(len(ranking), query[order], rank[order], row[order])


@dataclass(frozen=True, slots=True)
class Targets:
    """The spans that answer the queries, flat: span i is chars [lo, hi) of the document of
    key ``doc[i]`` for query ``query[i]``, and tokens [tok_lo, tok_hi) of the axis (0, 0 in
    a document not given). ``has`` marks the queries that have any."""

    has: np.ndarray
    query: np.ndarray
    doc: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    tok_lo: np.ndarray
    tok_hi: np.ndarray

    @classmethod
    def of(cls, spans: Sequence[Sequence[tuple[str, int, int]] | None],
           key_of: Callable[[str], int], axis: CorpusAxis | None = None) -> Targets:
        """Targets from each query's spans ((doc id, start, end)), None for a query without;
        documents known by ``key_of`` (``ChunkTable.key_of``), tokens placed on ``axis``
        (none without it)."""
        flat = [(i, key_of(d), a, b) for i, found in enumerate(spans)
                for d, a, b in (found or ())]
        query, doc, lo, hi = (as_ints(column) for column in zip(*flat, strict=True)) \
            if flat else (as_ints([]),) * 4
        known = doc < (len(axis.docs) if axis else 0)
        tok_lo, tok_hi = axis.tokens(np.where(known, doc, 0), lo, hi) if axis and axis.docs \
            else (np.zeros(len(doc), dtype=INT),) * 2
        has = np.asarray([bool(found) for found in spans], dtype=bool).reshape(len(spans))
        return cls(has, query, doc, lo, hi, np.where(known, tok_lo, 0).astype(INT),
                   np.where(known, tok_hi, 0).astype(INT))

    @classmethod
    def of_table(cls, table: ChunkTable,
                 spans: Sequence[Sequence[tuple[str, int, int]] | None]) -> Targets:
        """``of`` with the documents and token axis of ``table``."""
        return cls.of(spans, table.key_of, table.axis)


def one_bundle(chunks: Sequence[Chunk], docs: dict | None = None) -> tuple[ChunkTable, Bundles]:
    """The table of ``chunks`` and the one bundle that holds them all, in their order: how
    a metric of a single bundle is read from its column."""
    table = ChunkTable(chunks, docs or {})
    rows = np.arange(len(table.chunks), dtype=INT)
    return table, Bundles(1, np.zeros(len(rows), dtype=INT), rows + 1, rows)


_FENCE = re.compile(r"^[ \t]*(```|~~~)")


def fences_balanced(text: str, *, closed_by_end: bool = False) -> bool:
    """True when every fence char type has an even number of fence lines.

    A fence line is a line whose start, after spaces and tabs, is three or more backticks
    or tildes; backtick and tilde lines are counted separately. A chunk cut inside a fenced
    block leaves one of the counts odd. ``closed_by_end``: the text ends where its document
    ends, which closes a fence still open (CommonMark), so the last fence may stay open.
    """
    counts = {"```": 0, "~~~": 0}
    last = None
    for line in text.splitlines():
        match = _FENCE.match(line)
        if match:
            last = match.group(1)
            counts[last] += 1
    if closed_by_end and last is not None:
        counts[last] += counts[last] % 2
    return all(n % 2 == 0 for n in counts.values())
