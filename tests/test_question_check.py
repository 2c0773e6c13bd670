"""Written questions checked: the answer an exact span found once, 20-300 chars, no heading
line, the question not repeating its section's heading; ``chunkproof queries check`` prints one
line per problem and exits 2; the question book draws sections by kind and by documents not
yet asked about, appends atomically, and resumes where its file stops."""

from __future__ import annotations

import json

import pytest

from chunkproof.cli import main
from chunkproof.document.corpus import load_corpus
from chunkproof.errors import QueryValidationError
from chunkproof.evaluation.queries.question_book import QuestionBook
from chunkproof.evaluation.queries.question_check import question_problems
from chunkproof.evaluation.queries.question_sections import document_sections, planned_counts

GUIDE = """# Relay guide

## Rotating credentials

Operators replace the signing secret every ninety days with the vault tool.
The word secret appears twice here: secret.

## Installing

```bash
relay install --channel stable --prefix /opt/relay
```

Run the installer as the service account so the files it writes belong to it.

## Limits

| limit | value |
| --- | --- |
| readings in queue | forty thousand before uploads pause |
| upload batch | five hundred readings per request |

- gateways retry failed uploads after thirty seconds
- gateways give up after twelve failed attempts in a row
- a gateway that gave up raises the offline alarm on the console
"""

NOTES = """# Field notes

Technicians log each gateway visit in the maintenance register within one working day.
"""


def write_docs(folder):
    """The two fixture pages written into ``folder`` (made here), which is returned."""
    folder.mkdir()
    (folder / "guide.md").write_text(GUIDE, encoding="utf-8")
    (folder / "notes.md").write_text(NOTES, encoding="utf-8")
    return folder


@pytest.fixture
def corpus(tmp_path):
    return load_corpus(write_docs(tmp_path / "docs"))


def doc(corpus, name="guide.md"):
    return next(d for d in corpus if d.id == name)


@pytest.mark.parametrize(("question", "answer", "problem"), [
    ("How often is the signing key changed?", "every ninety days with the vault tool", None),
    ("How often is the key changed?", "every ninety days with the vault toolkit", "not an exact"),
    ("What appears twice?", "secret", "occurs"),
    ("How often?", "ninety days", "chars"),
    ("How is it done?", "## Rotating credentials\n\nOperators replace", "heading line"),
    ("When does rotating credentials happen?", "every ninety days with the vault tool",
     "repeats the section heading"),
    ("   ", "every ninety days with the vault tool", "empty"),
])
def test_each_check(corpus, question, answer, problem):
    found = question_problems(question, answer, doc(corpus))
    if problem is None:
        assert found == []
    else:
        assert any(problem in p for p in found), found


def write(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def test_check_command_prints_a_line_per_problem_and_exits_2(corpus, tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    write(questions,
          {"id": "a", "query": "How often is the signing key changed?", "sources": ["guide.md"],
           "answer": "every ninety days with the vault tool"},
          {"id": "b", "query": "What appears twice?", "sources": ["guide.md"],
           "answer": "secret"},
          {"id": "c", "query": "Where are visits logged?", "sources": ["nowhere.md"],
           "answer": "in the maintenance register"},
          {"id": "d", "query": "When does rotating credentials happen?",
           "sources": ["guide.md"], "answer": "every ninety days with the vault tool"})
    code = main(["queries", "check", str(questions), "--corpus", corpus.root])
    lines = capsys.readouterr().out.splitlines()
    assert code == 2
    assert [line.split(": ")[1] for line in lines] == ["line 2 (b)", "line 2 (b)", "line 3 (c)",
                                                        "line 4 (d)"]
    assert "occurs 3 times" in lines[0] and "6 chars" in lines[1]
    assert "not a document of the corpus" in lines[2] and "repeats" in lines[3]


@pytest.mark.parametrize("name,said", [
    ("missing.jsonl", "chunkproof: error: cannot read query file '{path}': no such file"),
    ("folder",
     "chunkproof: error: cannot read query file '{path}': it is a folder; name a file")])
def test_a_query_file_that_cannot_be_read_is_one_line_naming_it(corpus, tmp_path, capsys,
                                                                  name, said):
    path = tmp_path / name
    if name == "folder":
        path.mkdir()
    assert main(["queries", "check", str(path), "--corpus", corpus.root]) == 2
    out, err = capsys.readouterr()
    assert err.strip() == said.format(path=path) and "line 0" not in out + err


def test_a_file_without_queries_is_said_without_a_line_number(corpus, tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert main(["queries", "check", str(empty), "--corpus", corpus.root]) == 2
    assert capsys.readouterr().out.strip() == f"{empty}: the file holds no queries"


def test_check_command_passes_a_clean_file(corpus, tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    write(questions, {"id": "a", "query": "Where are visits logged?", "sources": ["notes.md"],
                      "answer": "in the maintenance register within one working day"})
    assert main(["queries", "check", str(questions), "--corpus", corpus.root]) == 0
    assert "every question passes" in capsys.readouterr().out


def test_sections_are_labelled_by_what_most_of_them_is(corpus):
    kinds = {s.heading: s.kind for s in document_sections(doc(corpus))}
    assert kinds == {"Rotating credentials": "prose", "Installing": "prose", "Limits": "list"}
    # every kind gets one before a larger remainder gets a second
    assert planned_counts({"prose": 0.8, "code": 0.15, "table": 0.05}, 10) == {
        "prose": 8, "code": 1, "table": 1}


def test_the_book_appends_checked_questions_and_resumes(corpus, tmp_path):
    path = tmp_path / "written.jsonl"
    book = QuestionBook(path, corpus, target=3)
    first = book.next_section()
    assert first is not None
    assert str(book.progress()).startswith("0 of 3 questions")
    with pytest.raises(QueryValidationError, match="occurs 3 times"):
        book.add("What appears twice?", "secret", _section(book, "guide.md"))
    assert not path.exists()  # nothing written for a refused question
    added = book.add("Where are gateway visits logged?", "in the maintenance register",
                     _section(book, "notes.md"))
    assert added.id == "q-0001" and added.kind == "prose" and added.sources == ("notes.md",)
    book.add("How many readings can wait before uploads stop?",
             "forty thousand before uploads pause", _section(book, "guide.md"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["id"] for r in lines] == ["q-0001", "q-0002"]
    assert lines[1]["answer"] == "forty thousand before uploads pause"
    again = QuestionBook(path, corpus, target=3)  # a new session reads the file back
    progress = again.progress()
    assert (progress.done, progress.documents) == (2, 2)
    assert "2 of 3 questions" in str(progress) and "list 1" in str(progress)
    with pytest.raises(QueryValidationError, match="already holds"):
        again.add("Where are gateway visits logged?", "in the maintenance register",
                  _section(again, "notes.md"))
    assert main(["queries", "check", str(path), "--corpus", corpus.root]) == 0


def test_sections_are_drawn_from_documents_not_yet_asked_about(corpus, tmp_path):
    book = QuestionBook(tmp_path / "w.jsonl", corpus, target=4)
    book.add("Where are gateway visits logged?", "in the maintenance register",
             _section(book, "notes.md"))
    for seed in range(5):
        book.seed = seed
        assert book.next_section().doc_id == "guide.md"
    skipped = frozenset((s.doc_id, s.start) for s in book.sections if s.doc_id == "guide.md")
    assert book.next_section(skipped).doc_id == "notes.md"  # nothing else left


def _section(book, doc_id):
    return next(s for s in book.sections if s.doc_id == doc_id)
