"""Sentence boundaries of prose, by blingfire's sentence breaker (a compiled finite-state
model: fast enough to run on every oversized paragraph, and it knows CJK full stops)."""

from __future__ import annotations

import ctypes
from functools import lru_cache
from typing import Any

from ..errors import SegmenterError


@lru_cache(maxsize=1)
def _native() -> Any:
    """blingfire's native library (its ``TextToSentencesWithOffsets``)."""
    try:
        import blingfire
    except OSError as err:  # the wheel ships its native library for x86-64 only
        raise SegmenterError(str(err)) from None
    return blingfire.blingfire


def sentence_starts(text: str) -> list[int]:
    """Char offsets where blingfire's sentences of ``text`` begin, the first included.

    The native call reports UTF-8 byte offsets; blingfire's own Python wrapper maps them to
    chars one byte at a time in Python (most of the time of a long paragraph), so here a
    text that is ASCII keeps them as they are and any other has the chars between two
    starts counted by decoding those bytes."""
    data = text.encode("utf-8")
    if not data:
        return []
    # Room for twice the bytes, rounded up to a power of two: ctypes makes (and keeps) a type
    # for each array length it is asked for, 8 us each.
    room = 1 << (2 * len(data)).bit_length()
    out = ctypes.create_string_buffer(room)
    starts, ends = (ctypes.c_int32 * room)(), (ctypes.c_int32 * room)()
    found = _native().TextToSentencesWithOffsets(
        ctypes.c_char_p(data), ctypes.c_int(len(data)), ctypes.byref(out),
        ctypes.byref(starts), ctypes.byref(ends), ctypes.c_int(room))
    if found < 0 or found > room:
        return []
    byte_starts = starts[: out.value.count(b"\n") + 1]
    if len(data) == len(text):
        return byte_starts
    chars, before = [], (0, 0)
    for offset in byte_starts:
        count = before[1] + len(data[before[0] : offset].decode("utf-8"))
        chars.append(count)
        before = (offset, count)
    return chars


def sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]`` as spans that tile it: each runs to where the next
    begins (whitespace excluded), the first from ``start``, the last to ``end``."""
    bounds = [start + s for s in sentence_starts(text[start:end]) if 0 < s < end - start]
    spans: list[tuple[int, int]] = []
    begin = start
    for nxt in [*bounds, end]:
        if nxt <= begin:
            continue
        stop = begin + len(text[begin:nxt].rstrip())
        if stop == begin:  # only indentation before the first sentence: it starts here
            continue
        spans.append((begin, stop))
        begin = nxt
    return spans
