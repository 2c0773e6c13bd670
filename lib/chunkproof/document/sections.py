"""The heading stack: breadcrumbs in force at any offset, and the dominant heading level."""

from __future__ import annotations

import bisect
import hashlib
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cached_property
from operator import attrgetter

from .blocks import NOT_BODY, Block
from .lines import offset_type

_START, _END = attrgetter("start"), attrgetter("end")
MAX_LABELS = 8
"""Container labels a breadcrumb carries at most: those of the outermost eight containers
holding the chunk (a documentation dialect's containers nest eight deep at most,
``dialects.MAX_DEPTH``; GitHub alerts are quotes, which nest further). With at most six
headings, a breadcrumb is at most fourteen entries deep (and a ``part n of m``)."""
_KIND, _CONTENT = attrgetter("kind"), attrgetter("content")


class HeadingStack:
    """Headings seen so far; a heading clears every entry at its depth and below. Held
    dense (skipped levels have no entry), so a path is one tuple call."""

    def __init__(self) -> None:
        self._levels: list[int] = []
        self._titles: list[str] = []
        self._provenances: list[str] = []

    def push(self, level: int, title: str, provenance: str = "") -> None:
        levels = self._levels
        while levels and levels[-1] >= level:
            levels.pop()
            self._titles.pop()
            self._provenances.pop()
        levels.append(level)
        self._titles.append(title.strip())
        self._provenances.append(provenance)

    def path(self) -> tuple[str, ...]:
        """Dense path: skipped levels are left out, never holes."""
        return tuple(self._titles)

    def provenance(self) -> tuple[str, ...]:
        return tuple(self._provenances)


