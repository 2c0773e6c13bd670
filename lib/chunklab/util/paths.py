"""Paths as shared files name them: relative to the working folder (the repo root, for a
report) when inside it, else under ``~`` for the user's home, so a shared page never spells
out the machine's folders."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path


def shown_path(path: str | os.PathLike, *, base: str | os.PathLike | None = None) -> str:
    """``path`` relative to ``base`` (default: the working folder) when inside it, else with
    the home folder written ``~``, else as given."""
    try:
        absolute = Path(path).expanduser().resolve()
        inside = Path(base or Path.cwd()).resolve()
        home = Path.home().resolve()
    except (OSError, RuntimeError):
        return str(path)
    if absolute.is_relative_to(inside):
        return absolute.relative_to(inside).as_posix() or "."
    if absolute.is_relative_to(home):
        return ("~/" + absolute.relative_to(home).as_posix()).removesuffix("/.")
    return str(path)


def shown_paths(text: str, folders: Iterable[str | os.PathLike], *,
                base: str | os.PathLike | None = None) -> str:
    """``text`` with every absolute spelling of ``folders``, of ``base`` (default: the
    working folder) and of the home folder replaced by its ``shown_path``; the longest
    first, and only where a whole folder name ends."""
    names: dict[str, str] = {}
    for folder in [*folders, base or Path.cwd(), Path.home()]:
        for spelling in {str(Path(folder).expanduser().absolute()),
                         str(Path(folder).expanduser().resolve())}:
            if spelling != os.sep:
                names[spelling] = shown_path(folder, base=base)
    for spelling in sorted(names, key=len, reverse=True):
        text = re.sub(re.escape(spelling) + r"(?![\w.-])", names[spelling].replace("\\", r"\\"),
                      text)
    return text
