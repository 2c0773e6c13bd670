"""Query records: validated JSONL load and save; the split into tuning and held-out sets
(queries mined from a corpus: ``mining``)."""

from __future__ import annotations

import difflib
import json
import os
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import QueryValidationError
from ...util.atomic import write_text_atomic
from ...util.files import read_utf8

FIELDS = ("id", "query", "source", "sources", "answer", "kind", "gold_spans")
DEFAULT_KIND = "manual"
MINED_KINDS = ("title", "section", "symbol", "body")
MAX_SOURCES = 5  # here, not in mining, so that the CLI help needs no parser
"""Mined queries whose text names more gold documents than this are dropped: a heading such as
"Usage" shared by dozens of pages is answered by any of them and says nothing about chunking."""
HEADING_KINDS = frozenset({"title", "section", "symbol"})
"""Mined kinds whose text comes from a heading (a symbol query may also come from a table or
definition list): such a query can occur in the heading-path prefix a strategy injects."""
HEADING_GROUP, LEAK_FREE = "heading_derived", "leak_free"
SCOPES = ("section", "lead", "document")
"""What a gold span covers: the section a heading opens, a document's lead section (up to
the first heading below its title), or the whole document (it has no lead section)."""


def query_group(kind: str) -> str:
    """``heading_derived`` for title, section and symbol queries, else ``leak_free`` (body
    sentences and hand-written questions, whose text no heading injects)."""
    return HEADING_GROUP if kind in HEADING_KINDS else LEAK_FREE


@dataclass(frozen=True, slots=True)
class GoldSpan:
    """A span of a gold document that answers a query: [start, end) char offsets."""

    doc: str
    start: int
    end: int
    scope: str = "section"
    """One of ``SCOPES``."""

    def as_dict(self) -> dict:
        return {"doc": self.doc, "start": self.start, "end": self.end, "scope": self.scope}

    @classmethod
    def from_dict(cls, data: dict) -> GoldSpan:
        return cls(data["doc"], int(data["start"]), int(data["end"]),
                   data.get("scope") or "section")


@dataclass(frozen=True, slots=True)
class Query:
    """One retrieval question with the documents that answer it."""

    id: str
    """Unique within a query set."""
    query: str
    """The text handed to the retriever."""
    sources: tuple[str, ...]
    """Gold document ids (``Document.id``): any of them answers the query."""
    answer: str | None = None
    """Exact substring of the first source holding the evidence; None when not given."""
    kind: str = DEFAULT_KIND
    """Where the query came from: ``manual`` (or any label a query file gives), or mined
    ``title``, ``section``, ``symbol``, ``body``."""
    gold_spans: tuple[GoldSpan, ...] = ()
    """The sections of the sources that answer it (mined queries); empty when not given."""

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "query": self.query,
            "sources": list(self.sources),
            "answer": self.answer,
            "kind": self.kind,
            "gold_spans": [span.as_dict() for span in self.gold_spans],
        }

    @classmethod
    def from_dict(cls, data: dict) -> Query:
        """Accepts ``source`` (one id) or ``sources`` (a list), as in the JSONL files."""
        sources = data.get("sources", data.get("source", ()))
        if isinstance(sources, str):
            sources = (sources,)
        return cls(
            id=data["id"],
            query=data["query"],
            sources=tuple(sources),
            answer=data.get("answer"),
            kind=data.get("kind") or DEFAULT_KIND,
            gold_spans=tuple(GoldSpan.from_dict(g) for g in data.get("gold_spans") or ()),
        )


def documents_by_id(corpus) -> dict:
    """``{doc.id: doc}`` from a Corpus, an iterable of Documents or such a mapping."""
    if isinstance(corpus, dict):
        return corpus
    return {doc.id: doc for doc in corpus}


# --- loading and saving ----------------------------------------------------------------


