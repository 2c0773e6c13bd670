"""Blank-line paragraphs, with heading runs merged into the paragraph they introduce."""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ...document.blocks import Block
from ...document.corpus import Document
from ...document.lines import LineIndex
from ..build import ChunkBuilder, register
from ..config import ChunkerConfig
from ..packing import absorb_wordless, holds_content
from ..records import Chunk, Piece


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Runs of non-blank lines, as (start, end) offsets without trailing whitespace."""
    lines = LineIndex(text)
    spans: list[tuple[int, int]] = []
    run_start = None
    for i in range(len(lines.starts) + 1):
        line = text[lines.offset(i) : lines.offset(i + 1)] if i < len(lines.starts) else ""
        if line.strip() and run_start is None:
            run_start = i
        elif not line.strip() and run_start is not None:
            spans.append(lines.span(run_start, i))
            run_start = None
    return spans


def _leads(blocks: Sequence[Block], starts: list[int], start: int, end: int) -> bool:
    """Whether [start, end) holds no content block: only headings, front matter or wordless
    blocks, which lead the content that follows."""
    lo = max(bisect.bisect_right(starts, start) - 1, 0)
    hi = bisect.bisect_left(starts, end)
    body = [b for b in blocks[lo:hi] if b.is_body and b.end > start]
    return not any(b.kind != "container" or holds_content(b.children, start, end) for b in body)


@register(
    "paragraph",
    "blank-line paragraphs; headings, front matter and wordless runs (a rule, a lone comment) "
    "lead the next paragraph, or join the last one at the end (size is not used)",
    family="paragraph",
)
def paragraph(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    pieces: list[Piece] = []
    pending: int | None = None  # start of a chain of leading runs waiting for content
    starts = [b.start for b in doc.blocks]
    for start, end in paragraph_spans(doc.text):
        if _leads(doc.blocks, starts, start, end):
            pending = start if pending is None else pending
            continue
        pieces.append(Piece(start if pending is None else pending, end))
        pending = None
    if pending is not None:
        pieces.append(Piece(pending, paragraph_spans(doc.text)[-1][1]))
    pieces = absorb_wordless(pieces, doc.blocks)
    use_prefix = bool(config.prefix)
    return ChunkBuilder(doc, config, prefix=use_prefix, strategy="paragraph").build(pieces)
