"""The question panel's logic without a browser: a section shown, problems shown as the
question and answer are typed, a question added by the button and the next section drawn,
another section on request, and notebook 07's parameters and export."""

from __future__ import annotations

import json

import pytest

from chunkproof.document.corpus import load_corpus
from chunkproof.errors import ConfigError
from chunkproof.evaluation.queries.question_book import QuestionBook
from chunkproof.notebooks import question_writing
from chunkproof.viz.question_panel import QuestionPanel
from test_question_check import write_docs


@pytest.fixture
def root(tmp_path):
    return write_docs(tmp_path / "docs")


def type_in(panel, question, answer):
    panel.question.value = question
    panel.answer.value = answer


def test_typing_shows_the_checks_and_the_button_adds(root, tmp_path):
    path = tmp_path / "q.jsonl"
    panel = QuestionPanel(QuestionBook(path, load_corpus(root), target=5))
    shown = panel.section
    assert shown.doc_id in panel.source.value and "0 of 5 questions" in panel.progress.value
    assert "type a question" in panel.status.value
    doc = panel.book.docs[shown.doc_id]
    start = next(b for b in doc.blocks if b.kind == "paragraph" and b.start >= shown.start)
    answer = doc.text[start.start:start.end][:60]
    type_in(panel, "What does this part say?", answer[:10])
    assert "chars: it must be 20-300" in panel.status.value  # checked as it is typed
    type_in(panel, "What does this part say about it?", answer)
    assert "ready to add" in panel.status.value
    panel.add_button.click()
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["answer"] == answer and record["sources"] == [shown.doc_id]
    assert panel.question.value == panel.answer.value == ""  # cleared for the next one
    assert "1 of 5 questions" in panel.progress.value
    assert panel.section.doc_id != shown.doc_id  # the other document comes next


def test_a_refused_question_is_not_written_and_says_why(root, tmp_path):
    path = tmp_path / "q.jsonl"
    panel = QuestionPanel(QuestionBook(path, load_corpus(root)))
    type_in(panel, "What appears twice?", "secret")
    panel.add_button.click()
    assert not path.exists() and "occurs" in panel.status.value


def test_another_section_is_drawn_on_request(root, tmp_path):
    panel = QuestionPanel(QuestionBook(tmp_path / "q.jsonl", load_corpus(root)))
    seen = {(panel.section.doc_id, panel.section.start)}
    for _ in range(3):
        panel.skip_button.click()
        seen.add((panel.section.doc_id, panel.section.start))
    assert len(seen) == 4 == len(panel.book.sections)


def test_notebook_07_setup_coverage_and_export(root, tmp_path):
    out = tmp_path / "out"
    setup = question_writing.validate(CORPUS=str(root), QUERIES=str(tmp_path / "q.jsonl"),
                                      OUT_DIR=str(out), TARGET=4, SEED=0)
    setup.book.add("Where are gateway visits logged?", "in the maintenance register",
                   next(s for s in setup.book.sections if s.doc_id == "notes.md"))
    table = question_writing.coverage(setup).set_index("kind")
    assert table.loc["prose", "written"] == 1 and table["asked for"].sum() == 4
    assert question_writing.export(setup).read_text() == "1 questions, every one passes\n"
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(ConfigError, match="QUERIES"):
        question_writing.validate(CORPUS=str(root), QUERIES=str(tmp_path / "bad.jsonl"),
                                  OUT_DIR=str(out))
