"""Progress on stderr: tqdm's bar where it can be redrawn (a terminal, a Jupyter kernel), and
elsewhere (a log file, a pipe) one line as each stage ends, so a log holds no
carriage-return frames of a bar."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

import tqdm.auto
import tqdm.autonotebook
import tqdm.std


def redraws() -> bool:
    """Whether a bar can be redrawn where progress goes: stderr is a terminal, or this
    process is a Jupyter kernel (``tqdm.auto`` then draws a widget)."""
    return sys.stderr.isatty() or tqdm.autonotebook.tqdm is not tqdm.std.tqdm


def progress_bar(iterable: Iterable | None = None, *, total: int | None = None, desc: str = "",
             unit: str = "it", enabled: bool = True, **options: Any) -> Any:
    """A progress bar over ``iterable`` (or updated by hand up to ``total``): ``tqdm.auto``'s
    where it ``redraws``, else ``StageLines``; with ``enabled`` False, one that shows
    nothing. ``options`` go to tqdm alone."""
    if not enabled:
        return tqdm.std.tqdm(iterable, total=total, disable=True)
    if redraws():
        return tqdm.auto.tqdm(iterable, total=total, desc=desc, unit=unit, **options)
    return StageLines(iterable, total=total, desc=desc, unit=unit)


class StageLines:
    """What a bar is told, said as one line on stderr per stage (``desc: n unit (s s, rate
    unit/s)``): a
    stage ends when the description changes or the bar closes. It takes the calls the
    project's bars get (iteration, ``update``, ``set_description``, ``set_postfix_str``,
    ``write``, ``close``, ``with``)."""

    def __init__(self, iterable: Iterable | None = None, *, total: int | None = None,
                 desc: str = "", unit: str = "it"):
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
        self.n, self.began, self.closed = 0, time.perf_counter(), False

    def __iter__(self) -> Iterator:
        for item in self.iterable or ():
            yield item
            self.n += 1
        self.close()

    def __enter__(self) -> StageLines:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_description(self, desc: str = "", refresh: bool = True) -> None:
        if desc != self.desc:
            self._said()
            self.desc, self.n, self.began = desc, 0, time.perf_counter()

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        """A bar's passing detail: not said in a log."""

    def write(self, text: str) -> None:
        print(text, flush=True)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._said()

    def _said(self) -> None:
        if self.n:
            took = max(time.perf_counter() - self.began, 1e-6)
            print(f"{self.desc or 'done'}: {self.n} {self.unit} ({took:.1f} s, "
                  f"{self.n / took:.0f} {self.unit}/s)", file=sys.stderr, flush=True)