class Breadcrumbs:
    """For one document: the heading path in force at every offset."""

    def __init__(self, blocks: Sequence[Block]):
        self.blocks = tuple(blocks)
        self.starts: list[int]
        self.paths: list[tuple[str, ...]]
        self.provenances: list[tuple[str, ...]]
        """Where each heading starts (0 first: before any), the path and provenances in force
        from there."""
        size = self.blocks[-1].end if self.blocks else 0
        self.block_starts = array(offset_type(size))
        self.block_ends = array(offset_type(size))
        self.block_starts.extend(map(_START, self.blocks))
        self.block_ends.extend(map(_END, self.blocks))
        self._stack()
        self.has_headings = len(self.starts) > 1
        self.labelled = any(map(_labelled, self.blocks))
        """Whether a labelled container lies anywhere in the document."""

    def _stack(self) -> None:
        """The heading stack: where each heading starts, the path and provenances from there,
        and the entry of its parent heading (entry 0: before any heading, the root)."""
        stack = HeadingStack()
        self.starts, self.paths, self.provenances = [0], [()], [()]
        self.parents = [-1]
        """The entry of each entry's parent heading (0 for a top heading, -1 for the root)."""
        chain: list[int] = []  # the entries of the headings on the stack
        for block in [b for b in self.blocks if b.kind == "heading"]:  # Block.is_heading
            stack.push(block.level, block.title, block.provenance)
            path = stack.path()
            chain[len(path) - 1:] = [len(self.starts)]
            self.parents.append(chain[-2] if len(chain) > 1 else 0)
            self.starts.append(block.start)
            self.paths.append(path)
            self.provenances.append(stack.provenance())

    @cached_property
    def body(self) -> list[bool]:
        """Whether each block is content (``Block.is_body``)."""
        return [content and kind not in NOT_BODY for kind, content
                in zip(map(_KIND, self.blocks), map(_CONTENT, self.blocks), strict=True)]

    def _index(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) - 1

    def overlapping(self, start: int, end: int) -> tuple[Block, ...]:
        """The top-level blocks that overlap [start, end) (they are in order, never overlap)."""
        first = bisect.bisect_right(self.block_ends, start)
        return self.blocks[first : bisect.bisect_left(self.block_starts, end, first)]

    def containers(self, start: int, end: int) -> tuple[str, ...]:
        """The labels of the containers holding all of [start, end), outermost first."""
        return container_labels(self.blocks, start, end) if self.labelled else ()

    def at(self, offset: int) -> tuple[str, ...]:
        """The deepest heading path in force at ``offset`` (a heading counts from its start)."""
        return self.paths[self._index(offset)]

    def provenance_at(self, offset: int) -> tuple[str, ...]:
        """How each heading of ``at(offset)`` was found, in the same order."""
        return self.provenances[self._index(offset)]

    def common(self, offsets: Sequence[int]) -> tuple[str, ...]:
        """The longest path shared by every offset (in order): the common parent of what they
        hold."""
        return self.label(offsets)[0]

    def label(self, offsets: Sequence[int]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``common(offsets)`` and how each of its headings was found: the path of
        ``section(offsets)``."""
        entry = self.section(offsets)
        return self.paths[entry], self.provenances[entry]

    def section(self, offsets: Sequence[int]) -> int:
        """The entry of the deepest section holding every offset (in order): the nearest
        common ancestor of the headings in force at the first and the last, so two sections
        of the same name are two sections (0: the root, before any heading)."""
        first, last = self._index(offsets[0]), self._index(offsets[-1])
        parents, paths = self.parents, self.paths
        while first != last:
            deeper = len(paths[first]) - len(paths[last])
            if deeper >= 0:
                first = parents[first]
            if deeper <= 0:
                last = parents[last]
        return first


def _labelled(block: Block) -> bool:
    """Whether ``block`` is, or holds, a labelled container."""
    if block.kind == "container" and block.label:
        return True
    return bool(block.children) and any(map(_labelled, block.children))


def container_labels(blocks: Sequence[Block], start: int, end: int) -> tuple[str, ...]:
    """The labels of the labelled containers (at any depth) that hold all of [start, end),
    outermost first, ``MAX_LABELS`` at most: what a span inside a tab or an admonition is
    shown under."""
    found: list[str] = []
    level = blocks
    while level and len(found) < MAX_LABELS:
        at = bisect.bisect_right(level, start, key=_START) - 1
        block = level[at] if at >= 0 else None
        if block is None or not block.start <= start < end <= block.end:
            break
        if block.kind == "container" and block.label:
            found.append(block.label)
        level = block.children
    return tuple(found)


def common_prefix(paths: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    result: tuple[str, ...] | None = None
    for path in paths:
        if result is None:
            result = path
            continue
        n = 0
        while n < min(len(result), len(path)) and result[n] == path[n]:
            n += 1
        result = result[:n]
    return result or ()


def section_id(doc_id: str, path: Sequence[str], start: int) -> str:
    """A section's stable id: sha256 of the document id, the heading's offset and the heading
    path, each written as its length, ``:`` and itself (the root, before any heading: the
    empty path at 0), so two sections of one name differ and every process makes the same id
    (the first 16 hex digits)."""
    key = "".join(f"{len(part)}:{part}" for part in (doc_id, str(start), *path))
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def breadcrumb_at(blocks: Sequence[Block], offset: int) -> tuple[str, ...]:
    """Shortcut for one look-up; build a Breadcrumbs once when looking up many offsets."""
    return Breadcrumbs(blocks).at(offset)


def dominant_level(blocks: Sequence[Block]) -> int | None:
    """The shallowest heading level that repeats (the document's backbone), else the shallowest."""
    counts = Counter(b.level for b in blocks if b.is_heading)
    if not counts:
        return None
    repeated = [level for level, n in counts.items() if n >= 2]
    return min(repeated) if repeated else min(counts)



class Sections:
    """For one document: the span of the section each heading opens, from the heading line to
    the end of the last block before the next heading of the same or a shallower level. The
    blocks are the parse's, so a ``#`` line inside a fence is fence text and ends nothing."""

    def __init__(self, blocks: Sequence[Block]):
        self.headings = [b for b in blocks if b.is_heading]
        self.starts = [b.start for b in self.headings]
        self.ends = [0] * len(self.headings)
        open_: list[int] = []  # headings whose section is still open
        last_end = 0
        number = 0
        for block in blocks:
            if block.is_heading:
                while open_ and self.headings[open_[-1]].level >= block.level:
                    self.ends[open_.pop()] = last_end
                open_.append(number)
                number += 1
            last_end = max(last_end, block.end)
        for i in open_:
            self.ends[i] = last_end
        self.blocks = list(blocks)
        self.begin = blocks[0].start if blocks else 0
        """Where the first block starts."""
        self.end = last_end
        """Where the last block ends."""

    def span(self, heading: Block) -> tuple[int, int]:
        """(start, end) of the section ``heading`` (one of the document's headings) opens."""
        i = bisect.bisect_left(self.starts, heading.start)
        return heading.start, self.ends[i]

    def holding(self, offset: int) -> tuple[Block | None, int, int]:
        """The innermost section holding ``offset``: (its heading, start, end); before the
        first heading, (None, start, end) of the text that precedes it."""
        i = bisect.bisect_right(self.starts, offset) - 1
        if i < 0:
            return None, self.begin, self.ended_by(self.starts[0] if self.starts else self.end)
        return self.headings[i], self.starts[i], self.ends[i]

    def ended_by(self, offset: int) -> int:
        """The end of the last block that ends at or before ``offset``."""
        return max((b.end for b in self.blocks if b.end <= offset), default=self.begin)

    def has_body(self, start: int, end: int) -> bool:
        """Whether a content block (not a heading, front matter or wordless) lies in the span."""
        return any(b.is_body and start <= b.start < end for b in self.blocks)
