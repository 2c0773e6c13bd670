"""What a mined kind hands the miner: a query text with its gold section, where it was found
and, for the kinds that carry one, its answer; or a text dropped and why."""

from __future__ import annotations

from dataclasses import dataclass

from ..queries import GoldSpan
from ..reading import Sentence

MIN_TERMS = 3
"""A free query with fewer BM25 terms than this asks too little to tell sections apart."""


@dataclass(frozen=True, slots=True)
class Found:
    """One text a kind chose from a document's reading."""

    kind: str
    text: str
    gold: GoldSpan | None
    origin: str = ""
    """Where it was found (a heading, a table, a body sentence, ...)."""
    answer: Sentence | None = None
    """The sentence that answers it (the free kinds)."""
    dropped: str = ""
    """Why the text is no query (``gold`` is then None)."""


def dropped(reason: str, text: str) -> Found:
    return Found("", text, None, dropped=reason)
