"""The word cache token counts are read from: each whitespace-separated word's token count,
kept once it has been encoded, and each text's (chars, words, tokens) read from it.

Two tables keep it the same way: ``c`` (``_wordtable.c``, built by the install where a C
compiler is present), which finds and looks up the words without making a string per word,
and ``python`` (``str.split`` and a dict), used when the C table was not built or
``CHUNKLAB_WORD_TABLE=python`` asks for it. ``tests/test_word_table.py`` holds them equal."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

from ..errors import ConfigError

UNKNOWN = -1
"""Tokens of a text holding a word with no count yet."""
UNSAFE = -2
"""Tokens of a text holding a ``SPLIT_UNSAFE`` char: it is encoded whole."""
SPLIT_UNSAFE = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"
"""Chars ``str.split`` cuts at but the model's normaliser deletes (control chars), joining
the words beside them: a text holding one is encoded whole."""
TABLES = ("c", "python")
ENV = "CHUNKLAB_WORD_TABLE"


class WordTable(Protocol):
    def sizes(self, texts: Sequence[str]) -> list[tuple[int, int, int]]:
        """(chars, words, tokens) of each text, tokens ``UNKNOWN`` or ``UNSAFE`` where the
        table cannot give them."""

    def missing(self, texts: Sequence[str]) -> set[str]:
        """The words of ``texts`` with no count yet."""

    def add(self, counts: dict[str, int]) -> None:
        """Keep each word's token count."""

    def clear(self) -> None:
        """Forget every word."""

    def __len__(self) -> int: ...


def split_unsafe(text: str) -> bool:
    """Whether ``text`` holds a ``SPLIT_UNSAFE`` char (one fast substring search per char,
    several times quicker than a regex character class on a long text)."""
    for char in SPLIT_UNSAFE:
        if char in text:
            return True
    return False


class PythonWordTable:
    """The word table as ``str.split`` and a dict."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def sizes(self, texts: Sequence[str]) -> list[tuple[int, int, int]]:
        get = self.counts.__getitem__
        found = []
        for text in texts:
            words = text.split()
            if split_unsafe(text):
                tokens = UNSAFE
            else:
                try:
                    tokens = sum(map(get, words))
                except KeyError:
                    tokens = UNKNOWN
            found.append((len(text), len(words), tokens))
        return found

    def missing(self, texts: Sequence[str]) -> set[str]:
        return {w for text in texts for w in text.split() if w not in self.counts}

    def add(self, counts: dict[str, int]) -> None:
        self.counts.update(counts)

    def clear(self) -> None:
        self.counts.clear()

    def __len__(self) -> int:
        return len(self.counts)


try:
    from ._wordtable import WordTable as CWordTable
except ImportError:  # built by the install only where a C compiler was found
    CWordTable = None


def c_available() -> bool:
    """Whether the install built the C word table."""
    return CWordTable is not None


def table_name(name: str | None = None) -> str:
    """Which table is used: ``name``, else ``CHUNKLAB_WORD_TABLE``, else ``c`` when built."""
    name = name or os.environ.get(ENV) or ("c" if c_available() else "python")
    if name not in TABLES:
        raise ConfigError(f"{ENV} must be one of {', '.join(TABLES)}; got {name!r}")
    if name == "c" and not c_available():
        raise ConfigError(f"{ENV}=c, but the C word table was not built by the install "
                          "(it needs a C compiler): reinstall chunklab with one, or use python")
    return name


def kind_of(table: WordTable) -> str:
    """Which of ``TABLES`` ``table`` is."""
    return "python" if isinstance(table, PythonWordTable) else "c"


def make_table(name: str | None = None) -> WordTable:
    """An empty word table of the kind ``table_name(name)`` picks."""
    if table_name(name) == "c":
        table: WordTable = CWordTable(SPLIT_UNSAFE)
        return table
    return PythonWordTable()
