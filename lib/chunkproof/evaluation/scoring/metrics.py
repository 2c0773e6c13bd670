"""Per-query retrieval, answer-span and bundle metrics as tidy rows; per-config chunk statistics."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pytrec_eval

from ...chunking import sizes as chunk_sizes
from ...chunking.config import ChunkerConfig
from ...chunking.records import Chunk
from ...chunking.sizes import SIZE_FIELDS, TOKENIZER, encoder_window, token_counts
from ...errors import MetricError
from ..queries.queries import Query, documents_by_id
from ..retrieval.budget import budget_name, fill_budget
from . import invariants, leakage
from .spans import (
    Target,
    best_precision,
    overlap_metrics,
    precision_omega,
    section_efficiency,
    span_metrics,
)

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


def chunk_intact(chunk, docs: dict) -> bool:
    """No boundary of the chunk falls inside a fenced code block of its document, at any depth
    (a fence in a list item, a quote or a ``:::`` container counts as much as a top-level
    one). Without its document in ``docs``, the chunk's own fence lines must balance."""
    doc = docs.get(chunk.doc_id)
    if doc is None:
        return fences_balanced(chunk.text)
    return not any(
        fence.start < cut < fence.end
        for fence in doc.atoms
        if fence.kind == "fence"
        for cut in (chunk.start, chunk.end)
    )


def label_share(chunks: Sequence, docs: dict) -> float:
    """``label_kept``: the share of chunks lying inside a labelled container (a tab, an
    admonition, a directive) whose breadcrumb, prefix or text carries its label (NaN when no
    chunk lies inside one, or none's document is in ``docs``)."""
    kept = [invariants.label_kept(docs[c.doc_id], c) for c in chunks if c.doc_id in docs]
    return _share([flag for flag in kept if flag is not None])


def hit_ids(hits: Iterable) -> list[str]:
    """Chunk ids of a ranking given as (id, score) pairs or bare ids."""
    return [h[0] if isinstance(h, tuple | list) else h for h in hits]


def distinct_docs(chunks: Sequence) -> list[str]:
    """Document ids of ranked chunks, each once, in order of first occurrence."""
    return list(dict.fromkeys(c.doc_id for c in chunks))


def answer_span(query: Query, docs: dict) -> tuple[str, int, int]:
    """(doc id, start, end) of the answer in the query's first source."""
    source = query.sources[0]
    if source not in docs:
        raise MetricError(f"query {query.id!r}: source {source!r} is not among the documents")
    if query.answer is None:
        raise MetricError(f"query {query.id!r} has no answer span")
    start = docs[source].text.find(query.answer)
    if start < 0:
        raise MetricError(
            f"query {query.id!r}: answer {query.answer[:60]!r} is not in {source!r}"
        )
    return source, start, start + len(query.answer)


def _covered(spans: list[tuple[int, int]], start: int, end: int) -> int:
    """Chars of [start, end) inside the union of ``spans``."""
    mask = np.zeros(end - start, dtype=bool)
    for a, b in spans:
        mask[max(a, start) - start : max(min(b, end) - start, 0)] = True
    return int(mask.sum())


def answer_metrics(top: Sequence, span: tuple[str, int, int], k: int | str
                   ) -> dict[str, float]:
    """Span metrics of one query's top-k chunks against its answer span.

    - ``answer_hit@k``: 1 when some top-k chunk of the source spans the whole answer.
    - ``answer_recall@k``: share of answer chars inside the union of those chunks' spans.
    - ``answer_precision@k``: answer chars covered / chars of all top-k chunk texts
      (NaN for an empty bundle).
    - ``answer_mrr@k``: 1/rank of the first chunk spanning the whole answer, 0 when none of
      the top k does (ranks beyond k are not looked at, as for ``mrr@k``).
    """
    doc_id, start, end = span
    spans = [(c.start, c.end) for c in top if c.doc_id == doc_id]
    whole = [
        rank for rank, c in enumerate(top, 1)
        if c.doc_id == doc_id and c.start <= start and end <= c.end
    ]
    covered = _covered(spans, start, end)
    bundle = sum(len(c.text) for c in top)
    return {
        f"answer_hit@{k}": float(bool(whole)),
        f"answer_recall@{k}": covered / (end - start),
        f"answer_precision@{k}": covered / bundle if bundle else math.nan,
        f"answer_mrr@{k}": 1.0 / whole[0] if whole else 0.0,
    }


