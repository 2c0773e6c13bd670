"""Every splitter on one page, scored on the four axes by measurement."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from chunkproof import ConfigError, load_corpus, make_config, make_document
from chunkproof.chunking.build import chunk_document
from chunkproof.chunking.registry import available_names
from chunkproof.evaluation.queries.queries import load_queries
from chunkproof.evaluation.scoring.invariants import split_blocks
from chunkproof.notebooks import splitter_panorama as pa
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"
FENCED = """# Page

Intro paragraph that sets the scene for the code below it.

```python
first_value = compute_the_first_value()

second_value = compute_the_second_value()

third_value = first_value + second_value
```

## Next

A closing paragraph after the fence.
"""


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(MINI)


@pytest.fixture(scope="module")
def table(corpus):
    doc = corpus.get("guide.md")
    return pa.panorama(doc, 200, queries=load_queries(MINI / "queries.jsonl", corpus))


def test_every_available_strategy_gets_a_row(table):
    assert table["strategy"].tolist() == available_names()
    for column in ("within_size", "max_over_size", "on_block_boundary", "intact_blocks",
                   "with_breadcrumb", "lost_chars", "heading_only", "answers_whole"):
        assert column in table


def test_the_numbers_are_what_the_chunks_measure(corpus, table):
    doc = corpus.get("guide.md")
    for name in ("rct", "ast_merge", "emsts"):
        chunks = chunk_document(doc, make_config(strategy=name, size=200))
        row = table.set_index("strategy").loc[name]
        assert row["chunks"] == len(chunks)
        assert row["within_size"] == pytest.approx(
            sum(len(c.text) <= 200 for c in chunks) / len(chunks))
        assert row["max_over_size"] == pytest.approx(max(len(c.text) for c in chunks) / 200)
        assert row["with_breadcrumb"] == pytest.approx(
            sum(bool(c.breadcrumb) for c in chunks) / len(chunks))
        assert row["split_blocks"] == split_blocks(doc, chunks)


def test_a_fence_cut_at_blank_lines_is_measured():
    doc = make_document("page.md", FENCED)
    rct = pa.measure_strategy(doc, "rct", 70)  # paragraphs fit, the fence does not
    ours = pa.measure_strategy(doc, "ast_merge", 70)
    assert rct["intact_blocks"] == 0.0 and rct["split_blocks"] == 1
    assert rct["on_block_boundary"] < 1.0
    assert ours["intact_blocks"] == 1.0 and ours["on_block_boundary"] == 1.0
    assert ours["max_over_size"] > 1.0  # the fence is its own oversize chunk


def test_a_page_without_fences_or_a_second_chunk_reads_n_a():
    doc = make_document("flat.md", "Just one paragraph, nothing else.\n")
    row = pa.measure_strategy(doc, "ast_merge", 500)
    assert math.isnan(row["intact_blocks"]) and math.isnan(row["on_block_boundary"])
    assert pa.reading("code_integrity", row) == "n/a"


@pytest.mark.parametrize(("axis", "values", "expected"), [
    ("controls_size", {"within_size": 1.0, "max_over_size": 1.0}, "yes"),
    ("controls_size", {"within_size": 1.0, "max_over_size": 2.0}, "partial"),
    ("controls_size", {"within_size": 0.5, "max_over_size": 2.0}, "no"),
    ("preserves_structure", {"on_block_boundary": 0.7}, "partial"),
    ("code_integrity", {"intact_blocks": 1.0}, "yes"),
    ("code_integrity", {"intact_blocks": 0.9}, "partial"),
    ("code_integrity", {"intact_blocks": 0.5}, "no"),
    ("heading_metadata", {"with_breadcrumb": 0.0}, "no"),
])
def test_readings_follow_the_stated_thresholds(axis, values, expected):
    assert pa.reading(axis, pd.Series(values)) == expected


def test_readings_show_the_number_next_to_the_word(table):
    readings = pa.readings(table).set_index("strategy")
    assert readings.loc["ast_merge", "code_integrity"] == "yes (1.000)"
    assert set(readings.columns) == set(pa.AXES)
    assert len(pa.thresholds_table()) == 5
    assert readings.loc["ast_merge", "label_kept"] == "n/a (n/a)"  # no labelled container


def test_answers_whole_counts_the_page_answers_one_chunk_holds(corpus):
    doc = corpus.get("api.md")
    queries = load_queries(MINI / "queries.jsonl", corpus)
    chunks = chunk_document(doc, make_config(strategy="ast_merge", size=2000))
    assert pa.answers_whole(doc, chunks, queries) == 1.0  # one chunk holds the whole page
    assert math.isnan(pa.answers_whole(doc, chunks, []))


@pytest.mark.parametrize(("doc", "size", "unit", "message"), [
    ("missing.md", 200, "chars", r"^DOC: 'missing.md' is not a document.*api.md"),
    ("api.md", 0, "chars", r"^SIZE: expected an integer >= 1; got 0"),
    ("api.md", "200", "chars", r"^SIZE: expected an integer"),
    ("api.md", 200, "lines", r"^UNIT: expected one of chars, words, tokens"),
])
def test_bad_parameters_name_themselves(doc, size, unit, message, tmp_path):
    with pytest.raises(ConfigError, match=message):
        pa.validate(CORPUS=str(MINI), QUERIES="", DOC=doc, SIZE=size, UNIT=unit,
                    OUT_DIR=str(tmp_path))


def test_an_empty_doc_picks_the_page_with_most_fences_and_tables(tmp_path):
    setup = pa.validate(CORPUS=str(MINI), QUERIES="", DOC="", SIZE=200, UNIT="chars",
                        OUT_DIR=str(tmp_path))
    assert setup.doc.id == "guide.md"


def test_export_writes_the_table_and_json_numbers(corpus, table, tmp_path):
    written = pa.export_panorama(tmp_path, table, doc=corpus.get("guide.md"), size=200)
    numbers = json.loads(written[1].read_text())
    assert numbers["doc"] == "guide.md" and numbers["size"] == 200
    assert numbers["strategies"]["rct"]["chunks"] == int(
        table.set_index("strategy").loc["rct", "chunks"])
    assert pd.read_csv(written[0])["strategy"].tolist() == table["strategy"].tolist()
