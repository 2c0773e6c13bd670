"""The grid's own shape: configs whose chunks are identical (scored once, reported as no
effect of the parameter that differs), corpora too short for the sizes swept, and strategies
matched at their realised chunk sizes."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any, TypedDict

import pandas as pd

from ...chunking.config import ChunkerConfig
from ...chunking.records import Chunk

ONE_CHUNK_SHARE = 0.5
"""A corpus is too short for the grid when, in at least half the configs, more than this
share of its documents is left in one chunk."""


class SameChunks(TypedDict):
    """run.json ``identical_configs``: a config whose chunks equal an earlier config's."""

    config_id: str
    same_as: str
    no_effect_of: list[str]
    text: str


def signature(chunks: Sequence[Chunk]) -> str:
    """Digest of every chunk's document, span, text and the prefixes of its renderings (what
    an index and a reader see: a rendering is its prefix then the text, which is read once)."""
    digest = hashlib.sha256()
    for c in chunks:
        digest.update(f"{c.doc_id}\0{c.start}\0{c.end}\0{c.embed_prefix}\0{c.context_prefix}"
                      "\0".encode())
        digest.update(c.text.encode())
        digest.update(b"\1")
    return digest.hexdigest()


def _label(config: ChunkerConfig) -> str:
    return f"{config.strategy}/{config.size}"


def identical_configs(configs: Sequence[ChunkerConfig],
                      signatures: dict[str, str]) -> list[SameChunks]:
    """Each config whose chunks are byte-identical to an earlier config's (equal
    ``signature`` of their chunks, by config id), with the parameters that differ between the
    two: those had no effect on this corpus."""
    first: dict[str, ChunkerConfig] = {}
    found: list[SameChunks] = []
    for config in configs:
        key = signatures[config.config_id]
        if key not in first:
            first[key] = config
            continue
        earlier = first[key]
        mine, theirs = config.model_dump(), earlier.model_dump()
        differ = [name for name in mine if mine[name] != theirs[name]]
        changes = ", ".join(f"{n} {theirs[n]!r} -> {mine[n]!r}" for n in differ)
        found.append({"config_id": config.config_id, "same_as": earlier.config_id,
                      "no_effect_of": differ,
                      "text": f"no effect of {' and '.join(differ)}: {_label(config)} makes "
                              f"the same chunks as {_label(earlier)} ({changes}); scored once"})
    return found


def copy_scores(frame: pd.DataFrame, columns: dict[str, Any], ids: dict[str, str]) -> pd.DataFrame:
    """Rows scored for one config, relabelled for an identical one: its config ``columns``,
    and chunk ids mapped through ``ids`` where the frame has a chunk_id."""
    out = frame.assign(**columns)
    if "chunk_id" in out:
        out["chunk_id"] = out["chunk_id"].map(ids)
    return out


def one_chunk_warning(chunk_stats: pd.DataFrame) -> str | None:
    """A warning when most documents fit in one chunk in most configs: every strategy then
    makes nearly the same chunks and scores nearly the same."""
    shares = chunk_stats["single_chunk_docs_share"].dropna()
    if shares.empty or (shares > ONE_CHUNK_SHARE).mean() < 0.5:
        return None
    median = float(shares.median())
    return (f"most documents fit in one chunk: in {int((shares > ONE_CHUNK_SHARE).sum())} of "
            f"{len(shares)} configs over {ONE_CHUNK_SHARE:.0%} of the documents are a single "
            f"chunk (median {median:.0%}); the sizes swept are larger than the documents, so "
            "strategies cannot differ much: sweep smaller sizes")


def matched_sizes(summary: pd.DataFrame, metric: str, *, retriever: str | None = None,
                  reference: str | None = None) -> pd.DataFrame:
    """Strategies compared at matched realised size: for each config of ``reference`` (by
    default the first strategy by name), every other strategy's config whose realised median
    chunk size in tokens is closest (by ratio) to it, with the blended ``metric``."""
    rows = summary[(summary["split"] == "all") & (summary["metric"] == metric)]
    if retriever is not None:
        rows = rows[rows["retriever"] == retriever]
    rows = rows.dropna(subset=["tokens_p50"])
    if rows.empty:
        return pd.DataFrame()
    reference = reference or sorted(rows["strategy"])[0]
    matched = []
    for _, target in rows[rows["strategy"] == reference].sort_values("size").iterrows():
        same_retriever = rows[rows["retriever"] == target["retriever"]]
        for _strategy, group in same_retriever.groupby("strategy", sort=True):
            gap = (group["tokens_p50"].clip(lower=1) / max(target["tokens_p50"], 1)).map(
                lambda r: abs(math.log(r)))
            best = group.loc[gap.idxmin()]
            matched.append({**best.to_dict(), "match": f"{reference}/{target['size']} "
                            f"(p50 {target['tokens_p50']:.0f} tok)",
                            "size_ratio": float(best["tokens_p50"] / max(target["tokens_p50"], 1))})
    columns = ["match", "strategy", "size", "tokens_p50", "tokens_p95", "size_ratio", "retriever",
               "metric", "mean", "ci_low", "ci_high", "n", "config_id", "options", "unit"]
    return pd.DataFrame(matched)[columns]
