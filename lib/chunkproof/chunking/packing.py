"""Sections and packing of block spans, shared by the heading-aware strategies: an oversized
block is cut between the blocks nested in it, a paragraph at sentence ends, never inside a
fence or table at any depth; pieces of a split section are balanced."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from ..document.blocks import ATOMIC, LEADING, NOT_BODY, Block
from .records import Piece
from .sentences import sentence_spans
from .sizes import measure

UNSPLITTABLE = ATOMIC
LEADING_CONTAINERS = frozenset({"item", "blockquote", "container"})
"""Containers whose first paragraph introduces the rest (``1. Run:``, ``- **Parameters:**``)."""
INTRODUCED = frozenset({"fence", "code", "list", "table", "container", "jsx"})
"""What a short paragraph ending in ``:`` introduces and travels with (``lead_in``): code, a
list, a table, a container (``::: code-group``, a tab, an admonition) or a component."""
TAIL_SHARE = 0.25
"""A split section's last piece below this share of the size is rebalanced when it can be."""
_WORD = re.compile(r"\S+")
_START = attrgetter("start")


@dataclass(slots=True)
class Segment:
    """A span that packing never cuts: a block, a glued group, a sentence, a line, words."""

    start: int
    end: int
    size: int
    atomic: bool = False


@dataclass(slots=True)
class Section:
    """A heading chain and the blocks below it, up to the next heading."""

    blocks: list[Block] = field(default_factory=list)

    @property
    def content(self) -> list[Block]:
        return [b for b in self.blocks if b.is_body]


def sections(blocks: tuple[Block, ...], deepest: int | None = None) -> Iterator[Section]:
    """Split at every heading of level ``deepest`` or shallower (None: at every heading; a
    deeper one stays inside its section); headings (and front matter) with no content before
    the next heading chain onto it, and so do the targets (``(label)=``) just before a
    heading. Made one at a time, as they are read."""
    current: Section | None = None
    has_content = False  # current.content is not empty
    targets: list[Block] = []  # targets after content, waiting for what follows them
    for block in blocks:
        kind = block.kind
        if kind == "target" and has_content:
            targets.append(block)
            continue
        cuts = kind == "heading" and (deepest is None or block.level <= deepest)
        if current is None or (has_content and cuts):
            if current is not None:
                yield current
            current, has_content = Section(), False
        current.blocks += targets
        targets = []
        current.blocks.append(block)
        if not has_content:  # Block.is_body
            has_content = block.content and kind not in NOT_BODY
    if current is not None:
        current.blocks += targets
        yield current


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

    def grown(self, first: Segment, size: int, seg: Segment) -> int:
        """``join([first, ..., seg])`` given ``size == join([first, ...])``, in constant time."""
        if self.unit == "chars":
            return seg.end - first.start
        return size + seg.size


def lead_in(block: Block, text: str, most: int) -> bool:
    """Whether ``block`` is a paragraph of at most ``most`` chars ending in ``:`` (``Run:``,
    ``**Options:**``, or a sentence wrapped over a few lines), as a table's caption is."""
    if block.kind != "paragraph" or not block.content or block.end - block.start > most:
        return False  # a wordless line (``:::``) introduces nothing
    line = text[block.start : block.end]
    return line.rstrip("*_ ").endswith(":")


def introduces(block: Block, after: Block, text: str, most: int) -> bool:
    """Whether ``block`` is a lead-in (``lead_in``, at most ``most`` chars; 0: none is) and
    ``after``, the block right after it, is what it introduces (``INTRODUCED``)."""
    return most > 0 and after.kind in INTRODUCED and lead_in(block, text, most)


