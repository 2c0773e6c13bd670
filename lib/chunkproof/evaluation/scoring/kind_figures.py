"""What each query kind of a finished sweep can tell: how many queries it has, how often its
text (or any of its terms) lies in the prefix a gold chunk's index text carries, how many of
its queries every config answers (the ceiling) or none does, how far apart the configs' means
lie on the primary metric, and how many pairs of configs a paired test separates on it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..queries.queries import Query, documents_by_id, query_group
from ..queries.query_terms import stem_set
from . import families
from .leakage import LEAK_WARNING, PREFIX, gold_chunks

ALL_KINDS = "all"
SEPARATED = ("A better", "B better")
"""The verdicts of a paired test that tell two configs apart."""
MIN_KIND_QUERIES = 10
"""A kind with fewer scored queries than this decides nothing on its own."""
COLUMNS = ["query_kind", "group", "queries", "scored", "in_prefix", "terms_in_prefix",
           "ceiling", "floor", "spread", "best_config", "pairs", "pairs_separated",
           "leak_free", "discriminates"]
MEANINGS = {
    "queries": "queries of the kind in the run",
    "scored": "those the primary metric is defined for (an answer span or gold file)",
    "in_prefix": "share whose whole text lies in a gold chunk's injected prefix, in some config",
    "terms_in_prefix": "share with a BM25 term in a gold chunk's injected prefix, in some config",
    "ceiling": "share every config answers (primary metric 1 in all of them)",
    "floor": "share no config answers (primary metric 0 in all of them)",
    "spread": "best config mean minus worst config mean on the primary metric",
    "pairs_separated": "config pairs whose paired test differs (Holm over the kind's pairs)",
    "leak_free": f"in_prefix at most {LEAK_WARNING:g} (a written question shares words with its "
                 "heading as a reader's would: terms_in_prefix is shown, not held against it)",
    "discriminates": f"separates at least one pair on {MIN_KIND_QUERIES} or more queries",
}


def distinct_configs(run) -> list[str]:
    """The run's configs, those whose chunks repeat an earlier config's left out."""
    twins = {s["config_id"] for s in run.run_info.get("identical_configs", [])}
    return [c for c in run.chunk_stats["config_id"] if c not in twins]


def term_leaks(run, queries: Sequence[Query], docs: dict | None = None) -> pd.Series:
    """Per query id: 1.0 when a BM25 term of the query lies in the prefix (``embed_text``
    before ``text``) of a gold chunk under some config of the run, else 0.0. Gold chunks are
    those overlapping the query's gold sections, else its answer span (found in ``docs``),
    else every chunk of its gold documents."""
    chunks = run.chunks
    if chunks is None or chunks.empty:
        return pd.Series(dtype=float)
    frame = chunks[["config_id", "doc_id", "start", "end", "text", "embed_text"]]
    leaks = dict.fromkeys((q.id for q in queries), 0.0)
    wanted = {q.id: stem_set([q.query]) for q in queries}
    cache: dict[str, frozenset[str]] = {}
    for _config, rows in frame.groupby("config_id"):
        by_doc: dict[str, list] = {}
        for row in rows.itertuples(index=False):
            if len(row.embed_text) > len(row.text):
                by_doc.setdefault(row.doc_id, []).append(row)
        if not by_doc:
            continue
        for query in queries:
            if leaks[query.id]:
                continue
            for chunk in gold_chunks(query, by_doc, _targets(query, docs or {})):
                prefix = chunk.embed_text[: len(chunk.embed_text) - len(chunk.text)]
                if prefix not in cache:
                    cache[prefix] = stem_set([prefix])
                if wanted[query.id] & cache[prefix]:
                    leaks[query.id] = 1.0
                    break
    return pd.Series(leaks, dtype=float)


def _targets(query: Query, docs: dict):
    if query.gold_spans:
        return [(g.doc, g.start, g.end) for g in query.gold_spans]
    doc, answer = docs.get(query.sources[0]), query.answer
    if doc is None or not answer or answer not in doc.text:
        return None
    start = doc.text.find(answer)
    return [(doc.id, start, start + len(answer))]


def pooled(run, metric: str, retriever: str, kinds: Sequence[str], *,
           alpha: float = 0.05) -> dict:
    """The figures of ``COLUMNS`` over the queries of ``kinds`` taken together (no leaks)."""
    per_query = run.per_query
    scores = per_query[(per_query["retriever"] == retriever)
                       & per_query["config_id"].isin(distinct_configs(run))
                       & (per_query["metric"] == metric)
                       & per_query["query_kind"].isin(kinds)].dropna(subset=["value"])
    empty = pd.Series(dtype=float)
    return _row("+".join(kinds), set(scores["query_id"]), scores, empty, empty, metric, alpha)


def kind_figures(run, metric: str, retriever: str, *, queries: Sequence[Query] = (),
                 docs=None, alpha: float = 0.05) -> pd.DataFrame:
    """One row per query kind (then ``all``) with the figures of ``COLUMNS`` on ``metric``
    under ``retriever``, over the run's distinct configs; ``terms_in_prefix`` needs the
    run's ``queries`` (NaN without them)."""
    per_query = run.per_query
    kept = ((per_query["retriever"] == retriever)
            & per_query["config_id"].isin(distinct_configs(run))).to_numpy()
    scores = per_query[kept & (per_query["metric"] == metric).to_numpy()].dropna(
        subset=["value"])
    prefix = per_query.loc[kept & (per_query["metric"] == PREFIX).to_numpy(),
                           ["query_id", "value"]].groupby("query_id")["value"].max()
    terms = (term_leaks(run, queries, documents_by_id(docs) if docs is not None else None)
             if queries else pd.Series(dtype=float))
    kinds = per_query.loc[kept, ["query_id", "query_kind"]].drop_duplicates(
        "query_id").set_index("query_id")["query_kind"]
    found = [_row(kind, ids, scores, prefix, terms, metric, alpha)
             for kind, ids in kinds.groupby(kinds).groups.items()]
    found.append(_row(ALL_KINDS, kinds.index, scores, prefix, terms, metric, alpha))
    return pd.DataFrame(found, columns=COLUMNS)


