"""Parses and BM25 tokenisations kept across runs by content: a page is parsed again only when
its text, chunkproof's code or the parser changed, in this process or another."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from chunkproof.document import corpus as corpus_module
from chunkproof.document.corpus import load_corpus
from chunkproof.evaluation.retrieval import retrieve
from chunkproof.util import content_cache
from chunkproof.util.cache import CACHE_VARIABLE
from conftest import ROOT

PAGES = {"a.md": "# Alpha\n\nThe alpha page.\n\n```python\nx = 1\n```\n",
         "b.md": "# Beta\n\nThe beta page, with a [link][ref].\n\n[ref]: https://example.org\n",
         "c/d.md": "# Delta\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_VARIABLE, str(folder))
    monkeypatch.setenv(content_cache.SWITCH_VARIABLE, "1")
    return folder


@pytest.fixture
def pages(tmp_path):
    root = tmp_path / "docs"
    for name, text in PAGES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture
def parses(monkeypatch):
    """The texts markdown-it parses from now on."""
    seen: list[str] = []
    real = corpus_module.parse_text

    def counted(text, *args):
        seen.append(text)
        return real(text, *args)

    monkeypatch.setattr(corpus_module, "parse_text", counted)
    return seen


def shape(corpus) -> list:
    return [(d.id, d.title, d.blocks, d.atoms, d.references, list(d.lines.starts))
            for d in corpus]


def test_a_second_load_parses_nothing_and_an_edit_parses_one_page(cache, pages, parses):
    first = load_corpus(pages)
    assert len(parses) == 3
    again = load_corpus(pages)
    assert len(parses) == 3 and shape(again) == shape(first)
    (pages / "b.md").write_text(PAGES["b.md"] + "\nOne more line.\n")
    edited = load_corpus(pages)
    assert len(parses) == 4 and parses[-1].endswith("One more line.\n")
    assert edited.get("b.md").lines.text is edited.get("b.md").text
    assert (cache / "parsed.sqlite").is_file()


def test_another_process_reads_the_parses_of_this_one(cache, pages, parses):
    load_corpus(pages)
    code = ("import json\nfrom chunkproof.document import corpus as c\nseen = []\n"
            "real = c.parse_text\n"
            "c.parse_text = lambda text, *a: seen.append(text) or real(text, *a)\n"
            f"c.load_corpus({str(pages)!r})\nprint(json.dumps(len(seen)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=os.environ.copy()).stdout
    assert json.loads(out.strip().splitlines()[-1]) == 0


def test_other_code_or_another_reading_parses_again(cache, pages, parses, monkeypatch):
    load_corpus(pages)
    load_corpus(pages, infer_headings=True)  # headings inferred: another parse
    assert len(parses) == 6
    monkeypatch.setattr(corpus_module, "code_version", lambda: "other code")
    load_corpus(pages)
    assert len(parses) == 9


def test_switched_off_nothing_is_kept(cache, pages, parses, monkeypatch):
    monkeypatch.setenv(content_cache.SWITCH_VARIABLE, "0")
    load_corpus(pages)
    load_corpus(pages)
    assert len(parses) == 6 and not cache.exists()


def test_a_value_that_cannot_be_read_back_is_made_again(cache, pages, parses):
    load_corpus(pages)
    store = corpus_module.PARSES
    with store._lock:
        db = store._connect()
        with db:
            db.execute("UPDATE entries SET value = ?", (b"not a pickle",))
    load_corpus(pages)
    assert len(parses) == 6


def test_a_cache_folder_that_cannot_be_written_is_reported_and_skipped(tmp_path, pages,
                                                                      parses, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv(CACHE_VARIABLE, str(blocked / "cache"))
    monkeypatch.setenv(content_cache.SWITCH_VARIABLE, "1")
    store = content_cache.ContentCache("parsed")
    monkeypatch.setattr(corpus_module, "PARSES", store)
    with pytest.warns(content_cache.CacheWarning, match="cannot be used"):
        corpus = load_corpus(pages)
    assert len(corpus) == 3 and len(parses) == 3 and store.failed


def test_bm25_tokens_are_made_once_per_text(cache, pages, monkeypatch):
    made: list[str] = []
    real = retrieve._tokenize

    def counted(texts):
        made.extend(texts)
        return real(texts)

    monkeypatch.setattr(retrieve, "_tokenize", counted)
    from chunkproof.chunking.build import chunk_document
    from chunkproof.chunking.config import make_config

    docs = list(load_corpus(pages))
    chunks = [c for d in docs for c in chunk_document(d, make_config(strategy="ast_breadcrumb",
                                                                     size=40))]
    queries = ["alpha page", "beta link", "delta table"]
    first = retrieve.BM25Retriever()
    first.index(chunks)
    ranked = first.search(queries, 3)
    assert len(made) == len({c.embed_text for c in chunks}) + len(queries)
    second = retrieve.BM25Retriever()
    second.index(chunks)
    assert second.search(queries, 3) == ranked
    assert len(made) == len({c.embed_text for c in chunks}) + len(queries)  # none again
    monkeypatch.setenv(content_cache.SWITCH_VARIABLE, "0")
    third = retrieve.BM25Retriever()
    third.index(chunks)
    assert third.search(queries, 3) == ranked
