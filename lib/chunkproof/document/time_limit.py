"""A time limit on parsing one document, counted in the CPU time its thread uses, so a file that
would take minutes (or never end) is skipped and the rest of the corpus loads, and a page
handed to the API stops with one error line; a loaded machine neither skips a file early nor
waits on it longer."""

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
"""CPU seconds one document may take to be parsed by default (an 8 MiB page of prose takes a
few); ``CHUNKPROOF_PARSE_SECONDS``, ``load_corpus(parse_seconds=...)`` or
``make_document(parse_seconds=...)`` sets another, 0 none."""
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
    """Raise ParseTimeLimitError in the block once this thread has used ``seconds`` of CPU time.
    A profiling timer signal (``ITIMER_PROF``) counts the process's CPU time, at least this
    thread's: where other threads worked meanwhile it fires early, and is set again for what
    this thread has left. Code in a native extension is interrupted when it returns to
    Python. Where signals cannot be used (another thread, no ``setitimer``), the block runs
    without a limit and a warning says so once. An outer timer is restored with what it had
    left."""
    if not seconds:
        yield
        return
    if not signals_usable():
        if not _warned:
            _warned.append(True)
            warnings.warn(f"the per-document parse time limit ({seconds:g} CPU-s) needs timer "
                          "signals (the main thread of a POSIX process): documents are parsed "
                          "without it here", RuntimeWarning, stacklevel=3)
        yield
        return
    began, process_began = time.thread_time(), time.process_time()

    def expired(_signum, _frame):
        left = seconds - (time.thread_time() - began)
        if left > 0:  # other threads used the process's CPU time: wait for this one's
            signal.setitimer(signal.ITIMER_PROF, left)
            return
        raise ParseTimeLimitError(f"took more than the {seconds:g} CPU-s limit to parse "
                                  f"({ENV} or parse_seconds sets it)")

    previous = signal.signal(signal.SIGPROF, expired)
    outer, _interval = signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
        if outer:
            used = time.process_time() - process_began
            signal.setitimer(signal.ITIMER_PROF, max(outer - used, 1e-3))