def glue(section: Section, *, caption: bool, caption_max: int, text: str = ""
         ) -> list[list[Block]]:
    """Groups of blocks that stay together: leading headings, front matter and page code +
    the first block, a wordless block (a rule, ``:::``, a lone comment, markup showing no
    word) + the group before it, a caption + its table, a short lead-in ending in ``:`` +
    what it introduces (``introduces``; when the two do not fit in one chunk,
    ``group_segments`` keeps the lead-in with the first part of it)."""
    groups: list[list[Block]] = []
    pending: list[Block] = []
    for block in section.blocks:
        kind = block.kind
        if kind == "heading" or kind in LEADING or (  # Block.is_heading
            not block.content and (pending or not groups)
        ):
            pending.append(block)
            continue
        if not block.content:
            groups[-1].append(block)
            continue
        is_caption = (
            caption
            and kind == "table"
            and groups
            and groups[-1][-1].kind == "paragraph"
            and groups[-1][-1].end - groups[-1][-1].start <= caption_max
            and not pending
        )
        led = (caption and not pending and groups
               and introduces(groups[-1][-1], block, text, caption_max))
        if is_caption or led:
            groups[-1].append(block)
        else:
            groups.append([*pending, block])
        pending = []
    if pending:  # a trailing heading is a group; trailing page code closes the last group
        if groups and not any(b.kind == "heading" for b in pending):
            groups[-1] += pending
        else:
            groups.append(pending)
    return groups


def group_segment(group: list[Block], sizer: Sizer) -> Segment:
    start, end = group[0].start, group[-1].end
    atomic = (group[0].kind in UNSPLITTABLE if len(group) == 1
              else any(b.kind in UNSPLITTABLE for b in group))
    return Segment(start, end, sizer(start, end), atomic)


def group_segments(group: list[Block], text: str, limit: int, sizer: Sizer, *,
                   lead_max: int = 0) -> list[Segment]:
    """A glued group as the segments packing may part: the whole group when it fits, else its
    content blocks cut by their structure (a caption or a lead-in cut too, its last sentence
    kept with the first part of what it introduces: ``_led``), the leading headings kept with
    the first segment, trailing wordless blocks with the last. ``lead_max``: the longest
    lead-in kept with what it introduces inside a block cut apart (0: none)."""
    whole = group_segment(group, sizer)
    if whole.size <= limit:
        return [whole]
    body = [b for b in group if b.is_body]
    if not body:
        return [whole]
    if len(body) == 2:  # a caption and its table, a lead-in and what it introduces
        lead = block_segments(body[0], body[0].start, body[0].end, text, limit, sizer, lead_max)
        lead[0] = _widened(lead[0], group[0].start, lead[0].end, lead[0].atomic, sizer)
        segments = [*lead[:-1], *_led(lead[-1], body[1], body[1].start, body[1].end, text,
                                      limit, sizer, lead_max)]  # its headings in the room
    else:
        segments = [s for b in body
                    for s in block_segments(b, b.start, b.end, text, limit, sizer, lead_max)]
    segments[0] = _widened(segments[0], group[0].start, segments[0].end, segments[0].atomic,
                           sizer)
    segments[-1] = _widened(segments[-1], segments[-1].start, group[-1].end,
                            segments[-1].atomic, sizer)
    return segments


def _span(start: int, end: int, atomic: bool, sizer: Sizer) -> Segment:
    return Segment(start, end, sizer(start, end), atomic)


def _widened(seg: Segment, start: int, end: int, atomic: bool, sizer: Sizer) -> Segment:
    """``seg`` stretched to [start, end), measured again only when its span changed."""
    size = seg.size if start == seg.start and end == seg.end else sizer(start, end)
    return Segment(start, end, size, atomic)


def _led(lead: Segment, block: Block, start: int, end: int, text: str, limit: int,
         sizer: Sizer, lead_max: int) -> list[Segment]:
    """The segments of ``block`` (spanning [start, end)) with ``lead``, the segment that
    introduces it, joined to the first: a lead-in opens the chunk of what it introduces
    rather than close the one before. When the two would not fit together, ``block`` is cut
    finer, and as much of it as fits after the lead-in goes with it (a fence or table is
    never cut: then the two exceed the size together)."""
    parts = block_segments(block, start, end, text, limit, sizer, lead_max)
    room = limit - sizer(lead.start, start)
    taken = 1
    if sizer(lead.start, parts[0].end) > limit and not parts[0].atomic and room > 0:
        parts = block_segments(block, start, end, text, room, sizer, lead_max)
        while taken < len(parts) and sizer(lead.start, parts[taken].end) <= limit:
            taken += 1  # the first part fills what the chunk has room for
    joined = _span(lead.start, parts[taken - 1].end,
                   lead.atomic or any(p.atomic for p in parts[:taken]), sizer)
    return [joined, *parts[taken:]]


