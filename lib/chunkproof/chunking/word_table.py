"""The word cache token counts are read from: each whitespace-separated word's token count,
kept once it has been encoded, and each text's (chars, words, tokens) read from it."""

from __future__ import annotations

from collections.abc import Sequence

UNKNOWN = -1
"""Tokens of a text holding a word with no count yet."""
UNSAFE = -2
"""Tokens of a text holding a ``SPLIT_UNSAFE`` char: it is encoded whole."""
SPLIT_UNSAFE = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"
"""Chars ``str.split`` cuts at but the model's normaliser deletes (control chars), joining
the words beside them: a text holding one is encoded whole."""


def split_unsafe(text: str) -> bool:
    """Whether ``text`` holds a ``SPLIT_UNSAFE`` char (one fast substring search per char,
    several times quicker than a regex character class on a long text)."""
    for char in SPLIT_UNSAFE:
        if char in text:
            return True
    return False


class WordTable:
    """Each word's token count (``str.split`` words, a dict)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def sizes(self, texts: Sequence[str]) -> list[tuple[int, int, int]]:
        """(chars, words, tokens) of each text, tokens ``UNKNOWN`` or ``UNSAFE`` where the
        table cannot give them."""
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
        """The words of ``texts`` with no count yet."""
        return {w for text in texts for w in text.split() if w not in self.counts}

    def add(self, counts: dict[str, int]) -> None:
        """Keep each word's token count."""
        self.counts.update(counts)

    def clear(self) -> None:
        """Forget every word."""
        self.counts.clear()

    def __len__(self) -> int:
        return len(self.counts)
