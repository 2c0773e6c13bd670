"""Work kept across runs, keyed by content: values stored under a digest of what made them (the
text, the code version, the parser or tokenizer), in one sqlite file per kind of value."""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
import threading
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import CacheWarning
from .cache import cache_root

SWITCH_VARIABLE = "CHUNKPROOF_CONTENT_CACHE"
"""Environment variable: ``0`` (or ``off``) turns the parse and tokenisation caches off."""


def enabled() -> bool:
    """Whether the content caches are on (``$CHUNKPROOF_CONTENT_CACHE`` is not 0 or off)."""
    return os.environ.get(SWITCH_VARIABLE, "").strip().lower() not in ("0", "off", "no")


def digest(*parts: str | bytes) -> str:
    """sha256 of the parts, each ended by a NUL byte (so no two splits of one string agree)."""
    found = hashlib.sha256()
    for part in parts:
        found.update(part.encode() if isinstance(part, str) else part)
        found.update(b"\0")
    return found.hexdigest()


class ContentCache:
    """Values by key (``digest`` of what made them), pickled into ``<root>/<kind>.sqlite``.

    Every write is one sqlite transaction (a crash leaves the rows before it or after it), two
    processes may read and write the same file (sqlite's lock, waited for up to 30 s), and a
    value that cannot be read back is dropped and made again. A file that cannot be opened or
    written (a read-only or full disk) is reported once (CacheWarning) and the cache is left
    unused: the work is done as if it were empty."""

    def __init__(self, kind: str, root: Path | None = None):
        self.kind = kind
        self.root = root
        self.failed = ""
        """Why the file cannot be used (it could not be opened or written), else ""."""
        self._db: sqlite3.Connection | None = None
        self._opened: tuple[int, Path] | None = None
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        return (self.root or cache_root()) / f"{self.kind}.sqlite"

    @property
    def disabled(self) -> str:
        """Why the cache is not used (switched off, or its file failed), else ""."""
        return self.failed or ("" if enabled() else f"{SWITCH_VARIABLE} is off")

    def _connect(self) -> sqlite3.Connection:
        where = (os.getpid(), self.path)  # a forked process, or another folder: open anew
        if self._db is None or self._opened != where:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # a crash may lose the last rows, no more
            db.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, "
                       "value BLOB NOT NULL)")
            db.commit()
            self._db, self._opened = db, where
        return self._db

    def _guard(self, action: Callable[[sqlite3.Connection], Any], default: Any) -> Any:
        if self.disabled:
            return default
        with self._lock:
            try:
                return action(self._connect())
            except (sqlite3.Error, OSError) as err:
                self.failed = f"cannot be used ({err})"
                warnings.warn(f"{self.kind} cache {self.path}: {self.failed}; working "
                              "without it", CacheWarning, stacklevel=4)
                return default

    def get_many(self, keys: Iterable[str]) -> dict[str, Any]:
        """The values stored under ``keys`` (those missing or unreadable left out)."""
        wanted = list(dict.fromkeys(keys))

        def read(db: sqlite3.Connection) -> dict[str, Any]:
            found: dict[str, Any] = {}
            for start in range(0, len(wanted), 500):
                batch = wanted[start : start + 500]
                marks = ",".join("?" * len(batch))
                for key, blob in db.execute(
                        f"SELECT key, value FROM entries WHERE key IN ({marks})", batch):
                    try:
                        found[key] = pickle.loads(blob)  # noqa: S301 (the user's own cache)
                    except Exception:  # a value written by other code: made again
                        continue
            return found

        return self._guard(read, {}) if wanted else {}

    def get(self, key: str) -> Any | None:
        return self.get_many([key]).get(key)

    def put_many(self, items: dict[str, Any]) -> None:
        """Store every value, in one transaction."""
        rows = [(key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
                for key, value in items.items()]

        def write(db: sqlite3.Connection) -> None:
            with db:
                db.executemany("INSERT OR REPLACE INTO entries (key, value) VALUES (?, ?)",
                               rows)

        if rows:
            self._guard(write, None)

    def put(self, key: str, value: Any) -> None:
        self.put_many({key: value})
