"""A time limit on loading and parsing one file, so a file that would take minutes (or never
end) is skipped and the rest of the corpus loads."""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import ConfigError, ParseTimeLimitError

PARSE_SECONDS = 60.0
"""Seconds one file may take to be read and parsed by default (an 8 MiB page of prose takes
a few); ``CHUNKPROOF_PARSE_SECONDS`` or ``load_corpus(parse_seconds=...)`` sets another, 0 none."""
ENV = "CHUNKPROOF_PARSE_SECONDS"
_warned: list[bool] = []


def parse_limit(seconds: float | None = None, *, name: str = "parse_seconds") -> float:
    """``seconds``, else ``CHUNKPROOF_PARSE_SECONDS``, else ``PARSE_SECONDS``; ConfigError
    naming the value (``name`` when it is ``seconds``) when it is not a number >= 0."""
    value: object = seconds if seconds is not None else os.environ.get(ENV, PARSE_SECONDS)
    where = name if seconds is not None else ENV
    try:
        found = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        found = -1.0
    if not found >= 0 or found == float("inf"):
        raise ConfigError(f"{where}: expected seconds per file, a number >= 0 (0: no limit); "
                          f"got {value!r}")
    return found


def signals_usable() -> bool:
    """Whether a timer signal can interrupt the work here: a POSIX process, on its main
    thread (a pool worker process is one)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise ParseTimeLimitError in the block once it has run ``seconds`` (a real-time timer
    signal; code in a native extension is interrupted when it returns to Python). Where
    signals cannot be used (another thread, no ``setitimer``), the block runs without a
    limit and a warning says so once. An outer timer is restored with what it had left."""
    if not seconds:
        yield
        return
    if not signals_usable():
        if not _warned:
            _warned.append(True)
            warnings.warn(f"the per-file parse time limit ({seconds:g} s) needs timer signals "
                          "(the main thread of a POSIX process): files load without it here",
                          RuntimeWarning, stacklevel=3)
        yield
        return

    def expired(_signum, _frame):
        raise ParseTimeLimitError(f"took longer than the {seconds:g} s limit to read and "
                                  f"parse ({ENV} sets it): skipped")

    began = time.monotonic()
    previous = signal.signal(signal.SIGALRM, expired)
    outer, _interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - began), 1e-3))