def bundle_metrics(
    top: Sequence, sources: Iterable[str], k: int | str, *, docs: dict | None = None,
    whole: Sequence | None = None,
) -> dict[str, float]:
    """``bundle_efficiency@k`` (gold-source share of the top-k context chars),
    ``code_integrity@k`` (share of top-k chunks that are ``chunk_intact``: of ``whole``,
    the same chunks before a budget truncated the last, when given) and ``label_kept@k``
    (``label_share`` of the top k); NaN when empty."""
    gold = set(sources)
    total = sum(len(c.context_text) for c in top)
    on_topic = sum(len(c.context_text) for c in top if c.doc_id in gold)
    return {
        f"bundle_efficiency@{k}": on_topic / total if total else math.nan,
        f"code_integrity@{k}": _share([chunk_intact(c, docs or {})
                                       for c in (top if whole is None else whole)]),
        f"label_kept@{k}": label_share(top, docs or {}),
    }


FILE_MEASURES = {"recall": "recall", "success": "hit", "ndcg_cut": "ndcg"}


def file_metrics(doc_lists: dict[str, list[str]], queries: Sequence[Query], k: int) -> dict:
    """``{query id: {recall@k, hit@k, mrr@k, ndcg@k}}`` by pytrec_eval, all queries in one call.

    ``doc_lists`` holds each query's ranked distinct documents; it is cut at k here. Scores
    handed to trec_eval decrease with rank, so its ordering is exactly ours.
    """
    qrels = {q.id: {doc: 1 for doc in q.sources} for q in queries}
    measures = {f"{m}.{k}" for m in FILE_MEASURES} | {"recip_rank"}
    run = {}
    for qid, docs in doc_lists.items():
        cut = docs[:k]
        run[qid] = {doc: float(len(cut) - rank) for rank, doc in enumerate(cut)}
    scored = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    names = {f"{m}_{k}": f"{name}@{k}" for m, name in FILE_MEASURES.items()}
    names["recip_rank"] = f"mrr@{k}"
    return {
        q.id: {name: float(scored.get(q.id, {}).get(key, 0.0)) for key, name in names.items()}
        for q in queries
    }


def _resolve(results: Sequence, queries: Sequence[Query], chunks: Iterable) -> list[list]:
    if len(results) != len(queries):
        raise MetricError(f"{len(results)} rankings for {len(queries)} queries: not aligned")
    by_id = {c.id: c for c in chunks}
    ranked = []
    for query, hits in zip(queries, results, strict=True):
        ids = hit_ids(hits)
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise MetricError(f"query {query.id!r}: unknown chunk id(s) {unknown[:3]}")
        if not query.sources:
            raise MetricError(f"query {query.id!r} has no gold sources")
        ranked.append([by_id[i] for i in ids])
    return ranked


def score_run(
    results: Sequence,
    queries: Sequence[Query],
    chunks: Iterable,
    *,
    docs=None,
    ks: Sequence[int] = (5,),
    budgets: Sequence[int] = (),
    config_id: str = "",
    reader: Callable[[list], list] | None = None,
) -> list[dict]:
    """One row ``{config_id, query_id, query_kind, metric, value}`` per query and metric.

    ``results[i]`` is the ranking returned for ``queries[i]`` (``Retriever.search`` output).
    Every metric at k reads the same top-k chunks, the bundle a reader is handed: file-level
    metrics use the distinct documents of those chunks. Each budget B gives a second bundle,
    the top chunks until B tokens are filled (``budget.fill_budget``), scored on hit, answer,
    span and bundle metrics named ``@bB``. Answer and span metrics are added for queries with
    an answer and need ``docs`` (a Corpus, Documents or ``{id: Document}``), and so does
    ``precision_omega`` (one value per query, whatever k or B). ``reader`` (a retrieval
    mode's, ``modes.reader``) turns a ranking into what the budget fills with.
    """
    chunks = list(chunks)
    ranked = _resolve(results, queries, chunks)
    config_id = config_id or (chunks[0].config_id if chunks else "")
    docs = documents_by_id(docs) if docs is not None else {}
    spans = {q.id: answer_span(q, docs) for q in queries if q.answer is not None}
    sections = {q.id: gold_sections(q, docs) for q in queries if q.gold_spans}
    values: dict[str, dict[str, float]] = {q.id: {} for q in queries}
    for k in ks:
        tops = [r[:k] for r in ranked]
        doc_lists = {q.id: distinct_docs(t) for q, t in zip(queries, tops, strict=True)}
        files = file_metrics(doc_lists, queries, k)
        for query, top in zip(queries, tops, strict=True):
            values[query.id].update(files[query.id])
            values[query.id].update(bundle_values(top, query, k, docs, spans.get(query.id),
                                                  sections.get(query.id)))
    handed = [reader(r) for r in ranked] if reader and budgets else ranked
    for budget in budgets:
        cut = budget_name(budget)
        for query, ranking in zip(queries, handed, strict=True):
            bundle = fill_budget(ranking, budget)
            gold = set(query.sources)
            values[query.id][f"hit@{cut}"] = float(any(c.doc_id in gold for c in bundle))
            values[query.id].update(bundle_values(bundle, query, cut, docs,
                                                  spans.get(query.id), sections.get(query.id),
                                                  whole=ranking[:len(bundle)]))
    by_doc: dict[str, list] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    for qid, span in spans.items():
        values[qid]["precision_omega"] = precision_omega(by_doc.get(span[0], []), span, docs)
    for qid, targets in sections.items():
        values[qid]["section_precision_omega"] = best_precision(chunks, targets, docs)
    for query in queries:
        targets_of = sections.get(query.id) or ([spans[query.id]] if query.id in spans else None)
        values[query.id].update(leakage.leak_values(query, by_doc, targets_of))
    return [
        {"config_id": config_id, "query_id": query.id, "query_kind": query.kind,
         "metric": name, "value": value}
        for query in queries for name, value in values[query.id].items()
    ]


