"""The choice rule's reach: constraints bind the retrievers they name (the encoder limit binds
dense retrieval only), what they excluded is reported, the choice can be made on leak-free
query kinds only, a p-value says what it is, and identical configs count once."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import yaml

from chunkproof.errors import RuleError
from chunkproof.evaluation.choice import choose as ch
from chunkproof.evaluation.choice import export as ex
from chunkproof.evaluation.choice.candidates import margins
from chunkproof.evaluation.choice.rules import parse_constraint
from chunkproof.evaluation.queries.queries import LEAK_FREE
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep
from chunkproof.notebooks import choose_and_export as cx

FIXTURES = Path(__file__).parent / "fixtures" / "mining"  # every heading explicit


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rules") / "run"
    params = SweepParams(corpus=str(FIXTURES), sizes=(200, 400), min_split=10,
                         strategies=("ast_merge", "ast_breadcrumb", "structure_routed"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run_sweep(params, out, progress=False)
    return ch.load_run(out)


EVERY = ("heading_derived", "leak_free")
"""Every mined kind, named: mined queries decide only in kinds named or admitted."""


def rule(**values):
    return ch.ChoiceRule(**{"primary_metric": "section_efficiency@5", **values})


def pick(run, rule_):
    """The choice without a study (its configs are not this grid's)."""
    return ch.choose(run, rule_, study=None)


@pytest.mark.parametrize(("text", "retrievers", "shown"), [
    ("over_encoder_limit <= 0.05", ("dense", "hybrid"),
     "over_encoder_limit <= 0.05 on dense,hybrid"),
    ("over_encoder_limit ≤ 0.05 on all", (), "over_encoder_limit <= 0.05 on all"),
    ("code_integrity >= 1", (), "code_integrity >= 1"),
    ("tokens_p50 <= 40 on bm25, dense", ("bm25", "dense"), "tokens_p50 <= 40 on bm25,dense"),
])
def test_a_constraint_states_the_retrievers_it_binds(text, retrievers, shown):
    constraint = parse_constraint(text)
    assert constraint.retrievers == retrievers and str(constraint) == shown
    assert parse_constraint(shown) == constraint  # the normalised text reads back the same


def test_a_constraint_on_another_retriever_excludes_nothing_and_says_so(run):
    free = pick(run, rule())
    scoped = pick(run, rule(constraints=("tokens_p50 <= 21.5 on dense",)))
    assert scoped.chosen["config_id"] == free.chosen["config_id"]
    assert scoped.excluded == []
    assert scoped.not_binding == ["tokens_p50 <= 21.5 on dense (does not apply to bm25)"]
    assert margins(scoped.candidates, scoped.rule).empty


def test_what_a_binding_constraint_excluded_is_reported(run):
    choice = pick(run, rule(constraints=("tokens_p50 <= 21.5 on all",)))
    table = choice.candidates
    kept_out = table[(table["tokens_p50"] > 21.5) & (table["same_as"] == "")]
    assert len(choice.excluded) == len(kept_out) > 0
    assert all("fails tokens_p50 <= 21.5 (measured " in line for line in choice.excluded)
    best = kept_out.sort_values("section_efficiency@5", ascending=False).iloc[0]
    assert choice.excluded[0].startswith(f"{best['strategy']}/{best['size']} ")
    data = yaml.safe_load(ex.export_choice(choice, Path(run.run_dir)).read_text())
    assert data["excluded_by_constraints"] == choice.excluded


def test_the_choice_can_be_made_on_leak_free_kinds_only(run):
    choice = pick(run, rule(query_kinds=(LEAK_FREE,)))
    rows = run.per_query
    free = rows[rows.query_group == LEAK_FREE]
    assert set(free.query_kind) == {"body", "keyword", "partial"}  # the mining fixtures
    assert choice.scores["section_efficiency@5"]["n"] == free.query_id.nunique()
    assert choice.verdict.questions == free.query_id.nunique()
    mine = free[(free.metric == "section_efficiency@5")
                & (free.config_id == choice.chosen["config_id"]) & (free.retriever == "bm25")]
    assert choice.chosen["section_efficiency@5"] == pytest.approx(mine["value"].mean())
    assert choice.used.kinds == (LEAK_FREE,) and "mined questions" in choice.comparison["source"]
    with pytest.raises(RuleError, match="unknown kind"):
        pick(run, rule(query_kinds=("nonsense",)))


def test_the_comparison_is_a_test_of_the_pair_alone_grouped_by_page(run):
    choice = pick(run, rule(query_kinds=EVERY))
    assert choice.comparison["test"].startswith("cluster sign-flip (")
    text = ex.paired_text(choice.comparison)
    assert f"p = {choice.comparison['p_value']:.3g}" in text
    assert "paired test of this pair alone" in text and "grouped by page" in text


def test_identical_configs_count_once_and_the_runner_up_differs(run):
    twins = {s["config_id"]: s["same_as"] for s in run.run_info["identical_configs"]}
    assert len(twins) == 2  # structure_routed applies ast_breadcrumb to every document
    choice = pick(run, rule(primary_metric="query_in_prefix", tie_margin=0.0,
                            query_kinds=EVERY))
    assert choice.chosen["config_id"] not in twins and choice.runner_up["config_id"] not in twins
    assert choice.runner_up["config_id"] != choice.chosen["config_id"]
    assert set(choice.verdict.outcome.cost).isdisjoint(twins)  # twins are no candidates
    breadcrumbs = choice.candidates[(choice.candidates.strategy == "ast_breadcrumb")]
    assert (breadcrumbs["identical"].str.startswith("structure_routed/")).all()
    described = cx.describe(choice)
    assert described.loc[0, "identical"] == ", ".join(choice.identical)


def test_notebook_text_names_what_was_excluded_not_binding_and_identical(run):
    scoped = pick(run, rule(constraints=("tokens_p50 <= 21.5 on dense",)))
    text = cx.constraints_text(scoped)
    assert "excluded: nothing" in text
    assert "not binding: tokens_p50 <= 21.5 on dense (does not apply to bm25)" in text
    assert cx.margins_chart(scoped.candidates, scoped.rule).startswith("no constraint binds bm25")
    binding = pick(run, rule(constraints=("tokens_p50 <= 21.5 on all",)))
    lines = cx.constraints_text(binding).splitlines()
    assert lines[:len(binding.excluded)] == [f"excluded: {e}" for e in binding.excluded]
    assert not isinstance(cx.margins_chart(binding.candidates, binding.rule), str)
    stats = run.chunk_stats
    merged = stats.loc[stats.strategy == "ast_merge", "index_tokens"].max()
    assert merged < stats.loc[stats.strategy == "ast_breadcrumb", "index_tokens"].min()
    only = pick(run, rule(constraints=(f"index_tokens > {merged} on all",)))  # breadcrumbs
    assert only.chosen["strategy"] == "ast_breadcrumb"
    assert f"identical to the chosen config (the same chunks, scored once): " \
           f"structure_routed/{only.chosen['size']}" in cx.constraints_text(only)
