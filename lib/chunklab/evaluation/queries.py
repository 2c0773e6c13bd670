"""Query records: validated JSONL load and save; queries mined from titles, headings, symbols."""

from __future__ import annotations

import difflib
import json
import os
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TypedDict

from ..errors import FileReadError, QueryValidationError
from ..util.atomic import write_text_atomic
from ..util.files import read_utf8

FIELDS = ("id", "query", "source", "sources", "answer", "kind")
DEFAULT_KIND = "manual"
MINED_KINDS = ("title", "section", "symbol")
MAX_SOURCES = 5
"""Mined queries whose text names more gold documents than this are dropped: a heading such as
"Usage" shared by dozens of pages is answered by any of them and says nothing about chunking."""

NAVIGATIONAL = frozenset(
    {
        "overview", "introduction", "intro", "notes", "note", "see also", "summary",
        "contents", "table of contents", "toc", "examples", "example", "changelog",
        "change log", "history", "references", "related", "related pages", "related topics",
        "further reading", "next steps", "going further", "foreword", "preface", "index",
        "appendix", "about", "faq", "more information", "resources",
        "概要", "関連情報",  # Japanese: overview, related information
    }
)
"""Heading texts (casefolded words, section numbers removed) that label no topic."""

_NUMBERING = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVXLC]+\.)\s+")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_PLAIN_SYMBOL = re.compile(
    r"(?<![\w-])--?[A-Za-z][\w-]*"  # --flag, -f
    r"|\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(\))?"  # Client.upload, tern.auth.TokenSource
    r"|\b[A-Za-z_]\w*\(\)"  # upload()
    r"|\b[a-z][a-z\d]*_[a-z\d_]+\b"  # snake_case
)


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
    """Where the query came from: ``manual``, or mined ``title``, ``section``, ``symbol``."""

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "query": self.query,
            "sources": list(self.sources),
            "answer": self.answer,
            "kind": self.kind,
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
        problems += _check_answer(data, docs)
    return problems


def load_queries(path: str | os.PathLike, corpus) -> list[Query]:
    """Read a JSONL query file, checked against ``corpus``; raises listing every bad line."""
    docs = documents_by_id(corpus)
    try:
        lines = read_utf8(path, what="query file").splitlines()
    except FileReadError as err:
        raise QueryValidationError(str(path), [f"cannot read the file: {err.reason}"]) from None
    queries: list[Query] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as err:
            problems.append(f"line {number}: not valid JSON ({err.msg} at column {err.colno})")
            continue
        except RecursionError:
            problems.append(f"line {number}: nested too deep to read (a query is one flat "
                            "JSON object)")
            continue
        found = check_record(data, docs)
        qid = data.get("id") if isinstance(data, dict) else None
        if isinstance(qid, str) and qid in first_line:
            found.append(f"duplicate id {qid!r} (first used on line {first_line[qid]})")
        elif isinstance(qid, str):
            first_line[qid] = number
        problems += [f"line {number}: {p}" for p in found]
        if not found:
            queries.append(Query.from_dict(data))
    if not problems and not queries:
        problems.append("the file holds no queries")
    if problems:
        raise QueryValidationError(str(path), problems)
    return queries


def save_queries(queries: Iterable[Query], path: str | os.PathLike) -> Path:
    """Write queries as JSONL (``sources`` as a list, ``answer`` only when set), atomically."""
    lines = []
    for query in queries:
        data = query.as_dict()
        if data["answer"] is None:
            del data["answer"]
        lines.append(json.dumps(data, ensure_ascii=False))
    return write_text_atomic(path, "".join(line + "\n" for line in lines))


# --- mining ----------------------------------------------------------------------------


