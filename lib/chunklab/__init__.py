"""chunklab: compare ways of splitting Markdown for retrieval, with exact provenance."""

from .blocks import Block, parse_blocks
from .chunk import Chunk
from .config import ChunkerConfig, build_chunker, load_config, make_config, save_config
from .corpus import Corpus, Document, load_corpus, make_document
from .errors import (
    ChunklabError,
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
from .queries import Query, load_queries, mine_queries, save_queries
from .retrieve import make_retriever, retriever_names
from .sections import Breadcrumbs, breadcrumb_at, dominant_level
from .strategies import chunk_document, get_strategy, strategy_names
from .sweep import SweepParams, SweepResult, run_sweep

__version__ = "0.1.0"

__all__ = [
    "Block",
    "Breadcrumbs",
    "Chunk",
    "ChunkerConfig",
    "ChunklabError",
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
    "build_chunker",
    "chunk_corpus",
    "chunk_document",
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


def chunk_corpus(corpus, config) -> list[Chunk]:
    """Every chunk of every document of ``corpus`` under ``config``, in document order."""
    chunker = build_chunker(config)
    return [chunk for doc in corpus for chunk in chunker(doc)]
