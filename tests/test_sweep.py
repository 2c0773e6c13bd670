"""The sweep end to end on the sample corpus: every file, per-source splits, reuse."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from chunkproof import ConfigError, UnknownRetrieverError, UnknownStrategyError, load_corpus
from chunkproof.chunking.build import chunk_document
from chunkproof.cli import main
from chunkproof.errors import GridWarning
from chunkproof.evaluation.queries.mining import mine
from chunkproof.evaluation.queries.queries import load_queries, save_queries
from chunkproof.evaluation.run.sweep import SweepParams, headline, run_sweep
from chunkproof.evaluation.scoring.families import holm
from conftest import SAMPLE

QUERIES = str(SAMPLE / "queries.jsonl")
FILES = ["run.json", "chunks.parquet", "retrieved.parquet", "per_query.parquet", "summary.csv",
         "chunk_stats.csv", "significance.csv"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "run"
    params = SweepParams(corpus=str(SAMPLE), queries=QUERIES,
                         strategies=("rct", "ast_breadcrumb"), sizes=(400, 900),
                         budgets=(128, 512), contrasts=("ast_breadcrumb:rct",))
    return run_sweep(params, out, progress=False), params, out


def test_every_file_is_written(sweep):
    result, params, out = sweep
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    assert not list(out.rglob("*.tmp"))
    info = json.loads((out / "run.json").read_text())
    assert info["run_id"] == params.run_id and info["configs"] == 4
    assert info["corpus"]["fingerprint"] == load_corpus(SAMPLE).fingerprint
    assert {"load", "chunk", "embed", "retrieve", "statistics"} <= set(info["seconds"])
    assert info["versions"]["markdown-it-py"] != "not installed"


def test_tables_carry_the_config_fields(sweep):
    _, _, out = sweep
    for name in ["chunks.parquet", "retrieved.parquet", "per_query.parquet"]:
        frame = pd.read_parquet(out / name)
        assert {"config_id", "strategy", "size", "unit", "options"} <= set(frame.columns), name
    assert {"retriever", "rank", "chunk_id", "score"} <= set(
        pd.read_parquet(out / "retrieved.parquet").columns)
    summary = pd.read_csv(out / "summary.csv")
    assert {"metric", "mean", "ci_low", "ci_high", "n", "split", "split_value"} <= set(
        summary.columns)


def test_chunks_are_exactly_what_the_strategy_produces(sweep):
    result, params, _ = sweep
    corpus = load_corpus(SAMPLE)
    config = params.configs()[1]
    expected = [c.id for doc in corpus for c in chunk_document(doc, config)]
    assert result.chunks[result.chunks.config_id == config.config_id]["id"].tolist() == expected


def test_summary_means_come_from_the_per_query_rows(sweep):
    result, _, _ = sweep
    rows = result.per_query[result.per_query.metric == "recall@5"]
    first = rows.config_id.iloc[0]
    mean = rows[rows.config_id == first]["value"].mean()
    blended = result.summary.query(
        "config_id == @first and metric == 'recall@5' and split == 'all'")
    assert blended["mean"].item() == pytest.approx(mean)
    assert blended["ci_low"].item() <= mean <= blended["ci_high"].item()
    assert blended["n"].item() == len(load_queries(QUERIES, load_corpus(SAMPLE)))


def test_results_are_split_by_source_and_strategy_next_to_the_blend(sweep):
    result, _, _ = sweep
    splits = set(result.summary["split"])
    assert {"all", "structure_source", "applied_strategy", "query_kind"} <= splits
    by_source = result.summary.query("split == 'structure_source' and metric == 'recall@5'")
    assert {"explicit", "inferred", "none"} <= set(by_source["split_value"])


def test_planned_contrasts_are_a_family_of_their_own_at_each_size(sweep):
    result, params, _ = sweep
    ids = {(c.strategy, c.size): c.config_id for c in params.configs()}
    planned = result.significance[(result.significance.family == "planned")
                                  & (result.significance.metric == "recall@5")]
    assert set(zip(planned.config_a, planned.config_b, strict=True)) == {
        (ids["ast_breadcrumb", size], ids["rct", size]) for size in (400, 900)}
    assert planned["p_holm"].tolist() == pytest.approx(holm(planned["p_value"]).tolist())
    assert ((planned.ci_low > 0) | (planned.ci_high < 0)).tolist() == (
        planned.p_value < 0.05).tolist()


@pytest.mark.parametrize(("contrasts", "message"), [
    (("ast_breadcrumb",), "expected 'A:B'"),
    (("rct:rct",), "expected 'A:B'"),
    (("ast_breadcrumb:ast_merge",), "names ast_merge, not among the swept strategies"),
])
def test_a_bad_contrast_is_named(contrasts, message):
    with pytest.raises(ValueError, match=message):
        SweepParams(strategies=("rct", "ast_breadcrumb"), contrasts=contrasts)


def test_significance_covers_every_pair(sweep):
    result, _, _ = sweep
    recall = result.significance[(result.significance.metric == "recall@5")
                                 & (result.significance.family == "exploratory")]
    assert len(recall) == 6  # 4 configs -> 6 pairs
    assert set(recall["verdict"]) <= {"A better", "B better", "no significant difference"}
    assert (recall["p_holm"] >= recall["p_value"]).all()


def test_each_budget_scores_the_chunks_that_fill_it(sweep):
    result, params, _ = sweep
    per_query = result.per_query.set_index(["config_id", "query_id", "metric"])["value"]
    tokens = result.chunks.set_index(["config_id", "id"])["n_tokens"]
    metrics = set(result.per_query["metric"])
    assert {"span_iou@b128", "span_recall@b512", "answer_hit@b512", "hit@b128",
            "bundle_efficiency@b512", "precision_omega", "span_iou@5"} <= metrics
    for (config_id, _query), ranks in result.retrieved.groupby(["config_id", "query_id"]):
        sizes = [tokens[config_id, c] for c in ranks.sort_values("rank")["chunk_id"]]
        if len(sizes) > params.k:  # a rank past k is kept only to fill the largest budget
            assert sum(sizes[:-1]) < 512
    wide = result.per_query[result.per_query.metric.isin(["span_recall@b128",
                                                           "span_recall@b512"])]
    wide = wide.pivot_table(index=["config_id", "query_id"], columns="metric", values="value")
    assert (wide["span_recall@b512"] >= wide["span_recall@b128"] - 1e-9).all()  # more budget
    assert per_query.notna().any()
    assert "span_recall@b512" in set(result.significance["metric"])


def test_every_summary_row_and_the_headline_carry_the_realised_size(sweep):
    result, _, _ = sweep
    stats = result.chunk_stats.set_index("config_id")
    for config_id, rows in result.summary.groupby("config_id"):
        chunks = result.chunks[result.chunks.config_id == config_id]
        assert stats.at[config_id, "tokens_p50"] == chunks["n_tokens"].median()
        assert (rows["tokens_p50"] == stats.at[config_id, "tokens_p50"]).all()
        assert (rows["tokens_p95"] == stats.at[config_id, "tokens_p95"]).all()
    table = headline(result)
    assert list(table.columns[:5]) == ["strategy", "size", "tokens_p50", "tokens_p95",
                                       "retriever"]
    assert "span_recall@b512" in table.columns


def test_configs_with_identical_chunks_are_scored_once_and_named(tmp_path):
    for name, topic in [("a.md", "lanterns"), ("b.md", "kettles"), ("c.md", "ropes")]:
        (tmp_path / name).write_text(f"# Caring for {topic}\n\nKeep the {topic} dry and "
                                     f"check the {topic} every week.\n")
    params = SweepParams(corpus=str(tmp_path), strategies=("ast_breadcrumb", "rct"),
                         sizes=(2000, 4000))
    with pytest.warns(GridWarning) as caught:
        result = run_sweep(params, tmp_path / "run", progress=False)
    same = result.run_info["identical_configs"]
    ids = {(c.strategy, c.size): c.config_id for c in params.configs()}
    assert {(s["config_id"], s["same_as"]) for s in same} == {
        (ids["ast_breadcrumb", 4000], ids["ast_breadcrumb", 2000]),
        (ids["rct", 4000], ids["rct", 2000])}
    assert all(s["no_effect_of"] == ["size"] for s in same)
    assert any("no effect of size" in str(w.message) for w in caught)
    assert any("most documents fit in one chunk" in w for w in result.run_info["warnings"])
    values = result.per_query.pivot_table(index=["query_id", "metric"], columns="config_id",
                                          values="value")
    for s in same:
        pd.testing.assert_series_equal(values[s["config_id"]], values[s["same_as"]],
                                       check_names=False)
    twin_ranks = result.retrieved[result.retrieved.config_id == same[0]["config_id"]]
    twin_chunks = set(result.chunks[result.chunks.config_id == same[0]["config_id"]]["id"])
    assert set(twin_ranks["chunk_id"]) <= twin_chunks  # ids of the twin's own chunks
    tested = set(result.significance["config_a"]) | set(result.significance["config_b"])
    assert not {s["config_id"] for s in same} & tested  # twins stay out of the tests
    assert result.run_info["queries_dropped"]["count"] == 0


def test_mined_headings_shared_by_too_many_documents_are_dropped(tmp_path):
    for i in range(4):
        (tmp_path / f"tool{i}.md").write_text(f"# Tool {i} guide\n\n## Usage\n\nRun tool{i} "
                                              "with a file.\n")
    mined = mine(load_corpus(tmp_path), max_sources=3)
    assert "Usage" not in [q.query for q in mined.queries]
    assert [q.query for q in mined.dropped] == ["Usage"]
    assert "1 mined query dropped" in mined.reason() and "'Usage' in 4" in mined.reason()
    assert "Usage" in [q.query for q in mine(load_corpus(tmp_path), max_sources=4).queries]
    params = SweepParams(corpus=str(tmp_path), strategies=("rct",), sizes=(200,),
                         mined_max_sources=3)
    info = run_sweep(params, None, progress=False).run_info
    assert info["queries_dropped"]["count"] == 1
    assert info["queries_dropped"]["examples"] == ["Usage (4 documents)"]


def test_queries_are_split_into_tuning_and_held_out_and_summarised_by_set(sweep):
    result, _, _ = sweep
    split = result.run_info["query_split"]
    assert split["method"] == "seeded" and split["tuning"] + split["held_out"] == 95
    sets = result.per_query.groupby("query_set")["query_id"].nunique()
    assert sets.to_dict() == {"held_out": split["held_out"], "tuning": split["tuning"]}
    rows = result.summary[(result.summary.split == "query_set")
                          & (result.summary.metric == "recall@5")]
    assert set(rows["split_value"]) == {"tuning", "held_out"}


def test_second_run_reuses_the_finished_parts(sweep):
    result, params, out = sweep
    again = run_sweep(params, out, progress=False)
    assert again.run_info["reused_parts"] == 4 + 4  # chunk parts + retrieval parts
    pd.testing.assert_frame_equal(again.per_query, result.per_query)


def test_a_folder_holding_another_run_is_refused(sweep):
    _, params, out = sweep
    other = params.model_copy(update={"sizes": (400,)})
    with pytest.raises(ConfigError, match="holds another run"):
        run_sweep(other, out, progress=False)


def test_bad_parameters_are_named():
    with pytest.raises(UnknownStrategyError):
        SweepParams(strategies=("ast_mrege",))
    with pytest.raises(UnknownRetrieverError):
        SweepParams(retrievers=("bm52",))
    with pytest.raises(ValueError, match="overlap"):  # at once, not when the grid is made
        SweepParams(sizes=(100,), options={"overlap": 200})


def test_cli_sweep_prints_the_summary(tmp_path, capsys):
    code = main(["sweep", "--corpus", str(SAMPLE), "--queries", QUERIES, "--strategies",
                 "ast_merge,paragraph", "--sizes", "600", "--out", str(tmp_path / "run")])
    assert code == 0
    out = capsys.readouterr().out
    assert "ast_merge" in out and "paragraph" in out and "recall@5" in out
    assert (tmp_path / "run" / "summary.csv").exists()


def test_cli_sweep_takes_budgets_contrasts_and_two_query_files(tmp_path, capsys):
    queries = load_queries(QUERIES, load_corpus(SAMPLE))
    tuning, held = tmp_path / "dev.jsonl", tmp_path / "test.jsonl"
    save_queries(queries[:50], tuning)
    save_queries(queries[50:], held)
    out = tmp_path / "run"
    code = main(["sweep", "--corpus", str(SAMPLE), "--dev-queries", str(tuning),
                 "--test-queries", str(held), "--strategies", "ast_merge,ast_breadcrumb",
                 "--sizes", "600", "--budgets", "256", "--out", str(out)])
    assert code == 0
    info = json.loads((out / "run.json").read_text())
    assert info["params"]["budgets"] == [256]
    assert info["params"]["contrasts"] == ["ast_breadcrumb:ast_merge"]  # the default, both swept
    assert info["query_split"] == {"method": "files", "tuning": 50, "held_out": 45,
                                   "note": "50 tuning queries and 45 held-out queries from "
                                           "two files"}
    assert "span_recall@b256" in capsys.readouterr().out
    code = main(["sweep", "--corpus", str(SAMPLE), "--queries", QUERIES, "--strategies",
                 "ast_merge,ast_breadcrumb", "--sizes", "600", "--budgets", "none",
                 "--contrast", "none", "--out", str(tmp_path / "plain")])
    info = json.loads((tmp_path / "plain" / "run.json").read_text())
    assert code == 0 and info["params"]["budgets"] == [] and info["params"]["contrasts"] == []


def test_renewal_clause_ranks_first_when_it_carries_its_heading(tmp_path):
    """Seed 000: the merged heading+clause chunk is BM25's top hit for the renewal question."""
    corpus = load_corpus(SAMPLE)
    renewal = [q for q in load_queries(QUERIES, corpus) if q.kind == "renewal"]
    params = SweepParams(corpus=str(SAMPLE), queries=QUERIES, sizes=(800,),
                         strategies=("ast_merge", "paragraph", "mts"))
    result = run_sweep(params, None, corpus=corpus, progress=False)
    ranks = result.retrieved.merge(result.chunks[["config_id", "id", "text"]],
                                   left_on=["config_id", "chunk_id"], right_on=["config_id", "id"])
    top = ranks[(ranks.query_id == renewal[0].id) & (ranks["rank"] == 1)]
    for strategy in ("ast_merge", "paragraph"):
        text = top[top.strategy == strategy]["text"].item()
        assert "Term and renewal" in text and renewal[0].answer in text
    mts = ranks[(ranks.query_id == renewal[0].id) & (ranks.strategy == "mts")]
    hit = mts[mts.text.str.contains(renewal[0].answer, regex=False)]
    print(f"mts ranks the renewal clause at {hit['rank'].tolist()}")  # recorded, not asserted


