"""Values as the content caches store them: compact JSON in UTF-8, compressed with zlib past
``COMPRESS_FROM`` bytes; a large array written piece by piece (``Pieces``), so neither it nor
its JSON is ever held whole, only the compressed bytes."""

from __future__ import annotations

import io
import json
import zlib
from collections.abc import Iterable
from typing import Any

LEVEL = 1
"""zlib's level: its quickest, which makes a parse's JSON about six times smaller for a few
per cent of the time the parse took."""
COMPRESS_FROM = 4096
"""Bytes of JSON past which a value is compressed: a short one (a chunk text's tokens) is
stored as its JSON, as compressing it would cost more time than it saves room. The two are
told apart by their first byte: zlib's is ``x``, which no JSON text begins with."""


class Pieces:
    """A JSON array handed over in pieces: an iterable of lists, each encoded (and dropped)
    before the next is made. Read back, it is one array of every piece's items, in order."""

    def __init__(self, pieces: Iterable[list]):
        self.pieces = pieces


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
    """``value`` (JSON data; a ``Pieces`` as a value of a dict, or as the value) as compact
    JSON, UTF-8, compressed past ``COMPRESS_FROM`` bytes."""
    out = _Stored()
    _write(out, value)
    return out.getvalue()


def decode(blob: bytes) -> Any:
    """The value ``encode`` made of it: ValueError for bytes it did not make."""
    if blob[:1] != b"x":
        return json.loads(blob)
    try:
        return json.loads(zlib.decompress(blob))
    except zlib.error as err:
        raise ValueError(f"not a stored value ({err})") from None


def _write(out: _Stored, value: Any) -> None:
    if isinstance(value, Pieces):
        out.write(b"[")
        written = False
        for piece in value.pieces:
            if piece:
                out.write(b"," if written else b"")
                out.write(_DUMPS(piece)[1:-1].encode())
                written = True
        out.write(b"]")
    elif isinstance(value, dict) and any(isinstance(v, Pieces) for v in value.values()):
        out.write(b"{")
        for n, (name, item) in enumerate(value.items()):
            if not isinstance(name, str):
                raise TypeError(f"keys must be str, not {type(name).__name__}")
            out.write(f"{',' if n else ''}{_DUMPS(name)}:".encode())
            _write(out, item)
        out.write(b"}")
    else:
        out.write(_DUMPS(value).encode())
