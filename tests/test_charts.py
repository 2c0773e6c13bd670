"""Charts render to SVG with no network, and the offline renderer's output is valid."""

from __future__ import annotations

import math

import altair as alt
import nbformat
import pandas as pd
import pytest

from chunkproof import load_corpus
from chunkproof.chunking.section_lengths import sections_table
from chunkproof.evaluation.run import grid
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep
from chunkproof.notebooks import corpus_profile as pr
from chunkproof.viz import charts
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"


@pytest.fixture(scope="module")
def result():
    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("rct", "ast_breadcrumb"), sizes=(200, 400))
    return run_sweep(params, progress=False)


@pytest.fixture(scope="module")
def sections():
    return sections_table(load_corpus(MINI))


CHARTS = {
    "metric_vs_size": lambda r, s: charts.metric_vs_size(r.summary, ["answer_hit@5", "recall@5"]),
    "by_query_kind": lambda r, s: charts.by_query_kind(r.summary, "answer_hit@5"),
    "per_source": lambda r, s: charts.per_source(r.summary, "answer_hit@5"),
    "significance_matrix": lambda r, s: charts.significance_matrix(
        r.significance, "answer_hit@5", r.chunk_stats),
    "size_distribution": lambda r, s: charts.size_distribution(r.chunks),
    "size_distribution_tokens": lambda r, s: charts.size_distribution(r.chunks, unit="tokens"),
    "metric_vs_realised_size": lambda r, s: charts.metric_vs_size(
        r.summary, ["answer_hit@5"], x="tokens_p50"),
    "matched_size": lambda r, s: charts.matched_size(
        grid.matched_sizes(r.summary, "answer_hit@5", reference="rct")),
    "heading_depths": lambda r, s: charts.heading_depths(
        pr.heading_depths(load_corpus(MINI))),
    "section_lengths": lambda r, s: charts.section_lengths(s),
}


@pytest.mark.parametrize("name", CHARTS)
def test_every_chart_renders_to_svg_offline(result, sections, name):
    svg = charts.to_svg(CHARTS[name](result, sections))
    assert svg.lstrip().startswith("<svg") and "</svg>" in svg


def test_svg_conversion_never_fetches(result):
    remote = alt.Chart("https://example.invalid/data.csv").mark_point().encode(x="a:Q")
    with pytest.raises(ValueError):
        charts.to_svg(remote)


def test_the_offline_bundle_is_interactive_and_static_and_valid(result):
    spec = CHARTS["metric_vs_size"](result, None).to_dict()
    bundle, _ = charts.offline_bundle(spec)
    assert set(bundle) == {charts.LAB_MIME, charts.SVG, "text/plain"}
    assert bundle[charts.LAB_MIME]["$schema"].endswith("/v5.json")
    assert "<svg" in bundle[charts.SVG]
    assert not any(key.startswith("text/html") for key in bundle)  # no CDN-loading HTML
    output = nbformat.v4.new_output("display_data", data=bundle)
    nbformat.validate(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("chart", outputs=[output])]))


def test_enabling_the_renderer_makes_charts_display_through_it(result):
    before = alt.renderers.active
    try:
        charts.enable_offline_renderer()
        assert alt.renderers.active == charts.RENDERER
        bundle = CHARTS["heading_depths"](result, None)._repr_mimebundle_()
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        assert charts.SVG in data and charts.LAB_MIME in data
    finally:
        alt.renderers.enable(before)


def test_results_table_shows_mean_and_interval(result):
    table = charts.results_table(result.summary, ["answer_hit@5", "recall@5"])
    blend = result.summary[(result.summary["split"] == "all")
                           & (result.summary["metric"] == "answer_hit@5")]
    assert len(table) == len(blend)
    best = blend.sort_values("mean", ascending=False).iloc[0]
    # 8 queries: fewer than MIN_INTERVAL_N, so the mean and n are shown, no interval
    assert table["answer_hit@5"].iloc[0] == f"{best['mean']:.3f} (n={best['n']}, no interval)"
    assert list(table.columns[:5]) == ["config", "requested size", "tokens_p50", "tokens_p95",
                                       "retriever"]
    assert table.iloc[0]["tokens_p50"] == best["tokens_p50"]


