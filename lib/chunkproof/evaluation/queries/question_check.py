"""The checks a written question must pass to measure chunking: its answer is an exact span
of its document, found there once, 20-300 chars, holding no heading line; the question does
not repeat the heading of the section that answers it. One problem per line; a whole query
file checked against a corpus."""

from __future__ import annotations

import os
from dataclasses import dataclass

from ...document.sections import Sections
from ...util.files import read_utf8
from .queries import Query, documents_by_id, query_lines
from .query_text import heading_text, key

ANSWER_CHARS = (20, 300)
"""An answer shorter than this names nothing a chunk must hold whole; a longer one is a
passage that any chunking cuts."""


def answer_problems(answer: str, doc) -> list[str]:
    """Why ``answer`` is no answer span of ``doc`` (empty when it is one)."""
    low, high = ANSWER_CHARS
    problems = []
    count = doc.text.count(answer) if answer else 0
    if count == 0:
        return [f"answer is not an exact span of {doc.id!r}: {_shown(answer)}"]
    if count > 1:
        problems.append(f"answer occurs {count} times in {doc.id!r}: make it longer so it "
                        "is found once")
    if not low <= len(answer) <= high:
        problems.append(f"answer is {len(answer)} chars: it must be {low}-{high}")
    start = doc.text.find(answer)
    headings = [b for b in doc.blocks if b.is_heading and start < b.end
                and b.start < start + len(answer)]
    if headings:
        line = doc.text[headings[0].start : headings[0].end]
        problems.append(f"answer holds the heading line {_shown(line)}: mark text under a "
                        "heading, not the heading")
    return problems


def valid_answer(answer: str, doc) -> bool:
    """Whether ``answer`` passes ``answer_problems`` in ``doc``."""
    return not answer_problems(answer, doc)


def answering_heading(answer: str, doc) -> str:
    """The heading of the innermost section holding the answer ("" before any heading)."""
    start = doc.text.find(answer)
    if start < 0:
        return ""
    heading, _start, _end = Sections(doc.blocks).holding(start)
    return heading.title if heading is not None else ""


def question_problems(question: str, answer: str, doc) -> list[str]:
    """Why a question and its answer in ``doc`` would not measure chunking (empty: none)."""
    problems = [] if question.strip() else ["the question is empty"]
    problems += answer_problems(answer, doc)
    heading = key(heading_text(answering_heading(answer, doc)))
    if heading and problems == [] and f" {heading} " in f" {key(question)} ":
        problems.append(f"the question repeats the section heading "
                        f"{answering_heading(answer, doc)!r}: a chunk's injected heading "
                        "would answer it, not the chunk")
    return problems


def query_problems(query: Query, docs: dict) -> list[str]:
    """The checks of one loaded query (its answer in its first source)."""
    if query.answer is None:
        return ["no answer span: give the exact text that answers it"]
    doc = docs.get(query.sources[0])
    if doc is None:
        return [f"source {query.sources[0]!r} is not a document of the corpus"]
    return question_problems(query.query, query.answer, doc)


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem of a query file: its line, the query id (when it has one), what is wrong."""

    line: int
    query_id: str
    text: str

    def __str__(self) -> str:
        if not self.line:  # the file as a whole
            return self.text
        where = f"line {self.line}" + (f" ({self.query_id})" if self.query_id else "")
        return f"{where}: {self.text}"


def check_file(path: str | os.PathLike, corpus) -> list[Problem]:
    """Every problem of every line of a JSONL query file: the loader's checks (fields,
    sources), then the written-question checks. A file that cannot be read (missing, a
    folder, not UTF-8) raises FileReadError: the command names it in one line."""
    docs = documents_by_id(corpus)
    lines = read_utf8(path, what="query file").splitlines()
    found: list[Problem] = []
    records = 0
    for number, qid, data, texts in query_lines(lines, docs):
        records += 1
        if not texts:
            texts = query_problems(Query.from_dict(data), docs)
        found += [Problem(number, qid, text) for text in texts]
    if not records:
        found.append(Problem(0, "", "the file holds no queries"))
    return found


def _shown(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
