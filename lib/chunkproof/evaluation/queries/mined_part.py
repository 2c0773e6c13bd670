"""Queries mined from a corpus kept as a part of a run folder (``parts/mined_queries.<key>.json``),
so a report mines them once: the notebooks after the first read back the queries its sweep used.
The key is what mining reads (the documents' text and headings, ``max_sources``) and the code
that mines (``code_version``); a file is checked when read (its key, every field's type, every
gold document in the corpus) and one that fails a check is not used: the queries are mined
again."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ...util.atomic import write_text_atomic
from ...util.code_version import code_version
from .mining import Mined, mine_all
from .queries import MAX_SOURCES, SCOPES, GoldSpan, Query

PREFIX = "mined_queries"
"""The part's file name starts so: ``mined_queries.<key>.json``."""
LAYOUT = 1


def mined_key(corpus, max_sources: int = MAX_SOURCES) -> str:
    """What the mined queries of ``corpus`` depend on: each document's id, text and top-level
    headings (where they are, their level and how they were found: a corpus read with
    headings inferred has the same key as one read without when no heading was inferred, as
    its parse is then the same), ``max_sources`` and the code (``code_version``)."""
    digest = hashlib.sha256(f"{LAYOUT}\0{code_version()}\0{max_sources}".encode())
    digest.update(corpus.fingerprint.encode())
    for doc in corpus:
        heads = [(b.start, b.end, b.level, b.provenance) for b in doc.blocks if b.is_heading]
        digest.update(f"\0{doc.id}\0{heads}".encode())
    return digest.hexdigest()[:12]


def mined_path(folder: str | Path, corpus, max_sources: int = MAX_SOURCES) -> Path:
    """Where ``folder`` (a run folder's ``parts/``) keeps the queries mined from ``corpus``."""
    return Path(folder) / f"{PREFIX}.{mined_key(corpus, max_sources)}.json"


class _Span(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    doc: str
    start: int
    end: int
    scope: Literal[SCOPES]  # type: ignore[valid-type]


class _Query(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    id: str
    query: str
    sources: list[str]
    answer: str | None
    kind: str
    gold_spans: list[_Span]


class _Stored(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    key: str
    max_sources: int
    queries: list[_Query]
    dropped: list[_Query]
    junk: dict[str, list[str]]
    origins: dict[str, str]


def save_mined(folder: str | Path, corpus, mined: Mined) -> Path:
    """``mined`` written atomically as the part of ``corpus``'s mined queries in ``folder``,
    in place of the queries it kept for another key."""
    key = mined_key(corpus, mined.max_sources)
    for stale in Path(folder).glob(f"{PREFIX}.*.json"):
        if stale.name != f"{PREFIX}.{key}.json":
            stale.unlink(missing_ok=True)
    stored = {"key": key, "max_sources": mined.max_sources,
              "queries": [q.as_dict() for q in mined.queries],
              "dropped": [q.as_dict() for q in mined.dropped],
              "junk": mined.junk, "origins": mined.origins}
    return write_text_atomic(Path(folder) / f"{PREFIX}.{key}.json",
                             json.dumps(stored, ensure_ascii=False))


def load_mined(folder: str | Path | None, corpus, max_sources: int = MAX_SOURCES
               ) -> Mined | None:
    """The queries ``folder`` keeps for ``corpus`` (mined with ``max_sources``), or None when
    it has none or its file fails a check (unreadable, another key, a field of the wrong
    type, a gold document the corpus does not hold)."""
    if folder is None:
        return None
    path = mined_path(folder, corpus, max_sources)
    try:
        stored = _Stored.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None
    ids = {doc.id for doc in corpus}
    queries, dropped = _queries(stored.queries), _queries(stored.dropped)
    if (stored.key != mined_key(corpus, max_sources) or stored.max_sources != max_sources
            or any(not set(q.sources) <= ids for q in [*queries, *dropped])
            or set(stored.origins) != {q.id for q in queries}):
        return None
    return Mined(queries, dropped, max_sources, stored.junk, stored.origins)


def _queries(records: list[_Query]) -> list[Query]:
    return [Query(id=r.id, query=r.query, sources=tuple(r.sources), answer=r.answer, kind=r.kind,
                  gold_spans=tuple(GoldSpan(s.doc, s.start, s.end, s.scope)
                                   for s in r.gold_spans)) for r in records]


def mined_once(folder: str | Path | None, corpus, max_sources: int = MAX_SOURCES) -> Mined:
    """The queries ``folder`` keeps for ``corpus`` (``load_mined``), else ``mine_all``'s."""
    return load_mined(folder, corpus, max_sources) or mine_all(corpus, max_sources=max_sources)