def _row(kind: str, ids, scores: pd.DataFrame, prefix: pd.Series, terms: pd.Series,
         metric: str, alpha: float) -> dict:
    ids = set(ids)
    mine = scores[scores["query_id"].isin(ids)]
    wide = mine.pivot_table(index="query_id", columns="config_id", values="value")
    wide = wide.dropna()
    means = wide.mean() if len(wide) else pd.Series(dtype=float)
    pairs = separated = 0
    if wide.shape[1] >= 2 and len(wide) >= 2:
        tests = families.compare_all(mine[mine["query_id"].isin(wide.index)], metric,
                                     alpha=alpha)
        pairs = len(tests)
        separated = int(tests["verdict"].isin(SEPARATED).sum())
    leak = _share(prefix, ids)
    term_leak = _share(terms, ids) if len(terms) else np.nan
    leak_free = bool(not leak > LEAK_WARNING)  # NaN (no leak measured) counts as free
    return {
        "query_kind": kind, "group": ALL_KINDS if kind == ALL_KINDS or "+" in kind
        else query_group(kind),
        "queries": len(ids), "scored": len(wide), "in_prefix": leak,
        "terms_in_prefix": term_leak,
        "ceiling": float((wide.min(axis=1) >= 1.0).mean()) if len(wide) else np.nan,
        "floor": float((wide.max(axis=1) <= 0.0).mean()) if len(wide) else np.nan,
        "spread": float(means.max() - means.min()) if len(means) else np.nan,
        "best_config": str(means.idxmax()) if len(means) else "",
        "pairs": pairs, "pairs_separated": separated, "leak_free": leak_free,
        "discriminates": bool(separated > 0 and len(wide) >= MIN_KIND_QUERIES),
    }


def _share(values: pd.Series, ids: set) -> float:
    found = values[values.index.isin(ids)]
    return float(found.mean()) if len(found) else np.nan
