"""Values as compact JSON in UTF-8 bytes (what the content caches store), a large array
written piece by piece (``Pieces``) so it is never held whole as data beside its bytes."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from typing import Any


class Pieces:
    """A JSON array handed to the cache in pieces: an iterable of lists, each encoded (and
    dropped) before the next is made, so a large value is never held whole as data beside
    its encoding. Read back, it is one array of every piece's items, in order."""

    def __init__(self, pieces: Iterable[list]):
        self.pieces = pieces


_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode


def encode(value: Any) -> bytes:
    """A value as the cache stores it: compact JSON, UTF-8; a ``Pieces`` (a value of a dict,
    or the value) written piece by piece."""
    out = io.BytesIO()
    _write(out, value)
    return out.getvalue()


def _write(out: io.BytesIO, value: Any) -> None:
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
