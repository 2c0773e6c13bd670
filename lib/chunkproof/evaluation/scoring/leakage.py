"""Query leakage into injected text: for each config and query, whether the query's words
(casefolded, punctuation dropped) occur in the prefix a gold chunk's index text carries (the
breadcrumb a strategy injects), in the chunk's own text, or in neither. A query that leaks
into the prefix is found by its heading, not by the chunking; leak shares per config and
query kind say how far a strategy's lead rests on that."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..queries.queries import Query
from .bundles import ChunkTable, Targets
from .ragged import as_ints, overlaps, pairs
from .spans import Target

PREFIX, BODY = "query_in_prefix", "query_in_body"
"""The per-query leak values (1.0 or 0.0): the query's text is in a gold chunk's prefix, in a
gold chunk's own text."""
LEAK_WARNING = 0.05
"""A config whose prefix holds the query for more than this share of queries gets a warning."""


def words(text: str) -> str:
    """``text`` as casefolded words between single spaces, padded, for whole-word search."""
    return " " + " ".join(re.findall(r"\w+", text.casefold())) + " "


def prefix_of(chunk) -> str:
    """What the chunk's index text (``embed_text``) carries before its own text: the
    injected breadcrumb line, or nothing."""
    embed, text = chunk.embed_text, chunk.text
    return embed[: len(embed) - len(text)] if embed != text and embed.endswith(text) else ""


def gold_rows(doc, start, end, sources: Sequence[Sequence[int]],
              targets: Targets) -> tuple[np.ndarray, np.ndarray]:
    """(query, chunk) pairs: the chunks (their document keys ``doc`` and spans) that answer
    each query, those overlapping a target span (gold section or answer) of a query that has
    one, else every chunk of a gold document (``sources``: each query's document keys)."""
    doc, start, end = as_ints(doc), as_ints(start), as_ints(end)
    width = int(max(end.max(initial=0), targets.hi.max(initial=0))) + 1
    which, at = overlaps(targets.doc * width + targets.lo, targets.doc * width + targets.hi,
                         doc * width + start, doc * width + end)
    by_doc = np.argsort(doc, kind="stable")
    wanted = [(q, key) for q, found in enumerate(sources) if not targets.has[q] for key in found]
    query, key = (as_ints(v) for v in zip(*wanted, strict=True)) if wanted \
        else (as_ints([]), as_ints([]))
    first = np.searchsorted(doc[by_doc], key, side="left")
    owner, at_doc = pairs(first, np.searchsorted(doc[by_doc], key, side="right") - first)
    return (np.concatenate([targets.query[which], query[owner]]),
            np.concatenate([at, by_doc[at_doc]]))


def leak_columns(table: ChunkTable, queries: Sequence[Query],
                 targets: Targets) -> dict[str, np.ndarray]:
    """``query_in_prefix`` and ``query_in_body`` of every query under one config's chunks:
    1.0 when the query's words are in the prefix (``prefix_of``), or the text, of a chunk
    that answers it (``gold_rows``)."""
    ranked = slice(0, table.ranked)
    query, rows = gold_rows(table.doc[ranked], table.start[ranked], table.end[ranked],
                            [[table.key_of(d) for d in q.sources] for q in queries], targets)
    needles = [words(q.query) for q in queries]
    found = {PREFIX: np.zeros(len(queries)), BODY: np.zeros(len(queries))}
    seen: dict[int, tuple[str, str]] = {}
    for q, row in zip(query.tolist(), rows.tolist(), strict=True):
        needle = needles[q]
        if not needle.strip():
            continue
        if row not in seen:
            chunk = table.chunks[row]
            seen[row] = words(prefix_of(chunk)), words(chunk.text)
        prefix, body = seen[row]
        found[PREFIX][q] = max(found[PREFIX][q], float(needle in prefix))
        found[BODY][q] = max(found[BODY][q], float(needle in body))
    return found


