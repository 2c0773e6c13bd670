"""The dense model retrieval embeds with: the bundled all-MiniLM-L6-v2, or a local
sentence-transformers model folder (or an ONNX export of one, with its tokenizer), chosen for
this process and, through ``CHUNKPROOF_EMBEDDER``, for the processes it starts. Its tokenizer and
window are what sizes are counted in unless others are given; its name and digest key the
embedding cache and the scored parts, and run.json and chosen_config.yaml record them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..util.files import folder_digest
from ..util.paths import kept_path
from . import sizes
from .token_model import ENCODER, ENCODER_WINDOW, folder_window

EMBEDDER_ENV = "CHUNKPROOF_EMBEDDER"
TORCH, ONNX = "torch", "onnx"
ONNX_FILES = ("model.onnx", "onnx/model.onnx")
"""Where an ONNX export keeps its graph (sentence-transformers' ONNX backend: ``onnx/``)."""
TORCH_WEIGHTS = ("*.safetensors", "*.bin", "*.pt")
"""Weight files sentence-transformers loads with torch: a folder holding one runs on torch."""
MODULES = "modules.json"
"""What makes a folder a sentence-transformers model."""
HELP = ("give a local sentence-transformers model folder: modules.json with its torch weights, "
        "or with an ONNX export (model.onnx or onnx/model.onnx) and its tokenizer.json")


@dataclass(frozen=True, slots=True)
class Embedder:
    """The dense model of this process: where it is, its name and the digest of its files."""

    path: str = ""
    """The model folder, resolved; empty: the bundled all-MiniLM-L6-v2."""
    name: str = ENCODER
    """The folder's name (the bundled model's name)."""
    digest: str = ""
    """sha256 of every file of the folder (``util.files.folder_digest``); empty: bundled."""
    runtime: str = TORCH
    """``torch`` (sentence-transformers) or ``onnx`` (ONNX Runtime, for an ONNX export)."""
    window: int | None = ENCODER_WINDOW
    """Tokens the model reads (``token_model.folder_window``); None when the folder does not
    say."""

    @property
    def bundled(self) -> bool:
        return not self.path

    def cache_name(self) -> str:
        """The embedding cache's model key: the name, and the digest of a chosen model (the
        cache of a model whose files change is another cache)."""
        return self.name if self.bundled else f"{self.name}-{self.digest}"

    def key(self) -> str:
        """Empty for the bundled model, else its digest: what scored parts are keyed by."""
        return self.digest

    def as_dict(self) -> dict[str, Any]:
        """What run.json and chosen_config.yaml record (the path as shared files name it
        where that finds it again: ``kept_path``)."""
        return {"embedder": kept_path(self.path) if self.path else f"bundled ({ENCODER})",
                "name": self.name, "digest": self.digest, "runtime": self.runtime,
                "window": self.window}


def onnx_file(folder: Path) -> Path | None:
    """The ONNX graph an export folder holds (``ONNX_FILES``), else None."""
    return next((folder / name for name in ONNX_FILES if (folder / name).is_file()), None)


def choose(path: str | os.PathLike | None, *, where: str = "--embedder") -> Embedder:
    """The Embedder of the model folder at ``path`` (None or "": the bundled model); a
    ConfigError in one line naming ``where`` when it is no model folder. Nothing is loaded:
    the folder is read for what it holds, and its files are hashed."""
    if not path:
        return Embedder()
    folder = Path(path).expanduser()
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "no such folder"
        raise ConfigError(f"{where}: {str(path)!r}: {what} ({HELP})")
    if not (folder / MODULES).is_file():
        raise ConfigError(f"{where}: {str(path)!r} holds no {MODULES}, so it is no "
                          f"sentence-transformers model ({HELP})")
    graph = onnx_file(folder)
    weights = any(next(folder.rglob(pattern), None) for pattern in TORCH_WEIGHTS)
    if graph is not None and not weights and not (folder / "tokenizer.json").is_file():
        raise ConfigError(f"{where}: the ONNX export {str(path)!r} holds no tokenizer.json "
                          "(save the model's tokenizer beside it)")
    folder = folder.resolve()
    return Embedder(str(folder), folder.name, folder_digest(folder),
                    ONNX if graph is not None and not weights else TORCH, folder_window(folder))


_CHOICE: list[Embedder] = []
"""The dense model of this process (``use_embedder``; at first use, what the environment
names)."""


def embedder_choice() -> Embedder:
    """The dense model retrieval embeds with, in this process."""
    if not _CHOICE:
        _CHOICE.append(choose(os.environ.get(EMBEDDER_ENV, "").strip() or None,
                              where=EMBEDDER_ENV))
    return _CHOICE[0]


def use_embedder(path: str | os.PathLike | None = None, *, tokenizer: str | None = None,
                 window: int | None = None, where: str = "--embedder") -> Embedder:
    """Embed with the model folder at ``path`` (None: the bundled model), in this process and
    the processes it starts; sizes are counted in ``tokenizer`` (None: the model's own) and
    overflow measured against ``window`` (None: the model's ``max_seq_length``). A folder that
    is no model, or a tokenizer that cannot be read, is a ConfigError in one line and changes
    nothing."""
    choice = choose(path, where=where)
    window = window or (None if choice.bundled else choice.window)
    sizes.use_tokenizer(tokenizer or (choice.path or None), window,
                        where=where if tokenizer is None else "--tokenizer")
    if choice.path:
        os.environ[EMBEDDER_ENV] = choice.path
    else:
        os.environ.pop(EMBEDDER_ENV, None)
    _CHOICE[:] = [choice]
    return choice


def model_folder(embedder: Embedder) -> Path:
    """Where the model's files are (the bundled model's folder for the bundled one)."""
    return Path(embedder.path) if embedder.path else sizes.model_dir()


def use_recorded(config_path: str | os.PathLike, *, embedder: bool = False) -> bool:
    """Count sizes in the tokenizer and window a chosen_config.yaml records (those its run
    counted in: the chunks are then the ones it scored) and, with ``embedder``, embed with the
    model it records; False, and nothing changed, when it records neither (the bundled
    ones)."""
    from .config import recorded_embedder, recorded_tokenizer

    path, window = recorded_tokenizer(config_path)
    model = recorded_embedder(config_path) if embedder else None
    if model is not None:
        use_embedder(model, tokenizer=path, window=window, where=f"{config_path} embedder")
        return True
    if path is None and window is None:
        return False
    sizes.use_tokenizer(path, window, where=f"{config_path} tokenizer")
    return True
