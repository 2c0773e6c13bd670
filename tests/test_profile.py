"""Corpus profile tables on the small fixture corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest

from chunkproof import load_corpus, make_document
from chunkproof.chunking import sizes
from chunkproof.chunking.section_lengths import length_stats, sections_table
from chunkproof.evaluation.queries.queries import load_queries
from chunkproof.notebooks import corpus_profile as pr
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(MINI)


@pytest.fixture(scope="module")
def sections(corpus):
    return sections_table(corpus)


def test_documents_table_has_one_row_per_document(corpus):
    table = pr.documents_table(corpus).set_index("doc_id")
    assert sorted(table.index) == ["api.md", "faq.md", "flat.md", "guide.md", "release.txt"]
    guide = table.loc["guide.md"]
    assert (guide["fences"], guide["tables"], guide["headings"]) == (1, 1, 5)
    assert guide["front_matter_keys"] == "owner, title"
    assert table.loc["flat.md", "structure_source"] == "none"
    assert table.loc["release.txt", "structure_source"] == "inferred"


def test_skipped_files_are_reported_with_the_reason(corpus):
    skipped = pr.skipped_table(corpus)
    assert skipped["path"].tolist() == ["broken.md"]
    assert "UTF-8" in skipped["reason"].iloc[0]


def test_the_load_s_warnings_are_a_table_of_the_declared_columns(corpus):
    from chunkproof.evaluation.run import tables

    warned = pr.warnings_table(corpus)
    assert list(warned.columns) == tables.DOCUMENT_WARNINGS.names
    assert set(zip(warned["doc_id"], warned["kind"], strict=True)) == {
        ("flat.md", "no_headings"), ("release.txt", "inferred_headings"),
        ("broken.md", "not_loaded")}
    assert pr.profile_numbers(corpus, sections_table(corpus))["warnings"] == {
        "no_headings": 1, "inferred_headings": 1, "not_loaded": 1}


def test_provenance_mix_counts_every_heading(corpus):
    mix = pr.provenance_mix(corpus)
    assert mix["headings"].sum() == pr.documents_table(corpus)["headings"].sum()
    assert mix["share"].sum() == pytest.approx(1.0)
    assert set(mix.loc[~mix["explicit"], "provenance"]) == {"inferred_caps", "inferred_numbered"}
    assert pr.structure_mix(corpus).set_index("structure_source")["documents"].to_dict() == {
        "explicit": 3, "inferred": 1, "none": 1}


def test_heading_depths(corpus):
    depths = pr.heading_depths(corpus)
    atx = depths[depths["provenance"] == "markdown_atx"].set_index("level")["headings"]
    assert atx.to_dict() == {1: 3, 2: 7, 3: 5}


def test_a_section_runs_from_its_heading_to_the_next_heading():
    text = "intro line\n\n# A\n\nbody a\n\n## B\n\nbody b\n"
    table = sections_table([make_document("d.md", text)])
    assert table["path"].tolist() == ["", "A", "A > B"]
    assert table["level"].tolist() == [0, 1, 2]
    assert table["chars"].tolist() == [len("intro line"), len("# A\n\nbody a"),
                                       len("## B\n\nbody b")]


def test_front_matter_is_not_a_section(corpus, sections):
    guide = sections[sections["doc_id"] == "guide.md"]
    assert guide["level"].tolist() == [1, 2, 3, 2, 2]
    assert guide["start"].min() == corpus.get("guide.md").text.index("# Lantern guide")


def test_length_stats_read_the_median_and_p97(sections):
    stats = length_stats(sections, window=30).set_index("unit")
    tokens = sections["tokens"].to_numpy(dtype=float)
    assert stats.loc["tokens", "median"] == pytest.approx(np.median(tokens))
    assert stats.loc["tokens", "p97"] == pytest.approx(np.percentile(tokens, 97))
    assert stats.loc["tokens", "over_window"] == int((tokens > 30).sum())
    assert stats.loc["chars", "max"] == sections["chars"].max()


def test_tokens_fall_back_to_a_labelled_estimate(monkeypatch):
    monkeypatch.setattr(sizes, "tokens_available", lambda: False)
    counts, method = sizes.token_counts(["one two three", "four"])
    assert method == "estimate"
    assert counts == [pytest.approx(3 * 1.3), pytest.approx(1.3)]


def test_block_totals_and_query_mix(corpus):
    blocks = pr.block_totals(corpus).set_index("kind")
    assert blocks.loc["fence", "blocks"] == 2 and blocks.loc["table", "blocks"] == 1
    mix = pr.query_mix(load_queries(MINI / "queries.jsonl", corpus), corpus).set_index("kind")
    assert mix["queries"].sum() == 8
    assert mix.loc["prose", "queries"] == 3 and mix["unknown_source"].sum() == 0


def test_key_numbers_and_export(corpus, sections, tmp_path):
    numbers = pr.profile_numbers(corpus, sections)
    assert numbers["documents"] == 5 and numbers["skipped"] == 1
    assert numbers["fences"] == 2 and numbers["tables"] == 1
    assert numbers["sections"] == len(sections)
    assert numbers["fingerprint"] == corpus.fingerprint
    written = pr.export_profile(tmp_path, corpus, sections)
    assert [p.name for p in written] == ["documents.csv", "sections.csv", "dialects.csv",
                                         "corpus_profile.json"]
    assert json.loads(written[3].read_text()) == numbers


def test_dialect_constructs_and_unknown_markup_with_examples():
    from chunkproof import load_corpus
    from conftest import FIXTURES

    corpus = load_corpus(FIXTURES / "realworld")
    table = pr.dialects_table(corpus).set_index(["dialect", "construct"])
    assert table.loc[("mkdocs", "tab"), "count"] == 8
    assert table.loc[("mdx", "TabItem"), "count"] == 5
    assert table.loc[("github", "alert"), "count"] == 5
    assert table.loc[("myst", "target"), "count"] == 2
    assert table.loc[("mdx", "ThemedImage (kept whole)"), "count"] == 1
    unknown = table[~table["known"].astype(bool)]
    assert set(unknown.index) == {("unknown", "template shortcode"), ("unknown", "template tag"),
                                  ("myst", "unknown-directive")}
    shortcode = unknown.loc[("unknown", "template shortcode")]
    assert (shortcode["example_doc"], shortcode["example"]) == (
        "myst_guide.md", '{{< youtube id="abc123" >}}')
    assert corpus.get("myst_guide.md").text.splitlines()[shortcode["example_line"] - 1] \
        == shortcode["example"]
    numbers = pr.profile_numbers(corpus, sections_table(corpus))
    assert numbers["not_understood"] == 3
    assert numbers["dialect_constructs"]["mdx"] == int(
        table.xs("mdx", level="dialect")["count"].sum())