def test_a_corpus_whose_one_query_finds_nothing_still_sweeps(tmp_path):
    # one mined query, the title "this" (a stop word: it finds nothing); the sentence is too
    # short to be a body query
    (tmp_path / "this.md").write_text("plain words about brass lanterns.\n")
    params = SweepParams(corpus=str(tmp_path), strategies=("rct", "ast_breadcrumb"),
                         sizes=(200,))
    result = run_sweep(params, tmp_path / "run", progress=False)
    assert result.retrieved.empty
    assert {"config_id", "retriever", "query_id", "rank", "chunk_id"} <= set(
        result.retrieved.columns)
    assert "bundle_efficiency@5" not in set(result.significance.get("metric", []))


def test_beyond_twelve_configs_each_is_tested_against_the_best_unless_all_pairs():
    import numpy as np

    from chunkproof.evaluation.run.sweep import significance_table

    rng = np.random.default_rng(0)
    rows = [{"retriever": "bm25", "config_id": f"c{c:02d}", "query_id": f"q{q}",
             "metric": "hit@5", "value": float(rng.random() < 0.2 + 0.04 * c)}
            for c in range(14) for q in range(50)]
    frame = pd.DataFrame(rows)
    best = significance_table(frame, 5)
    assert len(best) == 13 and best["config_a"].nunique() == 1
    assert set(best["config_b"]) | set(best["config_a"]) == set(frame["config_id"])
    every = significance_table(frame, 5, all_pairs=True)
    assert len(every) == 14 * 13 // 2
    twelve = significance_table(frame[frame["config_id"] < "c12"], 5)
    assert len(twelve) == 66  # up to twelve configs: every pair