def test_labels_carry_the_realised_size_and_matched_sizes_pick_the_closest(result):
    stats = result.chunk_stats
    labels = charts.config_label(stats)
    for label, (_, row) in zip(labels, stats.iterrows(), strict=True):
        assert label.endswith(f"(p50 {row['tokens_p50']:.0f} · p95 {row['tokens_p95']:.0f} tok)")
    matched = grid.matched_sizes(result.summary, "answer_hit@5", reference="rct")
    assert set(matched["match"].str.split(" ").str[0]) == {"rct/200", "rct/400"}
    for _, row in matched[matched.strategy == "ast_breadcrumb"].iterrows():
        target = stats[(stats.strategy == "rct") & (stats["size"] == int(
            row["match"].split("/")[1].split(" ")[0]))]["tokens_p50"].item()
        others = stats[stats.strategy == "ast_breadcrumb"]["tokens_p50"]
        closest = min(others, key=lambda p: abs(math.log(p / target)))
        assert row["tokens_p50"] == closest


def test_significant_pairs_lists_only_holm_verdicts(result):
    pairs = charts.significant_pairs(result.significance, "answer_hit@5", result.chunk_stats)
    rows = result.significance[(result.significance["metric"] == "answer_hit@5")
                               & (result.significance["verdict"] != charts.NO_DIFFERENCE)]
    assert len(pairs) == len(rows)


def test_config_labels_carry_options():
    frame = pd.DataFrame({"strategy": ["rct", "rct"], "size": [300, 300],
                          "options": ["{}", '{"min_size": 50}']})
    assert charts.config_label(frame).tolist() == ["rct/300", "rct/300 min_size=50"]


def test_chunk_stats_table_is_ordered_by_config(result):
    table = charts.chunk_stats_table(result.chunk_stats)
    assert table["config"].tolist() == ["ast_breadcrumb/200", "ast_breadcrumb/400", "rct/200",
                                        "rct/400"]


def test_an_interval_is_shown_from_the_stated_minimum_n():
    from chunkproof.evaluation.run.defaults import MIN_INTERVAL_N

    rows = pd.DataFrame({"mean": [0.5, 1.0], "ci_low": [0.3, math.nan],
                         "ci_high": [0.7, math.nan], "n": [MIN_INTERVAL_N, 1]})
    assert charts.interval_text(rows).tolist() == ["0.500 [0.300, 0.700]",
                                                   "1.000 (n=1, no interval)"]


def _two_retrievers(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([frame, frame.assign(retriever="dense")], ignore_index=True)


@pytest.mark.parametrize("draw", [
    lambda r: charts.by_query_kind(_two_retrievers(r.summary), "answer_hit@5"),
    lambda r: charts.per_source(_two_retrievers(r.summary), "answer_hit@5"),
    lambda r: charts.significance_matrix(_two_retrievers(r.significance), "answer_hit@5",
                                         r.chunk_stats),
])
def test_each_retriever_gets_its_own_panel(result, draw):
    chart = draw(result)
    spec = chart.to_dict()
    facet = spec.get("facet", {})
    fields = {part.get("field") for part in facet.values()} if "field" not in facet else {
        facet["field"]}
    assert "retriever" in fields
    assert charts.to_svg(chart).lstrip().startswith("<svg")


def test_a_sweep_with_no_pair_of_configs_draws_a_note_not_an_error():
    """One config swept (or every other one making the same chunks) left no pair to test:
    notebook 03's matrix and 06's win/loss chart failed the notebook instead of saying so."""
    from chunkproof.evaluation.run import tables
    from chunkproof.viz import charts as chart_module
    from chunkproof.viz import choice_charts

    significance = pd.DataFrame(columns=tables.SIGNIFICANCE.names)
    labels = pd.DataFrame({"config_id": ["a", "b"], "strategy": ["rct", "ast_merge"],
                           "size": [200, 200], "unit": ["chars"] * 2, "options": ["{}"] * 2})
    note = chart_module.significance_matrix(significance, "hit@5", labels)
    assert "no pair of configs" in str(note.to_dict())
    note = choice_charts.win_loss(pd.DataFrame(columns=["comparison", "query_id", "query_kind",
                                                        "difference"]))
    assert "no other config" in str(note.to_dict())
