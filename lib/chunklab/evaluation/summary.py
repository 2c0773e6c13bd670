"""One table row per strategy over a corpus: size, structure and invariant figures."""

from __future__ import annotations

import time

import pandas as pd

from ..chunking.build import chunk_document
from ..chunking.config import make_config
from ..chunking.registry import REGISTRY, available_names
from . import invariants


def strategy_summary(corpus, *, size: int = 1000, unit: str = "chars") -> pd.DataFrame:
    """Chunk ``corpus`` with every available strategy (a peer without its extra is left
    out) and measure what each produced."""
    rows = []
    for name in available_names():
        strategy = REGISTRY[name]
        config = make_config(strategy=name, size=size, unit=unit)
        for doc in list(corpus)[:1]:  # loads what a peer needs (models, converters): untimed
            chunk_document(doc, config)
        began = time.perf_counter()
        per_doc = [(doc, chunk_document(doc, config)) for doc in corpus]
        seconds = time.perf_counter() - began
        report = sum(
            (invariants.check(doc, chunks, config) for doc, chunks in per_doc),
            invariants.InvariantReport(),
        )
        lengths = pd.Series([len(c.text) for _, chunks in per_doc for c in chunks], dtype=float)
        with_crumb = sum(bool(c.breadcrumb) for _, chunks in per_doc for c in chunks)
        rows.append(
            {
                "strategy": name,
                "family": strategy.family,
                "chunks": report.chunks,
                "p50_chars": lengths.median(),
                "max_chars": lengths.max(),
                "heading_only": report.heading_only,
                "split_blocks": report.split_blocks,
                "lost_chars": report.lost_chars,
                "wrong_breadcrumbs": report.wrong_breadcrumbs,
                "non_verbatim": report.non_verbatim,
                "with_breadcrumb": round(with_crumb / max(report.chunks, 1), 3),
                "seconds": round(seconds, 3),
            }
        )
    return pd.DataFrame(rows)
