"""Work kept across runs, keyed by content: values stored under a digest of what made them (the
text, the code version, the parser or tokenizer), in one sqlite file per kind of value.

A value is data, never code: JSON text, compressed (``json_bytes``), stored with a checksum of
its key and its bytes and read back only when both match; a large value is read a piece at a
time, checked in a first pass and decoded line by line in a second. A file sqlite cannot read
is moved aside once, with one warning, and made again; the least recently used values go when
a file passes its size bound."""

from __future__ import annotations

import atexit
import hashlib
import os
import sqlite3
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import CacheWarning
from .cache import CACHE_VARIABLE, cache_root
from .json_bytes import encode, only, values
from .values import mib_from_env

SWITCH_VARIABLE = "CHUNKPROOF_CONTENT_CACHE"
"""Environment variable: ``0`` (or ``off``) turns the parse and tokenisation caches off."""
BOUND_VARIABLE = "CHUNKPROOF_CONTENT_CACHE_MIB"
"""Environment variable: the MiB of values each kind of cached work keeps (``BOUND_MIB``)."""
BOUND_MIB = 1024
"""MiB of values one cache file keeps by default: past it, the values used least recently
are dropped until it holds nine tenths of that."""
KINDS = ("parsed", "bm25-tokens")
"""The content caches: parses of pages, BM25 tokenisations of chunk texts."""
LAYOUT = 4
"""The layout of a cache file, in its name (``parsed.v4.sqlite``) and its ``PRAGMA
user_version``: layout 1 (``parsed.sqlite``, pickled values), layout 2 (``.v2``, JSON not
compressed, in a middle column) and layout 3 (``.v3``, a parse one JSON value, read whole) are
never opened, so another version of chunkproof sharing
the folder keeps its own file (``chunkproof cache clear`` removes it); a file of this name in
another layout is emptied, never read."""
BATCH_ENTRIES = 64
BATCH_BYTES = 4 * 2**20
"""Values written at once: those stored are kept in memory until this many (or this many
bytes, or ``flush``, or the process's end) and written in one transaction."""
PIECE_BYTES = 2**20
"""Bytes of a value written to the file, or read from it, at a time: a value up to this size
is read whole."""
TOUCH_SECONDS = 3600
"""A value read is marked used again when its mark is older than this (most reads write
nothing)."""
ASIDE = ".bad-"
"""What a file moved aside is renamed with, before the time it was moved."""


def enabled() -> bool:
    """Whether the content caches are on (``$CHUNKPROOF_CONTENT_CACHE`` is not 0 or off)."""
    return os.environ.get(SWITCH_VARIABLE, "").strip().lower() not in ("0", "off", "no")


def bound_bytes() -> int:
    """``$CHUNKPROOF_CONTENT_CACHE_MIB`` (else ``BOUND_MIB``) in bytes; ConfigError naming the
    value when it is not a positive number."""
    return mib_from_env(BOUND_VARIABLE, BOUND_MIB * 2**20, what="the MiB each content cache keeps",
                        example=512, limit_mib=2**30)


def file_of(root: Path, kind: str) -> Path:
    """The file of the ``kind`` cache under ``root``."""
    return root / f"{kind}.v{LAYOUT}.sqlite"


def move_aside(path: Path) -> Path:
    """A damaged sqlite file renamed ``<name>.bad-<time>`` beside itself, its journal files
    removed (the next open makes a new file); the name it has now. OSError when it cannot be
    moved."""
    aside = path.with_name(f"{path.name}{ASIDE}{time.strftime('%Y%m%d-%H%M%S')}")
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return aside


def digest(*parts: str | bytes) -> str:
    """sha256 of the parts, each ended by a NUL byte (so no two splits of one string agree)."""
    return _sha256([part.encode() if isinstance(part, str) else part] for part in parts)


def _sha256(parts: Iterable[Iterable[bytes]]) -> str:
    """``digest`` of parts each handed over in pieces (a part's pieces joined, then a NUL)."""
    found = hashlib.sha256()
    for pieces in parts:
        for piece in pieces:
            found.update(piece)
        found.update(b"\0")
    return found.hexdigest()


def checksum(key: str, blob: bytes) -> str:
    """What a stored value is checked against: sha256 of the key it was stored under and of
    its bytes (first 32 hex digits; ``digest(key, blob)``'s)."""
    return checksum_of(key, [blob])


def checksum_of(key: str, pieces: Iterable[bytes]) -> str:
    """``checksum`` of the value whose bytes are handed over in ``pieces``."""
    return _sha256([[key.encode()], pieces])[:32]