def test_chunks_differing_only_in_a_rendering_s_prefix_have_other_signatures(sample_corpus):
    import dataclasses

    from chunkproof import chunk_corpus, make_config
    from chunkproof.evaluation.run.grid import signature

    chunks = chunk_corpus(sample_corpus, make_config(strategy="ast_breadcrumb", size=400))
    assert signature(chunks) == signature(list(chunks))
    for field in ("embed_prefix", "context_prefix", "text"):
        changed = [dataclasses.replace(chunks[0], **{field: getattr(chunks[0], field) + "x"}),
                   *chunks[1:]]
        assert signature(changed) != signature(chunks), field
    moved = [dataclasses.replace(chunks[0], end=chunks[0].end + 1), *chunks[1:]]
    assert signature(moved) != signature(chunks)


def test_the_planned_contrast_declares_its_primary_metric(tmp_path):
    from conftest import FIXTURES as fixtures

    mini = fixtures / "mini_corpus"
    params = SweepParams(corpus=str(mini), queries=str(mini / "queries.jsonl"),
                         strategies=("ast_merge", "ast_breadcrumb"), sizes=(200,),
                         budgets=(256, 512, 1024), contrasts=("ast_breadcrumb:ast_merge",))
    result = run_sweep(params, tmp_path / "run", progress=False)
    assert result.run_info["primary_metric"] == "answer_hit@b512"  # the middle budget
    planned = result.significance[result.significance["family"] == "planned"]
    roles = planned.groupby("metric")["role"].first()
    assert roles["answer_hit@b512"] == "primary"
    assert set(roles.drop("answer_hit@b512")) == {"secondary"}
