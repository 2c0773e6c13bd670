"""The sites of a study folder: each subfolder holding the pages (``docs/``), the written
questions (``queries.jsonl``) and where the pages come from (``SOURCE.md``: a YAML header of
the repository, commit, path, licence and dialect, then prose)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ...errors import FileReadError, StudyError
from ...util.files import read_utf8

SOURCE_FIELDS = ("site", "repository", "commit", "path", "licence", "vendored", "dialect")
"""What SOURCE.md's YAML header must name."""


@dataclass(frozen=True)
class Site:
    """One documentation site of a study."""

    name: str
    root: Path
    source: dict[str, Any] = field(default_factory=dict)

    @property
    def docs(self) -> Path:
        return self.root / "docs"

    @property
    def queries(self) -> Path:
        return self.root / "queries.jsonl"


def read_source(path: Path) -> dict[str, Any]:
    """The YAML header of a SOURCE.md (between the first two ``---`` lines); StudyError naming
    the file and what is missing otherwise."""
    try:
        text = read_utf8(path, what="site source")
    except FileReadError as err:
        raise StudyError(str(err)) from None
    parts = text.split("---\n", 2)
    if not text.startswith("---\n") or len(parts) < 3:
        raise StudyError(f"{path}: no YAML header (a block between two '---' lines naming "
                         f"{', '.join(SOURCE_FIELDS)})")
    try:
        header = yaml.safe_load(parts[1])
    except yaml.YAMLError as err:
        raise StudyError(f"{path}: its YAML header does not parse ({err})") from None
    if not isinstance(header, dict):
        raise StudyError(f"{path}: its YAML header is not a mapping of fields")
    fields = {str(k): "" if v is None else str(v) for k, v in header.items()}
    missing = [f for f in SOURCE_FIELDS if not fields.get(f)]
    if missing:
        raise StudyError(f"{path}: the header lacks {', '.join(missing)}")
    return fields


def find_sites(folder: str | os.PathLike, names: tuple[str, ...] = ()) -> list[Site]:
    """The sites of a study folder, by name (``names``: only these, in this order); a folder
    with none, a named site that is not there, or a site lacking its pages, questions or
    source is a StudyError in one line."""
    root = Path(folder)
    if not root.is_dir():
        raise StudyError(f"study folder {str(folder)!r} does not exist")
    found = {p.name: p for p in sorted(root.iterdir()) if p.is_dir()
             and (p / "docs").is_dir() and (p / "queries.jsonl").is_file()}
    unknown = [n for n in names if n not in found]
    if unknown:
        raise StudyError(f"no site {', '.join(map(repr, unknown))} in {folder} (sites there: "
                         f"{', '.join(found) or 'none'})")
    if not found:
        raise StudyError(f"{folder} holds no site: a site is a folder with docs/ and "
                         "queries.jsonl (and SOURCE.md)")
    chosen = names or tuple(found)
    sites = []
    for name in chosen:
        source_file = found[name] / "SOURCE.md"
        if not source_file.is_file():
            raise StudyError(f"site {name!r} has no SOURCE.md saying where its pages come from")
        sites.append(Site(name, found[name], read_source(source_file)))
    return sites
