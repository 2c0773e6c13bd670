"""A file of written questions as it grows: the sections still to ask about (drawn so each
section kind gets its share and documents not yet asked about come first), each new question
checked (``question_check``; an answer pasted from the rendered site stored as the source span
it renders from, ``pasted``) and appended atomically in the format the sweep reads, progress so
far, whoever watches the file told of each question added, and the file read back so writing
resumes where it stops."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import QueryValidationError
from ...util.atomic import write_text_atomic
from .pasted import source_span
from .queries import Query, documents_by_id, query_lines
from .question_check import question_problems
from .question_sections import (
    SECTION_KINDS,
    Section,
    corpus_sections,
    kind_shares,
    planned_counts,
)

DEFAULT_TARGET = 50
"""Questions a user is asked for: enough to separate configs whose answer rates differ by
about 0.2 (``decision.questions_needed``), about half an hour of writing."""


def read_written(path: str | os.PathLike, docs: dict) -> list[Query]:
    """The questions already in ``path`` (none when it does not exist yet);
    QueryValidationError listing every bad line."""
    target = Path(path)
    if not target.is_file():
        return []
    found, problems = [], []
    lines = target.read_text(encoding="utf-8").splitlines()
    for number, _, data, bad in query_lines(lines, docs):
        problems += [f"line {number}: {p}" for p in bad]
        if not bad:
            found.append(Query.from_dict(data))
    if problems:
        raise QueryValidationError(str(target), problems)
    return found


@dataclass(frozen=True, slots=True)
class Progress:
    """How far the file is: questions written of the target, per section kind, and the
    documents asked about."""

    done: int
    target: int
    kinds: dict[str, int]
    documents: int
    of_documents: int

    def __str__(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in self.kinds.items() if n) or "none yet"
        return (f"{self.done} of {self.target} questions · kinds so far: {kinds} · "
                f"{self.documents} of {self.of_documents} documents asked about")


@dataclass
class QuestionBook:
    """The question file ``path`` for ``corpus``, aiming at ``target`` questions."""

    path: Path
    corpus: object
    target: int = DEFAULT_TARGET
    seed: int = 0
    docs: dict = field(init=False)
    sections: list[Section] = field(init=False)
    written: list[Query] = field(init=False)
    watchers: list[Callable[[Query], None]] = field(init=False, default_factory=list)
    """Called with each question once it is in the file."""

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.docs = documents_by_id(self.corpus)
        self.sections = corpus_sections(self.docs.values())
        self.written = read_written(self.path, self.docs)

    def progress(self) -> Progress:
        kinds = Counter(q.kind for q in self.written)
        asked = {q.sources[0] for q in self.written}
        return Progress(len(self.written), self.target,
                        {k: kinds[k] for k in (*SECTION_KINDS, *sorted(set(kinds) -
                                                                       set(SECTION_KINDS)))},
                        len(asked), len(self.docs))

    def wanted_kind(self) -> str | None:
        """The section kind furthest below its share of the target (None: no sections)."""
        plan = planned_counts(kind_shares(self.sections), max(self.target, 1))
        if not plan:
            return None
        have = Counter(q.kind for q in self.written)
        return max(plan, key=lambda k: (plan[k] - have[k], plan[k], k))

    def next_section(self, skipped: frozenset[tuple[str, int]] = frozenset()) -> Section | None:
        """A section to ask about: of ``wanted_kind``, in a document no question names yet,
        not skipped (each condition given up in turn when nothing meets it); drawn at random,
        seeded by ``seed`` and how far the file is."""
        asked = {q.sources[0] for q in self.written}
        fresh = [s for s in self.sections if (s.doc_id, s.start) not in skipped] or self.sections
        kind = self.wanted_kind()
        for pool in ([s for s in fresh if s.kind == kind and s.doc_id not in asked],
                     [s for s in fresh if s.doc_id not in asked],
                     [s for s in fresh if s.kind == kind], fresh):
            if pool:
                rng = random.Random(f"{self.seed}:{len(self.written)}:{len(skipped)}")
                return rng.choice(pool)
        return None

    def source_answer(self, answer: str, section: Section) -> str:
        """The answer as the file stores it: the text as typed when the document holds it,
        else the one source span the pasted text is as the site renders it (links, code marks
        and emphasis gone), else the text as typed (its check then says it is not found)."""
        return source_span(answer, self.docs[section.doc_id]) or answer

    @property
    def reached(self) -> bool:
        """Whether the file holds the target's number of questions."""
        return len(self.written) >= self.target

    def check(self, question: str, answer: str, section: Section) -> list[str]:
        """Every problem of a question about ``section``'s document (empty: it can be added)."""
        answer = self.source_answer(answer, section)
        problems = question_problems(question, answer, self.docs[section.doc_id])
        if any(q.query.strip().casefold() == question.strip().casefold() for q in self.written):
            problems.append("the file already holds this question")
        return problems

    def add(self, question: str, answer: str, section: Section) -> Query:
        """Append the question to the file, atomically (the file is rewritten whole through a
        temporary file), its answer the source span (``source_answer``): kind = the kind of
        the section holding the answer; then tell the watchers. Raises QueryValidationError
        with every problem instead when ``check`` finds one."""
        problems = self.check(question, answer, section)
        if problems:
            raise QueryValidationError(str(self.path), problems)
        answer = self.source_answer(answer, section)
        query = Query(id=self._next_id(), query=" ".join(question.split()),
                      sources=(section.doc_id,), answer=answer,
                      kind=self._kind_of(answer, section))
        old = self.path.read_text(encoding="utf-8") if self.path.is_file() else ""
        if old and not old.endswith("\n"):
            old += "\n"
        data = {k: v for k, v in query.as_dict().items() if k != "gold_spans"}
        write_text_atomic(self.path, old + json.dumps(data, ensure_ascii=False) + "\n")
        self.written.append(query)
        for watcher in self.watchers:
            watcher(query)
        return query

    def _next_id(self) -> str:
        ids = {q.id for q in self.written}
        number = len(self.written) + 1
        while f"q-{number:04d}" in ids:
            number += 1
        return f"q-{number:04d}"

    def _kind_of(self, answer: str, shown: Section) -> str:
        start = self.docs[shown.doc_id].text.find(answer)
        for section in self.sections:
            if section.doc_id == shown.doc_id and section.start <= start < section.end:
                return section.kind
        return shown.kind
