"""Retrievers: BM25 ranking, dense embedding cache, RRF fusion and the registry."""

from __future__ import annotations

import sqlite3
import sys

import numpy as np
import pytest

from chunkproof.chunking.build import chunk_document
from chunkproof.chunking.config import make_config
from chunkproof.chunking.encoder import load_encoder
from chunkproof.document.corpus import make_document
from chunkproof.errors import (
    ChunkproofError,
    MissingExtraError,
    RetrieverError,
    UnknownRetrieverError,
)
from chunkproof.evaluation.retrieval.retrieve import (
    BM25Retriever,
    DenseRetriever,
    EmbeddingCache,
    HybridRetriever,
    Retriever,
    cjk_bigrams,
    default_cache_dir,
    make_retriever,
    retriever_names,
    top_k,
)

DOCS = {
    "api/auth.md": """\
# Authentication

## Rotating tokens

Rotate an API token every ninety days. The old token keeps working for one hour after
rotation so running jobs can finish.

## Scopes

A token carries scopes such as `bundles:read` and `bundles:write`.
""",
    "api/retry.md": """\
# Retry policies

## Backoff

Failed requests are retried with exponential backoff and jitter, up to five attempts.

```python
policy = RetryPolicy(attempts=5, backoff=2.0)
```
""",
    "ops/disk.md": """\
# Replacing a failed disk

## Physical replacement

Pull the drive sled, swap the failed disk and push the sled back until it clicks.
""",
}


@pytest.fixture(scope="module")
def chunks():
    config = make_config(strategy="ast_merge", size=200)
    result = []
    for doc_id, text in DOCS.items():
        result += chunk_document(make_document(doc_id, text), config)
    return result


def chunk_of(chunks, chunk_id):
    return next(c for c in chunks if c.id == chunk_id)


# --- BM25 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "doc_id", "phrase"),
    [
        ("how often should I rotate my token", "api/auth.md", "ninety days"),
        ("exponential backoff attempts", "api/retry.md", "five attempts"),
        ("swap a failed drive", "ops/disk.md", "drive sled"),
    ],
)
def test_bm25_ranks_the_obvious_chunk_first(chunks, query, doc_id, phrase):
    retriever = make_retriever("bm25")
    retriever.index(chunks)
    [hits] = retriever.search([query], 3)
    best = chunk_of(chunks, hits[0][0])
    assert best.doc_id == doc_id
    assert phrase in best.text
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0


def test_bm25_stems_english(chunks):
    retriever = BM25Retriever()
    retriever.index(chunks)
    [hits] = retriever.search(["rotations"], 5)  # only "rotation"/"rotate" are in the text
    assert [chunk_of(chunks, i).doc_id for i, _ in hits] == ["api/auth.md"]


def test_bm25_drops_stop_words_and_returns_no_zero_scores(chunks):
    retriever = BM25Retriever()
    retriever.index(chunks)
    assert retriever.search(["the and of it", "zzzunknownword"], 5) == [[], []]


def test_bm25_k_larger_than_the_index(chunks):
    retriever = BM25Retriever()
    retriever.index(chunks)
    [hits] = retriever.search(["token disk backoff"], 100)
    assert 0 < len(hits) <= len(chunks)
    assert len({i for i, _ in hits}) == len(hits)


def test_search_before_index_and_bad_k(chunks):
    retriever = BM25Retriever()
    with pytest.raises(RetrieverError, match="before index"):
        retriever.search(["token"], 5)
    retriever.index(chunks)
    with pytest.raises(RetrieverError, match="positive integer, got 0"):
        retriever.search(["token"], 0)


def test_empty_index_returns_empty_rankings():
    retriever = BM25Retriever()
    retriever.index([])
    assert retriever.search(["token", "disk"], 5) == [[], []]


# --- helpers and registry ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "k", "expected"),
    [
        ([0.1, 0.9, 0.5], 2, [1, 2]),
        ([0.5, 0.9, 0.5, 0.5], 3, [1, 0, 2]),  # ties broken by lower index
        ([0.5, 0.5, 0.5], 5, [0, 1, 2]),
        ([1.0], 0, []),
    ],
)
def test_top_k(scores, k, expected):
    assert top_k(np.asarray(scores), k).tolist() == expected


