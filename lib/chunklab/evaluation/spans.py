"""Token-level span overlap of a retrieved bundle with an answer span: IoU, precision, recall,
and precision-Omega (the best precision the chunking allows), counted on each document's
token grid."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ..chunking.sizes import token_starts, tokens_between

Span = tuple[int, int]


def merge(spans: Iterable[Span]) -> list[Span]:
    """The union of char intervals [start, end) as sorted, disjoint intervals."""
    merged: list[list[int]] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


def tokens_in(starts: Sequence[int], spans: Iterable[Span]) -> int:
    """Tokens (by their first char) inside the union of ``spans``."""
    return sum(tokens_between(starts, a, b) for a, b in merge(spans))


def clip(spans: Iterable[Span], start: int, end: int) -> list[Span]:
    """``spans`` cut to [start, end)."""
    return [(max(a, start), min(b, end)) for a, b in spans if a < end and b > start]


def overlap_counts(bundle: Sequence, answer: tuple[str, int, int], docs: dict) -> tuple:
    """(answer tokens, bundle tokens, answer tokens inside the bundle).

    The bundle's tokens are those of the union of its chunks' spans in each document (an
    overlap counted once); chunks of other documents count in the bundle, never in the
    answer (those of a document not in ``docs`` on their own text's grid)."""
    doc_id, start, end = answer
    by_doc: dict[str, list[Span]] = {}
    unknown = 0  # chunks of documents not given: their own token counts
    for chunk in bundle:
        if chunk.doc_id in docs:
            by_doc.setdefault(chunk.doc_id, []).append((chunk.start, chunk.end))
        else:
            unknown += len(token_starts(chunk.text))
    grids = {d: token_starts(docs[d].text) for d in {doc_id, *by_doc}}
    retrieved = unknown + sum(tokens_in(grids[d], spans) for d, spans in by_doc.items())
    expected = tokens_between(grids[doc_id], start, end)
    inside = tokens_in(grids[doc_id], clip(by_doc.get(doc_id, []), start, end))
    return expected, retrieved, inside


def ratios(expected: int, retrieved: int, inside: int) -> tuple[float, float, float]:
    """(IoU, precision, recall) from token counts; NaN where a denominator is zero."""
    union = expected + retrieved - inside
    return (inside / union if union else math.nan,
            inside / retrieved if retrieved else math.nan,
            inside / expected if expected else math.nan)


def span_metrics(bundle: Sequence, answer: tuple[str, int, int], docs: dict,
                 cut: str | int) -> dict[str, float]:
    """``span_iou``, ``span_precision`` and ``span_recall`` at ``cut`` (k or a budget):

    with E the answer's tokens and R the bundle's, IoU = |E ∩ R| / |E ∪ R|, precision =
    |E ∩ R| / |R| (NaN for an empty bundle), recall = |E ∩ R| / |E|."""
    iou, precision, recall = ratios(*overlap_counts(bundle, answer, docs))
    return {f"span_iou@{cut}": iou, f"span_precision@{cut}": precision,
            f"span_recall@{cut}": recall}


def precision_omega(chunks: Sequence, answer: tuple[str, int, int], docs: dict) -> float:
    """The span precision of the bundle of every chunk holding an answer token: the best
    precision any retriever can reach with this chunking while recalling all it can."""
    doc_id, start, end = answer
    grid = token_starts(docs[doc_id].text)
    holding = [c for c in chunks if c.doc_id == doc_id
               and tokens_in(grid, clip([(c.start, c.end)], start, end))]
    return ratios(*overlap_counts(holding, answer, docs))[1]