def block_segments(
    block: Block, start: int, end: int, text: str, limit: int, sizer: Sizer, lead_max: int = 0
) -> list[Segment]:
    """[start, end) holding ``block``, as segments within ``limit`` where it can be cut: between
    its nested blocks (a lead-in of at most ``lead_max`` chars kept with what it introduces),
    at sentence ends of a paragraph, at line ends, at word gaps; a fence, code block or table
    is one segment whatever its size."""
    size = sizer(start, end)
    atomic = block.kind in UNSPLITTABLE
    if size <= limit or atomic:
        return [Segment(start, end, size, atomic)]
    if block.children:
        return _children_segments(block, start, end, text, limit, sizer, lead_max)
    if block.kind == "paragraph":
        segments = [
            seg
            for s, e in sentence_spans(text, block.start, block.end)
            for seg in _line_segments(s, e, text, limit, sizer)
        ]
    else:
        segments = _line_segments(block.start, block.end, text, limit, sizer)
    # Marks around the block's own span (a container's opening and closing lines) go with
    # its first and last segment, never alone.
    segments[0] = _widened(segments[0], start, segments[0].end, False, sizer)
    segments[-1] = _widened(segments[-1], segments[-1].start, end, False, sizer)
    return segments


def _children_segments(
    block: Block, start: int, end: int, text: str, limit: int, sizer: Sizer, lead_max: int
) -> list[Segment]:
    """The children tile [start, end): each runs to the next one's start (whitespace excluded),
    so container marks and definitions between them go with the child before. A lead-in
    (``introduces``) or a directive's options open the segment of the child after them
    (``_led``); another paragraph joins the next child when ``_joins`` says so."""
    kids = block.children
    spans = [(start if n == 0 else kid.start,
              end if n == len(kids) - 1 else _solid_end(text, kid.end, kids[n + 1].start))
             for n, kid in enumerate(kids)]
    segments = block_segments(kids[0], *spans[0], text, limit, sizer, lead_max)
    for n in range(1, len(kids)):
        if kids[n - 1].kind in LEADING or introduces(kids[n - 1], kids[n], text, lead_max):
            segments[-1:] = _led(segments[-1], kids[n], *spans[n], text, limit, sizer, lead_max)
            continue
        part = block_segments(kids[n], *spans[n], text, limit, sizer, lead_max)
        lead, nxt = segments[-1], part[0]
        joined = Segment(lead.start, nxt.end, sizer(lead.start, nxt.end), lead.atomic or nxt.atomic)
        if _joins(block, n - 1, text, fits=joined.size <= limit, before_atomic=nxt.atomic):
            segments[-1] = joined
            segments.extend(part[1:])
        else:
            segments.extend(part)
    return segments


def _joins(block: Block, n: int, text: str, *, fits: bool, before_atomic: bool) -> bool:
    """Whether child ``n`` (a paragraph that is no lead-in) stays with the child after it:
    when both fit, or when it is one line before code or a table (an introduction goes with
    its code, as a heading does). The first paragraph of an item, quote or container leads
    the rest: it joins the next child when both fit whatever its lines, but a long one is
    never joined past the size (a tab's first paragraph is no heading)."""
    kid = block.children[n]
    if kid.kind != "paragraph":
        return False
    one_line = len(text[kid.start : kid.end].splitlines()) == 1
    if n == 0 and block.kind in LEADING_CONTAINERS:
        return fits or (one_line and before_atomic)
    return one_line and (fits or before_atomic)


def _solid_end(text: str, floor: int, stop: int) -> int:
    """Just past the last non-whitespace char of text[floor:stop] (``floor`` when none)."""
    return floor + len(text[floor:stop].rstrip())


def _line_segments(start: int, end: int, text: str, limit: int, sizer: Sizer) -> list[Segment]:
    """[start, end) cut at line ends, and overlong lines at word gaps."""
    size = sizer(start, end)
    if size <= limit:
        return [Segment(start, end, size)]
    pieces: list[Segment] = []
    pos = start
    for line in text[start:end].splitlines(keepends=True):
        line_start, pos = pos, pos + len(line)
        stripped = line.rstrip()
        if not stripped.strip():
            continue
        first = line_start + (len(line) - len(line.lstrip()))
        pieces.extend(_split_line(first, line_start + len(stripped), text, limit, sizer))
    pieces[0] = _widened(pieces[0], start, pieces[0].end, False, sizer)  # indentation, marks
    return pieces


