"""Sections and greedy packing of block spans, shared by the heading-aware strategies."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..document.blocks import Block
from .records import Piece
from .sizes import measure

UNSPLITTABLE = {"fence", "code", "table"}
_WORD = re.compile(r"\S+")


@dataclass(slots=True)
class Segment:
    """A span that packing never cuts: a block, a glued group of blocks, a line or a word run."""

    start: int
    end: int
    size: int
    anchor: int
    """Where its content starts (past any leading heading): labels the chunk."""
    atomic: bool = False


@dataclass(slots=True)
class Section:
    """A heading chain and the blocks below it, up to the next heading."""

    blocks: list[Block] = field(default_factory=list)

    @property
    def content(self) -> list[Block]:
        return [b for b in self.blocks if not b.is_heading]


def sections(blocks: tuple[Block, ...]) -> list[Section]:
    """Split at every heading; a heading with no content before the next one chains onto it."""
    result: list[Section] = []
    for block in blocks:
        if block.is_heading and (not result or result[-1].content):
            result.append(Section())
        if not result:
            result.append(Section())
        result[-1].blocks.append(block)
    return result


class Sizer:
    """Measures spans of one document in the config's unit."""

    def __init__(self, text: str, unit: str):
        self.text = text
        self.unit = unit

    def __call__(self, start: int, end: int) -> int:
        if self.unit == "chars":
            return end - start
        return measure(self.text[start:end], self.unit)

    def join(self, segments: list[Segment]) -> int:
        if self.unit == "chars":
            return segments[-1].end - segments[0].start
        return sum(s.size for s in segments)


def glue(section: Section, *, caption: bool, caption_max: int) -> list[list[Block]]:
    """Groups of blocks that stay together: leading headings + first block, caption + table."""
    groups: list[list[Block]] = []
    pending: list[Block] = []
    for block in section.blocks:
        if block.is_heading:
            pending.append(block)
            continue
        is_caption = (
            caption
            and block.kind == "table"
            and groups
            and groups[-1][-1].kind == "paragraph"
            and groups[-1][-1].end - groups[-1][-1].start <= caption_max
            and not pending
        )
        if is_caption:
            groups[-1].append(block)
        else:
            groups.append([*pending, block])
        pending = []
    if pending:
        groups.append(pending)
    return groups


def group_segment(group: list[Block], sizer: Sizer) -> Segment:
    content = next((b for b in group if not b.is_heading), group[0])
    return Segment(
        group[0].start,
        group[-1].end,
        sizer(group[0].start, group[-1].end),
        content.start,
        atomic=any(b.kind in UNSPLITTABLE for b in group),
    )


def split_segment(seg: Segment, text: str, limit: int, sizer: Sizer) -> list[Segment]:
    """An oversized splittable span cut at line ends, and overlong lines at word gaps."""
    pieces: list[Segment] = []
    pos = seg.start
    for line in text[seg.start : seg.end].splitlines(keepends=True):
        line_start, pos = pos, pos + len(line)
        stripped = line.rstrip()
        if not stripped.strip():
            continue
        first = line_start + (len(line) - len(line.lstrip()))
        last = line_start + len(stripped)
        pieces.extend(_split_line(first, last, text, limit, sizer))
    # Leading heading lines must not stand alone: they lead the first line of content.
    while len(pieces) > 1 and pieces[0].end <= seg.anchor:
        head, second = pieces[0], pieces[1]
        pieces[:2] = [Segment(head.start, second.end, head.size + second.size, second.start)]
    return pieces


def _split_line(start: int, end: int, text: str, limit: int, sizer: Sizer) -> list[Segment]:
    size = sizer(start, end)
    if size <= limit:
        return [Segment(start, end, size, start)]
    words = [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])]
    runs: list[Segment] = []
    for w_start, w_end in words:
        if runs and sizer(runs[-1].start, w_end) <= limit:
            runs[-1].end = w_end
            runs[-1].size = sizer(runs[-1].start, w_end)
            continue
        while sizer(w_start, w_end) > limit and sizer.unit == "chars":
            runs.append(Segment(w_start, w_start + limit, limit, w_start))
            w_start += limit
        runs.append(Segment(w_start, w_end, sizer(w_start, w_end), w_start))
    return runs


def pack(segments: list[Segment], limit: int, overlap: int, sizer: Sizer) -> list[list[Segment]]:
    """Greedy: add segments while the piece stays within limit; carry ``overlap`` over."""
    pieces: list[list[Segment]] = []
    current: list[Segment] = []
    for seg in segments:
        if current and sizer.join([*current, seg]) > limit:
            pieces.append(current)
            current = _carry(current, overlap, sizer)
            if current and sizer.join([*current, seg]) > limit:
                current = []
        current.append(seg)
    if current:
        pieces.append(current)
    return pieces


def _carry(piece: list[Segment], overlap: int, sizer: Sizer) -> list[Segment]:
    carried: list[Segment] = []
    for seg in reversed(piece):
        if sizer.join([seg, *carried]) > overlap:
            break
        carried.insert(0, seg)
    return carried if len(carried) < len(piece) else []


def to_pieces(packed: list[list[Segment]]) -> list[Piece]:
    n = len(packed)
    return [
        Piece(
            start=segs[0].start,
            end=segs[-1].end,
            part=(i + 1, n) if n > 1 else None,
        )
        for i, segs in enumerate(packed)
    ]