def gold_sections(query: Query, docs: dict) -> list[Target]:
    """The query's gold spans as (doc id, start, end); MetricError when a document is not
    among ``docs`` (its token grid is needed)."""
    missing = sorted({g.doc for g in query.gold_spans} - set(docs))
    if missing:
        raise MetricError(f"query {query.id!r}: gold span document(s) {missing} are not among "
                          "the documents")
    return [(g.doc, g.start, g.end) for g in query.gold_spans]


def bundle_values(bundle: Sequence, query: Query, cut: int | str, docs: dict,
                  span: tuple[str, int, int] | None,
                  sections: Sequence[Target] | None = None,
                  whole: Sequence | None = None) -> dict[str, float]:
    """Bundle metrics of one bundle; its answer and span metrics when there is an answer
    span; its section metrics when the query has gold sections: ``section_efficiency`` (the
    on-topic share of the reader's chars) and the token overlap ``section_iou``,
    ``section_precision``, ``section_recall`` against their union. ``whole``: the bundle's
    chunks as the chunker cut them, before a budget truncated the last one (code integrity
    judges the chunker's boundaries, not the budget's cut)."""
    found = bundle_metrics(bundle, query.sources, cut, docs=docs, whole=whole)
    if span is not None:
        found.update(answer_metrics(bundle, span, cut))
        found.update(span_metrics(bundle, span, docs, cut))
    if sections:
        found[f"section_efficiency@{cut}"] = section_efficiency(bundle, sections)
        found.update(overlap_metrics(bundle, sections, docs, cut, name="section"))
    return found


# --- per-config chunk statistics --------------------------------------------------------


def recorded_sizes(chunks: Sequence, unit: str) -> np.ndarray:
    """The sizes the chunk records carry (``n_chars``, ``n_words`` or ``n_tokens``)."""
    return np.asarray([getattr(c, SIZE_FIELDS[unit]) for c in chunks], dtype=float)


def lost_characters(chunks: Iterable, docs: dict) -> tuple[int, int]:
    """(non-whitespace chars of ``docs`` outside every chunk span, non-whitespace chars)."""
    by_doc: dict[str, list] = {doc_id: [] for doc_id in docs}
    for chunk in chunks:
        if chunk.doc_id not in by_doc:
            raise MetricError(f"chunk {chunk.id} belongs to {chunk.doc_id!r}, not in docs")
        by_doc[chunk.doc_id].append(chunk)
    counts = [invariants.lost_chars(docs[d], chunks_of) for d, chunks_of in by_doc.items()]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def embed_token_counts(chunks: Sequence[Chunk]) -> tuple[list[float], str]:
    """Tokens of each chunk's embed text as the encoder sees it ([CLS]/[SEP] included), and
    how they were made. With the tokenizer: the chunk's ``n_tokens`` plus its prefix's, each
    distinct prefix counted once (a prefix that ends in whitespace shares no word with the
    text, so the counts add up; any other is counted with its text); without it, each embed
    text estimated whole (and counted whole by a tokenizer whose counts do not add up word by
    word)."""
    if not chunk_sizes.tokens_available() or not chunk_sizes.words_add_up():
        return token_counts([c.embed_text for c in chunks], special=True)
    special = chunk_sizes.tokenizer().num_special_tokens_to_add(False)
    prefixes = list({c.embed_prefix for c in chunks})
    of_prefix = dict(zip(prefixes, chunk_sizes.count_tokens(prefixes), strict=True))
    return [float(special + (of_prefix[c.embed_prefix] + c.n_tokens
                             if not c.embed_prefix or c.embed_prefix[-1].isspace()
                             else chunk_sizes.count_one(c.embed_text)))
            for c in chunks], TOKENIZER


