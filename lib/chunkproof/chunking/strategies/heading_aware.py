"""Heading-aware strategies on markdown-it blocks: AST merge (+ breadcrumb), the dominant
heading level as the backbone, heading flush."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ...document.corpus import Document
from ...document.sections import Breadcrumbs, common_prefix, dominant_level
from ..build import ChunkBuilder, register
from ..config import ChunkerConfig
from ..packing import (
    Section,
    Segment,
    Sizer,
    glue,
    group_segment,
    group_segments,
    pack,
    sections,
    to_pieces,
)
from ..records import Chunk, Piece


def section_pieces(doc, section: Section, config, sizer: Sizer) -> list[Piece]:
    """Blocks of one section packed up to the size; fences and tables are never cut, nested
    ones included. A section that fits is one piece, as packing would make it (blocks lie
    on lines of their own, so the sizes of its groups add up to its size)."""
    start, end = section.blocks[0].start, section.blocks[-1].end
    size = sizer(start, end)
    if size <= config.size:
        return [Piece(start, end, size=size)]
    return packed_pieces(doc, section, config, sizer)


def packed_pieces(doc, section: Section, config, sizer: Sizer) -> list[Piece]:
    """A section's blocks glued, cut where they may be and packed up to the size."""
    lead_max = config.caption_max_chars if config.table_caption else 0
    groups = glue(section, caption=config.table_caption, caption_max=config.caption_max_chars,
                  text=doc.text)
    segments = [seg for group in groups
                for seg in group_segments(group, doc.text, config.size, sizer, lead_max=lead_max)]
    return to_pieces(pack(segments, config.size, config.overlap, sizer))


def merge_tiny(pieces: Iterable[Piece], crumbs: Breadcrumbs, config, sizer: Sizer
               ) -> Iterator[Piece]:
    """Consecutive whole sections merge under their common parent when either is below
    ``min_size``: a tiny section joins the next one, a tiny last one the one before it. Each
    span is measured once (a piece's ``size``, and a merged piece's that of the joined span)."""
    prev: Piece | None = None
    for piece in pieces:
        if piece.part is None and piece.size is None:
            piece.size = sizer(piece.start, piece.end)
        if prev is not None and prev.part is None and piece.part is None and (
            min(prev.size or 0, piece.size or 0) < config.min_size
        ):
            joined = sizer(prev.start, piece.end)
            if joined <= config.size and _related(crumbs, prev, piece):
                prev.end, prev.size = piece.end, joined
                continue
        if prev is not None:
            yield prev
        prev = piece
    if prev is not None:
        yield prev


def _related(crumbs: Breadcrumbs, a: Piece, b: Piece) -> bool:
    """Siblings or parent and child: the common path is all but the last level of either."""
    path_a, path_b = crumbs.at(a.end), crumbs.at(b.end)
    shared = len(common_prefix([path_a, path_b]))
    return shared >= 1 and shared >= max(len(path_a), len(path_b)) - 1


def ast_pieces(doc, config, crumbs: Breadcrumbs | None = None, *,
               deepest: int | None = None) -> Iterator[Piece]:
    """The pieces of ``doc``, section by section as they are packed (``crumbs``: the
    document's Breadcrumbs, when already made; ``deepest``: the deepest heading level that
    opens a section, None: every heading)."""
    sizer = Sizer(doc.text, config.unit)
    pieces = (p for s in sections(doc.blocks, deepest)
              for p in section_pieces(doc, s, config, sizer))
    if config.min_size <= 0:
        return pieces
    return merge_tiny(pieces, crumbs or Breadcrumbs(doc.blocks), config, sizer)


def _build(doc, config, pieces: Iterable[Piece] | None, name: str, prefix: bool, *,
           deepest: int | None = None) -> list:
    """Chunks of ``pieces`` (None: ``ast_pieces`` cut at headings down to ``deepest``, made
    while the chunks are built, so a document's pieces are never all held at once)."""
    use_prefix = prefix if config.prefix is None else config.prefix
    builder = ChunkBuilder(doc, config, prefix=use_prefix, strategy=name)
    return builder.build(ast_pieces(doc, config, builder.crumbs, deepest=deepest)
                         if pieces is None else pieces)


@register(
    "ast_merge",
    "blocks merged under the same heading up to the size; fences and tables never split",
)
def ast_merge(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    return _build(doc, config, None, "ast_merge", False)


@register(
    "ast_breadcrumb",
    "ast_merge plus the heading path prefixed to the embedded and context text",
    prefix=True,
)
def ast_breadcrumb(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    return _build(doc, config, None, "ast_breadcrumb", True)


@register(
    "dominant_level",
    "ast_breadcrumb with sections only at the document's dominant heading level (the "
    "shallowest that repeats) and above; deeper headings stay inside and label their pieces",
    prefix=True,
)
def dominant_level_split(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    return _build(doc, config, None, "dominant_level", True, deepest=dominant_level(doc.blocks))


@register(
    "heading_flush",
    "a new chunk at every heading; whole blocks accumulate until the size is reached (a block "
    "is never split, so a chunk can exceed the size: counted as oversize)",
)
def heading_flush(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    sizer = Sizer(doc.text, config.unit)
    pieces: list[Piece] = []
    for section in sections(doc.blocks):
        packed: list[list[Segment]] = [[]]
        for group in glue(section, caption=config.table_caption,
                          caption_max=config.caption_max_chars, text=doc.text):
            if packed[-1] and sizer.join(packed[-1]) >= config.size:
                packed.append([])
            packed[-1].append(group_segment(group, sizer))
        pieces.extend(to_pieces(packed))
    return _build(doc, config, pieces, "heading_flush", False)
