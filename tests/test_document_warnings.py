"""What the corpus load did other than read a file as marked up: one channel of (kind,
message, line) records per document, and per file it skipped, written to the run."""

from __future__ import annotations

import pandas as pd

from chunkproof import make_document
from chunkproof.document import corpus as corpus_module
from chunkproof.document.corpus import load_corpus
from chunkproof.document.doc_warnings import (
    FRONT_MATTER,
    INFERRED_HEADINGS,
    NESTING_LIMIT,
    NO_HEADINGS,
    PARSE_TIME_LIMIT,
    SIZE_LIMIT,
    UNSUPPORTED_FORMAT,
)
from chunkproof.evaluation.run import tables
from conftest import FIXTURES, fixture_doc


def kinds(doc) -> list[str]:
    return [w.kind for w in doc.warnings]


def test_a_document_without_headings_says_it_gets_line_anchors():
    doc = make_document("flat.md", "Just a paragraph.\n\nAnd another one.\n")
    [warning] = doc.warnings
    assert warning.kind == NO_HEADINGS
    assert warning.message == "no headings detected: using line anchors"
    assert warning.line == 0


def test_a_marked_up_document_has_no_warning():
    assert make_document("ok.md", "---\ntitle: T\n---\n# T\n\nText.\n").warnings == ()


def test_inferred_headings_are_reported_with_the_first_one_s_line():
    text = "# Guide\n\nIntro.\n\n**Access requests**\n\nAsk the owner.\n\n**Revoking**\n\nAsk.\n"
    doc = make_document("g.md", text, infer_headings=True)
    [warning] = doc.warnings
    assert warning.kind == INFERRED_HEADINGS and warning.line == 5
    assert "2 headings inferred" in warning.message and "inferred_bold_line" in warning.message
    assert make_document("g.md", text).warnings == ()  # not inferred: nothing to say


def test_plain_text_headings_are_inferred_too():
    doc = fixture_doc("mini_corpus/release.txt")
    assert kinds(doc) == [INFERRED_HEADINGS]
    assert doc.warnings[0].line == 1


def test_the_nesting_limit_is_reported_at_its_line():
    doc = fixture_doc("deep_list.md")
    [warning] = doc.warnings
    assert warning.kind == NESTING_LIMIT and (warning.line,) == doc.nesting_limit
    assert "parsed on its own" in warning.message


def test_front_matter_that_does_not_parse_is_reported_at_its_line():
    doc = make_document("fm.md", "---\ntitle: Ok\ntags: [open\n---\n# Page\n\nText.\n")
    assert doc.front_matter == {}
    [warning] = doc.warnings
    assert warning.kind == FRONT_MATTER and warning.line in (3, 4)
    assert "not valid YAML" in warning.message
    listed = make_document("fm.md", "---\n- a\n- b\n---\n# Page\n\nText.\n")
    assert kinds(listed) == [FRONT_MATTER] and "not a mapping" in listed.warnings[0].message


def test_the_corpus_lists_every_document_s_warnings_and_every_skipped_file(tmp_path):
    (tmp_path / "flat.md").write_text("No heading here.\n", encoding="utf-8")
    (tmp_path / "big.md").write_text("# Big\n\n" + "word " * 400 + "\n", encoding="utf-8")
    (tmp_path / "ok.md").write_text("# Ok\n\nFine.\n", encoding="utf-8")
    (tmp_path / "page.rst").write_text("Title\n=====\n", encoding="utf-8")
    corpus = load_corpus(tmp_path, max_bytes=1000)
    rows = corpus.warning_rows()
    assert {(r["doc_id"], r["kind"]) for r in rows} == {
        ("big.md", SIZE_LIMIT), ("flat.md", NO_HEADINGS), ("page.rst", UNSUPPORTED_FORMAT)}
    big = next(r for r in rows if r["doc_id"] == "big.md")
    assert big["line"] == 0 and "limit" in big["message"]
    frame = tables.DOCUMENT_WARNINGS.frame(rows)
    assert tables.DOCUMENT_WARNINGS.problems(frame) == []


def test_a_file_over_the_parse_time_limit_is_a_warning(tmp_path, monkeypatch):
    (tmp_path / "slow.md").write_text("# Slow\n\nText.\n", encoding="utf-8")

    def stuck(doc_id, text, **kwargs):
        from chunkproof.errors import ParseTimeLimitError
        raise ParseTimeLimitError("took more than the 1 CPU-s limit to parse")

    monkeypatch.setattr(corpus_module, "make_document", stuck)
    [row] = load_corpus(tmp_path).warning_rows()
    assert row["kind"] == PARSE_TIME_LIMIT and row["doc_id"] == "slow.md"


def test_the_table_is_written_and_read_back_through_its_schema(tmp_path):
    corpus = load_corpus(FIXTURES / "mini_corpus")
    frame = tables.DOCUMENT_WARNINGS.frame(corpus.warning_rows())
    tables.DOCUMENT_WARNINGS.write(tmp_path, frame)
    back = tables.DOCUMENT_WARNINGS.read(tmp_path)
    assert tables.DOCUMENT_WARNINGS.problems(back) == []
    assert set(back["kind"]) >= {NO_HEADINGS, INFERRED_HEADINGS}
    pd.testing.assert_frame_equal(back, frame.astype(back.dtypes.to_dict()), check_dtype=False)


def test_a_document_s_dict_holds_its_warnings_as_plain_values():
    import json

    doc = make_document("flat.md", "Just a paragraph.\n")
    record = json.loads(json.dumps(doc.as_dict()))
    assert record["warnings"] == [{"kind": NO_HEADINGS, "line": 0,
                                   "message": "no headings detected: using line anchors"}]
