"""Per-query retrieval, answer-span and bundle metrics as tidy rows, scored column-wise: every
query of a config at once (``Scorer``), each metric a numpy column over the flat bundles of
``bundles``; ``score_run`` scores one set of rankings. The functions named for one bundle
read the same columns for a bundle of one."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import pytrec_eval

from ...errors import MetricError
from ..queries.queries import Query, documents_by_id
from ..retrieval.budget import budget_name
from . import leakage
from .bundles import Bundles, ChunkTable, Targets, one_bundle
from .columns import (
    answer_columns,
    bundle_columns,
    distinct_documents,
    gold_codes,
    hit_column,
)
from .spans import (
    Target,
    best_precision_column,
    overlap_columns,
    section_efficiency_column,
)

Column = tuple[str, np.ndarray, np.ndarray]
"""(metric name, one value a query, which queries have it)."""


def hit_ids(hits: Iterable) -> list[str]:
    """Chunk ids of a ranking given as (id, score) pairs or bare ids."""
    return [h if isinstance(h, str) else h[0] for h in hits]


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


def gold_sections(query: Query, docs: dict) -> list[Target]:
    """The query's gold spans as (doc id, start, end); MetricError when a document is not
    among ``docs`` (its token grid is needed)."""
    missing = sorted({g.doc for g in query.gold_spans} - set(docs))
    if missing:
        raise MetricError(f"query {query.id!r}: gold span document(s) {missing} are not among "
                          "the documents")
    return [(g.doc, g.start, g.end) for g in query.gold_spans]


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


class Scorer:
    """One config's chunks (``bundles.ChunkTable``) and the queries, with what answers each
    (its answer span, its gold sections, its gold sources), ready to score rankings: every
    metric a column over all the queries. What does not depend on a ranking
    (precision-Omega, query leakage) is scored once, whatever the rankings scored."""

    def __init__(self, chunks: Iterable, queries: Sequence[Query], docs=None):
        self.queries = list(queries)
        self.docs = documents_by_id(docs) if docs is not None else {}
        self.table = ChunkTable(list(chunks), self.docs)
        self._targets: tuple[Targets, Targets, Targets] | None = None
        self.gold = np.zeros(0, dtype=np.int64)
        """``columns.gold_codes`` of every query's sources (made with the targets)."""
        self._fixed: list[Column] | None = None

    def targets(self) -> tuple[Targets, Targets, Targets]:
        """(answer spans, gold sections, what leakage reads: the sections, else the answer),
        read once; MetricError for an answer or section the documents do not hold."""
        if self._targets is None:
            spans = [[answer_span(q, self.docs)] if q.answer is not None else None
                     for q in self.queries]
            sections = [gold_sections(q, self.docs) if q.gold_spans else None
                        for q in self.queries]
            leaks = [s or a for s, a in zip(sections, spans, strict=True)]
            self._targets = (Targets.of_table(self.table, spans),
                             Targets.of_table(self.table, sections),
                             Targets.of_table(self.table, leaks))
            self.gold = gold_codes(self.table, [q.sources for q in self.queries])
        return self._targets

    def ranking(self, results: Sequence) -> np.ndarray:
        """``results`` checked (one ranking a query, known chunk ids, queries with gold
        sources) and made a matrix of table rows."""
        if len(results) != len(self.queries):
            raise MetricError(f"{len(results)} rankings for {len(self.queries)} queries: "
                              "not aligned")
        ranked = []
        for query, hits in zip(self.queries, results, strict=True):
            ids = hit_ids(hits)
            unknown = [i for i in ids if i not in self.table.row_of]
            if unknown:
                raise MetricError(f"query {query.id!r}: unknown chunk id(s) {unknown[:3]}")
            if not query.sources:
                raise MetricError(f"query {query.id!r} has no gold sources")
            ranked.append(ids)
        return self.table.ranking(ranked)

    def columns(self, ranking: np.ndarray, *, ks: Sequence[int] = (5,),
                budgets: Sequence[int] = (),
                reader: Callable[[list], list] | None = None) -> list[Column]:
        """Every metric of every query (``ranking``: theirs, as ``ranking`` makes it), in the
        order a query's rows list them: at each k
        the file, bundle, answer and section metrics of the top k; at each budget the same
        (hit in place of the file metrics) of the chunks that fill it, from what ``reader``
        (a retrieval mode's, ``modes.reader``) hands over; then precision-Omega and leakage."""
        answers, sections, _ = self.targets()
        found: list[Column] = []
        everyone = np.ones(len(self.queries), dtype=bool)
        for k in ks:
            top = Bundles.top(ranking, k)
            found += self.file_columns(top, k, everyone)
            found += self.bundle_values(top, k)
        handed = self.handed(ranking, reader) if reader and budgets else ranking
        for budget in budgets:
            filled = Bundles.budget(self.table, handed, budget)
            cut = budget_name(budget)
            found.append((f"hit@{cut}", hit_column(self.table, filled, self.gold), everyone))
            found += self.bundle_values(filled, cut)
        return found + self.fixed(answers, sections)

    def file_columns(self, top: Bundles, k: int, everyone: np.ndarray) -> list[Column]:
        lists = dict(zip((q.id for q in self.queries), distinct_documents(self.table, top),
                         strict=True))
        files = file_metrics(lists, self.queries, k)
        names = list(files[self.queries[0].id]) if self.queries else []
        return [(name, np.asarray([files[q.id][name] for q in self.queries], dtype=float),
                 everyone) for name in names]

    def bundle_values(self, bundles: Bundles, cut: int | str) -> list[Column]:
        """Bundle metrics of every bundle; answer and span metrics for the queries with an
        answer span; section metrics (``section_efficiency``, the on-topic share of the
        reader's chars, and the token overlap ``section_iou``, ``section_precision``,
        ``section_recall`` against their union) for those with gold sections."""
        answers, sections, _ = self.targets()
        everyone = np.ones(len(self.queries), dtype=bool)
        found = [(n, v, everyone) for n, v in
                 bundle_columns(self.table, bundles, self.gold, cut).items()]
        answer = {**answer_columns(self.table, bundles, answers, cut),
                  **overlap_columns(self.table, bundles, answers, cut, name="span")}
        found += [(n, v, answers.has) for n, v in answer.items()]
        section = {f"section_efficiency@{cut}": section_efficiency_column(
            self.table, bundles, sections),
            **overlap_columns(self.table, bundles, sections, cut, name="section")}
        return found + [(n, v, sections.has) for n, v in section.items()]

    def fixed(self, answers: Targets, sections: Targets) -> list[Column]:
        """precision_omega (per answer span), section_precision_omega (per gold sections)
        and the leakage of each query: one value whatever k, budget or ranking."""
        if self._fixed is None:
            n = len(self.queries)
            leaks = leakage.leak_columns(self.table, self.queries, self.targets()[2])
            self._fixed = [
                ("precision_omega", best_precision_column(self.table, answers, n), answers.has),
                ("section_precision_omega", best_precision_column(self.table, sections, n),
                 sections.has),
                *((name, values, np.ones(n, dtype=bool)) for name, values in leaks.items())]
        return self._fixed

    def handed(self, ranking: np.ndarray, reader: Callable[[list], list]) -> np.ndarray:
        """What ``reader`` hands over from each ranking, as a matrix of rows."""
        chunks = self.table.chunks
        return self.table.ranking([[c.id for c in reader([chunks[r] for r in row if r >= 0])]
                                   for row in ranking.tolist()])

    def frame(self, ranking: np.ndarray, *, ks: Sequence[int] = (5,),
              budgets: Sequence[int] = (), reader: Callable[[list], list] | None = None,
              config_id: str = "", leading: dict | None = None) -> pd.DataFrame:
        """One row ``{config_id, query_id, query_kind, metric, value}`` per query and metric,
        query by query (``ranking``: as ``ranking`` makes it; ``leading``: constant columns
        placed first)."""
        found = self.columns(ranking, ks=ks, budgets=budgets, reader=reader)
        config_id = config_id or (self.table.chunks[0].config_id if self.table.ranked else "")
        n = len(self.queries)
        values = np.column_stack([v for _, v, _ in found]) if found else np.zeros((n, 0))
        has = (np.column_stack([h for _, _, h in found]) if found
               else np.zeros((n, 0), dtype=bool)).ravel()
        query = np.repeat(np.arange(n), len(found))[has]
        metric = np.tile(np.arange(len(found)), n)[has]
        return pd.DataFrame({
            **constant_columns({**(leading or {}), "config_id": config_id}, len(query)),
            "query_id": text_column([q.id for q in self.queries], query),
            "query_kind": text_column([q.kind for q in self.queries], query),
            "metric": text_column([name for name, _, _ in found], metric),
            "value": values.ravel()[has]})