def _split_line(start: int, end: int, text: str, limit: int, sizer: Sizer) -> list[Segment]:
    """A line within ``limit``, else its words (packing joins them back up to the limit); a
    word longer than the limit in chars is cut every ``limit`` chars."""
    size = sizer(start, end)
    if size <= limit:
        return [Segment(start, end, size)]
    words: list[Segment] = []
    for match in _WORD.finditer(text, start, end):
        w_start, w_end = match.span()
        while sizer.unit == "chars" and w_end - w_start > limit:
            words.append(Segment(w_start, w_start + limit, limit))
            w_start += limit
        words.append(Segment(w_start, w_end, sizer(w_start, w_end)))
    return words


def pack(segments: list[Segment], limit: int, overlap: int, sizer: Sizer) -> list[list[Segment]]:
    """Greedy packing up to ``limit`` with ``overlap`` carried over. Without overlap, a last
    piece under a quarter of the limit is rebalanced: the same number of pieces, cut at the
    segment ends nearest to even shares of the whole (``_even``), when each still fits."""
    pieces = _greedy(segments, limit, overlap, sizer)
    if overlap or len(pieces) < 2 or sizer.join(pieces[-1]) >= TAIL_SHARE * limit:
        return pieces
    even = _even(segments, len(pieces), sizer)
    fits = all(len(p) == 1 or sizer.join(p) <= limit for p in even)
    smallest = min(sizer.join(p) for p in even)
    return even if fits and smallest > sizer.join(pieces[-1]) else pieces


def _even(segments: list[Segment], n: int, sizer: Sizer) -> list[list[Segment]]:
    """``segments`` in ``n`` runs, each cut at the segment end nearest to its even share."""
    ends: list[int] = []  # size of segments[:j + 1]
    for j, seg in enumerate(segments):
        ends.append(sizer.grown(segments[0], ends[-1], seg) if j else seg.size)
    cuts = [0]
    for i in range(1, n):
        target = ends[-1] * i / n
        j = bisect.bisect_left(ends, target)
        if j > 0 and target - ends[j - 1] <= ends[min(j, len(ends) - 1)] - target:
            j -= 1
        cuts.append(min(max(j + 1, cuts[-1] + 1), len(segments) - (n - i)))
    cuts.append(len(segments))
    return [segments[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]


def _greedy(
    segments: list[Segment], limit: int, overlap: int, sizer: Sizer
) -> list[list[Segment]]:
    pieces: list[list[Segment]] = []
    current: list[Segment] = []
    size = 0
    for seg in segments:
        if current and sizer.grown(current[0], size, seg) > limit:
            pieces.append(current)
            current = _carry(current, overlap, sizer)
            size = sizer.join(current) if current else 0
            if current and sizer.grown(current[0], size, seg) > limit:
                current, size = [], 0
        size = sizer.grown(current[0], size, seg) if current else seg.size
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


def holds_content(blocks: Sequence[Block], start: int, end: int) -> bool:
    """Whether [start, end) overlaps a block with words that is not front matter or metadata,
    looking into containers: a container's closing line (``:::``) holds none."""
    lo = max(bisect.bisect_right(blocks, start, key=_START) - 1, 0)
    for block in blocks[lo : bisect.bisect_left(blocks, end, lo, key=_START)]:
        if block.end <= start or not block.content or block.kind in LEADING:
            continue
        if block.kind != "container" or holds_content(block.children, start, end):
            return True
    return False


def absorb_wordless(pieces: list[Piece], blocks: Sequence[Block]) -> list[Piece]:
    """A piece holding no word (only rules, ``:::`` lines, lone comments or front matter)
    joins the piece before it, or the next one when it comes first."""
    merged: list[Piece] = []
    held: int | None = None  # start of wordless pieces waiting for the first piece with words
    for piece in pieces:
        if holds_content(blocks, piece.start, piece.end):
            if held is not None:
                piece.start, held = held, None
            merged.append(piece)
        elif merged:
            merged[-1].end = max(merged[-1].end, piece.end)
        elif held is None:
            held = piece.start
    return merged if merged else pieces
