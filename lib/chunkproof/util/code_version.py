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
KEY_PACKAGES = ("markdown-it-py", "mdit-py-plugins", "bm25s", "tokenizers",
                "pytrec-eval-terrier")
"""The packages whose versions decide a part's content, also in the key."""


@functools.cache
def code_version() -> str:
    """A digest of the source of ``CODE_STAGES`` and the versions of ``KEY_PACKAGES``: it
    changes with any change to the code that reads, chunks or scores (the package's own
    version does not, between releases), so a part made by other code is never reused."""
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