def _key(text: str) -> str:
    """Casefolded words only, so "Runbook: x" and "Runbook - x" are one heading."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def heading_text(title: str) -> str:
    """A heading as query text: leading section numbers and backticks removed."""
    return " ".join(_NUMBERING.sub("", title).replace("`", "").split())


def is_navigational(title: str) -> bool:
    return _key(heading_text(title)) in NAVIGATIONAL


def heading_symbols(title: str) -> list[str]:
    """API symbols named in a heading: code spans first, then identifier-shaped words."""
    found = [m.group(2).strip() for m in _CODE_SPAN.finditer(title)]
    plain = _CODE_SPAN.sub(" ", _NUMBERING.sub("", title))
    for match in _PLAIN_SYMBOL.finditer(plain):
        parts = match.group().rstrip("()").lstrip("-").split(".")
        if max(map(len, parts)) >= 2:
            found.append(match.group())
    return [s for s in dict.fromkeys(found) if 2 <= len(s) <= 80 and "\n" not in s]


def _symbol_key(symbol: str) -> str:
    return symbol.casefold().removesuffix("()")


def _only_symbols(title: str, symbols: list[str]) -> bool:
    rest = _NUMBERING.sub("", title).replace("`", "")
    for symbol in symbols:
        rest = rest.replace(symbol, " ")
    return not re.sub(r"[\W_]+", "", rest)


class _Miner:
    """Collects mined texts in first-seen order with every document that defines them."""

    def __init__(self):
        self.texts: dict[str, dict[str, str]] = {kind: {} for kind in MINED_KINDS}
        self.where: dict[tuple[str, str], list[str]] = {}

    def add(self, kind: str, key: str, text: str, doc_id: str) -> None:
        if not key:  # punctuation only: nothing to search for
            return
        space = "symbol" if kind == "symbol" else "text"
        docs = self.where.setdefault((space, key), [])
        if doc_id not in docs:
            docs.append(doc_id)
        self.texts[kind].setdefault(key, text)

    def queries(self) -> list[Query]:
        titles = self.texts["title"]
        result = []
        for kind in MINED_KINDS:
            space = "symbol" if kind == "symbol" else "text"
            keys = [k for k in self.texts[kind] if kind != "section" or k not in titles]
            for number, key in enumerate(keys, start=1):
                result.append(
                    Query(
                        id=f"mined-{kind}-{number:04d}",
                        query=self.texts[kind][key],
                        sources=tuple(self.where[(space, key)]),
                        kind=kind,
                    )
                )
        return result


class DroppedQueries(TypedDict):
    """run.json ``queries_dropped``: mined queries left out, why, and a few of them."""

    count: int
    reason: str
    examples: list[str]


@dataclass(frozen=True, slots=True)
class Mined:
    """Queries mined from a corpus, and those dropped for naming too many gold documents."""

    queries: list[Query]
    dropped: list[Query]
    max_sources: int

    def reason(self) -> str:
        if not self.dropped:
            return ""
        widest = max(self.dropped, key=lambda q: len(q.sources))
        count = f"{len(self.dropped)} mined quer{'y' if len(self.dropped) == 1 else 'ies'}"
        return (f"{count} dropped: each names more than "
                f"{self.max_sources} gold documents (widest: {widest.query!r} in "
                f"{len(widest.sources)}), so any of many pages answers it")

    def require(self, root: str) -> Mined:
        """Itself when it holds a query; QueryValidationError saying why none was mined."""
        if not self.queries:
            why = self.reason() or ("no document has a title, heading or API symbol that a "
                                    "query could name")
            raise QueryValidationError(root, [f"no queries could be mined: {why}; write a "
                                              "query file instead (--queries)"])
        return self

    def report(self) -> DroppedQueries:
        """``{count, reason, examples}`` for run.json."""
        return {"count": len(self.dropped), "reason": self.reason(),
                "examples": [f"{q.query} ({len(q.sources)} documents)" for q in self.dropped[:5]]}


def mine(corpus, *, max_sources: int = MAX_SOURCES) -> Mined:
    """``mine_queries``, keeping the queries it drops for having more than ``max_sources``
    gold documents, so a run can say how many and why."""
    found = _mine_all(corpus)
    keep = [q for q in found if len(q.sources) <= max_sources]
    return Mined(keep, [q for q in found if len(q.sources) > max_sources], max_sources)


def mine_queries(corpus, *, max_sources: int = MAX_SOURCES) -> list[Query]:
    """One query per document title, section heading and API symbol named in a heading.

    Gold sources are every document whose title or a heading has the same text (the same
    symbol, for symbol queries); a query with more than ``max_sources`` of them is dropped
    (see ``mine``). Navigational headings ("Overview", "See also", ...) are skipped; a
    heading that is nothing but symbols gives symbol queries only.
    """
    return mine(corpus, max_sources=max_sources).queries


def _mine_all(corpus) -> list[Query]:
    miner = _Miner()
    for doc in documents_by_id(corpus).values():
        title = _doc_title(doc)
        if title and not is_navigational(doc.title):
            miner.add("title", _key(title), title, doc.id)
        for block in doc.blocks:
            if block.is_heading:
                _mine_heading(miner, block.raw_title, doc.id)  # code spans name symbols
    return miner.queries()


def _doc_title(doc) -> str:
    """The title as query text; a file-stem fallback ``q2-notes`` reads ``q2 notes``."""
    if doc.title == PurePosixPath(doc.id).stem:
        return " ".join(re.split(r"[-_\s]+", doc.title)).strip()
    return heading_text(doc.title)


def _mine_heading(miner: _Miner, title: str, doc_id: str) -> None:
    symbols = heading_symbols(title)
    for symbol in symbols:
        miner.add("symbol", _symbol_key(symbol), symbol, doc_id)
    text = heading_text(title)
    if not text or is_navigational(title) or (symbols and _only_symbols(title, symbols)):
        return
    miner.add("section", _key(text), text, doc_id)


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
