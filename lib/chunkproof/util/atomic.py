"""Atomic file writes: a crash leaves the old file or the new one, never half of one."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import WriteError


def write_atomic(path: str | os.PathLike, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp_path)`` then rename the temporary file over ``path``."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as err:
        raise WriteError(target, err) from err
    # (the name matches temporary_name(target), so remove_leftovers finds what a kill left)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)  # mkstemp makes owner-only files; results are meant to be shared
        os.replace(tmp, target)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError) and not isinstance(err, WriteError):
            raise WriteError(target, err) from err
        raise
    return target


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    def write(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    return write_atomic(path, write)


def write_folder_atomic(path: str | os.PathLike, write: Callable[[Path], None]) -> Path:
    """Call ``write(tmp_folder)`` (a new folder beside ``path``) then rename it to ``path``,
    so ``path`` holds a previous folder or the complete new one, never a half-written one. A
    folder already at ``path`` is moved aside, replaced and removed: the caller decides
    whether it may be."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    except OSError as err:
        raise WriteError(target, err) from err
    try:
        write(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp makes an owner-only folder
        _swap_in(tmp, target)
    except BaseException as err:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(err, OSError) and not isinstance(err, WriteError):
            raise WriteError(target, err) from err
        raise
    return target


def _swap_in(new: Path, target: Path) -> None:
    """Rename the folder ``new`` to ``target``, the folder there before moved aside first and
    removed after."""
    if not target.exists():
        os.rename(new, target)
        return
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.rename(target, aside / target.name)
    os.rename(new, target)
    shutil.rmtree(aside, ignore_errors=True)


def temporary_name(target: Path) -> str:
    """The glob pattern of ``write_atomic``'s temporary files for ``target``."""
    return f".{target.name}.*.tmp"


def remove_leftovers(folder: str | os.PathLike, names: Iterable[str] | None = None) -> list[Path]:
    """Delete the temporary files a killed ``write_atomic`` left in ``folder``: those of the
    files ``names``, or every one. Call it only while no other writer uses the folder."""
    folder = Path(folder)
    patterns = [temporary_name(folder / n) for n in names] if names is not None else [".*.tmp"]
    found = sorted({p for pattern in patterns for p in folder.glob(pattern) if p.is_file()})
    for path in found:
        path.unlink(missing_ok=True)
    return found
