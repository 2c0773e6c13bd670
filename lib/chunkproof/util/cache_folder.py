"""What the cache folder holds (``chunkproof cache info``) and emptying it (``chunkproof cache
clear``): the content caches of every layout and the files moved aside, and with ``--all`` the
embedding caches and exported models too. Only files chunkproof names are touched, so a cache
folder set to a folder holding other files keeps them."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

from .cache import CACHE_VARIABLE, cache_root
from .content_cache import ASIDE, KINDS, bound_bytes, file_of

OTHER_CACHES = {"embeddings": "the dense retriever's vectors, one file per model",
                "onnx": "the dense model exported for ONNX Runtime (bench.dense)"}
"""Folders under the cache root holding chunkproof's other caches, and what each keeps."""


def content_files(root: Path) -> dict[str, list[Path]]:
    """The files of the content caches under ``root``, by what they are: ``current`` (the
    files read now), ``older`` (another layout: never read), ``aside`` (moved aside when
    found damaged), each with its sqlite journal files."""
    found: dict[str, list[Path]] = {"current": [], "older": [], "aside": []}
    if not root.is_dir():
        return found
    current = {file_of(root, kind).name for kind in KINDS}
    for path in sorted(root.iterdir()):
        base = path.name.removesuffix("-wal").removesuffix("-shm")
        if not path.is_file() or not base.startswith(tuple(f"{kind}." for kind in KINDS)):
            continue
        if ASIDE in base:
            found["aside"].append(path)
        elif base in current:
            found["current"].append(path)
        elif base.endswith(".sqlite"):
            found["older"].append(path)
    return found


def _mib(paths: list[Path]) -> str:
    return f"{sum(p.stat().st_size for p in paths if p.exists()) / 2**20:.1f} MiB"


def _values(path: Path) -> str:
    """How many values a content cache file holds and when one was last used, read without
    writing; or why it cannot be read."""
    try:
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            count, size, used = db.execute(
                "SELECT count(*), total(size), max(used) FROM entries").fetchone()
        finally:
            db.close()
    except sqlite3.DatabaseError as err:
        return f"unreadable ({err}): the next run moves it aside"
    last = time.strftime("%Y-%m-%d %H:%M", time.localtime(used)) if used else "never"
    return (f"{count} values, {size / 2**20:.2f} MiB of {bound_bytes() / 2**20:.0f} MiB, "
            f"last used {last}")


def describe(root: Path | None = None) -> list[str]:
    """Lines saying what the cache folder holds: each content cache (values, size, bound, last
    use), the files of older layouts and those moved aside, and the other caches' folders."""
    root = root or cache_root()
    lines = [f"cache folder {root} (${CACHE_VARIABLE} sets another)"]
    files = content_files(root)
    for kind in KINDS:
        path = file_of(root, kind)
        state = _values(path) if path.is_file() else "empty"
        lines.append(f"  {kind}: {path.name}: {state}")
    for group, what in (("older", "of an older layout, never read"),
                        ("aside", "moved aside when found damaged")):
        if files[group]:
            names = ", ".join(p.name for p in files[group])
            lines.append(f"  {len(files[group])} file(s) {what} ({_mib(files[group])}): {names}")
    for name, what in OTHER_CACHES.items():
        folder = root / name
        held = [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []
        lines.append(f"  {name}/: {what}: " + (f"{len(held)} file(s), {_mib(held)}"
                                               if held else "empty"))
    return lines


def clear(root: Path | None = None, *, everything: bool = False) -> list[Path]:
    """Remove the content caches' files (every layout, those moved aside), and with
    ``everything`` the other caches' folders (``OTHER_CACHES``); the paths removed."""
    root = root or cache_root()
    removed = [path for group in content_files(root).values() for path in group]
    for path in removed:
        path.unlink(missing_ok=True)
    if everything:
        for name in OTHER_CACHES:
            if (root / name).is_dir():
                shutil.rmtree(root / name)
                removed.append(root / name)
    return removed
