# The public API, declared once. At run time lazy_loader reads these imports and imports each
# name from its module the first time it is used (``import chunkproof`` loads nothing heavy);
# type checkers read them as the package's names. docs/api.md is made from them.

from .chunking.build import chunk_corpus as chunk_corpus
from .chunking.build import chunk_document as chunk_document
from .chunking.build import chunk_text as chunk_text
from .chunking.config import ChunkerConfig as ChunkerConfig
from .chunking.config import load_config as load_config
from .chunking.config import make_config as make_config
from .chunking.config import save_config as save_config
from .chunking.records import Chunk as Chunk
from .chunking.registry import get_strategy as get_strategy
from .chunking.registry import strategy_names as strategy_names
from .document.blocks import Block as Block
from .document.blocks import parse_blocks as parse_blocks
from .document.corpus import Corpus as Corpus
from .document.corpus import Document as Document
from .document.corpus import load_corpus as load_corpus
from .document.corpus import make_document as make_document
from .document.sections import Breadcrumbs as Breadcrumbs
from .document.sections import breadcrumb_at as breadcrumb_at
from .document.sections import dominant_level as dominant_level
from .errors import ChunkproofError as ChunkproofError
from .errors import ComparisonError as ComparisonError
from .errors import ConfigError as ConfigError
from .errors import CorpusError as CorpusError
from .errors import GoldValidationError as GoldValidationError
from .errors import MetricError as MetricError
from .errors import MissingExtraError as MissingExtraError
from .errors import QueryValidationError as QueryValidationError
from .errors import RetrieverError as RetrieverError
from .errors import UnknownRetrieverError as UnknownRetrieverError
from .errors import UnknownStrategyError as UnknownStrategyError
from .evaluation.queries.mining import mine_queries as mine_queries
from .evaluation.queries.queries import Query as Query
from .evaluation.queries.queries import load_queries as load_queries
from .evaluation.queries.queries import save_queries as save_queries
from .evaluation.retrieval.retrieve import make_retriever as make_retriever
from .evaluation.retrieval.retrieve import retriever_names as retriever_names
from .evaluation.run.runs import SweepParams as SweepParams
from .evaluation.run.runs import SweepResult as SweepResult
from .evaluation.run.sweep import run_sweep as run_sweep

__version__: str
__all__: list[str]
