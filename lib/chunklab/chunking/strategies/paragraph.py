"""Blank-line paragraphs, with a pure ATX heading line merged into the block it introduces."""

from __future__ import annotations

import re

from ...document.blocks import LineIndex
from ...document.corpus import Document
from ..build import ChunkBuilder, register
from ..config import ChunkerConfig
from ..packing import absorb_wordless
from ..records import Chunk, Piece

# One to six '#', then mandatory whitespace, then content: '##[error]' log markers never match.
HEADING_LINE = re.compile(r"#{1,6}[ \t]+\S")


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


def is_heading_block(text: str) -> bool:
    return "\n" not in text.strip() and "\r" not in text.strip() and bool(HEADING_LINE.match(text))


@register(
    "paragraph",
    "blank-line paragraphs; a lone ATX heading line leads the next block, a wordless one "
    "(a rule, a lone comment, front matter) joins a neighbour (size is not used)",
    family="paragraph",
)
def paragraph(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    pieces: list[Piece] = []
    pending: int | None = None  # start of a chain of heading blocks waiting for content
    for start, end in paragraph_spans(doc.text):
        if is_heading_block(doc.text[start:end]):
            pending = start if pending is None else pending
            continue
        pieces.append(Piece(start if pending is None else pending, end))
        pending = None
    if pending is not None:
        pieces.append(Piece(pending, paragraph_spans(doc.text)[-1][1]))
    pieces = absorb_wordless(pieces, doc.blocks)
    use_prefix = bool(config.prefix)
    return ChunkBuilder(doc, config, prefix=use_prefix, strategy="paragraph").build(pieces)
