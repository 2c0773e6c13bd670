"""chunklab: compare ways of splitting Markdown for retrieval, with exact provenance."""

from .blocks import Block, parse_blocks
from .chunk import Chunk
from .config import ChunkerConfig, build_chunker, load_config, make_config, save_config
from .corpus import Corpus, Document, load_corpus, make_document
from .errors import (
    ChunklabError,
    ConfigError,
    CorpusError,
    MissingExtraError,
    QueryValidationError,
    UnknownRetrieverError,
    UnknownStrategyError,
)
from .sections import Breadcrumbs, breadcrumb_at, dominant_level
from .strategies import chunk_document, get_strategy, strategy_names

__version__ = "0.1.0"

__all__ = [
    "Block",
    "Breadcrumbs",
    "Chunk",
    "ChunkerConfig",
    "ChunklabError",
    "ConfigError",
    "Corpus",
    "CorpusError",
    "Document",
    "MissingExtraError",
    "QueryValidationError",
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
    "make_config",
    "make_document",
    "parse_blocks",
    "save_config",
    "strategy_names",
]


def chunk_corpus(corpus, config) -> list[Chunk]:
    """Every chunk of every document of ``corpus`` under ``config``, in document order."""
    chunker = build_chunker(config)
    return [chunk for doc in corpus for chunk in chunker(doc)]
