"""The files of a corpus folder: each real file once, by its own name, hidden folders and links
leaving the folder left out."""

from __future__ import annotations

import os
from pathlib import Path


def _real_folders(root: Path) -> set[str]:
    """Real paths of every folder under root reached without following a symlink (hidden
    ones left out): each is read under this, its own, name."""
    found = set()
    for dirpath, dirnames, _ in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        found.add(os.path.realpath(dirpath))
    return found


def candidate_files(root: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """Files under root with one of ``suffixes``, ordered by their path relative to root: each
    real file once and each folder walked once (a real-path set), by its own name rather than
    a symlink's; symlinks that leave the root are not followed, so a link loop ends."""
    real_root = os.path.realpath(root)
    own_names = _real_folders(root)
    walked: set[str] = set()
    found: dict[str, Path] = {}
    linked: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        here = Path(dirpath)
        walked.add(os.path.realpath(dirpath))
        keep = []
        for name in sorted(dirnames):
            path, real = here / name, os.path.realpath(here / name)
            inside = real == real_root or real.startswith(real_root + os.sep)
            second_name = path.is_symlink() and real in own_names
            if not name.startswith(".") and inside and not second_name and real not in walked:
                walked.add(real)
                keep.append(name)
        dirnames[:] = keep
        for name in sorted(filenames):
            path = here / name
            real = os.path.realpath(path)
            inside = real.startswith(real_root + os.sep)
            if inside and path.suffix.lower() in suffixes:
                (linked.append((real, path)) if path.is_symlink()
                 else found.setdefault(real, path))
    for real, path in linked:  # a link to a file read under its own name adds nothing
        found.setdefault(real, path)
    return sorted(found.values(), key=lambda p: p.relative_to(root).as_posix())
