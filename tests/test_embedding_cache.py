"""The embedding cache cannot poison a verdict: every vector is stored with its model id,
dimension and checksum; a mismatch or an unreadable file is reported in one line, moved
aside and rebuilt."""

from __future__ import annotations

import sqlite3
import warnings

import numpy as np
import pytest

from chunkproof.errors import CacheWarning
from chunkproof.evaluation.retrieval.retrieve import EmbeddingCache


def filled(tmp_path, model="model-a", texts=("alpha", "beta")):
    cache = EmbeddingCache(tmp_path, model)
    vectors = {cache.key(t): np.full(4, i + 1, dtype=np.float32) for i, t in enumerate(texts)}
    cache.put(vectors)
    return cache, vectors


def reopened(tmp_path, keys, model="model-a"):
    """Open the cache again and read ``keys``; (found, the one-line warnings raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = EmbeddingCache(tmp_path, model)
        found = cache.get(keys)
    lines = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    return cache, found, lines


def tamper(cache, sql, *args):
    with sqlite3.connect(cache.path) as db:
        db.execute(sql, args)


def test_a_sound_cache_returns_every_vector_and_warns_nothing(tmp_path):
    cache, vectors = filled(tmp_path)
    _, found, lines = reopened(tmp_path, list(vectors))
    assert lines == [] and all(np.array_equal(found[k], v) for k, v in vectors.items())


@pytest.mark.parametrize("change,reason", [
    ("UPDATE vectors SET vec = ?", "checksum"),  # same-length garbage
    ("UPDATE vectors SET vec = ?, dim = 2", "dimension"),
    ("UPDATE vectors SET dim = 3", "dimension"),
    ("UPDATE vectors SET model = 'model-b'", "model"),
])
def test_a_tampered_vector_is_reported_moved_aside_and_rebuilt(tmp_path, change, reason):
    cache, vectors = filled(tmp_path)
    args = (np.full(4, 9, dtype=np.float32).tobytes(),) if "?" in change else ()
    tamper(cache, change, *args)
    rebuilt, found, lines = reopened(tmp_path, list(vectors))
    assert found == {}  # nothing served: every text is embedded again
    assert len(lines) == 1 and "\n" not in lines[0] and reason in lines[0]
    assert "moved aside" in lines[0] and "rebuilt" in lines[0]
    aside = list(tmp_path.glob("model-a.sqlite.bad-*"))
    assert len(aside) == 1 and aside[0].name in lines[0]
    rebuilt.put({k: v for k, v in vectors.items()})
    assert reopened(tmp_path, list(vectors))[2] == []


def test_vectors_of_another_dimension_are_a_mismatch(tmp_path):
    cache, vectors = filled(tmp_path)
    cache.put({cache.key("gamma"): np.ones(8, dtype=np.float32)})
    _, found, lines = reopened(tmp_path, [*vectors, cache.key("gamma")])
    assert found == {} and len(lines) == 1 and "dimension" in lines[0]


@pytest.mark.parametrize("content", [b"not a database at all" * 100, b""])
def test_an_unreadable_cache_file_is_reported_moved_aside_and_rebuilt(tmp_path, content):
    (tmp_path / "model-a.sqlite").write_bytes(content)
    cache, found, lines = reopened(tmp_path, ["k"])
    assert found == {}
    if content:
        assert len(lines) == 1 and "unreadable" in lines[0] and "moved aside" in lines[0]
    cache.put({"k": np.ones(4, dtype=np.float32)})
    assert list(EmbeddingCache(tmp_path, "model-a").get(["k"])) == ["k"]


def test_a_cache_written_without_checksums_is_rebuilt(tmp_path):
    with sqlite3.connect(tmp_path / "model-a.sqlite") as db:  # the earlier layout
        db.execute("CREATE TABLE vectors (key TEXT PRIMARY KEY, vec BLOB)")
        db.execute("INSERT INTO vectors VALUES ('k', ?)", (np.ones(4, np.float32).tobytes(),))
    _, found, lines = reopened(tmp_path, ["k"])
    assert found == {} and len(lines) == 1 and "older layout" in lines[0]
