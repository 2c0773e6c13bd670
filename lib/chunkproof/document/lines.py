"""Line starts of a text, so line numbers and char offsets convert both ways, found without
Python code running per line."""

from __future__ import annotations

import bisect
import re
from array import array
from collections.abc import Iterator
from itertools import accumulate, chain, islice
from operator import add

# markdown-it splits lines exactly where this pattern matches (its normalize rule).
_NEWLINE = re.compile(r"\r\n?|\n")


def offset_type(size: int) -> str:
    """The array typecode holding offsets into ``size`` chars or bytes: 4-byte ints when they
    fit, else 8."""
    return "i" if size < 2**31 else "q"


SHARED_OFFSETS = 4096
"""Offsets ``LineIndex.span`` remembers to hand out the same int object again."""
LINE_SLAB = 1 << 20
"""Chars (or bytes) split into lines at once by ``line_ends``."""


def line_ends(data: str | bytes, newline: str | bytes) -> Iterator[int]:
    """Offsets just past each ``newline`` (one char or byte) of ``data``: each slab of
    ``LINE_SLAB`` is split at its newlines at once and the lengths summed, so no Python code
    runs per line and no more than a slab's lines are held at a time."""
    return chain.from_iterable(_slab_ends(data, pos, newline)
                               for pos in range(0, len(data), LINE_SLAB))


def _slab_ends(data: str | bytes, pos: int, newline: str | bytes) -> Iterator[int]:
    lengths = list(map(len, data[pos:pos + LINE_SLAB].split(newline)))  # type: ignore[arg-type]
    lengths.pop()  # what follows the slab's last newline
    return map(add, islice(accumulate(lengths, initial=pos), 1, None), range(1, len(lengths) + 1))


class LineIndex:
    """Char offsets of line starts, so line numbers and offsets convert both ways."""

    def __init__(self, text: str):
        self.text = text
        self.starts = array(offset_type(len(text)), [0])  # 4 bytes a line (8 past 2 GB)
        if "\r" in text:
            self.starts.extend(m.end() for m in _NEWLINE.finditer(text))
        else:
            self.starts.extend(line_ends(text, "\n"))
        self.shared: dict[int, int] = {}
        """Offsets ``span`` made recently, each its own key and value."""

    @classmethod
    def of_starts(cls, text: str, starts: array) -> LineIndex:
        """The index of ``text`` from its line starts, found before (a cached parse)."""
        index = cls.__new__(cls)
        index.text, index.starts, index.shared = text, starts, {}
        return index

    def offset(self, line: int) -> int:
        """Offset of 0-based ``line``'s first char (len(text) past the last line)."""
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def window_stop(self, first: int, size: int) -> int:
        """The 0-based line a window of about ``size`` chars from line ``first`` stops before:
        at a line end, at least one line on, the line count when it reaches the end."""
        end = self.offset(first) + size
        if end >= len(self.text):
            return len(self.starts)
        return max(first + 1, self.line_of(end))

    def line_of(self, offset: int) -> int:
        """1-based line number holding ``offset``."""
        return bisect.bisect_right(self.starts, offset)

    def span(self, first: int, stop: int) -> tuple[int, int]:
        """Offsets of 0-based lines [first, stop), trailing whitespace excluded (one int
        object per offset recently made: a container and its first and last child share
        theirs, 32 bytes each)."""
        starts, text = self.starts, self.text
        start = starts[first] if first < len(starts) else len(text)
        end = starts[stop] if stop < len(starts) else len(text)
        while end > start and text[end - 1].isspace():
            end -= 1
        shared = self.shared
        if len(shared) > SHARED_OFFSETS:
            shared.clear()
        return shared.setdefault(start, start), shared.setdefault(end, end)