def gold_chunks(query: Query, by_doc: dict[str, list],
                targets: Sequence[Target] | None) -> list:
    """The chunks of ``by_doc`` (document id -> its chunks; anything with ``doc_id``,
    ``start`` and ``end``) that answer ``query`` (``gold_rows``), read from the documents of
    its targets, else of its sources."""
    named = dict.fromkeys(t[0] for t in targets) if targets else dict.fromkeys(query.sources)
    chunks = [c for doc in named for c in by_doc.get(doc, [])]
    keys = {doc: i for i, doc in enumerate(dict.fromkeys([*named, *query.sources]))}
    _, rows = gold_rows([keys[c.doc_id] for c in chunks], [c.start for c in chunks],
                        [c.end for c in chunks], [[keys[d] for d in query.sources]],
                        Targets.of([targets], keys.__getitem__))
    return [chunks[row] for row in rows.tolist()]


def leak_values(query: Query, by_doc: dict[str, list],
                targets: Sequence[Target] | None) -> dict[str, float]:
    """``query_in_prefix`` and ``query_in_body`` for one query under one config's chunks
    (``leak_columns``)."""
    table = ChunkTable([c for chunks in by_doc.values() for c in chunks], {})
    found = leak_columns(table, [query], Targets.of([targets], table.key_of))
    return {name: float(values[0]) for name, values in found.items()}


def leak_table(per_query: pd.DataFrame) -> pd.DataFrame:
    """Per config and query kind (and ``all``): the share of queries whose text is in a gold
    chunk's prefix, in its own text, in neither, with n (one retriever's rows: leakage does
    not depend on the retriever)."""
    rows = per_query[per_query["metric"].isin([PREFIX, BODY])]
    if rows.empty:
        return pd.DataFrame(columns=["config_id", "strategy", "size", "query_kind", "n",
                                     "in_prefix", "in_body", "in_neither"])
    first = rows["retriever"].iloc[0]
    wide = rows[rows["retriever"] == first].pivot_table(
        index=["config_id", "strategy", "size", "query_id", "query_kind"], columns="metric",
        values="value").reset_index()
    wide["neither"] = ((wide[PREFIX] == 0) & (wide[BODY] == 0)).astype(float)
    both = pd.concat([wide, wide.assign(query_kind="all")], ignore_index=True)
    table = both.groupby(["config_id", "strategy", "size", "query_kind"]).agg(
        n=("query_id", "size"), in_prefix=(PREFIX, "mean"), in_body=(BODY, "mean"),
        in_neither=("neither", "mean")).reset_index()
    return table.sort_values(["strategy", "size", "query_kind"], ignore_index=True)


def leak_warnings(per_query: pd.DataFrame, *, threshold: float = LEAK_WARNING) -> list[str]:
    """One warning per strategy whose prefix holds the query text of more than ``threshold``
    of the queries in some config: its results on those queries measure the injected
    heading, and a comparison on the leak-free kinds is the fair one."""
    table = leak_table(per_query)
    found = []
    blend = table[table["query_kind"] == "all"]
    for strategy, rows in blend.groupby("strategy", sort=True):
        worst = rows.loc[rows["in_prefix"].idxmax()]
        if worst["in_prefix"] <= threshold:
            continue
        kinds = table[(table["config_id"] == worst["config_id"])
                      & (table["query_kind"] != "all") & (table["in_prefix"] > 0)]
        shares = ", ".join(f"{k} {v:.0%}" for k, v in zip(kinds["query_kind"],
                                                           kinds["in_prefix"], strict=True))
        found.append(
            f"query leakage: {strategy} injects text that holds the query for "
            f"{worst['in_prefix']:.0%} of the queries at size {worst['size']} ({shares}); on "
            "those queries it is compared on the heading text it adds to the index, not on "
            "its chunks: read the leak-free kinds (split query_group = leak_free)")
    return found