def _share(flags) -> float:
    return float(np.mean(flags)) if len(flags) else math.nan


def _spread(values: np.ndarray, name: str) -> dict[str, float]:
    if not len(values):
        return {f"{name}_p50": math.nan, f"{name}_p95": math.nan, f"{name}_max": math.nan}
    p50, p95 = np.percentile(values, [50, 95])
    return {
        f"{name}_p50": float(p50), f"{name}_p95": float(p95), f"{name}_max": float(values.max())
    }


@dataclass(frozen=True, slots=True)
class ChunkStats:
    """Structural figures of one config's chunks: a row of chunk_stats.csv but its options
    column (``tables.CHUNK_STATS`` says what each column means)."""

    config_id: str
    strategy: str
    size: int
    unit: str
    documents: int
    chunks: int
    size_p50: float
    size_p95: float
    size_max: float
    chars_p50: float
    chars_p95: float
    chars_max: float
    tokens_p50: float
    tokens_p95: float
    code_integrity: float
    label_kept: float
    heading_only: int
    heading_only_share: float
    oversize: int
    oversize_share: float
    lost_chars: int
    lost_share: float
    verbatim_share: float
    single_chunk_docs_share: float
    over_encoder_limit: float
    over_encoder_limit_method: str
    index_tokens: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def chunk_stats(chunks: Sequence[Chunk], config: ChunkerConfig, *, docs: Any) -> ChunkStats:
    """The structural figures of one config's chunks of ``docs``.

    Sizes are the records' own sizes of ``chunk.text``, in the config's unit (``size_*``), in
    chars (``chars_*``) and in tokens (``tokens_*``, the realised size);
    ``oversize`` counts chunks above ``config.size``; ``lost_chars`` counts non-whitespace
    document chars outside every chunk span; ``over_encoder_limit`` is the share of embed
    texts longer than the encoder window, with how it was counted in ``*_method``;
    ``index_tokens`` the tokens of every embed text: what the index costs to embed and
    store.
    """
    chunks = list(chunks)
    docs = documents_by_id(docs)
    sizes = recorded_sizes(chunks, config.unit)
    lost, solid = lost_characters(chunks, docs)
    counts, method = embed_token_counts(chunks) if chunks else ([], "none")
    over = float(np.mean(np.asarray(counts) > encoder_window())) if chunks else math.nan
    by_doc: dict[str, list] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    heading_only = sum(invariants.heading_only(docs[d], cs) for d, cs in by_doc.items())
    oversize = int((sizes > config.size).sum())
    n = len(chunks)
    tokens = _spread(recorded_sizes(chunks, "tokens"), "tokens")
    return ChunkStats(
        config_id=config.config_id, strategy=config.strategy, size=config.size,
        unit=config.unit, documents=len(docs), chunks=n,
        **_spread(sizes, "size"), **_spread(recorded_sizes(chunks, "chars"), "chars"),
        tokens_p50=tokens["tokens_p50"], tokens_p95=tokens["tokens_p95"],
        code_integrity=_share([chunk_intact(c, docs) for c in chunks]),
        label_kept=label_share(chunks, docs),
        heading_only=heading_only, heading_only_share=heading_only / n if n else math.nan,
        oversize=oversize, oversize_share=oversize / n if n else math.nan,
        lost_chars=lost, lost_share=lost / solid if solid else 0.0,
        verbatim_share=_share([c.verbatim for c in chunks]),
        single_chunk_docs_share=_share([len(by_doc.get(d, ())) == 1 for d in docs]),
        over_encoder_limit=over, over_encoder_limit_method=method,
        index_tokens=int(round(sum(counts))),
    )
