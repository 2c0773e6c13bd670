"""Token-level span overlap of a retrieved bundle with a target (an answer span, or the gold
sections of a mined query): IoU, precision, recall, and precision-Omega (the best precision
the chunking allows), counted on each document's token grid; and the on-topic share of the
bundle's reader text, in chars."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ...chunking.sizes import token_starts, tokens_between

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


Target = tuple[str, int, int]
"""(document id, start, end) of a span a query is answered by."""


def overlap_counts(bundle: Sequence, answer: Target, docs: dict) -> tuple:
    """(answer tokens, bundle tokens, answer tokens inside the bundle): ``target_counts`` of
    one span."""
    return target_counts(bundle, [answer], docs)


def _by_doc(spans: Iterable[Target]) -> dict[str, list[Span]]:
    grouped: dict[str, list[Span]] = {}
    for doc_id, start, end in spans:
        grouped.setdefault(doc_id, []).append((start, end))
    return grouped


def target_counts(bundle: Sequence, targets: Sequence[Target], docs: dict) -> tuple:
    """(target tokens, bundle tokens, target tokens inside the bundle).

    The target's tokens are those of the union of its spans; the bundle's those of the union
    of its chunks' spans in each document (an overlap counted once); chunks of documents
    holding no target count in the bundle, never in the target (those of a document not in
    ``docs`` on their own text's grid)."""
    wanted = _by_doc(targets)
    by_doc: dict[str, list[Span]] = {}
    unknown = 0  # chunks of documents not given: their own token counts
    for chunk in bundle:
        if chunk.doc_id in docs:
            by_doc.setdefault(chunk.doc_id, []).append((chunk.start, chunk.end))
        else:
            unknown += len(token_starts(chunk.text))
    grids = {d: token_starts(docs[d].text) for d in {*wanted, *by_doc}}
    retrieved = unknown + sum(tokens_in(grids[d], spans) for d, spans in by_doc.items())
    expected = sum(tokens_in(grids[d], spans) for d, spans in wanted.items())
    inside = sum(tokens_in(grids[d], [c for a, b in merge(spans)
                                      for c in clip(by_doc.get(d, []), a, b)])
                 for d, spans in wanted.items())
    return expected, retrieved, inside


def ratios(expected: int, retrieved: int, inside: int) -> tuple[float, float, float]:
    """(IoU, precision, recall) from token counts; NaN where a denominator is zero."""
    union = expected + retrieved - inside
    return (inside / union if union else math.nan,
            inside / retrieved if retrieved else math.nan,
            inside / expected if expected else math.nan)


def span_metrics(bundle: Sequence, answer: Target, docs: dict, cut: str | int, *,
                 name: str = "span") -> dict[str, float]:
    """``span_iou``, ``span_precision`` and ``span_recall`` at ``cut`` (k or a budget):

    with E the answer's tokens and R the bundle's, IoU = |E ∩ R| / |E ∪ R|, precision =
    |E ∩ R| / |R| (NaN for an empty bundle), recall = |E ∩ R| / |E|."""
    return overlap_metrics(bundle, [answer], docs, cut, name=name)


def overlap_metrics(bundle: Sequence, targets: Sequence[Target], docs: dict, cut: str | int,
                    *, name: str) -> dict[str, float]:
    """``{name}_iou``, ``{name}_precision`` and ``{name}_recall`` at ``cut`` against the union
    of ``targets``."""
    iou, precision, recall = ratios(*target_counts(bundle, targets, docs))
    return {f"{name}_iou@{cut}": iou, f"{name}_precision@{cut}": precision,
            f"{name}_recall@{cut}": recall}


def precision_omega(chunks: Sequence, answer: Target, docs: dict) -> float:
    """The span precision of the bundle of every chunk holding an answer token: the best
    precision any retriever can reach with this chunking while recalling all it can."""
    return best_precision(chunks, [answer], docs)


def best_precision(chunks: Sequence, targets: Sequence[Target], docs: dict) -> float:
    """Precision-Omega against the union of ``targets``: the precision of the bundle of every
    chunk holding a target token."""
    wanted = _by_doc(targets)
    grids = {d: token_starts(docs[d].text) for d in wanted}
    holding = [c for c in chunks if c.doc_id in wanted
               and any(tokens_in(grids[c.doc_id], clip([(c.start, c.end)], a, b))
                       for a, b in wanted[c.doc_id])]
    return ratios(*target_counts(holding, targets, docs))[1]


def section_efficiency(bundle: Sequence, targets: Sequence[Target]) -> float:
    """Chars of the bundle's ``context_text`` that lie inside a target span / all its chars:
    the on-topic share of what a reader is handed. A chunk's chars inside a gold section are
    its span's overlap with the union of the sections (capped at its text); a prefix line
    (breadcrumb, source label) lies in no section, so it counts as off-topic. NaN when the
    bundle is empty."""
    wanted = {d: merge(spans) for d, spans in _by_doc(targets).items()}
    total = inside = 0
    for chunk in bundle:
        total += len(chunk.context_text)
        spans = clip(wanted.get(chunk.doc_id, []), chunk.start, chunk.end)
        inside += min(sum(b - a for a, b in spans), len(chunk.text))
    return inside / total if total else math.nan
