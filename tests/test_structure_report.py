"""Notebook 05's library: checked parameters, per-source heading tables, routed retrieval splits."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from chunkproof import ConfigError, load_corpus
from chunkproof.chunking.section_lengths import length_stats, sections_table
from chunkproof.chunking.strategies.routed import route
from chunkproof.evaluation.queries.queries import Query
from chunkproof.evaluation.scoring.structure import load_gold, score_table, stratified_sample
from chunkproof.notebooks.routed_retrieval import (
    COMPARED,
    chart_frame,
    query_routes,
    retrieval_splits,
    run_retrieval,
    split_chart,
    split_table,
)
from chunkproof.notebooks.structure_signal import (
    DRAFT_FILE,
    ERROR_COLUMNS,
    NOT_SCORED,
    PROVENANCE_COLUMNS,
    SCORE_COLUMNS,
    describe,
    emphasise_pages,
    error_table,
    export,
    gold_note,
    heading_aware_documents,
    heading_errors,
    heading_provenance,
    heading_scores,
    pages_line,
    primary_metric,
    provenance_table,
    sample_table,
    scored,
    scores_line,
    signal_numbers,
    source_table,
    tail_line,
    tail_sections,
    tail_stats,
    validate,
)
from conftest import FIXTURES

STRUCTURE = FIXTURES / "structure"
GOLD = STRUCTURE / "gold.yaml"
QUERIES = FIXTURES / "structure_queries.jsonl"
GOOD = {"CORPUS": str(STRUCTURE), "QUERIES": str(QUERIES), "GOLD": str(GOLD), "QUOTA": 5,
        "SEED": 0, "INFER_HEADINGS": False, "SIZE": 300, "RETRIEVER": "bm25", "OUT_DIR": ""}


@pytest.fixture(scope="module")
def setup():
    return validate(**GOOD)


@pytest.fixture(scope="module")
def result(setup):
    return run_retrieval(setup)


@pytest.fixture(scope="module")
def splits(result):
    return retrieval_splits(result)


# --- parameters ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "value", "message"), [
    ("QUOTA", 0, "QUOTA: expected an integer >= 1; got 0"),
    ("QUOTA", True, "QUOTA: expected an integer >= 1; got True"),
    ("SEED", -1, "SEED: expected an integer >= 0; got -1"),
    ("INFER_HEADINGS", "yes", "INFER_HEADINGS: expected True or False; got 'yes'"),
    ("INFER_HEADINGS", 1, "INFER_HEADINGS: expected True or False; got 1"),
    ("SIZE", 0, "SIZE: expected an integer >= 1; got 0"),
    ("RETRIEVER", "tfidf", "RETRIEVER: expected one of"),
    ("CORPUS", "no/such/folder", "CORPUS: corpus folder 'no/such/folder' does not exist"),
    ("QUERIES", "no/such.jsonl", "QUERIES: cannot read query file 'no/such.jsonl': no such file"),
    ("GOLD", "no/such.yaml", "GOLD: cannot read file 'no/such.yaml': no such file"),
    ("GOLD", str(STRUCTURE / "bad_gold.yaml"), "GOLD: "),
])
def test_a_bad_parameter_is_named(name, value, message):
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        validate(**{**GOOD, name: value})


def test_gold_must_mark_every_sampled_document(tmp_path):
    partial = tmp_path / "gold.yaml"
    partial.write_text("memo.md: []\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^GOLD: no headings marked for 3 sampled document\(s\)"
                                          r" of CORPUS: handbook.md, pump-guide.txt, release.md"):
        validate(**{**GOOD, "GOLD": str(partial)})


def test_parameters_load_what_they_name(setup, tmp_path):
    assert [d.id for d in setup.corpus] == ["handbook.md", "memo.md", "pump-guide.txt",
                                            "release.md"]
    assert len(setup.queries) == 8 and setup.metric == "answer_hit@5"
    assert [d.id for d in setup.sample] == [d.id for d in stratified_sample(setup.corpus, 5)]
    assert setup.sweep.strategies == COMPARED and setup.sweep.sizes == (300,)
    assert setup.out_dir is None and setup.parameters["QUOTA"] == 5
    inferred = validate(**{**GOOD, "INFER_HEADINGS": True, "OUT_DIR": str(tmp_path)})
    assert inferred.corpus.get("handbook.md").structure_source == "mixed"
    assert inferred.sweep.options == {"infer_headings": True}
    assert inferred.out_dir == tmp_path


def test_mined_queries_are_scored_on_hit():
    mined = validate(**{**GOOD, "QUERIES": ""})
    assert mined.queries == [] and mined.sweep.queries == "" and mined.metric == "hit@5"


@pytest.mark.parametrize(("answers", "expected"), [
    (["a", "b"], "answer_hit@5"), (["a", None], "hit@5"), ([], "hit@5")])
def test_primary_metric_needs_an_answer_on_every_query(answers, expected):
    queries = [Query(f"q{i}", "text", ("d.md",), answer) for i, answer in enumerate(answers)]
    assert primary_metric(queries, 5) == expected


# --- 1-2: sample, per-source table, errors ------------------------------------------------


def test_sample_table_counts_each_source(setup):
    small = stratified_sample(setup.corpus, 1, seed=0)
    table = sample_table(setup.corpus, small).set_index("structure_source")
    assert table["in_corpus"].to_dict() == {"explicit": 2, "inferred": 1, "none": 1}
    assert table["sampled"].to_dict() == {"explicit": 1, "inferred": 1, "none": 1}
    assert table.loc["inferred", "documents"] == "pump-guide.txt"


def test_source_table_is_score_table_with_fully_correct_counts(setup):
    table = source_table(setup.sample, setup.gold).set_index("structure_source")
    direct = score_table(setup.sample, setup.gold)
    direct = direct[direct["group"] != "provenance"].set_index("key")
    for column in ("documents", "tp", "fp", "fn", "precision", "recall", "pages_fully_correct"):
        assert table[column].equals(direct[column].astype(table[column].dtype)), column
    # handbook.md has three bold headings an explicit-only parser misses; release.md is right
    assert table.loc["explicit", ["documents", "fully_correct_pages", "tp", "fn"]].tolist() == [
        2, 1, 5, 3]
    assert table.loc["all", "fully_correct_pages"] == 2
    assert table["fn"].dtype == np.int64


def test_pages_line_is_bold_and_read_from_the_table(setup):
    table = source_table(setup.sample, setup.gold)
    line = pages_line(table)
    assert line.startswith("**Pages fully correct on the sample: all 0.500 (2 of 4);")
    assert "explicit 0.500 (1 of 2)" in line and line.endswith(".**")
    empty = table.assign(pages_fully_correct=[None] * len(table))
    assert "all n/a (2 of 4)" in pages_line(empty)


def test_emphasised_column_is_highlighted(setup):
    page = emphasise_pages(source_table(setup.sample, setup.gold)).to_html()
    assert "font-weight: bold" in page and "n/a" in page  # memo.md: nothing to find


def test_provenance_table_counts_cuts_per_detector(setup):
    table = provenance_table(setup.sample, setup.gold).set_index("provenance")
    assert table.loc["inferred_caps", ["tp", "fp"]].tolist() == [0, 1]
    assert table.loc["inferred_numbered", ["tp", "fp"]].tolist() == [5, 1]


def test_error_table_lists_each_wrong_heading_by_line(setup):
    errors = error_table(setup.sample, setup.gold)
    pump = errors[errors["doc_id"] == "pump-guide.txt"]
    assert pump[["error", "line", "text", "provenance"]].values.tolist() == [
        ["missed heading", 1, "Model K-40 Dosing Pump: Service Guide", ""],
        ["false boundary", 8, "HOT SURFACE", "inferred_caps"],
        ["false boundary", 20, "3. Release the pressure", "inferred_numbered"],
    ]
    assert errors[errors["doc_id"] == "handbook.md"]["line"].tolist() == [5, 9, 15]
    clean = [d for d in setup.corpus if d.id in ("release.md", "memo.md")]
    empty = error_table(clean, setup.gold)
    assert empty.empty and list(empty.columns) == ERROR_COLUMNS


# --- 3: retrieval, blended and split ------------------------------------------------------


def test_splits_keep_the_sweep_summary_rows(result, splits):
    summary = result.summary
    key = ["strategy", "metric", "split", "split_value"]
    kept = summary[summary["split"].isin(["all", "structure_source"])]
    merged = kept.merge(splits, on=key, suffixes=("", "_ours"))
    assert len(merged) == len(kept)
    assert np.allclose(merged["mean"], merged["mean_ours"], equal_nan=True)
    assert (merged["n"] == merged["n_ours"]).all()


def test_route_of_the_routed_config_is_its_applied_strategy(result, splits):
    routed = splits[(splits["strategy"] == "structure_routed") & (splits["split"] == "route")]
    applied = result.summary[(result.summary["strategy"] == "structure_routed")
                             & (result.summary["split"] == "applied_strategy")]
    merged = routed.merge(applied, on=["metric", "split_value"], suffixes=("", "_sweep"))
    assert len(merged) == len(routed) == len(applied)
    for column in ("mean", "ci_low", "ci_high"):
        assert np.allclose(merged[column], merged[f"{column}_sweep"], equal_nan=True)


def test_baselines_are_scored_on_the_routed_halves(setup, result, splits):
    routes = query_routes(result.per_query)
    assert routes == {q.id: "ast_breadcrumb" if route(setup.corpus.get(q.sources[0]))
                      == "heading_aware" else "rct" for q in setup.queries}
    per_query = result.per_query
    for strategy in COMPARED:
        for half in ("ast_breadcrumb", "rct"):
            ids = [q for q, r in routes.items() if r == half]
            values = per_query[(per_query["strategy"] == strategy)
                               & (per_query["metric"] == "bundle_efficiency@5")
                               & per_query["query_id"].isin(ids)]["value"]
            [row] = splits[(splits["strategy"] == strategy) & (splits["split"] == "route")
                           & (splits["split_value"] == half)
                           & (splits["metric"] == "bundle_efficiency@5")].itertuples()
            assert row.mean == pytest.approx(values.mean()) and row.n == len(ids)


def test_query_routes_need_the_routed_config(result):
    with pytest.raises(ConfigError, match="structure_routed"):
        query_routes(result.per_query[result.per_query["strategy"] == "rct"])


def test_split_table_puts_the_blend_next_to_every_split(splits):
    table = split_table(splits, "answer_hit@5")
    assert list(table.index) == list(COMPARED)
    assert list(table.columns) == [
        "all (blend, n=8)", "source: explicit (n=4)", "source: inferred (n=3)",
        "source: none (n=1)", "routed to ast_breadcrumb (n=4)", "routed to rct (n=4)"]
    row = splits[(splits["strategy"] == "rct") & (splits["split"] == "all")
                 & (splits["metric"] == "answer_hit@5")].iloc[0]
    assert table.loc["rct", "all (blend, n=8)"] == (
        f"{row['mean']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]")
    with pytest.raises(ConfigError, match="no retrieval rows for metric 'mrr@9'"):
        split_table(splits, "mrr@9")


def test_chart_frame_puts_sources_and_routes_under_one_split(splits):
    frame = chart_frame(splits)
    assert set(frame["split"]) == {"all", "source_and_route"}
    assert "options" not in frame
    assert "routed to rct (n=4)" in set(frame["split_value"])
    spec = json.dumps(split_chart(splits, "answer_hit@5").to_dict())
    assert "all (blend)" in spec and "routed to ast_breadcrumb (n=4)" in spec


# --- 4: the section tail ------------------------------------------------------------------


def test_tail_is_measured_on_the_heading_aware_half(setup):
    assert [d.id for d in heading_aware_documents(setup.corpus)] == ["handbook.md",
                                                                     "release.md"]
    sections = tail_sections(setup.corpus)
    assert set(sections["doc_id"]) == {"handbook.md", "release.md"}
    stats = tail_stats(sections, size=100, window=10).set_index("unit")
    direct = length_stats(sections_table(heading_aware_documents(setup.corpus)),
                          window=10).set_index("unit")
    assert stats.loc["tokens", "p97"] == direct.loc["tokens", "p97"]
    assert stats.loc["chars", "over_ceiling"] == int((sections["chars"] > 100).sum())
    assert stats.loc["tokens", "over_window"] == int((sections["tokens"] > 10).sum())
    line = tail_line(stats.reset_index())
    assert f"p97 {direct.loc['tokens', 'p97']:.0f} tokens" in line
    assert "10-token encoder window" in line and line.startswith("**")


def test_tail_of_a_corpus_with_no_heading_aware_document():
    corpus = load_corpus(STRUCTURE)
    unstructured = [d for d in corpus if d.id in ("memo.md", "pump-guide.txt")]
    assert heading_aware_documents(unstructured) == []
    stats = tail_stats(tail_sections(unstructured), size=100)
    assert stats["sections"].tolist() == [0, 0]
    assert tail_line(stats).startswith("**No sections")


# --- export -------------------------------------------------------------------------------


def test_export_writes_nothing_without_a_folder(setup, splits):
    scores = source_table(setup.sample, setup.gold)
    errors = error_table(setup.sample, setup.gold)
    tail = tail_stats(tail_sections(setup.corpus), size=300)
    assert export("", setup, scores, errors, splits, tail) == []
    assert export(None, setup, scores, errors, splits, tail) == []


def test_export_writes_the_tables_and_signal_numbers(setup, splits, tmp_path):
    scores = source_table(setup.sample, setup.gold)
    errors = error_table(setup.sample, setup.gold)
    tail = tail_stats(tail_sections(setup.corpus), size=300)
    written = export(tmp_path, setup, scores, errors, splits, tail)
    assert [p.name for p in written] == ["heading_scores.csv", "heading_errors.csv",
                                         "retrieval_splits.csv", "structure_signal.json"]
    assert all(p.parent == tmp_path / "structure_signal" for p in written)
    numbers = json.loads(written[-1].read_text())
    assert numbers == json.loads(json.dumps(signal_numbers(setup, scores, errors, splits, tail)))
    assert numbers["heading_scores"]["none"]["precision"] is None
    assert numbers["errors"] == {"documents": 2, "false_boundaries": 2, "missed_headings": 4}
    assert numbers["retrieval"]["configs"]["rct"]["route"]["rct"]["n"] == 4
    assert pd.read_csv(written[0])["structure_source"].tolist() == scores[
        "structure_source"].tolist()


# --- without gold -------------------------------------------------------------------------


def test_without_gold_nothing_is_scored_and_the_note_says_how_to_mark(splits, tmp_path):
    bare = validate(**{**GOOD, "GOLD": "", "OUT_DIR": str(tmp_path)})
    assert not bare.scored and bare.gold == {} and bare.gold_file is None
    assert [d.id for d in bare.sample] == [d.id for d in stratified_sample(bare.corpus, 5)]
    assert "no gold file (GOLD is empty): heading detection is not scored" in describe(bare)
    for table, columns in ((heading_scores(bare), SCORE_COLUMNS),
                           (heading_provenance(bare), PROVENANCE_COLUMNS),
                           (heading_errors(bare), ERROR_COLUMNS)):
        assert table.empty and list(table.columns) == columns
    note = scores_line(bare, heading_scores(bare))
    assert note == gold_note(bare) and "not scored: GOLD is empty" in note
    assert "data/sample/headings.gold.yaml" in note and "`headings.gold.yaml` in CORPUS" in note
    assert ", ".join(f"`{d.id}`" for d in bare.sample) in note  # code spans: never HTML
    assert f"```yaml\n{bare.sample[0].id}:" in note and DRAFT_FILE in note
    assert scored(bare, "table").data == NOT_SCORED and scored(bare, "t", note=False) is None
    tail = tail_stats(tail_sections(bare.corpus), size=300)
    written = export(bare.out_dir, bare, heading_scores(bare), heading_errors(bare), splits,
                     tail)
    assert [p.name for p in written] == [DRAFT_FILE, "retrieval_splits.csv",
                                         "structure_signal.json"]
    assert sorted(load_gold(written[0])) == sorted(d.id for d in bare.sample)
    numbers = json.loads(written[-1].read_text())
    assert numbers["gold"] is None and numbers["heading_scores"] is None
    assert numbers["errors"] is None and numbers["retrieval"]["configs"]


def test_with_gold_the_tables_are_shown_and_the_note_is_empty(setup):
    assert setup.scored and gold_note(setup) == ""
    assert scored(setup, "table") == "table"
    pd.testing.assert_frame_equal(heading_scores(setup), source_table(setup.sample, setup.gold))
    assert scores_line(setup, heading_scores(setup)) == pages_line(heading_scores(setup))
