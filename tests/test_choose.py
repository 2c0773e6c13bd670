"""Choosing a config from a sweep by a stated rule, and exporting it so it reproduces."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import yaml

from chunkproof import ConfigError, load_config
from chunkproof.cli import main
from chunkproof.evaluation.choice import choose as ch
from chunkproof.evaluation.choice import export as ex
from chunkproof.evaluation.choice.candidates import margins
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep, summary_table
from chunkproof.notebooks import choose_and_export as cx
from chunkproof.notebooks import choose_and_export as evidence
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("choose") / "run"
    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("rct", "ast_breadcrumb"), sizes=(200, 400))
    run_sweep(params, out, progress=False)
    return ch.load_run(out)


def rule(**values):
    """The rule at k (the mini corpus is too small for budgets to matter)."""
    return ch.ChoiceRule(**{"primary_metric": "answer_hit@5", **values})


def pick(run, rule_, **options):
    """The choice without a study (the shipped one's configs are not this grid's)."""
    return ch.choose(run, rule_, study=None, **options)


@pytest.mark.parametrize(("text", "expected"), [
    ("code_integrity == 1.0", ("code_integrity", "==", 1.0)),
    ("over_encoder_limit<=0.05", ("over_encoder_limit", "<=", 0.05)),
    ("  answer_hit@5 > .5 ", ("answer_hit@5", ">", 0.5)),
    ("lost_chars < 1e3", ("lost_chars", "<", 1000.0)),
    ("code_integrity ≥ 1", ("code_integrity", ">=", 1.0)),
    ("over_encoder_limit ≤ 0.05", ("over_encoder_limit", "<=", 0.05)),
    ("bundle_chars >= -2", ("bundle_chars", ">=", -2.0)),
    ("code_integrity@b1024 >= 1", ("code_integrity@b1024", ">=", 1.0)),
])
def test_constraints_parse(text, expected):
    parsed = ch.parse_constraint(text)
    assert (parsed.name, parsed.op, parsed.value) == expected


@pytest.mark.parametrize("text", [
    "__import__('os')", "__import__('os').system('true') == 0", "code_integrity = 1",
    "1 == code_integrity", "code_integrity == other", "code_integrity == 1; import os",
    "code_integrity == 1 and lost_chars == 0", "code_integrity", "", "a.b == 1",
])
def test_constraints_that_are_not_name_op_number_are_refused(text):
    with pytest.raises(ValueError, match="expected `name op number`"):
        ch.parse_constraint(text)


def test_rule_refuses_code_and_names_the_parameter(run):
    with pytest.raises(ConfigError, match=r"^CONSTRAINTS: cannot parse .*__import__"):
        cx.make_rule(primary_metric="answer_hit@5", retriever="bm25",
                     constraints=["__import__('os')"], tie_break="index_tokens", run=run)


@pytest.mark.parametrize(("values", "message"), [
    ({"constraints": ["bogus >= 1"]}, r"CONSTRAINTS: unknown name 'bogus'.*valid names: .*"
                                      r"answer_hit@5.*bundle_chars.*code_integrity"),
    ({"primary_metric": "nope@5"}, r"PRIMARY_METRIC: unknown metric 'nope@5'; valid metrics"),
    ({"retriever": "dense"}, r"RETRIEVER: 'dense' is not in this run; run retrievers: bm25"),
    ({"tie_break": "coin"}, r"TIE_BREAK: .*index_tokens"),
])
def test_rule_errors_name_the_parameter_and_the_valid_values(run, values, message):
    args = {"primary_metric": "answer_hit@5", "retriever": "bm25", "constraints": [],
            "tie_break": "index_tokens", **values}
    with pytest.raises(ConfigError, match=message):
        cx.make_rule(run=run, **args)


def test_only_configs_meeting_every_constraint_are_chosen_or_ranked(run):
    choice = pick(run, rule(constraints=("code_integrity == 1.0",)))
    table = choice.candidates
    assert choice.chosen["code_integrity"] == 1.0 and choice.chosen["rank"] == 1
    assert set(table.loc[table["rank"].isna(), "config_id"]) == set(
        table.loc[table["code_integrity"] < 1.0, "config_id"])
    assert set(choice.verdict.outcome.cost) == set(
        table.loc[table["code_integrity"] == 1.0, "config_id"])


def test_the_comparison_is_oriented_chosen_first(run):
    choice = pick(run, rule())
    row = choice.comparison
    assert row["config_a"] == choice.chosen["config_id"]
    assert row["config_b"] == choice.runner_up["config_id"]
    assert row["mean_a"] == pytest.approx(choice.chosen["answer_hit@5"])
    assert row["mean_diff"] == pytest.approx(row["mean_a"] - row["mean_b"])
    assert row["ci_low"] <= row["mean_diff"] <= row["ci_high"]
    assert "grouped by page" in row["source"]


@pytest.mark.parametrize("tie_break", ["index_tokens", "chunks"])
def test_what_nothing_separates_goes_to_the_cost(run, tie_break):
    choice = pick(run, rule(tie_break=tie_break, tie_margin=1.0))  # nothing is a win
    assert choice.decided_by == "cost"
    values = choice.candidates[tie_break]
    assert choice.chosen[tie_break] == values.min()
    assert f"has the smallest index ({choice.chosen['index_tokens']:,.0f} tokens" in \
        ex.verdict_text(choice) or tie_break == "chunks"


def test_no_config_meeting_the_rule_still_gives_the_closest_and_its_margins(run):
    rule_ = rule(constraints=("lost_chars < -1", "code_integrity >= 1"))
    choice = pick(run, rule_)
    assert not choice.meets_rule and choice.chosen["failed"] == ["lost_chars < -1"]
    assert "no config meets every constraint" in choice.note and "closest" in choice.note
    table = margins(choice.candidates, rule_)
    assert len(table) == 2 * len(choice.candidates)
    lost = table[table.constraint == "lost_chars < -1"]
    assert (lost["margin"] == -1 - lost["measured"]).all() and not lost["holds"].any()
    with pytest.raises(ch.ChoiceError, match=r"no config meets .*rct/200 fails lost_chars < -1 "
                                             r"\(measured 0\)"):
        pick(run, rule_, strict=True)


def test_constraint_margins_by_hand():
    assert ch.parse_constraint("x >= 0.8").margin(0.75) == pytest.approx(-0.05)
    assert ch.parse_constraint("x <= 0.05").margin(0.091) == pytest.approx(-0.041)
    assert ch.parse_constraint("x == 1").margin(0.9) == pytest.approx(-0.1)
    assert ch.parse_constraint("x <= 0.05").shortfall(0.091) == pytest.approx(0.041)
    assert ch.parse_constraint("lost_chars <= 0").shortfall(12) == 12.0  # bound 0: unit scale
    assert ch.parse_constraint("x >= 1").shortfall(1.0) == 0.0


def _favour(run, config_id: str, queries: int):
    """The run with ``config_id`` given answer_hit@5 = 1 on ``queries`` more queries."""
    per_query = run.per_query.copy()
    rows = per_query[(per_query.config_id == config_id) & (per_query.metric == "answer_hit@5")
                     & (per_query.value == 0)].index[:queries]
    per_query.loc[rows, "value"] = 1.0
    return replace(run, per_query=per_query, summary=summary_table(per_query, run.chunk_stats))


def test_a_best_by_one_question_does_not_win_over_a_smaller_index(run):
    biggest = ch.candidates(run, rule()).sort_values("index_tokens").iloc[-1]
    favoured = _favour(run, biggest["config_id"], 1)  # one query more: best, p = 1
    choice = pick(favoured, rule())
    assert choice.verdict.outcome.evidence_best == biggest["config_id"]
    assert choice.chosen["config_id"] != biggest["config_id"]
    assert choice.chosen["index_tokens"] < biggest["index_tokens"]
    assert choice.decided_by == "cost"
    assert biggest["config_id"] in choice.verdict.outcome.inseparable


def test_a_significantly_better_config_is_kept_whatever_it_costs(tmp_path):
    for i in range(8):  # eight one-paragraph documents about distinct tools
        (tmp_path / f"tool{i}.md").write_text(f"# Tool {i}\n\nThe tool{i} command copies "
                                              f"files for team {i}.\n")
    params = SweepParams(corpus=str(tmp_path), strategies=("rct", "ast_breadcrumb"),
                         sizes=(200,))
    plain = run_sweep(params, progress=False)
    better = ch.candidates(plain, rule(primary_metric="hit@5")).iloc[-1]["config_id"]
    per_query = plain.per_query.copy()
    hits = per_query.metric == "hit@5"
    per_query.loc[hits, "value"] = (per_query.loc[hits, "config_id"] == better).astype(float)
    # the better config finds all 8 queries, the other none: p = 2/256
    run_ = replace(plain, per_query=per_query,
                   summary=summary_table(per_query, plain.chunk_stats))
    every = ("heading_derived", "leak_free")  # mined queries decide only when named
    choice = pick(run_, rule(primary_metric="hit@5", tie_margin=0.5, query_kinds=every))
    assert choice.chosen["config_id"] == better and choice.decided_by == "mined questions"
    assert choice.runner_up["p_vs_best"] < 0.05 and not choice.runner_up["inseparable"]
    assert "Decided by mined questions" in ex.verdict_text(choice)
    unnamed = pick(run_, rule(primary_metric="hit@5", tie_margin=0.5))
    assert unnamed.decided_by == "cost" and unnamed.verdict.evidence == ""


def test_a_structure_routed_winner_exports_its_own_strategy(tmp_path):
    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("structure_routed",), sizes=(300, 600))
    run_sweep(params, tmp_path / "run", progress=False)
    run_ = ch.load_run(tmp_path / "run")
    assert set(run_.chunks["strategy"]) == {"structure_routed"}
    assert set(run_.chunks["applied_strategy"]) == {"ast_breadcrumb", "rct"}
    choice = pick(run_, rule())
    assert choice.config.strategy == "structure_routed"
    path = ex.export_choice(choice, tmp_path)
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", "--corpus", str(MINI), "--config", str(path), "--out", str(out)]) == 0
    scored = run_.chunks[run_.chunks.config_id == choice.chosen["config_id"]]
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == scored[
        "id"].tolist()


def test_the_config_is_rebuilt_from_the_tables_and_checked(run):
    choice = pick(run, rule())
    assert choice.config.config_id == choice.chosen["config_id"]
    tampered = run.chunks.copy()
    tampered.loc[tampered["config_id"] == choice.chosen["config_id"], "options"] = json.dumps(
        {"min_size": 10})
    with pytest.raises(ConfigError, match="hash to"):
        ch.rebuild_config(replace(run, loaded_chunks=tampered), choice.chosen["config_id"])


def test_export_writes_a_config_that_loads_with_its_evidence(run, tmp_path):
    choice = pick(run, rule(constraints=("code_integrity >= 1",)))
    path = ex.export_choice(choice, tmp_path)
    assert path.name == "chosen_config.yaml"
    assert load_config(path) == choice.config
    data = yaml.safe_load(path.read_text())
    assert data["rule"]["constraints"] == ["code_integrity >= 1"]
    assert data["rule"]["tie_break"] == "index_tokens"
    assert data["corpus"]["fingerprint"] == run.run_info["corpus"]["fingerprint"]
    assert data["run_id"] == run.run_info["run_id"]
    assert data["runner_up"]["config_id"] == choice.runner_up["config_id"]
    assert data["scores"]["answer_hit@5"]["mean"] == pytest.approx(choice.chosen["answer_hit@5"])
    assert {"ci_low", "ci_high", "n"} <= set(data["scores"]["answer_hit@5"])
    assert data["decided_by"] == choice.decided_by
    assert data["decision"] in data["verdict"]
    assert data["evidence"]["questions"] == 8 and data["evidence"]["used"] == "your questions"
    assert data["cost"]["measure"] == "index_tokens"
    assert data["comparison"].startswith("answer_hit@5: chosen - runner-up = ")
    assert "95% interval" in data["comparison"]


def test_chunkproof_chunk_with_the_exported_config_gives_the_scored_chunks(run, tmp_path):
    choice = pick(run, rule())
    path = ex.export_choice(choice, tmp_path / "chosen_config.yaml")
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", "--corpus", str(MINI), "--config", str(path), "--out", str(out)]) == 0
    produced = [json.loads(line) for line in out.read_text().splitlines()]
    scored = run.chunks[run.chunks["config_id"] == choice.chosen["config_id"]]
    keys = ["id", "doc_id", "start", "end", "text"]
    assert [{k: c[k] for k in keys} for c in produced] == scored[keys].to_dict("records")


def test_head_to_head_and_disagreements_describe_the_pair(run):
    choice = pick(run, rule())
    table = evidence.head_to_head(choice, run)
    row = table[table["measure"] == "answer_hit@5"].iloc[0]
    assert row["chosen"] == choice.chosen["answer_hit@5"]
    assert row["runner_up"] == choice.runner_up["answer_hit@5"]
    differ = evidence.disagreements(choice, run)
    assert (differ["chosen"] != differ["runner_up"]).all()
    assert len(evidence.describe(choice)) == 2


def test_a_folder_that_is_not_a_run_is_refused(tmp_path):
    with pytest.raises(ch.ChoiceError, match="not a finished sweep folder"):
        ch.load_run(tmp_path)


def test_one_query_gives_an_interval_as_wide_as_its_test_cannot_reject(tmp_path):
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.md").write_text("just some plain words about lanterns.\n")
    params = SweepParams(corpus=str(tmp_path / "corpus"), strategies=("rct", "ast_breadcrumb"),
                         sizes=(200,))
    run_sweep(params, tmp_path / "run", progress=False)  # one query: p = 1 whatever the mean
    every = ("heading_derived", "leak_free")
    choice = pick(tmp_path / "run", rule(primary_metric="hit@5", query_kinds=every))
    row = choice.comparison
    assert row["p_value"] == 1.0 and row["ci_low"] <= -0.5 and row["ci_high"] >= 0.5
    assert "95% interval -" in ex.paired_text(row)


def test_chunk_with_a_config_from_another_corpus_or_version_warns(run, tmp_path, capsys):
    path = ex.export_choice(pick(run, rule()), tmp_path)
    data = yaml.safe_load(path.read_text())
    assert data["chunkproof_version"] and data["corpus"]["fingerprint"]
    out = str(tmp_path / "chunks.jsonl")
    assert main(["chunk", "--corpus", str(MINI), "--config", str(path), "--out", out]) == 0
    assert "chunkproof: warning" not in capsys.readouterr().err  # no provenance warning
    data["chunkproof_version"] = "0.0.1"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# Other\n\nA different corpus.\n")
    assert main(["chunk", "--corpus", str(other), "--config", str(path), "--out", out]) == 0
    err = capsys.readouterr().err
    assert "was chosen with chunkproof 0.0.1, this is" in err
    assert f"chosen on a corpus with fingerprint {data['corpus']['fingerprint']}" in err


def test_a_split_run_is_chosen_on_every_question(tmp_path):
    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("rct", "ast_breadcrumb"), sizes=(200, 400), min_split=4)
    result = run_sweep(params, tmp_path / "run", progress=False)
    assert result.run_info["query_split"]["method"] == "seeded"
    choice = pick(tmp_path / "run", rule())
    rows = result.per_query[(result.per_query.metric == "answer_hit@5")
                            & (result.per_query.config_id == choice.chosen["config_id"])]
    assert choice.scores["answer_hit@5"]["n"] == 8 == choice.verdict.questions
    assert choice.chosen["answer_hit@5"] == pytest.approx(rows["value"].mean())


def test_the_closest_config_is_never_said_to_have_the_higher_mean(run):
    table = ch.candidates(run, rule())
    for config_id in table["config_id"].iloc[1:]:  # every config but one scores a query more
        run = _favour(run, config_id, 1)
    means = ch.candidates(run, rule())["answer_hit@5"]
    bound = float(means.min()) - 0.01  # no config meets it; the lowest mean misses least
    choice = pick(run, rule(constraints=(f"answer_hit@5 <= {bound}",)))
    assert not choice.meets_rule and choice.verdict is None
    assert choice.chosen["answer_hit@5"] == means.min() and choice.runner_up is None
    text = ex.verdict_text(choice)
    assert "mean is higher" not in text
    assert "no config meets every constraint" in text and "closest" in text


def test_a_grid_of_one_config_gives_a_verdict_its_charts_and_an_export(tmp_path):
    from chunkproof.viz import charts, choice_charts

    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("ast_merge",), sizes=(400,))
    result = run_sweep(params, tmp_path / "run", progress=False)
    choice = pick(tmp_path / "run", rule())
    assert choice.runner_up is None and "only config" in ex.verdict_text(choice)
    matrix = charts.significance_matrix(result.significance, "answer_hit@5",
                                        result.chunk_stats).to_dict()
    assert charts.ONE_CONFIG in str(matrix)
    differences = cx.per_query_differences(choice, result)
    assert "no other config" in str(choice_charts.win_loss(differences).to_dict())
    assert (ex.export_choice(choice, tmp_path)).name == "chosen_config.yaml"


def test_a_sweeps_url_template_reaches_the_chosen_config_and_the_chunks(tmp_path):
    template = "https://docs.example.com/{route}#{anchor}"
    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("ast_breadcrumb",), sizes=(300, 600),
                         options={"slug_rule": "mkdocs", "url_template": template})
    run_sweep(params, tmp_path / "run", progress=False)
    run_ = ch.load_run(tmp_path / "run")
    assert run_.chunks["href"].str.startswith("https://docs.example.com/").all()
    choice = pick(run_, rule())
    path = ex.export_choice(choice, tmp_path)
    assert (load_config(path).slug_rule, load_config(path).url_template) == ("mkdocs", template)
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", "--corpus", str(MINI), "--config", str(path), "--out", str(out)]) == 0
    produced = [json.loads(line) for line in out.read_text().splitlines()]
    scored = run_.chunks[run_.chunks["config_id"] == choice.chosen["config_id"]]
    keys = ["id", "section_id", "parent_section_id", "anchor", "href"]
    assert [{k: c[k] for k in keys} for c in produced] == scored[keys].to_dict("records")
