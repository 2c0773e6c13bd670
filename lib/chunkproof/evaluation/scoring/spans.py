"""Token-level span overlap of retrieved bundles with targets (an answer span, or the gold
sections of a mined query): IoU, precision, recall, and precision-Omega (the best precision
the chunking allows), counted on each document's token grid; and the on-topic share of the
bundle's reader text, in chars. Each is a column over every query at once
(``bundles.Bundles``); the functions named for one bundle read the column of a bundle of one."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from .bundles import Bundles, ChunkTable, Targets, one_bundle
from .ragged import INT, merged, overlaps, pairs, ratio, sums, union_size

Span = tuple[int, int]
Target = tuple[str, int, int]
"""(document id, start, end) of a span a query is answered by."""


def merge(spans: Iterable[Span]) -> list[Span]:
    """The union of char intervals [start, end) as sorted, disjoint intervals."""
    spans = list(spans)
    _, lo, hi = merged(np.zeros(len(spans), dtype=INT), [a for a, _ in spans],
                       [b for _, b in spans])
    return list(zip(lo.tolist(), hi.tolist(), strict=True))


def ratios(expected, retrieved, inside) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(IoU, precision, recall) from token counts; NaN where a denominator is zero."""
    expected, retrieved, inside = (np.asarray(v, dtype=INT) for v in
                                   (expected, retrieved, inside))
    return (ratio(inside, expected + retrieved - inside), ratio(inside, retrieved),
            ratio(inside, expected))


def overlap_counts(table: ChunkTable, query, rows, targets: Targets, groups: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query: (target tokens, bundle tokens, target tokens inside the bundle) of the
    chunks ``rows`` handed to queries ``query``. The target's tokens are those of the union
    of its spans, the bundle's those of the union of its chunks' spans (an overlap counted
    once); a chunk of a document not given counts its own text's tokens in the bundle."""
    query, rows = np.asarray(query, dtype=INT), np.asarray(rows, dtype=INT)
    known = table.doc[rows] < len(table.axis.docs)
    q, lo, hi = query[known], table.tok_lo[rows[known]], table.tok_hi[rows[known]]
    expected = union_size(targets.query, targets.tok_lo, targets.tok_hi, groups)
    retrieved = union_size(q, lo, hi, groups)
    both = union_size(np.concatenate([q, targets.query]), np.concatenate([lo, targets.tok_lo]),
                      np.concatenate([hi, targets.tok_hi]), groups)
    unknown = sums(query[~known], table.own_tokens[rows[~known]], groups)
    return expected, retrieved + unknown, expected + retrieved - both


def overlap_columns(table: ChunkTable, bundles: Bundles, targets: Targets, cut: str | int,
                    *, name: str) -> dict[str, np.ndarray]:
    """``{name}_iou``, ``{name}_precision`` and ``{name}_recall`` at ``cut`` of every bundle
    against the union of its query's targets: with E the target's tokens and R the bundle's,
    IoU = |E ∩ R| / |E ∪ R|, precision = |E ∩ R| / |R| (NaN for an empty bundle), recall =
    |E ∩ R| / |E|."""
    found = ratios(*overlap_counts(table, bundles.query, bundles.row, targets, bundles.queries))
    return dict(zip((f"{name}_iou@{cut}", f"{name}_precision@{cut}", f"{name}_recall@{cut}"),
                    found, strict=True))


def best_precision_column(table: ChunkTable, targets: Targets, groups: int) -> np.ndarray:
    """Precision-Omega of each query: the precision of the bundle of every chunk of the
    config holding a target token, the best any retriever can reach with this chunking
    while recalling all it can."""
    rows = np.flatnonzero(table.doc[:table.ranked] < len(table.axis.docs))
    which, at = overlaps(targets.tok_lo, targets.tok_hi, table.tok_lo[rows], table.tok_hi[rows])
    held = rows[at]
    holds = (np.maximum(table.tok_lo[held], targets.tok_lo[which])
             < np.minimum(table.tok_hi[held], targets.tok_hi[which]))
    holding = overlap_counts(table, targets.query[which[holds]], held[holds], targets, groups)
    return ratios(*holding)[1]


def section_efficiency_column(table: ChunkTable, bundles: Bundles,
                              targets: Targets) -> np.ndarray:
    """Chars of each bundle's ``context_text`` that lie inside a target span / all its chars:
    the on-topic share of what a reader is handed. A chunk's chars inside a gold section are
    its span's overlap with the union of the sections (capped at its text); a prefix line
    (breadcrumb, source label) lies in no section, so it counts as off-topic. NaN when the
    bundle is empty."""
    n, keys = bundles.queries, len(table.keys)
    group, lo, hi = merged(targets.query * keys + targets.doc, targets.lo, targets.hi)
    owner = group // keys
    first = np.searchsorted(owner, np.arange(n), side="left")
    count = np.searchsorted(owner, np.arange(n), side="right") - first
    entry, target = pairs(first[bundles.query], count[bundles.query])
    rows = bundles.row[entry]
    overlap = np.where(table.doc[rows] == group[target] % keys,
                       np.minimum(table.end[rows], hi[target])
                       - np.maximum(table.start[rows], lo[target]), 0)
    inside = np.minimum(sums(entry, np.maximum(overlap, 0), len(bundles.row)),
                        table.text_len[bundles.row])
    return ratio(sums(bundles.query, inside, n),
                 sums(bundles.query, table.context_len[bundles.row], n))


# --- one bundle ----------------------------------------------------------------------------


def span_metrics(bundle: Sequence, answer: Target, docs: dict, cut: str | int, *,
                 name: str = "span") -> dict[str, float]:
    """``span_iou``, ``span_precision`` and ``span_recall`` at ``cut`` (k or a budget) of one
    bundle against an answer span (``overlap_columns``)."""
    return overlap_metrics(bundle, [answer], docs, cut, name=name)


def overlap_metrics(bundle: Sequence, targets: Sequence[Target], docs: dict, cut: str | int,
                    *, name: str) -> dict[str, float]:
    """``overlap_columns`` of one bundle against the union of ``targets``."""
    table, one = one_bundle(bundle, docs)
    found = overlap_columns(table, one, Targets.of_table(table, [targets]), cut, name=name)
    return {key: float(value[0]) for key, value in found.items()}


def precision_omega(chunks: Sequence, answer: Target, docs: dict) -> float:
    """The span precision of the bundle of every chunk holding an answer token
    (``best_precision_column``)."""
    return best_precision(chunks, [answer], docs)


def best_precision(chunks: Sequence, targets: Sequence[Target], docs: dict) -> float:
    """``best_precision_column`` of one query's targets among ``chunks``."""
    table, _ = one_bundle(chunks, docs)
    return float(best_precision_column(table, Targets.of_table(table, [targets]), 1)[0])


def section_efficiency(bundle: Sequence, targets: Sequence[Target]) -> float:
    """``section_efficiency_column`` of one bundle."""
    table, one = one_bundle(bundle)
    return float(section_efficiency_column(table, one, Targets.of_table(table, [targets]))[0])