class ContentCache:
    """JSON values by key (``digest`` of what made them) in ``<root>/<kind>.sqlite``.

    Every write is one sqlite transaction (a crash leaves the rows before it or after it), two
    processes may read and write the same file (sqlite's lock, waited for up to 30 s). A
    value whose checksum does not match its key and bytes, or that is no JSON, is dropped and
    made again; a file sqlite cannot read (a damaged page, a bad header, a truncation) is
    moved aside (``<kind>.sqlite.bad-<time>``) with one warning and made anew. A file that
    cannot be opened or written (a read-only or full disk) is reported once (CacheWarning)
    and the cache is left unused: the work is done as if it were empty."""

    def __init__(self, kind: str, root: Path | None = None, *,
                 decode: Callable[[Iterator[Any]], Any] = only):
        self.kind = kind
        self.root = root
        self.decode = decode
        """What a stored value is turned into before it is handed out, from its JSON values
        one a line (``json_bytes.values``; ``only``: the value of one line); a ValueError or
        TypeError it raises (a value of the wrong shape) drops the value as a failed checksum
        does."""
        self.failed = ""
        """Why the file cannot be used (it could not be opened or written), else ""."""
        self._db: sqlite3.Connection | None = None
        self._opened: tuple | None = None
        self._lock = threading.Lock()
        self._size: int | None = None
        """Bytes of values in the file, as this process last counted and then added."""
        self._pending: dict[str, tuple[str, str, bytes, int, int]] = {}
        """Rows stored and not yet written (``BATCH_ENTRIES``), by key."""
        self._pending_bytes = 0
        _OPEN.add(self)

    @property
    def path(self) -> Path:
        return file_of(self.root or cache_root(), self.kind)

    @property
    def disabled(self) -> str:
        """Why the cache is not used (switched off, or its file failed), else ""."""
        return self.failed or ("" if enabled() else f"{SWITCH_VARIABLE} is off")

    def _connect(self) -> sqlite3.Connection:
        where = (os.getpid(), self.root, os.environ.get(CACHE_VARIABLE),
                 os.environ.get("XDG_CACHE_HOME"))  # a forked process, another folder: anew
        if self._db is None or self._opened != where:
            path = self.path
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            db = sqlite3.connect(path, timeout=30, check_same_thread=False)
            try:
                _prepare(db)
            except sqlite3.DatabaseError:
                db.close()
                raise
            self._db, self._opened, self._size = db, where, None
        return self._db

    def close(self) -> None:
        """Close this process's connection (the next use opens it again)."""
        with self._lock:
            if self._db is not None and self._opened and self._opened[0] == os.getpid():
                self._db.close()
            self._db, self._opened = None, None

    def _guard(self, action: Callable[[sqlite3.Connection], Any], default: Any) -> Any:
        """``action`` on the open file; an unreadable file moved aside and ``action`` tried
        once on a new one; a file that cannot be used reported and left (``default``)."""
        if self.disabled:
            return default
        with self._lock:
            for attempt in (1, 2):
                try:
                    return action(self._connect())
                except sqlite3.DatabaseError as err:
                    if not damaged(err):  # locked, read-only, full: the file is kept
                        return self._fail(f"cannot be used ({err})", default)
                    if attempt == 2:
                        return self._fail(f"cannot be used ({err})", default)
                    if not self._move_aside(f"unreadable ({err})"):
                        return default
                except OSError as err:
                    return self._fail(f"cannot be used ({err})", default)
        return default

    def _fail(self, reason: str, default: Any) -> Any:
        self.failed = reason
        warnings.warn(f"{self.kind} cache {self.path}: {reason}; working without it",
                      CacheWarning, stacklevel=5)
        return default

    def _move_aside(self, reason: str) -> bool:
        """The file renamed ``<name>.bad-<time>`` (its journal files removed) and a warning
        saying so; False (the cache then unused) when it cannot be moved."""
        if self._db is not None:
            self._db.close()
        self._db = self._opened = None
        try:
            aside = move_aside(self.path)
        except OSError as err:
            self._fail(f"{reason}, and cannot be moved aside ({err})", None)
            return False
        warnings.warn(f"{self.kind} cache {self.path}: {reason}; moved aside to {aside.name} "
                      "and made anew (its work is done again)", CacheWarning, stacklevel=6)
        return True

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The values stored under ``keys`` whose checksum holds (those missing or failing
        left out; a failing one is dropped from the file)."""
        wanted = list(dict.fromkeys(keys))
        with self._lock:
            pending = {k: self._pending[k] for k in wanted if k in self._pending}
        if pending:
            wanted = [k for k in wanted if k not in pending]

        def read(db: sqlite3.Connection) -> dict[str, Any]:
            found = {k: value for k, row in pending.items()
                     if (value := _checked(k, row[1], _in_pieces(row[2]), self.decode))
                     is not _FAILED}
            stored, bad, stale = _stored(db, wanted, self.decode) if wanted else ({}, [], [])
            found.update(stored)
            if bad or stale:
                try:
                    _mark(db, bad, stale)
                except sqlite3.OperationalError:  # a file others share read-only: read on
                    pass
            return found

        return self._guard(read, {}) if wanted or pending else {}

    def get(self, key: str) -> Any | None:
        return self.get_many([key]).get(key)

    def put_many(self, items: dict[str, Any]) -> None:
        """Store every value (JSON data): written with the next ``BATCH_ENTRIES`` in one
        transaction (``flush``)."""
        if self.disabled:
            return
        now = int(time.time())
        rows = [(key, checksum(key, blob), blob, len(blob), now)
                for key, blob in ((key, encode(value)) for key, value in items.items())]
        with self._lock:
            self._pending.update((row[0], row) for row in rows)
            self._pending_bytes += sum(row[3] for row in rows)
            full = len(self._pending) >= BATCH_ENTRIES or self._pending_bytes >= BATCH_BYTES
        if full:
            self.flush()

    def flush(self) -> None:
        """Write the values stored so far, in one transaction; then drop the least recently
        used values when the file holds more than its bound (``bound_bytes``)."""
        with self._lock:
            rows, self._pending, self._pending_bytes = list(self._pending.values()), {}, 0

        def write(db: sqlite3.Connection) -> None:
            with db:
                for row in rows:
                    _insert(db, row)
            if self._size is None:
                self._size = stored_bytes(db)
            else:
                self._size += sum(row[3] for row in rows)
            if self._size > bound_bytes():
                self._size = evict(db, int(bound_bytes() * 0.9))

        if rows:
            self._guard(write, None)

    def put(self, key: str, value: Any) -> None:
        self.put_many({key: value})


ENVIRONMENT_ERRORS = frozenset({
    "SQLITE_PERM", "SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_NOMEM", "SQLITE_READONLY",
    "SQLITE_INTERRUPT", "SQLITE_IOERR", "SQLITE_FULL", "SQLITE_CANTOPEN", "SQLITE_PROTOCOL",
    "SQLITE_AUTH",
})
"""sqlite's errors that say where the file lies (locked, read-only, full, unreachable), not
what it holds: the file is kept and the cache left unused."""


def damaged(err: sqlite3.DatabaseError) -> bool:
    """Whether ``err`` says the file's content is wrong (a damaged page, a bad header, a schema
    that is not ours), so the file is to be moved aside, rather than where it lies."""
    name = getattr(err, "sqlite_errorname", "") or ""
    if not name:  # no code to tell by: what is operational is taken for the environment's
        return not isinstance(err, sqlite3.OperationalError)
    primary = "_".join(name.split("_")[:2])  # SQLITE_IOERR_SHORT_READ: SQLITE_IOERR
    return primary not in ENVIRONMENT_ERRORS


_FAILED = object()
_OPEN: weakref.WeakSet[ContentCache] = weakref.WeakSet()
"""Every content cache of this process, for ``flush_all``."""


@atexit.register
def flush_all() -> None:
    """Write what every content cache of this process holds unwritten."""
    for store in list(_OPEN):
        store.flush()


def _stored(db: sqlite3.Connection, wanted: list[str], decode: Callable[[Iterator[Any]], Any]
            ) -> tuple[dict[str, Any], list[str], list[str]]:
    """The values stored under ``wanted`` whose checksum holds (``_read``), all read in one
    snapshot of the file (a row listed is read as listed, whoever writes the file meanwhile);
    the keys whose value failed; the keys read whose mark of use is older than
    ``TOUCH_SECONDS``."""
    asked = set(wanted)
    found: dict[str, Any] = {}
    bad: list[str] = []
    stale: list[str] = []
    recent = int(time.time()) - TOUCH_SECONDS
    began = not db.in_transaction  # else the snapshot of the transaction open
    if began:
        db.execute("BEGIN")
    try:
        for start in range(0, len(wanted), 500):
            batch = wanted[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = db.execute("SELECT key, checksum, used, rowid, CASE WHEN size <= ? THEN "
                              f"value END FROM entries WHERE key IN ({marks})",
                              [PIECE_BYTES, *batch]).fetchall()
            for key, check, used, row_id, blob in rows:
                if key not in asked:  # a damaged index may hand back another row
                    continue
                value = _read(db, key, check, row_id, blob, decode)
                if value is _FAILED:
                    bad.append(key)
                    continue
                found[key] = value
                if not isinstance(used, int) or used < recent:
                    stale.append(key)
    finally:
        if began:
            db.rollback()
    return found, bad, stale


def _read(db: sqlite3.Connection, key: str, check: object, row_id: int, blob: object,
          decode: Callable[[Iterator[Any]], Any]) -> Any:
    """``_checked`` of a row: its value ``blob`` when it was read whole (up to
    ``PIECE_BYTES``), else read from the file a piece at a time, twice (to check, to decode)
    through one handle, so both passes read the same bytes."""
    if blob is not None:
        return _checked(key, check, _in_pieces(blob), decode) if isinstance(blob, bytes) \
            else _FAILED
    with db.blobopen("entries", "value", row_id, readonly=True) as stored:
        def pieces() -> Iterator[bytes]:
            stored.seek(0)
            while piece := stored.read(PIECE_BYTES):
                yield piece
        return _checked(key, check, pieces, decode)


def _in_pieces(blob: bytes) -> Callable[[], Iterator[bytes]]:
    """The bytes of ``blob`` a ``PIECE_BYTES`` piece at a time, each time it is called."""
    return lambda: (blob[start : start + PIECE_BYTES] for start in range(0, len(blob), PIECE_BYTES))


def _checked(key: str, check: object, pieces: Callable[[], Iterable[bytes]],
             decode: Callable[[Iterator[Any]], Any]) -> Any:
    """The value whose bytes ``pieces()`` hands over, ``decode``d from its JSON values, when
    its checksum holds for ``key`` and those bytes (a first pass over them: nothing is decoded
    from a value that fails) and the value has its shape; else ``_FAILED``."""
    if check != checksum_of(key, pieces()):
        return _FAILED
    try:
        return decode(values(pieces()))
    except (ValueError, TypeError, StopIteration):  # UnicodeDecodeError included
        return _FAILED


def text_value(found: Iterator[Any]) -> str:
    """The one value of ``found`` when it is a string (a ``decode`` for caches of text), else
    TypeError (ValueError for more than one value)."""
    value = only(found)
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def _insert(db: sqlite3.Connection, row: tuple[str, str, bytes, int, int]) -> None:
    """One row written in the open transaction, its value in pieces of ``PIECE_BYTES`` into
    room made for it (sqlite would otherwise copy a value bound whole, twice)."""
    key, check, blob, size, used = row
    made = db.execute("INSERT OR REPLACE INTO entries (key, checksum, size, used, value) "
                      "VALUES (?, ?, ?, ?, zeroblob(?))", (key, check, size, used, len(blob)))
    row_id = made.lastrowid
    assert row_id is not None  # set by every INSERT
    if not blob:
        return
    with db.blobopen("entries", "value", row_id) as value:
        whole = memoryview(blob)
        for start in range(0, len(whole), PIECE_BYTES):
            value.write(whole[start : start + PIECE_BYTES])


def _mark(db: sqlite3.Connection, bad: list[str], stale: list[str]) -> None:
    """Drop the rows that failed their check and mark the others read now as used."""
    with db:
        db.executemany("DELETE FROM entries WHERE key = ?", [(k,) for k in bad])
        db.executemany("UPDATE entries SET used = ? WHERE key = ?",
                       [(int(time.time()), k) for k in stale])


def _prepare(db: sqlite3.Connection) -> None:
    """The file in this layout: a file of another layout (pickled values) emptied; one sqlite
    cannot read raises sqlite3.DatabaseError."""
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")  # a crash may lose the last rows, no more
    with db:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version != LAYOUT:
            db.execute("DROP TABLE IF EXISTS entries")
        db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, checksum TEXT "
                   "NOT NULL, size INTEGER NOT NULL, used INTEGER NOT NULL, value BLOB NOT "
                   "NULL)")  # the value last: room made for it is never filled in memory
        db.execute("CREATE INDEX IF NOT EXISTS entries_used ON entries (used)")
        db.execute(f"PRAGMA user_version = {LAYOUT}")


def stored_bytes(db: sqlite3.Connection) -> int:
    """Bytes of the values a cache file holds."""
    return int(db.execute("SELECT total(size) FROM entries").fetchone()[0])


def evict(db: sqlite3.Connection, keep: int) -> int:
    """Drop the least recently used values until at most ``keep`` bytes are left; the bytes
    left."""
    left = stored_bytes(db)
    doomed: list[tuple[str]] = []
    for key, size in db.execute("SELECT key, size FROM entries ORDER BY used, key"):
        if left <= keep:
            break
        doomed.append((key,))
        left -= size
    with db:
        db.executemany("DELETE FROM entries WHERE key = ?", doomed)
    return left
