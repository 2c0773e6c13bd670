"""The word table: words cut as str.split cuts them, token sums, missing words, a text with a
char the tokenizer deletes left to be encoded whole."""

from __future__ import annotations

import sys

from chunkproof.chunking.word_table import SPLIT_UNSAFE, UNKNOWN, UNSAFE, WordTable

SPACES = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())


def table(counts: dict[str, int]) -> WordTable:
    made = WordTable()
    made.add(counts)
    return made


def test_every_whitespace_char_cuts_words_as_str_split_does():
    found = table({"alpha": 1, "beta": 2, "gamma": 3}).sizes(
        [f"{s}alpha{s}beta{s}{s}gamma{s}" for s in SPACES])
    for s, (chars, words, tokens) in zip(SPACES, found, strict=True):
        assert (chars, words) == (19, 3)
        assert tokens == (UNSAFE if s in SPLIT_UNSAFE else 6)


def test_words_of_every_str_kind_are_one_word():
    # The same word beside Latin-1, two-byte and four-byte chars.
    words = table({"word": 2, "é": 1, "世界": 2, "👩": 3})
    assert words.sizes(["word é", "word 世界", "word 👩", "word"]) == [
        (6, 2, 3), (7, 2, 4), (6, 2, 5), (4, 1, 2)]
    assert words.missing(["wörd 世 👩"]) == {"wörd", "世"}


def test_the_table_grows_and_clears():
    counts = {f"w{n}": n % 5 for n in range(20_000)}
    words = table(counts)
    assert len(words) == len(counts)
    text = " ".join(counts)
    assert words.sizes([text]) == [(len(text), len(counts), sum(counts.values()))]
    words.add({"w1": 4})  # a count kept again replaces the old one
    assert words.sizes(["w1"]) == [(2, 1, 4)]
    words.clear()
    assert len(words) == 0
    assert words.sizes([text])[0][2] == UNKNOWN
