"""Notebook 07, write questions: its parameters, the question book and panel they open, what
the file holds so far against what the corpus's sections ask for (redrawn as questions are
added), and its check (written again once the target is reached)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..document.corpus import Corpus
from ..evaluation.queries.question_book import DEFAULT_TARGET, QuestionBook
from ..evaluation.queries.question_check import check_file
from ..evaluation.queries.question_sections import SECTION_KINDS, kind_shares, planned_counts
from ..util.atomic import write_text_atomic
from ..viz.question_panel import QuestionPanel
from .params import (
    CorpusFolder,
    NonNegativeInt,
    NotebookParams,
    OutputFolder,
    PositiveInt,
    load_corpus_param,
    parameter,
)
from .params import validate as validate_params


class WriteParams(NotebookParams):
    """Notebook 07's parameters (QUERIES, the file written to, resolved like an output)."""

    CORPUS: CorpusFolder
    QUERIES: OutputFolder
    OUT_DIR: OutputFolder
    TARGET: PositiveInt = DEFAULT_TARGET
    SEED: NonNegativeInt = 0


@dataclass(frozen=True, slots=True)
class WriteSetup:
    """Notebook 07's parameters, checked, and the question book they open."""

    corpus: Corpus
    book: QuestionBook
    out_dir: Path

    def describe(self) -> str:
        return (f"{len(self.corpus)} documents, {len(self.book.sections)} sections to ask "
                f"about; questions go to {self.book.path}\n{self.book.progress()}")


def validate(**params: Any) -> WriteSetup:
    """Check notebook 07's parameters and open the question file (a bad line of it names
    QUERIES and the line)."""
    checked = validate_params(WriteParams, **params)
    corpus = load_corpus_param(checked.CORPUS)
    with parameter("QUERIES"):
        book = QuestionBook(Path(checked.QUERIES), corpus, target=checked.TARGET,
                            seed=checked.SEED)
    return WriteSetup(corpus, book, Path(checked.OUT_DIR))


def panel(setup: WriteSetup) -> QuestionPanel:
    return QuestionPanel(setup.book)


def coverage(setup: WriteSetup) -> pd.DataFrame:
    """Per section kind: the corpus's sections, the questions the target asks of it, and the
    questions the file holds."""
    book = setup.book
    sections = Counter(s.kind for s in book.sections)
    plan = planned_counts(kind_shares(book.sections), book.target)
    written = Counter(q.kind for q in book.written)
    return pd.DataFrame([{"kind": kind, "sections": sections[kind], "asked for": plan.get(kind, 0),
                          "written": written[kind]} for kind in SECTION_KINDS])


def show_coverage(setup: WriteSetup) -> None:
    """Show ``coverage`` and draw it again each time the panel adds a question."""
    from IPython.display import DisplayHandle

    handle = DisplayHandle()
    handle.display(coverage(setup))
    setup.book.watchers.append(lambda _query: handle.update(coverage(setup)))


def show_export(setup: WriteSetup) -> Path:
    """Write the check (``export``) and print it; write and print it again each time a
    question is added once the file holds the target's number of questions."""
    from IPython.display import DisplayHandle, Pretty

    written = export(setup)
    handle = DisplayHandle()
    handle.display(Pretty(written.read_text()))

    def again(_query) -> None:
        if setup.book.reached:
            handle.update(Pretty(export(setup).read_text()))

    setup.book.watchers.append(again)
    return written


def export(setup: WriteSetup) -> Path:
    """``OUT_DIR/<file name>.check.txt``: the question file's problems, one a line (as
    ``chunkproof queries check`` prints them), or that every question passes."""
    path = setup.book.path
    problems = check_file(path, setup.corpus) if path.is_file() else []
    lines = [str(p) for p in problems] or [
        f"{len(setup.book.written)} questions, every one passes" if path.is_file()
        else "no questions written yet"]
    return write_text_atomic(setup.out_dir / f"{path.name}.check.txt", "\n".join(lines) + "\n")
