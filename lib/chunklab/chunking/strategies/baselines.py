"""LangChain splitters as baselines; their string outputs are aligned back to source spans."""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Sequence

from ...document.corpus import Document
from ..build import ChunkBuilder, register
from ..config import ChunkerConfig
from ..records import Chunk, Piece
from ..sizes import length_function

logging.getLogger("langchain_text_splitters.base").setLevel(logging.ERROR)
MHS_HEADERS = [("#", "h1"), ("##", "h2"), ("###", "h3")]
_ANCHOR = 32


class Aligner:
    """Finds where a (possibly rewritten) chunk text came from, searching forward only."""

    def __init__(self, text: str):
        self.text = text
        self.offsets = [i for i, ch in enumerate(text) if not ch.isspace()]
        self.compact = "".join(text[i] for i in self.offsets)

    def locate(self, chunk: str, cursor: int) -> tuple[int, int] | None:
        exact = self.text.find(chunk, cursor) if chunk else -1
        if exact >= 0:
            return exact, exact + len(chunk)
        needle = "".join(chunk.split())
        if not needle:
            return None
        lo = bisect_left(self.offsets, cursor)
        found = self.compact.find(needle, lo)
        if found >= 0:
            return self.offsets[found], self.offsets[found + len(needle) - 1] + 1
        head = self.compact.find(needle[:_ANCHOR], lo)
        if head < 0:
            return None
        tail = self.compact.find(needle[-_ANCHOR:], head)
        last = tail + min(len(needle), _ANCHOR) - 1 if tail >= 0 else head + _ANCHOR - 1
        last = min(last, len(self.offsets) - 1)
        return self.offsets[head], self.offsets[last] + 1


def aligned_pieces(
    doc: Document, texts: list[str], crumbs: Sequence[tuple[str, ...] | None],
    overlap: float = 0.0
) -> list[Piece]:
    """One Piece per output text, searched for from where the previous one could overlap.

    ``overlap`` is the most the next text can reach back into the previous one, as a share
    of the previous text (0 when the splitter does not overlap): the search never restarts
    from the top of the document, so repeated text keeps its own offset.
    """
    aligner = Aligner(doc.text)
    pieces: list[Piece] = []
    cursor = 0
    for text, crumb in zip(texts, crumbs, strict=True):
        span = aligner.locate(text, cursor)
        if span is None:  # nothing of it found ahead: an empty span, counted as not verbatim
            span = (cursor, cursor)
        pieces.append(Piece(span[0], span[1], text=text, breadcrumb=crumb))
        reach = int((span[1] - span[0]) * overlap)
        cursor = max(span[0] + 1, span[1] - reach) if span[1] > span[0] else cursor
    return pieces


def overlap_share(config) -> float:
    """How far back (as a share of a chunk) a splitter with this config can start again."""
    return min(1.0, 1.5 * config.overlap / config.size) if config.overlap else 0.0


def _rct(config):
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter.from_language(
        Language.MARKDOWN,
        chunk_size=config.size,
        chunk_overlap=config.overlap,
        length_function=length_function(config.unit),
    )


def _build(doc, config, pieces: list[Piece], name: str) -> list:
    return ChunkBuilder(doc, config, prefix=bool(config.prefix), strategy=name).build(pieces)


@register(
    "rct", "LangChain RecursiveCharacterTextSplitter with Markdown separators", family="baseline"
)
def rct(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    texts = _rct(config).split_text(doc.text)
    return _build(
        doc, config, aligned_pieces(doc, texts, [()] * len(texts), overlap_share(config)), "rct"
    )


def _header_path(metadata: dict, keys: list[str]) -> tuple[str, ...]:
    return tuple(str(metadata[k]).strip() for k in keys if metadata.get(k))


@register(
    "mhs_rct",
    "LangChain MarkdownHeaderTextSplitter (h1-h3, headers kept) then RCT; "
    "header metadata as breadcrumb",
    family="baseline",
)
def mhs_rct(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    sections = MarkdownHeaderTextSplitter(MHS_HEADERS, strip_headers=False).split_text(doc.text)
    pieces = _rct(config).split_documents(sections)
    texts = [p.page_content for p in pieces]
    crumbs = [_header_path(p.metadata, ["h1", "h2", "h3"]) for p in pieces]
    return _build(doc, config, aligned_pieces(doc, texts, crumbs, overlap_share(config)), "mhs_rct")


@register("mts", "LangChain MarkdownTextSplitter (Markdown-aware separators)", family="baseline")
def mts(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    from langchain_text_splitters import MarkdownTextSplitter

    splitter = MarkdownTextSplitter(
        chunk_size=config.size,
        chunk_overlap=config.overlap,
        length_function=length_function(config.unit),
    )
    texts = splitter.split_text(doc.text)
    return _build(
        doc, config, aligned_pieces(doc, texts, [()] * len(texts), overlap_share(config)), "mts"
    )


@register(
    "emsts",
    "LangChain ExperimentalMarkdownSyntaxTextSplitter, defaults: one atom per "
    "element, headers stripped (size is not used)",
    family="baseline",
)
def emsts(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    from langchain_text_splitters import ExperimentalMarkdownSyntaxTextSplitter

    atoms = ExperimentalMarkdownSyntaxTextSplitter().split_text(doc.text)
    keys = [f"Header {n}" for n in range(1, 7)]
    texts = [a.page_content for a in atoms]
    crumbs = [_header_path(a.metadata, keys) for a in atoms]
    return _build(doc, config, aligned_pieces(doc, texts, crumbs), "emsts")