def test_registry():
    assert retriever_names() == ["bm25", "dense", "hybrid"]
    assert isinstance(make_retriever(), BM25Retriever)
    with pytest.raises(UnknownRetrieverError) as caught:
        make_retriever("splade")
    assert str(caught.value) == "unknown retriever 'splade'; valid retrievers: bm25, dense, hybrid"
    assert isinstance(caught.value, ChunkproofError)


def test_retrievers_satisfy_the_protocol(tmp_path):
    assert isinstance(BM25Retriever(), Retriever)
    assert isinstance(DenseRetriever(cache_dir=str(tmp_path)), Retriever)


def test_rrf_fusion_by_hand(tmp_path):
    hybrid = HybridRetriever(cache_dir=str(tmp_path))
    hybrid.order = {"a": 0, "b": 1, "c": 2, "d": 3}
    fused = hybrid.fuse([[("a", 9.0), ("b", 5.0), ("c", 1.0)], [("c", 0.9), ("a", 0.8)]], 3)
    assert [i for i, _ in fused] == ["a", "c", "b"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1][1] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2][1] == pytest.approx(1 / 62)


# --- embedding cache (no model needed) --------------------------------------------------


def test_cache_dir_follows_chunkproof_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("CHUNKPROOF_CACHE", str(tmp_path))
    assert default_cache_dir() == tmp_path / "embeddings"
    monkeypatch.delenv("CHUNKPROOF_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "chunkproof" / "embeddings"


def test_embedding_cache_round_trip_keyed_by_model(tmp_path):
    cache = EmbeddingCache(tmp_path, "model-a")
    vector = np.array([0.6, 0.8], dtype=np.float32)
    cache.put({cache.key("hello"): vector})
    assert np.array_equal(EmbeddingCache(tmp_path, "model-a").get([cache.key("hello")])[
        cache.key("hello")], vector)
    other = EmbeddingCache(tmp_path, "model-b")
    assert other.key("hello") != cache.key("hello")
    assert other.get([other.key("hello")]) == {}


class FakeEncoder:
    """Stands in for the dense model: one-hot-ish unit vectors per text."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def embed(self, texts, batch_size):
        self.calls.append(list(texts))
        vectors = np.array([[len(t), t.count("token") * 10.0, 1.0] for t in texts])
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_dense_embeds_each_text_once_across_retrievers(tmp_path, chunks):
    first = DenseRetriever(cache_dir=str(tmp_path))
    first._encoder = FakeEncoder()
    first.index(chunks)
    assert first.cache_stats == {"hits": 0, "misses": len(chunks)}
    first.index(chunks)
    assert first.cache_stats == {"hits": len(chunks), "misses": len(chunks)}
    assert len(first._encoder.calls) == 1

    second = DenseRetriever(cache_dir=str(tmp_path))  # a later run: no encoder is loaded
    second.index(chunks)
    assert second.cache_stats == {"hits": len(chunks), "misses": 0}
    assert second._encoder is None
    assert np.array_equal(second.matrix, first.matrix)


def test_embedding_shows_its_progress_in_texts_per_second(tmp_path, capsys):
    dense = DenseRetriever(cache_dir=str(tmp_path), batch_size=2, progress=True)
    dense._encoder = FakeEncoder()
    texts = [f"text {i} token" for i in range(80)]
    vectors = dense.embed(texts)
    assert vectors.shape == (80, 3)
    assert [len(c) for c in dense._encoder.calls] == [32, 32, 16]  # 16 batches per step
    err = capsys.readouterr().err
    assert "embed: 80 text (" in err and "text/s" in err  # a line: stderr is no terminal


def test_dense_counts_repeated_texts_as_hits(tmp_path):
    dense = DenseRetriever(cache_dir=str(tmp_path))
    dense._encoder = FakeEncoder()
    vectors = dense.embed(["same", "same", "other"])
    assert dense.cache_stats == {"hits": 1, "misses": 2}
    assert dense._encoder.calls == [["same", "other"]]
    assert np.array_equal(vectors[0], vectors[1])


def test_dense_search_ranks_by_dot_product(tmp_path, chunks):
    dense = DenseRetriever(cache_dir=str(tmp_path))
    dense._encoder = FakeEncoder()
    dense.index(chunks)
    [hits] = dense.search(["token token"], len(chunks))
    expected = np.argsort(-(dense.matrix @ dense.embed(["token token"])[0]), kind="stable")
    assert [i for i, _ in hits] == [chunks[j].id for j in expected]


def test_missing_sentence_transformers_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingExtraError) as caught:
        load_encoder()
    message = str(caught.value)
    assert "sentence-transformers is not installed" in message
    assert "pip install -e '.[dense]'" in message
    # the CPU build of torch first, from PyTorch's CPU wheel index (not a multi-GB CUDA build)
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in message
    assert "make install-dense TORCH_INDEX=" in message


# --- the real model ---------------------------------------------------------------------


@pytest.mark.needs("dense")
def test_dense_model_finds_a_paraphrase_and_caches(tmp_path, chunks):
    dense = make_retriever("dense", cache_dir=str(tmp_path))
    dense.index(chunks)
    [hits] = dense.search(["replace a broken hard drive in a server"], 1)
    assert chunk_of(chunks, hits[0][0]).doc_id == "ops/disk.md"
    assert 0 < hits[0][1] <= 1.0 + 1e-6
    assert dense.cache_stats == {"hits": 0, "misses": len(chunks) + 1}
    norms = np.linalg.norm(dense.matrix, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)

    again = make_retriever("dense", cache_dir=str(tmp_path))
    again.index(chunks)
    assert again.cache_stats == {"hits": len(chunks), "misses": 0}
    assert np.array_equal(again.matrix, dense.matrix)


@pytest.mark.needs("dense")
def test_hybrid_fuses_both_rankings(tmp_path, chunks):
    hybrid = make_retriever("hybrid", cache_dir=str(tmp_path))
    hybrid.index(chunks)
    [hits] = hybrid.search(["exponential backoff with jitter"], 3)
    assert chunk_of(chunks, hits[0][0]).doc_id == "api/retry.md"
    assert hits[0][1] == pytest.approx(2 / 61)  # first in both rankings
    assert hybrid.cache_stats["misses"] == len(chunks) + 1


def test_cjk_runs_become_bigrams_and_latin_text_is_kept():
    assert cjk_bigrams("tern の設定方法 and más") == "tern の設 設定 定方 方法 and más"
    assert cjk_bigrams("plain English") == "plain English"


def test_bm25_finds_japanese_text():
    text = ("# クイックスタート\n\n## トークン\n\n個人用トークンの有効期限は九十日です。\n\n"
            "## バンドル名\n\nバンドル名には英小文字と数字が使えます。\n")
    english = "# Quickstart\n\n## Tokens\n\nPersonal tokens expire after ninety days.\n"
    config = make_config(strategy="ast_merge", size=60)
    pieces = [*chunk_document(make_document("ja.md", text), config),
              *chunk_document(make_document("en.md", english), config)]
    retriever = make_retriever("bm25")
    retriever.index(pieces)
    [hits] = retriever.search(["トークンの有効期限は？"], 3)
    best = next(c for c in pieces if c.id == hits[0][0])
    assert "有効期限" in best.text


def test_garbage_vectors_in_the_cache_never_reach_a_ranking(tmp_path, chunks):
    from chunkproof.errors import CacheWarning

    clean = DenseRetriever(cache_dir=str(tmp_path))
    clean._encoder = FakeEncoder()
    clean.index(chunks)
    [expected] = clean.search(["token token"], len(chunks))
    with sqlite3.connect(clean.cache.path) as db:  # same-length garbage over every vector
        db.execute("UPDATE vectors SET vec = ?", (np.full(3, 7, np.float32).tobytes(),))
    later = DenseRetriever(cache_dir=str(tmp_path))
    later._encoder = FakeEncoder()
    with pytest.warns(CacheWarning, match="checksum"):
        later.index(chunks)
    assert later.cache_stats == {"hits": 0, "misses": len(chunks)}
    assert later.search(["token token"], len(chunks)) == [expected]


def test_the_same_queries_searched_again_are_tokenised_once(monkeypatch):
    from chunkproof.evaluation.retrieval import retrieve

    texts: list[str] = []
    real = retrieve.lexical_terms
    monkeypatch.setattr(retrieve, "QUERY_TERMS", {})
    monkeypatch.setattr(retrieve, "lexical_terms", lambda t: texts.extend(t) or real(t))
    queries = ["install the package offline", "configure the proxy", "install the package offline"]
    assert retrieve.query_terms(queries) == real(queries)
    assert retrieve.query_terms(queries[1:]) == real(queries[1:])
    assert texts == queries[:2]  # each distinct text once, whatever searched it
