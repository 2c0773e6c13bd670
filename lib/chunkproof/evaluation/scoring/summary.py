"""One table row per strategy over a corpus: size, structure and invariant figures."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pandas as pd

from ...chunking.build import chunk_document
from ...chunking.config import ChunkerConfig, make_config
from ...chunking.registry import REGISTRY, available_names, check_strategy
from ...chunking.sizes import measure_all
from ...errors import ConfigError
from ...util.progress import progress_bar
from . import invariants


def strategy_summary(corpus, *, size: int = 1000, unit: str = "chars",
                     strategies: Sequence[str] | None = None,
                     progress: bool = False) -> pd.DataFrame:
    """Chunk ``corpus`` with each of ``strategies`` (default: every available one, a peer
    without its extra left out) and measure what each produced: ``oversize`` counts chunks
    above ``size`` (in ``unit``), ``split_blocks`` the fences and tables (nested ones
    included) a boundary cuts, ``lost_chars`` the non-whitespace characters no chunk holds.
    ``progress`` draws a bar over strategies x documents (some peers embed every sentence)."""
    names = available_names() if strategies is None else [check_strategy(n) for n in strategies]
    if not names:
        raise ConfigError("strategies: give at least one (see: chunkproof strategies)")
    configs = [make_config(strategy=name, size=size, unit=unit) for name in names]
    docs = list(corpus)  # configs are checked first: a bad parameter draws no bar
    with progress_bar(total=len(names) * len(docs), unit="doc", enabled=progress) as bar:
        return pd.DataFrame([_row(config, docs, bar) for config in configs])


def _row(config: ChunkerConfig, docs: list, bar) -> dict:
    """One strategy's figures over ``docs``."""
    bar.set_description(config.strategy)
    size, unit = config.size, config.unit
    for doc in docs[:1]:  # loads what a peer needs (models, converters): untimed
        chunk_document(doc, config)
    began, per_doc = time.perf_counter(), []
    for doc in docs:
        per_doc.append((doc, chunk_document(doc, config)))
        bar.update()
    seconds = time.perf_counter() - began
    report = sum((invariants.check(doc, chunks, config) for doc, chunks in per_doc),
                 invariants.InvariantReport())
    texts = [c.text for _, chunks in per_doc for c in chunks]
    lengths = pd.Series([len(t) for t in texts], dtype=float)
    with_crumb = sum(bool(c.breadcrumb) for _, chunks in per_doc for c in chunks)
    return {
        "strategy": config.strategy,
        "family": REGISTRY[config.strategy].family,
        "chunks": report.chunks,
        "p50_chars": lengths.median(),
        "max_chars": lengths.max(),
        "oversize": sum(n > size for n in measure_all(texts, unit)),
        "heading_only": report.heading_only,
        "split_blocks": report.split_blocks,
        "lost_chars": report.lost_chars,
        "wrong_breadcrumbs": report.wrong_breadcrumbs,
        "non_verbatim": report.non_verbatim,
        "with_breadcrumb": round(with_crumb / max(report.chunks, 1), 3),
        "seconds": round(seconds, 3),
    }
