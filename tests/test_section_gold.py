"""Section-level gold: the on-topic share of a bundle (section_efficiency) beside the file-level
share (bundle_efficiency), and the token-level span metrics against the gold sections."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from chunkproof.chunking.build import chunk_document
from chunkproof.chunking.config import make_config
from chunkproof.chunking.sizes import token_starts, tokens_between
from chunkproof.errors import MetricError
from chunkproof.evaluation.queries.mining import mine
from chunkproof.evaluation.queries.queries import GoldSpan, Query
from chunkproof.evaluation.run.sweep import SweepParams, headline, run_sweep
from chunkproof.evaluation.scoring.metrics import score_run
from chunkproof.evaluation.scoring.spans import section_efficiency
from test_metrics import make_chunk


@pytest.fixture(scope="module")
def doc(tokens_doc):
    return tokens_doc


@pytest.fixture(scope="module")
def query(doc):
    return next(q for q in mine([doc]).queries if q.query == "Rotating service tokens")


def _values(doc, query, strategy):
    chunks = chunk_document(doc, make_config(strategy=strategy, size=200))
    top = [chunks[1], chunks[3]]  # the section's first part, then another section
    rows = score_run([[(c.id, 1.0) for c in top]], [query], chunks, docs=[doc], ks=(2,))
    return {r["metric"]: r["value"] for r in rows}, top


def test_file_level_density_is_one_while_section_density_counts_the_gold_section(doc, query):
    [gold] = query.gold_spans
    assert (gold.start, gold.end) == (96, 341)
    merged, top = _values(doc, query, "ast_merge")
    assert merged["bundle_efficiency@2"] == 1.0  # both chunks are from the gold file
    assert merged["section_efficiency@2"] == pytest.approx(
        (252 - 96) / ((252 - 96) + (456 - 343)))
    crumb, top = _values(doc, query, "ast_breadcrumb")
    assert crumb["bundle_efficiency@2"] == 1.0
    assert crumb["section_efficiency@2"] == pytest.approx(
        (252 - 96) / sum(len(c.context_text) for c in top))  # the prefix line is off-topic
    assert crumb["section_efficiency@2"] < merged["section_efficiency@2"]


def test_section_span_metrics_count_tokens_of_the_gold_section(doc, query):
    values, _top = _values(doc, query, "ast_merge")
    grid = token_starts(doc.text)
    gold, first, other = (tokens_between(grid, a, b) for a, b in
                          ((96, 341), (96, 252), (343, 456)))
    assert values["section_recall@2"] == pytest.approx(first / gold)
    assert values["section_precision@2"] == pytest.approx(first / (first + other))
    assert values["section_iou@2"] == pytest.approx(first / (gold + other))
    assert values["section_precision_omega"] == 1.0  # the two parts tile the section exactly
    assert "span_recall@2" not in values  # answer-span metrics only for answer spans


def test_section_efficiency_by_hand():
    def chunk(doc_id, start, end, context):  # what section_efficiency reads of a chunk
        return make_chunk(doc_id, start, end, "x" * (end - start), context=context)

    bundle = [chunk("a.md", 0, 10, "A > B\n\n"), chunk("a.md", 5, 25, ""),
              chunk("b.md", 0, 10, "")]
    assert section_efficiency(bundle, [("a.md", 0, 20)]) == pytest.approx(
        (10 + 15) / (17 + 20 + 10))
    assert section_efficiency([], [("a.md", 0, 20)]) != section_efficiency([], [])  # both NaN


def test_gold_spans_need_their_documents(doc):
    query = Query("q", "x", (doc.id,), gold_spans=(GoldSpan("elsewhere.md", 0, 5),))
    chunks = chunk_document(doc, make_config(strategy="ast_merge", size=200))
    with pytest.raises(MetricError, match="gold span document"):
        score_run([[]], [query], chunks, docs=[doc])


def test_mined_runs_test_section_density_pairwise(tmp_path):
    params = SweepParams(corpus=str(Path(__file__).parent / "fixtures" / "mining"),
                         sizes=(200,), min_split=10, strategies=("rct", "ast_breadcrumb"),
                         contrasts=("ast_breadcrumb:rct",))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run_sweep(params, tmp_path / "run", progress=False)
    metric = "section_efficiency@5"
    tested = result.significance[result.significance["metric"] == metric]
    assert set(tested["family"]) == {"planned", "exploratory"}
    [planned] = tested[(tested.family == "planned") & (tested.query_group == "all")].itertuples()
    rows = result.per_query[result.per_query["metric"] == metric]
    means = rows.groupby("config_id")["value"].mean()
    assert planned.mean_a == pytest.approx(means[planned.config_a])
    assert planned.mean_b == pytest.approx(means[planned.config_b])
    assert metric in headline(result).columns
