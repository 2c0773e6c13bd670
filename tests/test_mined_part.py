"""Mined queries kept in a run folder's parts/ are read back as they were mined, for the same
corpus only, and a file that fails a check is not used (the queries are mined again)."""

from __future__ import annotations

import json

import pytest

from chunkproof.document.corpus import load_corpus
from chunkproof.evaluation.queries import mined_part
from chunkproof.evaluation.queries.mined_part import (
    load_mined,
    mined_key,
    mined_once,
    mined_path,
    save_mined,
)
from chunkproof.evaluation.queries.mining import mine_all

PAGE = "# Install\n\nRun the installer with the defaults.\n\n## Upgrade\n\nUpgrade in place.\n"
BOLD = "**Troubleshooting**\n\nRestart the service when it hangs after an upgrade.\n"


@pytest.fixture
def corpus(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "install.md").write_text(PAGE, encoding="utf-8")
    return folder


def test_kept_queries_are_read_back_equal_to_the_mined(sample_corpus, tmp_path):
    mined = mine_all(sample_corpus)
    save_mined(tmp_path, sample_corpus, mined)
    assert load_mined(tmp_path, sample_corpus) == mined
    assert load_mined(tmp_path, sample_corpus, max_sources=3) is None  # another key


def test_mined_once_reads_the_part_instead_of_mining(sample_corpus, tmp_path, monkeypatch):
    save_mined(tmp_path, sample_corpus, mine_all(sample_corpus))
    monkeypatch.setattr(mined_part, "mine_all", lambda *a, **k: pytest.fail("mined again"))
    assert mined_once(tmp_path, sample_corpus).queries


def test_a_corpus_read_with_headings_inferred_shares_the_key_only_when_none_was(corpus):
    plain = load_corpus(corpus)
    assert mined_key(load_corpus(corpus, infer_headings=True)) == mined_key(plain)
    (corpus / "faq.md").write_text(BOLD, encoding="utf-8")
    assert mined_key(load_corpus(corpus, infer_headings=True)) != mined_key(load_corpus(corpus))


def test_an_edited_corpus_does_not_read_the_queries_of_the_old_one(corpus, tmp_path):
    before = load_corpus(corpus)
    save_mined(tmp_path / "parts", before, mine_all(before))
    (corpus / "install.md").write_text(PAGE + "\n## Remove\n\nRemove the package.\n",
                                       encoding="utf-8")
    after = load_corpus(corpus)
    assert load_mined(tmp_path / "parts", after) is None
    save_mined(tmp_path / "parts", after, mine_all(after))  # the old part is replaced
    assert [p.name for p in (tmp_path / "parts").iterdir()] == [mined_path("", after).name]


@pytest.mark.parametrize("damage", [
    lambda data: {**data, "queries": "none"},
    lambda data: {**data, "key": "0" * 12},
    lambda data: {**data, "extra": 1},
    lambda data: {**data, "queries": [{**data["queries"][0], "sources": ["elsewhere.md"]}]},
    lambda data: {**data, "queries": [{**data["queries"][0], "gold_spans": [
        {"doc": "install.md", "start": "0", "end": 5, "scope": "section"}]}]},
])
def test_a_damaged_part_is_not_used(corpus, tmp_path, damage):
    docs = load_corpus(corpus)
    path = save_mined(tmp_path, docs, mine_all(docs))
    path.write_text(json.dumps(damage(json.loads(path.read_text(encoding="utf-8")))),
                    encoding="utf-8")
    assert load_mined(tmp_path, docs) is None
    assert mined_once(tmp_path, docs) == mine_all(docs)


def test_a_part_that_is_no_json_is_not_used(corpus, tmp_path):
    docs = load_corpus(corpus)
    save_mined(tmp_path, docs, mine_all(docs)).write_bytes(b"\x00not json")
    assert load_mined(tmp_path, docs) is None
