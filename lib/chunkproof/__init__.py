"""chunkproof: compare ways of splitting Markdown for retrieval, with exact provenance.

The public API below is loaded lazily: ``import chunkproof`` imports nothing heavy, and each
name is imported from its stage the first time it is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

_HOMES = {
    "chunkproof.errors": (
        "ChunkproofError", "ComparisonError", "ConfigError", "CorpusError", "GoldValidationError",
        "MetricError", "MissingExtraError", "QueryValidationError", "RetrieverError",
        "UnknownRetrieverError", "UnknownStrategyError",
    ),
    "chunkproof.document.blocks": ("Block", "parse_blocks"),
    "chunkproof.document.corpus": ("Corpus", "Document", "load_corpus", "make_document"),
    "chunkproof.document.sections": ("Breadcrumbs", "breadcrumb_at", "dominant_level"),
    "chunkproof.chunking.records": ("Chunk",),
    "chunkproof.chunking.config": ("ChunkerConfig", "load_config", "make_config", "save_config"),
    "chunkproof.chunking.registry": ("get_strategy", "strategy_names"),
    "chunkproof.chunking.build": ("chunk_corpus", "chunk_document", "chunk_text"),
    "chunkproof.evaluation.queries.queries": ("Query", "load_queries", "save_queries"),
    "chunkproof.evaluation.queries.mining": ("mine_queries",),
    "chunkproof.evaluation.retrieval.retrieve": ("make_retriever", "retriever_names"),
    "chunkproof.evaluation.run.runs": ("SweepParams", "SweepResult"),
    "chunkproof.evaluation.run.sweep": ("run_sweep",),
}
_WHERE = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "Block",
    "Breadcrumbs",
    "Chunk",
    "ChunkerConfig",
    "ChunkproofError",
    "ComparisonError",
    "ConfigError",
    "Corpus",
    "CorpusError",
    "Document",
    "GoldValidationError",
    "MetricError",
    "MissingExtraError",
    "Query",
    "QueryValidationError",
    "RetrieverError",
    "SweepParams",
    "SweepResult",
    "UnknownRetrieverError",
    "UnknownStrategyError",
    "breadcrumb_at",
    "chunk_corpus",
    "chunk_document",
    "chunk_text",
    "dominant_level",
    "get_strategy",
    "load_config",
    "load_corpus",
    "load_queries",
    "make_config",
    "make_document",
    "make_retriever",
    "mine_queries",
    "parse_blocks",
    "retriever_names",
    "run_sweep",
    "save_config",
    "save_queries",
    "strategy_names",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'chunkproof' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])


if TYPE_CHECKING:
    from .chunking.build import chunk_corpus, chunk_document, chunk_text
    from .chunking.config import ChunkerConfig, load_config, make_config, save_config
    from .chunking.records import Chunk
    from .chunking.registry import get_strategy, strategy_names
    from .document.blocks import Block, parse_blocks
    from .document.corpus import Corpus, Document, load_corpus, make_document
    from .document.sections import Breadcrumbs, breadcrumb_at, dominant_level
    from .errors import (
        ChunkproofError,
        ComparisonError,
        ConfigError,
        CorpusError,
        GoldValidationError,
        MetricError,
        MissingExtraError,
        QueryValidationError,
        RetrieverError,
        UnknownRetrieverError,
        UnknownStrategyError,
    )
    from .evaluation.queries.mining import mine_queries
    from .evaluation.queries.queries import Query, load_queries, save_queries
    from .evaluation.retrieval.retrieve import make_retriever, retriever_names
    from .evaluation.run.runs import SweepParams, SweepResult
    from .evaluation.run.sweep import run_sweep