def _is_text(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_sources(data: dict, docs: dict) -> list[str]:
    if "source" in data and "sources" in data:
        return ["give 'source' or 'sources', not both"]
    if "source" not in data and "sources" not in data:
        return ["missing field 'source' (or 'sources')"]
    sources = data.get("sources", data.get("source"))
    if isinstance(sources, str):
        sources = [sources]
    if not isinstance(sources, list) or not sources or not all(map(_is_text, sources)):
        return [f"sources must be a document id or a non-empty list of them, got {sources!r}"]
    problems = []
    for source in sources:
        if source not in docs:
            near = difflib.get_close_matches(source, list(docs), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            problems.append(f"source {source!r} is not a document of the corpus{hint}")
    return problems


def _check_answer(data: dict, docs: dict) -> list[str]:
    answer = data.get("answer")
    if answer is None:
        return []
    if not _is_text(answer):
        return [f"answer must be a non-empty string, got {answer!r}"]
    sources = data.get("sources", data.get("source")) or [""]
    first = sources if isinstance(sources, str) else sources[0]
    if first in docs and answer not in docs[first].text:
        shown = answer if len(answer) <= 60 else answer[:57] + "..."
        return [f"answer is not an exact substring of source {first!r}: {shown!r}"]
    return []


def _check_span(span, sources: list, docs: dict) -> list[str]:
    if not isinstance(span, dict) or set(span) - {"doc", "start", "end", "scope"}:
        return [f"each gold span must be an object {{doc, start, end, scope?}}, got {span!r}"]
    doc, start, end = span.get("doc"), span.get("start"), span.get("end")
    if doc not in sources:
        return [f"gold span document {doc!r} is not one of the sources"]
    if not (isinstance(start, int) and isinstance(end, int)) or bool in (type(start), type(end)):
        return [f"gold span start and end must be integers, got {start!r} and {end!r}"]
    scope = span.get("scope", "section")
    problems = [] if scope in SCOPES else [
        f"gold span scope must be one of {', '.join(SCOPES)}, got {scope!r}"]
    if doc in docs and not 0 <= start < end <= len(docs[doc].text):
        problems.append(f"gold span [{start}, {end}) is not a span of {doc!r} "
                        f"({len(docs[doc].text)} chars)")
    return problems


def _check_gold_spans(data: dict, docs: dict) -> list[str]:
    spans = data.get("gold_spans")
    if spans is None:
        return []
    if not isinstance(spans, list):
        return [f"gold_spans must be a list of {{doc, start, end}} objects, got {spans!r}"]
    sources = data.get("sources", data.get("source"))
    sources = [sources] if isinstance(sources, str) else list(sources or [])
    return [p for span in spans for p in _check_span(span, sources, docs)]


def check_record(data, docs: dict) -> list[str]:
    """Every problem of one decoded JSONL record (empty when it is a valid query)."""
    if not isinstance(data, dict):
        return [f"expected a JSON object, got {type(data).__name__}"]
    problems = []
    unknown = sorted(set(data) - set(FIELDS))
    if unknown:
        problems.append(f"unknown field(s) {', '.join(map(repr, unknown))}; allowed: "
                        f"{', '.join(FIELDS)}")
    for name in ("id", "query"):
        if name not in data:
            problems.append(f"missing field {name!r}")
        elif not _is_text(data[name]):
            problems.append(f"field {name!r} must be a non-empty string, got {data[name]!r}")
    if "kind" in data and not _is_text(data["kind"]):
        problems.append(f"field 'kind' must be a non-empty string, got {data['kind']!r}")
    source_problems = _check_sources(data, docs)
    problems += source_problems
    if not source_problems:
        problems += _check_answer(data, docs) + _check_gold_spans(data, docs)
    return problems


def query_lines(lines: Iterable[str], docs: dict
                ) -> Iterator[tuple[int, str, Any, list[str]]]:
    """(line number, query id, record, problems) of each non-blank line of a JSONL query
    file: not valid JSON (record None), what ``check_record`` refuses against ``docs``, an id
    used on an earlier line. The one reading of a query file's lines."""
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            yield number, "", None, [f"not valid JSON ({err.msg} at column {err.colno})"]
            continue
        except RecursionError:
            yield number, "", None, ["nested too deep to read (a query is one flat JSON "
                                     "object)"]
            continue
        found = check_record(data, docs)
        qid = data.get("id") if isinstance(data, dict) else None
        if isinstance(qid, str) and qid in first_line:
            found.append(f"duplicate id {qid!r} (first used on line {first_line[qid]})")
        elif isinstance(qid, str):
            first_line[qid] = number
        yield number, qid if isinstance(qid, str) else "", data, found


def load_queries(path: str | os.PathLike, corpus) -> list[Query]:
    """Read a JSONL query file, checked against ``corpus``; raises listing every bad line."""
    lines = read_utf8(path, what="query file").splitlines()
    queries: list[Query] = []
    problems: list[str] = []
    for number, _, data, found in query_lines(lines, documents_by_id(corpus)):
        problems += [f"line {number}: {p}" for p in found]
        if not found:
            queries.append(Query.from_dict(data))
    if not problems and not queries:
        problems.append("the file holds no queries")
    if problems:
        raise QueryValidationError(str(path), problems)
    return queries


def save_queries(queries: Iterable[Query], path: str | os.PathLike) -> Path:
    """Write queries as JSONL (``sources`` as a list, ``answer`` and ``gold_spans`` only when
    set), atomically."""
    lines = []
    for query in queries:
        data = query.as_dict()
        if data["answer"] is None:
            del data["answer"]
        if not data["gold_spans"]:
            del data["gold_spans"]
        lines.append(json.dumps(data, ensure_ascii=False))
    return write_text_atomic(path, "".join(line + "\n" for line in lines))


# --- tuning and held-out sets ----------------------------------------------------------

TUNING, HELD_OUT, ALL = "tuning", "held_out", "all"
MIN_SPLIT = 40
"""Fewer queries than this are not split: half of them would be too few to choose on, and the
other half too few to report on."""


@dataclass(frozen=True, slots=True)
class QuerySplit:
    """Which queries a config is chosen on (tuning) and which it is reported on (held out)."""

    sets: dict[str, str]
    """Query id -> ``tuning``, ``held_out``, or ``all`` when the set was too small to split."""
    method: str
    """``seeded`` (stratified by kind), ``files`` (given apart) or ``none`` (too small)."""
    note: str

    def count(self, name: str) -> int:
        return sum(1 for v in self.sets.values() if v == name)

    def report(self) -> dict:
        """``{method, tuning, held_out, note}`` for run.json."""
        return {"method": self.method, "tuning": self.count(TUNING),
                "held_out": self.count(HELD_OUT), "note": self.note}


def split_queries(queries: Iterable[Query], *, seed: int = 0, share: float = 0.5,
                  minimum: int = MIN_SPLIT) -> QuerySplit:
    """A seeded split into tuning and held-out queries, stratified by kind: the queries of
    each kind are shuffled, the kinds laid end to end, and every query whose position
    crosses a multiple of 1/``share`` is held out, so each kind is split in the same
    proportion. Below ``minimum`` queries nothing is split (every query is ``all``)."""
    queries = list(queries)
    if len(queries) < minimum:
        return QuerySplit({q.id: ALL for q in queries}, "none",
                          f"{len(queries)} queries are fewer than {minimum}: too few to split, "
                          "so the config is chosen on all of them and no held-out score "
                          "is reported")
    rng = random.Random(seed)
    ordered: list[Query] = []
    for kind in sorted({q.kind for q in queries}):
        group = [q for q in queries if q.kind == kind]
        rng.shuffle(group)
        ordered += group
    sets = {q.id: HELD_OUT if int((i + 1) * share) > int(i * share) else TUNING
            for i, q in enumerate(ordered)}
    held = sum(v == HELD_OUT for v in sets.values())
    return QuerySplit(sets, "seeded", f"{len(sets) - held} tuning and {held} held-out queries "
                      f"(seed {seed}, stratified by kind): the config is chosen on the tuning "
                      "set and reported on the held-out set")


def given_split(tuning: Iterable[Query], held_out: Iterable[Query]) -> QuerySplit:
    """The split two query files make (``--dev-queries`` and ``--test-queries``)."""
    sets = {q.id: TUNING for q in tuning}
    for query in held_out:
        if query.id in sets:
            raise QueryValidationError("held-out queries", [
                f"id {query.id!r} is also a tuning query id: give the two sets distinct ids"])
        sets[query.id] = HELD_OUT
    held = sum(v == HELD_OUT for v in sets.values())
    return QuerySplit(sets, "files", f"{len(sets) - held} tuning queries and {held} held-out "
                                     "queries from two files")
