"""Query leakage: a query whose text is the heading a breadcrumb injects leaks into the prefix;
a sentence of the section body does not; a question in other words is in neither."""

from __future__ import annotations

import pandas as pd
import pytest

from chunkproof.chunking.build import chunk_document
from chunkproof.chunking.config import make_config
from chunkproof.evaluation.queries.mining import mine
from chunkproof.evaluation.queries.queries import Query
from chunkproof.evaluation.scoring import leakage
from chunkproof.evaluation.scoring.metrics import score_run


@pytest.fixture(scope="module")
def doc(tokens_doc):
    return tokens_doc


@pytest.fixture(scope="module")
def queries(doc):
    mined = {q.query: q for q in mine([doc]).queries}
    section = mined["Rotating service tokens"]
    body = mined["Create the new token in the console before the old one expires, then deploy it "
                 "to every pipeline that still holds the old value."]
    other = Query("q-other", "how often must a CI secret be replaced", (doc.id,),
                  gold_spans=section.gold_spans)
    return section, body, other


def _chunks(doc, strategy):
    return chunk_document(doc, make_config(strategy=strategy, size=200))


def _by_doc(chunks):
    return {chunks[0].doc_id: chunks}


def _targets(query):
    return [(g.doc, g.start, g.end) for g in query.gold_spans]


def test_a_heading_query_leaks_into_the_breadcrumb_prefix(doc, queries):
    section = queries[0]
    crumb = _chunks(doc, "ast_breadcrumb")
    gold = leakage.gold_chunks(section, _by_doc(crumb), _targets(section))
    assert [c.start for c in gold] == [96, 254]  # the section is cut in two at size 200
    assert "Rotating service tokens" in leakage.prefix_of(gold[1])
    assert "Rotating" not in gold[1].text  # the second part holds the query only in its prefix
    assert leakage.leak_values(section, _by_doc(crumb), _targets(section)) == {
        leakage.PREFIX: 1.0, leakage.BODY: 1.0}
    plain = _chunks(doc, "ast_merge")  # the same spans, nothing injected
    assert all(leakage.prefix_of(c) == "" for c in plain)
    assert leakage.leak_values(section, _by_doc(plain), _targets(section)) == {
        leakage.PREFIX: 0.0, leakage.BODY: 1.0}


def test_a_body_query_does_not_leak_and_another_wording_is_in_neither(doc, queries):
    _section, body, other = queries
    crumb = _chunks(doc, "ast_breadcrumb")
    assert leakage.leak_values(body, _by_doc(crumb), _targets(body)) == {
        leakage.PREFIX: 0.0, leakage.BODY: 1.0}
    assert leakage.leak_values(other, _by_doc(crumb), _targets(other)) == {
        leakage.PREFIX: 0.0, leakage.BODY: 0.0}


def test_whole_words_only():
    assert leakage.words("Rotating service tokens") in leakage.words(
        "Context: Access tokens > Rotating service tokens")
    assert leakage.words("token") not in leakage.words("Access tokens")


def _rows(doc, queries):
    frames = []
    for strategy in ("ast_merge", "ast_breadcrumb"):
        chunks = _chunks(doc, strategy)
        results = [[(c.id, 1.0) for c in chunks]] * len(queries)
        rows = score_run(results, list(queries), chunks, docs=[doc], config_id=strategy)
        frames.append(pd.DataFrame(rows).assign(strategy=strategy, size=200, retriever="bm25"))
    return pd.concat(frames, ignore_index=True)


def test_leak_share_per_config_and_kind_and_the_warning(doc, queries):
    per_query = _rows(doc, queries)
    table = leakage.leak_table(per_query).set_index(["config_id", "query_kind"])
    assert table.loc[("ast_breadcrumb", "section"), "in_prefix"] == 1.0
    assert table.loc[("ast_breadcrumb", "body"), "in_prefix"] == 0.0
    assert table.loc[("ast_breadcrumb", "all"), "in_prefix"] == pytest.approx(1 / 3)
    assert table.loc[("ast_breadcrumb", "all"), "in_neither"] == pytest.approx(1 / 3)
    assert table.loc[("ast_merge", "all"), "in_prefix"] == 0.0
    assert table.loc[("ast_merge", "all"), "n"] == 3
    [warning] = leakage.leak_warnings(per_query)
    assert warning.startswith("query leakage: ast_breadcrumb injects text that holds the query "
                              "for 33% of the queries at size 200 (section 100%)")
    no_leaks = per_query[per_query["query_kind"] != "section"]
    assert leakage.leak_warnings(no_leaks) == []


def test_gold_chunks_reads_table_rows_as_the_kind_figures_hand_them(doc, queries):
    """``kind_figures.term_leaks`` hands over rows of chunks.parquet, not Chunk records."""
    import pandas as pd

    section = queries[0]
    crumb = _chunks(doc, "ast_breadcrumb")
    frame = pd.DataFrame([c.as_dict() for c in crumb])
    rows = list(frame[["doc_id", "start", "end", "text", "embed_text"]].itertuples(index=False))
    found = leakage.gold_chunks(section, {doc.id: rows}, _targets(section))
    assert [r.start for r in found] == [96, 254]
    assert leakage.gold_chunks(section, {doc.id: rows}, None) == rows  # every chunk of the page
