"""Values as the content caches store them: compact JSON in UTF-8, compressed with zlib past
``COMPRESS_FROM`` bytes. A large value is stored as lines (``Lines``), one JSON value a line,
each made, encoded and dropped before the next, and read back a line at a time (``values``):
neither the value nor its JSON is ever held whole, only the compressed bytes when it is made
and one line when it is read."""

from __future__ import annotations

import io
import json
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

LEVEL = 1
"""zlib's level: its quickest, which makes a parse's JSON about six times smaller for a few
per cent of the time the parse took."""
COMPRESS_FROM = 4096
"""Bytes of JSON past which a value is compressed: a short one (a chunk text's tokens) is
stored as its JSON, as compressing it would cost more time than it saves room. The two are
told apart by their first byte: zlib's is ``x``, which no JSON text begins with."""
PLAIN_BYTES = 2**20
"""Bytes of JSON decompressed at a time when a value is read."""


class Lines:
    """A value stored as lines: each of ``values`` (JSON data, at least one) encoded on a line
    of its own (compact JSON holds no newline byte), each made and encoded before the next is
    made. Read back (``values``), one value a line, in order."""

    def __init__(self, values: Iterable[Any]):
        self.values = values


_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


class _Stored:
    """What is written to it, kept as it comes until it passes ``COMPRESS_FROM`` bytes, then
    compressed as it comes."""

    def __init__(self) -> None:
        self.out = io.BytesIO()
        self.zip: Any = None

    def write(self, data: bytes) -> None:
        if self.zip is None and self.out.tell() + len(data) > COMPRESS_FROM:
            self.zip = zlib.compressobj(LEVEL)
            kept, self.out = self.out.getvalue(), io.BytesIO()
            self.out.write(self.zip.compress(kept))
        self.out.write(data if self.zip is None else self.zip.compress(data))

    def getvalue(self) -> bytes:
        if self.zip is not None:
            self.out.write(self.zip.flush())
        return self.out.getvalue()


def encode(value: Any) -> bytes:
    """``value`` (JSON data, or ``Lines`` of it) as compact JSON, UTF-8, a line per value of
    a ``Lines``, compressed past ``COMPRESS_FROM`` bytes."""
    out = _Stored()
    if not isinstance(value, Lines):
        out.write(_DUMPS(value).encode())
        return out.getvalue()
    written = False
    for item in value.values:
        out.write(b"\n" if written else b"")
        out.write(_DUMPS(item).encode())
        written = True
    if not written:
        raise ValueError("Lines of no value")
    return out.getvalue()


def values(pieces: Iterable[bytes]) -> Iterator[Any]:
    """The values ``encode`` wrote, one a line, from its bytes handed over in ``pieces``: each
    line decoded when it is whole, so only one is held. ValueError for bytes it did not make
    (a line that is no JSON, a compressed stream damaged, cut short or followed by more)."""
    for line in _lines(_plain(pieces)):
        yield json.loads(line)


def only(found: Iterator[Any]) -> Any:
    """The one value of a value that is no ``Lines`` (``values``): ValueError for more."""
    value = next(found)
    if next(found, _END) is not _END:
        raise ValueError("more than one value")
    return value


def decode(blob: bytes) -> Any:
    """The value ``encode`` made of ``blob`` (not ``Lines``): ValueError for bytes it did not
    make."""
    return only(values([blob]))


_END = object()


def _plain(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """``pieces`` decompressed (at most ``PLAIN_BYTES`` at a time) when they begin as zlib's
    stream does, else as they are."""
    unzip: Any = None
    begun = False
    for piece in pieces:
        if not begun and piece:
            begun = True
            unzip = zlib.decompressobj() if piece[:1] == b"x" else None
        if unzip is None:
            yield piece
            continue
        try:
            yield unzip.decompress(piece, PLAIN_BYTES)
            while unzip.unconsumed_tail:
                yield unzip.decompress(unzip.unconsumed_tail, PLAIN_BYTES)
        except zlib.error as err:
            raise ValueError(f"not a stored value ({err})") from None
    if unzip is not None and (not unzip.eof or unzip.unused_data):
        raise ValueError("not a stored value (its compressed stream is cut or followed)")


def _lines(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """The lines of the bytes handed over in ``pieces``, each joined whole."""
    held: list[bytes] = []
    for piece in pieces:
        *whole, last = piece.split(b"\n")
        if whole:
            yield b"".join([*held, whole[0]])
            yield from whole[1:]
            held = []
        if last:
            held.append(last)
    yield b"".join(held)
