"""The C word table gives what str.split and a dict give: words, token sums, missing words."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunklab.chunking import sizes, word_table
from chunklab.chunking.word_table import SPLIT_UNSAFE, UNKNOWN, UNSAFE, PythonWordTable
from chunklab.errors import ConfigError

needs_c = pytest.mark.skipif(not word_table.c_available(),
                             reason="the C word table was not built (no C compiler at install)")
SPACES = "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
WORD_CHARS = "abcé世界👩\u0301\u200b\x00_-" + "\ud800"  # one lone surrogate: a str may hold it


def tables(counts: dict[str, int]):
    made = []
    for name in ("c", "python"):
        table = word_table.make_table(name)
        table.add(dict(counts))
        made.append(table)
    return made


texts = st.lists(st.text(alphabet=WORD_CHARS + SPACES[:6] + " \n\t" + SPACES, max_size=60),
                 max_size=8)


@needs_c
@given(texts=texts, known=st.lists(st.text(alphabet=WORD_CHARS, min_size=1, max_size=4)))
@settings(max_examples=300, deadline=None)
def test_c_and_python_tables_agree(texts, known):
    counts = {w: len(w) % 3 for w in known}
    c_table, py_table = tables(counts)
    assert c_table.sizes(texts) == py_table.sizes(texts)
    assert c_table.missing(texts) == py_table.missing(texts)
    c_table.add({w: 1 for w in c_table.missing(texts)})
    py_table.add({w: 1 for w in py_table.missing(texts)})
    assert c_table.sizes(texts) == py_table.sizes(texts)
    assert len(c_table) == len(py_table)


LATIN_1 = "ab\u00e9\u00ff\x00_" + "".join(c for c in SPACES if c < "\u0100")


@needs_c
@given(texts=st.lists(st.text(alphabet=LATIN_1, max_size=60), max_size=8),
       known=st.lists(st.text(alphabet="ab\u00e9\u00ff", min_size=1, max_size=3)))
@settings(max_examples=300, deadline=None)
def test_c_and_python_tables_agree_on_one_byte_texts(texts, known):
    # A text of Latin-1 chars only is read by the C table's own one-byte loop.
    c_table, py_table = tables({w: len(w) % 3 for w in known})
    assert c_table.sizes(texts) == py_table.sizes(texts)


@needs_c
def test_every_whitespace_char_cuts_words_as_str_split_does():
    c_table, py_table = tables({"alpha": 1, "beta": 2, "gamma": 3})
    texts = [f"{s}alpha{s}beta{s}{s}gamma{s}" for s in SPACES]
    found = c_table.sizes(texts)
    assert found == py_table.sizes(texts)
    for s, (chars, words, tokens) in zip(SPACES, found, strict=True):
        assert (chars, words) == (19, 3)
        assert tokens == (UNSAFE if s in SPLIT_UNSAFE else 6)


@needs_c
def test_words_of_every_str_kind_are_one_word():
    # The same word read from a Latin-1, a two-byte and a four-byte str, beside chars of each.
    c_table = word_table.make_table("c")
    c_table.add({"word": 2, "é": 1, "世界": 2, "👩": 3})
    assert c_table.sizes(["word é", "word 世界", "word 👩", "word"]) == [
        (6, 2, 3), (7, 2, 4), (6, 2, 5), (4, 1, 2)]
    assert c_table.missing(["wörd 世 👩"]) == {"wörd", "世"}


@needs_c
def test_the_table_grows_and_clears():
    c_table = word_table.make_table("c")
    words = {f"w{n}": n % 5 for n in range(20_000)}
    c_table.add(words)
    assert len(c_table) == len(words)
    text = " ".join(words)
    assert c_table.sizes([text]) == [(len(text), len(words), sum(words.values()))]
    c_table.add({"w1": 4})  # a count kept again replaces the old one
    assert c_table.sizes(["w1"]) == [(2, 1, 4)]
    c_table.clear()
    assert len(c_table) == 0
    assert c_table.sizes([text])[0][2] == UNKNOWN


@needs_c
def test_bad_input_is_refused():
    c_table = word_table.make_table("c")
    with pytest.raises(TypeError, match="str"):
        c_table.sizes([b"bytes"])
    with pytest.raises(TypeError, match="dict"):
        c_table.add([("a", 1)])
    with pytest.raises(ValueError, match="'a'.*>= 0"):
        c_table.add({"a": -1})


def test_an_unknown_table_name_lists_the_known_ones(monkeypatch):
    monkeypatch.setenv(word_table.ENV, "fortran")
    with pytest.raises(ConfigError, match="c, python"):
        word_table.make_table()
    monkeypatch.setenv(word_table.ENV, "python")
    assert isinstance(word_table.make_table(), PythonWordTable)


def test_asking_for_the_c_table_when_none_was_built_says_so(monkeypatch):
    monkeypatch.setattr(word_table, "c_available", lambda: False)
    with pytest.raises(ConfigError, match="not built"):
        word_table.table_name("c")
    assert word_table.table_name() == "python"


@pytest.mark.skipif(not sizes.tokens_available(), reason="needs the tokenizer file")
def test_use_word_table_starts_the_cache_over():
    previous = sizes.WORDS
    try:
        name = sizes.use_word_table("python")
        assert name == "python" and len(sizes.WORDS) == 0
        assert sizes.count_tokens(["hello world"]) == [2]
        assert len(sizes.WORDS) == 2
    finally:
        sizes.WORDS = previous
