"""A sweep with a dense retriever embeds in one pass: every distinct text of every config (and
the queries) once, longest first in batches, with a bar over texts."""

from __future__ import annotations

import numpy as np

from chunkproof import load_corpus
from chunkproof.evaluation.queries.queries import load_queries
from chunkproof.evaluation.retrieval import embedding
from chunkproof.evaluation.retrieval.retrieve import EmbeddingCache
from chunkproof.evaluation.run.engine import Engine, _Encoder
from chunkproof.evaluation.run.sweep import run_sweep
from test_engine import small_params


def fake_vectors(texts: list[str]) -> np.ndarray:
    vectors = np.array([[len(t), t.count("e") + 1.0, 1.0] for t in texts], dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_a_dense_sweep_embeds_each_distinct_text_once_across_configs(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CHUNKPROOF_CACHE", str(tmp_path / "cache"))
    batches: list[list[str]] = []

    def encode(self, texts):
        batches.append(list(texts))
        return fake_vectors(texts)

    monkeypatch.setattr(_Encoder, "__call__", encode)
    params = small_params(retrievers=("dense",))
    result = run_sweep(params, tmp_path / "run", engine=Engine(workers=1))

    embedded = [t for batch in batches for t in batch]
    assert len(embedded) == len(set(embedded))  # nothing embedded twice
    chunk_texts = set(result.chunks["embed_text"])
    assert result.chunks["config_id"].nunique() == 4
    assert len(chunk_texts) < len(result.chunks)  # configs share texts: the union is smaller
    queries = {q.query for q in load_queries(params.queries, load_corpus(params.corpus))}
    assert set(embedded) == chunk_texts | queries
    assert result.run_info["embedding_cache"]["misses"] == len(embedded)
    lengths = [len(t) for t in embedded]
    assert lengths == sorted(lengths, reverse=True)  # one length-sorted pass
    err = capsys.readouterr().err
    assert f"embed: {len(embedded)} text (" in err  # one line: stderr is no terminal


def test_the_pass_embeds_only_what_the_cache_lacks_and_counts_texts(tmp_path, capsys):
    cache = EmbeddingCache(tmp_path, "model")
    calls: list[list[str]] = []

    def encode(batches):
        for batch in batches:
            calls.append(batch)
            yield fake_vectors(batch)

    texts = ["short", "a longer text", "short", "the longest text of all", "mid text"]
    first = embedding.embed_missing(cache, texts, encode, batch_size=2)
    assert calls == [["the longest text of all", "a longer text"], ["mid text", "short"]]
    assert first["hits"] == 0 and first["misses"] == 4
    assert "embed: 4 text (" in capsys.readouterr().err
    calls.clear()
    second = embedding.embed_missing(cache, [*texts, "new"], encode, batch_size=2)
    assert calls == [["new"]]
    assert second["hits"] == 4 and second["misses"] == 1
    stored = cache.get([cache.key(t) for t in texts])
    assert np.allclose(stored[cache.key("short")], fake_vectors(["short"])[0])
