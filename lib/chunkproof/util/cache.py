"""Where chunkproof keeps what it can make again (embeddings, exported models)."""

from __future__ import annotations

import os
from pathlib import Path

CACHE_VARIABLE = "CHUNKPROOF_CACHE"
"""Environment variable: the folder of every on-disk cache (else the user cache folder)."""


def cache_root() -> Path:
    """``$CHUNKPROOF_CACHE``, else ``$XDG_CACHE_HOME/chunkproof``, else ``~/.cache/chunkproof``."""
    root = os.environ.get(CACHE_VARIABLE)
    if root:
        return Path(root)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chunkproof"
