"""Bundle and answer metrics as columns: one value per query for every query at once, read
from the flat bundles (``bundles.Bundles``) of one config's chunk table."""

from __future__ import annotations

import numpy as np

from .bundles import Bundles, ChunkTable, Targets
from .ragged import INT, as_ints, ratio, shares, sums, union_size


def gold_entries(table: ChunkTable, bundles: Bundles, gold: np.ndarray) -> np.ndarray:
    """Per bundle entry: its chunk's document is a gold source of its query (``gold``: the
    codes ``query * len(table.keys) + document key`` of every query's sources)."""
    return np.isin(bundles.query * len(table.keys) + table.doc[bundles.row], gold)


def bundle_columns(table: ChunkTable, bundles: Bundles, gold: np.ndarray,
                   cut: int | str) -> dict[str, np.ndarray]:
    """``bundle_efficiency@cut`` (the gold sources' share of the bundle's context chars),
    ``code_integrity@cut`` (the share of its chunks that are intact as the chunker cut
    them, ``bundles.intact_flags``: a chunk a budget truncated is judged untruncated, so the
    metric judges the chunker's boundaries, not the budget's cut) and ``label_kept@cut``
    (the share of its chunks inside labelled containers that carry their labels); NaN for
    an empty bundle, or none inside a container."""
    n, rows = bundles.queries, bundles.row
    chars = table.context_len[rows]
    on_topic = np.where(gold_entries(table, bundles, gold), chars, 0)
    return {
        f"bundle_efficiency@{cut}": ratio(sums(bundles.query, on_topic, n),
                                          sums(bundles.query, chars, n)),
        f"code_integrity@{cut}": shares(bundles.query, table.intact[table.origin[rows]], n),
        f"label_kept@{cut}": shares(bundles.query, table.label[rows], n),
    }


def hit_column(table: ChunkTable, bundles: Bundles, gold: np.ndarray) -> np.ndarray:
    """1.0 where some chunk of the bundle is of a gold source, else 0.0."""
    found = sums(bundles.query, gold_entries(table, bundles, gold), bundles.queries)
    return (found > 0).astype(float)


def answer_columns(table: ChunkTable, bundles: Bundles, answers: Targets,
                   cut: int | str) -> dict[str, np.ndarray]:
    """Span metrics of every bundle against its query's answer span (one a query; values of
    a query without one are left NaN):

    - ``answer_hit@cut``: 1 when some chunk of the source spans the whole answer.
    - ``answer_recall@cut``: share of answer chars inside the union of those chunks' spans.
    - ``answer_precision@cut``: answer chars covered / chars of all the bundle's chunk texts
      (NaN for an empty bundle).
    - ``answer_mrr@cut``: 1/rank of the first chunk spanning the whole answer, 0 when none
      does (ranks beyond the bundle are not looked at, as for ``mrr@k``).
    """
    n, rows = bundles.queries, bundles.row
    of_query = np.full(n, -1, dtype=INT)
    of_query[answers.query] = np.arange(len(answers.query))
    answer = of_query[bundles.query]
    a = np.maximum(answer, 0)
    if len(answers.query):
        lo, hi, doc = answers.lo[a], answers.hi[a], answers.doc[a]
    else:  # no query has an answer: no entry is of one's document
        lo = hi = doc = np.full(len(rows), -1, dtype=INT)
    same = (answer >= 0) & (table.doc[rows] == doc)
    whole = same & (table.start[rows] <= lo) & (hi <= table.end[rows])
    first = np.full(n, np.iinfo(INT).max, dtype=INT)
    np.minimum.at(first, bundles.query[whole], bundles.rank[whole])
    covered = union_size(bundles.query[same], np.maximum(table.start[rows], lo)[same],
                         np.minimum(table.end[rows], hi)[same], n)
    length = np.zeros(n, dtype=INT)
    length[answers.query] = answers.hi - answers.lo
    hit = first < np.iinfo(INT).max
    return {
        f"answer_hit@{cut}": hit.astype(float),
        f"answer_recall@{cut}": ratio(covered, length),
        f"answer_precision@{cut}": ratio(covered, sums(bundles.query, table.text_len[rows], n)),
        f"answer_mrr@{cut}": np.where(hit, 1.0 / np.where(hit, first, 1), 0.0),
    }


def distinct_documents(table: ChunkTable, bundles: Bundles) -> list[list[str]]:
    """Each bundle's document ids, each once, in order of first occurrence."""
    ids = np.asarray([c.doc_id for c in table.chunks], dtype=object)[bundles.row]
    bounds = np.searchsorted(bundles.query, np.arange(1, bundles.queries))
    return [list(dict.fromkeys(part)) for part in np.split(ids, bounds)]


def gold_codes(table: ChunkTable, sources) -> np.ndarray:
    """``query * len(table.keys) + key`` of every source of every query (``sources``: each
    query's ids), the keys of ids not yet met added first."""
    keys = [[table.key_of(doc) for doc in found] for found in sources]
    return as_ints([q * len(table.keys) + k for q, found in enumerate(keys) for k in found])