def text_column(values: list, codes: np.ndarray):
    """A text column (pandas ``str``): ``values[code]`` for each code (a value None:
    missing), each distinct text converted once."""
    return pd.array(values, dtype="str").take(codes)


def constant_columns(values: dict, rows: int) -> dict:
    """``values`` as columns of ``rows`` rows: a string as a ``text_column`` repeating it,
    anything else as it is (pandas spreads a scalar)."""
    same = np.zeros(rows, dtype=np.int64)
    return {name: text_column([value], same) if isinstance(value, str) else value
            for name, value in values.items()}


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
    the top chunks until B tokens are filled (``budget.fill``), scored on hit, answer,
    span and bundle metrics named ``@bB``. Answer and span metrics are added for queries with
    an answer and need ``docs`` (a Corpus, Documents or ``{id: Document}``), and so does
    ``precision_omega`` (one value per query, whatever k or B). ``reader`` (a retrieval
    mode's, ``modes.reader``) turns a ranking into what the budget fills with.
    """
    scorer = Scorer(chunks, queries, docs)
    frame = scorer.frame(scorer.ranking(results), ks=ks, budgets=budgets, reader=reader,
                         config_id=config_id)
    return frame.to_dict("records")


# --- one bundle ----------------------------------------------------------------------------


def answer_metrics(top: Sequence, span: tuple[str, int, int], k: int | str
                   ) -> dict[str, float]:
    """``columns.answer_columns`` of one query's bundle against its answer span."""
    table, one = one_bundle(top)
    found = answer_columns(table, one, Targets.of_table(table, [[span]]), k)
    return {name: float(values[0]) for name, values in found.items()}


def bundle_metrics(top: Sequence, sources: Iterable[str], k: int | str, *,
                   docs: dict | None = None) -> dict[str, float]:
    """``columns.bundle_columns`` of one bundle: ``bundle_efficiency@k`` (gold-source share of
    the context chars), ``code_integrity@k`` and ``label_kept@k``; NaN when empty."""
    table, one = one_bundle(top, docs)
    found = bundle_columns(table, one, gold_codes(table, [list(sources)]), k)
    return {name: float(values[0]) for name, values in found.items()}
