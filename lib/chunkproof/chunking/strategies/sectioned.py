"""A long document fed to a library one group of whole top-level sections at a time.

Some libraries do work per output that grows with the whole text they were given
(semantic-text-splitter's MarkdownSplitter; LlamaIndex's MarkdownNodeParser hashes the whole
source text once per section): a whole file costs time quadratic in its length.
``fed_in_sections`` gives such a library pieces of about ``limit`` characters, each a run of
whole top-level sections, and keeps what the whole-text run gives:

- a piece starts only before a top-level heading (a Markdown heading, from the parsed blocks,
  of the shallowest level found after the document's first heading: a lone title is not a
  section of its own);
- a piece's run is trusted up to the last output it starts at such a heading: the library
  began a new output there with all it had looked at lying whole in the piece, so the
  whole-text run begins one there too. The next piece starts at that heading and makes the
  outputs from there on again, with what follows. A run that starts no output at a top-level
  heading (one section longer than the piece; outputs overlapping across every heading) is
  run again from the same start on a piece twice as long, so no cut is ever forced;
- a library that keeps a heading path is given back its own path at the output a piece
  starts at, as heading lines before the piece (``lead``); the outputs starting in those
  lines are dropped.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import TypeVar

from ...document.corpus import Document
from ...document.headings import MARKDOWN

T = TypeVar("T")
SECTION_CHARS = 20_000
"""Characters a piece reaches before it ends at the next top-level heading (twice that while
the library starts no output at a top-level heading in it): small enough that the libraries'
per-output cost stays constant, large enough to hold many chunks."""
Run = Callable[[str], list[tuple[int, T]]]
"""The library on a text: its outputs in order, each with the char offset in that text where
it starts (-1 when not known: never a place to start a piece)."""


def top_level_cuts(doc: Document) -> list[int]:
    """Offsets of the top-level headings after the document's first heading, in order."""
    headings = [b for b in doc.blocks if b.is_heading and b.provenance in MARKDOWN]
    level = min((b.level for b in headings[1:]), default=0)
    return [b.start for b in headings[1:] if b.level == level]


def fed_in_sections(doc: Document, run: Run, lead: Callable[[T], str] | None = None,
                    limit: int | None = None) -> list[T]:
    """The outputs of ``run`` over ``doc.text`` fed in pieces of whole top-level sections of
    about ``limit`` chars (``SECTION_CHARS``), see the module's docstring; ``lead``: the text
    that gives the library back the state an output it made starts in (its heading path)."""
    limit = SECTION_CHARS if limit is None else limit
    starts = top_level_cuts(doc)
    cuts = set(starts)
    kept: list[T] = []
    start, reach, head = 0, limit, ""
    while True:
        after = bisect_left(starts, start + reach)
        end = starts[after] if after < len(starts) else len(doc.text)
        outputs = [(_offset(at, start, len(head)), out)
                   for at, out in run(head + doc.text[start:end]) if at < 0 or at >= len(head)]
        if end == len(doc.text):
            return kept + [out for _, out in outputs]
        synced = [i for i, (at, _) in enumerate(outputs) if start < at < end and at in cuts]
        if not synced:  # nothing to trust yet: the same start, twice as far
            reach = 2 * (end - start)
            continue
        kept += [out for _, out in outputs[: synced[-1]]]
        start, resumed = outputs[synced[-1]]
        reach, head = limit, lead(resumed) if lead else ""


def _offset(at: int, start: int, head: int) -> int:
    """A piece's output offset as an offset in the document (-1 stays unknown)."""
    return -1 if at < 0 else start + at - head
