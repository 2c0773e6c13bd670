"""Paths as shared files name them: relative to the working folder (the repo root, for a
report) when inside it, else under ``~`` for the user's home, else by their last two names
(``.../srv/docs``), so a shared page never spells out the machine's folders."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path


def repo_root(start: str | os.PathLike | None = None, *,
              package: bool = True) -> Path | None:
    """The nearest folder at or above ``start`` (default: the working folder) holding
    pyproject.toml, else (with ``package``) the one holding this editable install, else None."""
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file():
            return folder
    package_root = Path(__file__).resolve().parents[3]
    found = package and (package_root / "pyproject.toml").is_file()
    return package_root if found else None


def real_path(value: str) -> str:
    """Where a path a run was given (or a shared record names) lies, absolute: ``~``
    expanded, a relative one from the working folder when it is there, else from the repo
    root; "" stays ""."""
    if not value:
        return value
    try:
        given = Path(value).expanduser()
        if given.is_absolute():
            return str(given.resolve())
        root = repo_root()
        if not (Path.cwd() / given).exists() and root is not None and (root / given).exists():
            return str((root / given).resolve())
        return str((Path.cwd() / given).resolve())
    except (OSError, RuntimeError):
        return value


def shared_path(value: str) -> str:
    """A path as a shared record names it whatever the working folder: relative to the repo
    root when inside it, else under ``~``, else absolute; "" stays ""."""
    if not value:
        return value
    real = Path(real_path(value))
    root = repo_root()
    if root is not None and real.is_relative_to(root):
        return real.relative_to(root).as_posix() or "."
    return under_home(real, value)


def under_home(absolute: Path, given: str | os.PathLike) -> str:
    """``absolute`` with the home folder written ``~`` when inside it, else ``given``."""
    try:
        home = Path.home().resolve()
    except (OSError, RuntimeError):
        return str(given)
    if absolute.is_relative_to(home):
        return ("~/" + absolute.relative_to(home).as_posix()).removesuffix("/.")
    return str(given)


def shown_path(path: str | os.PathLike, *, base: str | os.PathLike | None = None) -> str:
    """``path`` relative to ``base`` (default: the working folder) when inside it, else with
    the home folder written ``~``, else by its last two names (``elided``)."""
    try:
        absolute = Path(path).expanduser().resolve()
        inside = Path(base or Path.cwd()).resolve()
    except (OSError, RuntimeError):
        return elided(Path(path))
    if absolute.is_relative_to(inside):
        return absolute.relative_to(inside).as_posix() or "."
    return under_home(absolute, elided(absolute))


def elided(path: Path) -> str:
    """An absolute path by its last two names, ``.../srv/docs`` (a relative one as given)."""
    if not path.is_absolute():
        return path.as_posix()
    names = path.parts[1:]
    return ".../" + "/".join(names[-2:]) if names else path.anchor


def shown_paths(text: str, folders: Iterable[str | os.PathLike], *,
                base: str | os.PathLike | None = None) -> str:
    """``text`` with every absolute spelling of ``folders``, of ``base`` (default: the
    working folder) and of the home folder replaced by its ``shown_path``; the longest
    first, and only where a whole path begins and a whole folder name ends (the same
    folder written inside a relative path, ``../../srv/docs``, is left as it is)."""
    names: dict[str, str] = {}
    for folder in [*folders, base or Path.cwd(), Path.home()]:
        for spelling in {str(Path(folder).expanduser().absolute()),
                         str(Path(folder).expanduser().resolve())}:
            if spelling != os.sep:
                names[spelling] = shown_path(folder, base=base)
    for spelling in sorted(names, key=len, reverse=True):
        whole = r"(?<![\w.~-])" + re.escape(spelling) + r"(?![\w.-])"
        text = re.sub(whole, names[spelling].replace("\\", r"\\"), text)
    return text
