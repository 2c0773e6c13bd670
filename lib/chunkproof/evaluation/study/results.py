"""The study's results file: what was studied (sites, grid, date, data commit), every site's
written evidence, the pooled tables and the rule's calibration, as plain JSON. ``chunkproof
study`` writes it; a copy ships inside the package (``SHIPPED``) and is the prior the verdict
reads. Every value is checked when the file is read."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ...errors import FileReadError, StudyError
from ...util.atomic import write_text_atomic
from ...util.files import read_utf8
from .evidence import SiteEvidence
from .prior import REFERENCE, Prior

FORMAT = 1
SHIPPED = Path(__file__).with_name("study.json")
"""The results of the study shipped with chunkproof (``make study`` makes it again)."""
TABLES = ("pooled", "versus_best", "calibration", "validation", "kinds", "kind_sites",
          "ceiling")
"""The result tables the file holds, each a list of rows."""


@dataclass
class StudyResults:
    """A study's results: the prior, each site's source, and the tables."""

    prior: Prior
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def meta(self) -> dict[str, Any]:
        return self.prior.meta

    def table(self, name: str) -> list[dict[str, Any]]:
        return self.tables.get(name, [])

    def as_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "study": self.meta, "reference": self.prior.reference,
                "sources": self.sources,
                "evidence": {s.name: s.as_dict() for s in self.prior.sites},
                **{name: self.tables.get(name, []) for name in TABLES}}

    def write(self, path: str | os.PathLike) -> Path:
        """The file, written atomically: sorted keys, fixed float precision, so the same study
        gives the same bytes."""
        text = json.dumps(_rounded(self.as_dict()), indent=1, sort_keys=True,
                          ensure_ascii=False)
        return write_text_atomic(path, text + "\n")


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 6) if value == value else None
    if isinstance(value, dict):
        return {str(k): _rounded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_rounded(v) for v in value]
    return value


def read_results(path: str | os.PathLike) -> StudyResults:
    """A results file read back; StudyError naming the file and what is wrong with it."""
    where = str(path)
    try:
        data = json.loads(read_utf8(path, what="study results"))
    except json.JSONDecodeError as err:
        raise StudyError(f"{where}: not JSON ({err.msg} at line {err.lineno})") from None
    except FileReadError as err:
        raise StudyError(str(err)) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise StudyError(f"{where}: not a study results file of format {FORMAT}")
    evidence = data.get("evidence")
    if not isinstance(evidence, dict) or not evidence:
        raise StudyError(f"{where}: it holds no site's evidence")
    sites = tuple(SiteEvidence.from_dict(name, value) for name, value in evidence.items())
    tables = {}
    for name in TABLES:
        rows = data.get(name, [])
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise StudyError(f"{where}: {name!r} must be a list of rows")
        tables[name] = rows
    meta: dict = data["study"] if isinstance(data.get("study"), dict) else {}
    sources: dict = data["sources"] if isinstance(data.get("sources"), dict) else {}
    prior = Prior(sites, str(data.get("reference") or REFERENCE), meta)
    return StudyResults(prior, sources, tables)


@lru_cache(maxsize=1)
def shipped() -> StudyResults | None:
    """The study shipped with chunkproof, or None when this copy has none."""
    return read_results(SHIPPED) if SHIPPED.is_file() else None
