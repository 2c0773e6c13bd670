"""The question panel's logic without a browser: a section shown, problems shown as the
question and answer are typed, a question added by the button and the next section drawn,
another section on request, and notebook 07's parameters and export."""

from __future__ import annotations

import json

import pytest

from chunkproof.cli import main
from chunkproof.document.corpus import load_corpus, make_document
from chunkproof.errors import ConfigError
from chunkproof.evaluation.queries.pasted import source_span
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


RENDERED = """# Deploying

Run `vitepress build` to write the site; see [the deploy guide](./guide.md#limits) for
**hosting** it on *any* static host.
"""


def test_an_answer_pasted_from_the_rendered_page_is_stored_as_its_source_span(root, tmp_path):
    (root / "deploy.md").write_text(RENDERED, encoding="utf-8")
    path = tmp_path / "q.jsonl"
    book = QuestionBook(path, load_corpus(root))
    panel = QuestionPanel(book)
    panel.section = next(s for s in book.sections if s.doc_id == "deploy.md")
    pasted = "see the deploy guide for hosting it on any static host."
    type_in(panel, "Where do I read about putting the site on a host?", pasted)
    assert "ready to add" in panel.status.value and "stored as" in panel.status.value
    panel.add_button.click()
    [record] = [json.loads(line) for line in path.read_text().splitlines()]
    assert record["answer"] == ("see [the deploy guide](./guide.md#limits) for\n**hosting** "
                                "it on *any* static host.")
    assert main(["queries", "check", str(path), "--corpus", str(root)]) == 0


class Shown:
    """A display handle that keeps what it was last given."""

    def __init__(self) -> None:
        self.shown: list = []

    def display(self, value) -> None:
        self.shown.append(value)

    update = display


def test_coverage_and_the_check_are_drawn_again_as_questions_are_added(root, tmp_path,
                                                                       monkeypatch):
    handles: list[Shown] = []
    monkeypatch.setattr("IPython.display.DisplayHandle",
                        lambda: handles.append(Shown()) or handles[-1])
    setup = question_writing.validate(CORPUS=str(root), QUERIES=str(tmp_path / "q.jsonl"),
                                      OUT_DIR=str(tmp_path / "out"), TARGET=2, SEED=0)
    question_writing.show_coverage(setup)
    written = question_writing.show_export(setup)
    coverage, check = handles
    assert "no questions written yet" in written.read_text()
    notes = next(s for s in setup.book.sections if s.doc_id == "notes.md")
    setup.book.add("Where are gateway visits logged?", "in the maintenance register", notes)
    assert coverage.shown[-1].set_index("kind").loc["prose", "written"] == 1
    assert len(check.shown) == 1 and "no questions written yet" in written.read_text()
    guide = next(s for s in setup.book.sections if s.heading == "Limits")
    setup.book.add("How many readings can wait before uploads stop?",
                   "forty thousand before uploads pause", guide)  # the target: 2
    assert coverage.shown[-1]["written"].sum() == 2
    assert written.read_text() == "2 questions, every one passes\n"
    assert "2 questions, every one passes" in check.shown[-1].data


@pytest.mark.parametrize(("pasted", "stored"), [
    ("Run vitepress build to write the site", "Run `vitepress build` to write the site"),
    ("Run `vitepress build` to write", "Run `vitepress build` to write"),  # as written
    ("hosting it on any static host", "**hosting** it on *any* static host"),
    ("Set base when served from a sub path.", "Set `base` when served from a [sub path][sub]."),
    ("Use base here.", None),  # two spans render so: no one span
    ("write the site with vitepress", None),  # not in the page
])
def test_the_source_span_of_a_pasted_answer(pasted, stored):
    doc = make_document("d.md", RENDERED + "\n- Set `base` when served from a [sub path][sub].\n"
                                 "\n[sub]: ./sub.md\n\nUse `base` here. Use *base* here.\n")
    assert source_span(pasted, doc) == stored
