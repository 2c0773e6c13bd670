"""The shipped model on ONNX Runtime: its vectors are sentence-transformers' (fp32) or close to
them (int8), its export is made once per model and reused, and a missing runtime is one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from chunkproof.bench.dense import agreement
from chunkproof.chunking import onnx_encoder
from chunkproof.chunking.encoder import load_dense
from chunkproof.chunking.onnx_encoder import OnnxEncoder, mean_pooled, model_digest, onnx_model
from chunkproof.errors import ConfigError, MissingExtraError

TEXTS = [
    "How do I rotate a Depot access token?",
    "  leading and trailing blanks  \n",
    "",
    "```python\nclient = tern.Client(retries=3)  # retry policy\n```",
    "帳票の保存期間は七年です。",
    "| field | type |\n|---|---|\n| id | str |",
    " ".join(f"word{i}" for i in range(400)),  # past the model's 256-token window
]


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """The cache root every test of this module exports into (once)."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def reference():
    return load_dense("torch").embed(TEXTS, 4)


@pytest.mark.needs("dense")
def test_fp32_vectors_are_sentence_transformers(exports, reference):
    from chunkproof.chunking.sizes import model_dir

    encoder = OnnxEncoder(model_dir(), root=exports)
    vectors = encoder.embed(TEXTS, 4)
    cosines = (vectors * reference).sum(axis=1)
    assert vectors.shape == reference.shape
    assert cosines.min() > 0.99
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    one_by_one = np.stack([encoder.embed([t], 1)[0] for t in TEXTS])
    assert np.allclose(vectors, one_by_one, atol=1e-5)  # padding changes nothing


@pytest.mark.needs("dense")
def test_int8_vectors_stay_close(exports, reference):
    """Not equal: dynamic quantisation scales each activation tensor by its batch's range, so
    an int8 vector also moves with the texts it is batched with."""
    from chunkproof.chunking.sizes import model_dir

    encoder = OnnxEncoder(model_dir(), int8=True, root=exports)
    assert (encoder.embed(TEXTS, 3) * reference).sum(axis=1).min() > 0.95
    assert encoder.path.name == "model.int8.onnx"


@pytest.mark.needs("dense")
def test_the_export_is_kept_under_the_model_digest_and_reused(exports, monkeypatch):
    from chunkproof.chunking.sizes import model_dir

    first = onnx_model(model_dir(), root=exports)  # made by the tests above, or now
    assert first.parent.name == model_digest(model_dir())
    made = first.stat().st_mtime_ns

    def refused(*_):
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_encoder, "export", refused)
    monkeypatch.setattr(onnx_encoder, "quantise", refused)
    assert onnx_model(model_dir(), root=exports) == first
    assert onnx_model(model_dir(), int8=True, root=exports).is_file()
    assert first.stat().st_mtime_ns == made
    assert {p.name for p in first.parent.iterdir()} == {"model.onnx", "model.int8.onnx"}


def test_a_failed_export_leaves_nothing_behind(tmp_path, monkeypatch):
    model = _small_model(tmp_path / "model")

    def broken(_source, target):
        target.write_bytes(b"half an export")
        raise RuntimeError("export failed")

    monkeypatch.setattr(onnx_encoder, "export", broken)
    with pytest.raises(RuntimeError, match="export failed"):
        onnx_model(model, root=tmp_path / "cache")
    folder = onnx_encoder.export_folder(model, tmp_path / "cache")
    assert list(folder.iterdir()) == []


def test_the_digest_follows_the_model_files(tmp_path):
    model = _small_model(tmp_path / "model")
    before = model_digest(model)
    assert model_digest(model) == before
    (model / "config.json").write_text('{"hidden_size": 8}', encoding="utf-8")
    assert model_digest(model) != before


def test_a_missing_onnxruntime_is_one_line_with_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails
    with pytest.raises(MissingExtraError) as caught:
        load_dense("onnx-int8")
    message = str(caught.value)
    assert "\n" not in message
    assert "dense runtime 'onnx-int8'" in message and "onnxruntime is not installed" in message
    assert "pip install" in message


def test_an_unknown_runtime_is_refused():
    with pytest.raises(ConfigError, match="torch, onnx, onnx-int8; got 'tensorrt'"):
        load_dense("tensorrt")


def test_a_model_pooled_otherwise_is_refused(tmp_path):
    model = _small_model(tmp_path / "model", pooling="pooling_mode_cls_token")
    with pytest.raises(ConfigError, match="pooling"):
        onnx_encoder.check_pooling(model)
    onnx_encoder.check_pooling(_small_model(tmp_path / "mean"))


def test_mean_pooling_counts_only_the_masked_tokens():
    hidden = np.array([[[3.0, 4.0], [100.0, 100.0]], [[1.0, 0.0], [0.0, 1.0]]])
    mask = np.array([[1, 0], [1, 1]])
    pooled = mean_pooled(hidden, mask)
    assert np.allclose(pooled, [[0.6, 0.8], [2 ** -0.5, 2 ** -0.5]])
    assert np.allclose(mean_pooled(np.zeros((1, 2, 2)), np.zeros((1, 2))), 0)


def test_agreement_counts_identical_top_sets_and_their_overlap():
    chunks = np.eye(6, dtype=np.float32)
    queries = np.array([[1, .9, .8, 0, 0, 0], [0, 0, 0, 1, .9, .8]], dtype=np.float32)
    other = queries.copy()
    other[1] = [.95, 0, 0, 1, .9, 0]  # the second query's third chunk changes
    figures = agreement(np.vstack([queries, chunks]), np.vstack([other, chunks]), 2, 3)
    assert figures["identical"] == 0.5
    assert figures["overlap"] == pytest.approx((1 + 2 / 3) / 2)


def _small_model(folder: Path, pooling: str = "pooling_mode_mean_tokens") -> Path:
    """A model folder's configuration files (no weights): enough for the digest and checks."""
    (folder / "1_Pooling").mkdir(parents=True)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models."
                "Transformer"}, {"idx": 1, "name": "1", "path": "1_Pooling", "type":
                "sentence_transformers.models.Pooling"}, {"idx": 2, "name": "2", "path":
                "2_Normalize", "type": "sentence_transformers.models.Normalize"}]
    (folder / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({pooling: True}),
                                                      encoding="utf-8")
    (folder / "config.json").write_text('{"hidden_size": 4}', encoding="utf-8")
    return folder
