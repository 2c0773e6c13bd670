"""What a choice rests on: per-kind figures (count, leaks, ceiling, spread, pairs separated),
the kinds a choice is made on, and a choice whose questions cannot tell configs apart said to
be decided by cost, in chosen_config.yaml and at the top of the index page."""

from __future__ import annotations

from dataclasses import replace

import pytest
import yaml

from chunkproof.document.corpus import load_corpus
from chunkproof.evaluation.choice import decision as dc
from chunkproof.evaluation.choice.choose import ChoiceRule, load_run
from chunkproof.evaluation.queries.mining import mine_all
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep, summary_table
from chunkproof.evaluation.scoring.kind_figures import kind_figures
from chunkproof.notebooks import choose_and_export as cx
from chunkproof.notebooks.index_page import write_index

METRIC = "answer_hit@5"


TOOLS = ["copies files", "renames folders", "signs releases", "rotates logs", "builds wheels",
         "mirrors archives", "checks links", "resizes images", "prunes caches", "tags commits",
         "merges reports", "sends alerts"]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tools")
    for i, does in enumerate(TOOLS):
        (folder / f"tool{i}.md").write_text(
            f"# Tool {i}\n\nThe tool{i} command {does} for the team that owns bucket {i}.\n\n"
            f"## Options\n\nPass --dry-run to see what tool{i} would change before it "
            f"{does} for real on the shared server.\n")
    return folder


@pytest.fixture(scope="module")
def run(root, tmp_path_factory):
    out = tmp_path_factory.mktemp("decide") / "run"
    run_sweep(_params(root), out, progress=False)
    return load_run(out)


@pytest.fixture(scope="module")
def corpus(root):
    return load_corpus(root)


def scored(run, value_of) -> object:
    """The run with every answer_hit@5 value replaced by ``value_of(config_id, query_id)``."""
    per_query = run.per_query.copy()
    rows = per_query["metric"] == METRIC
    per_query.loc[rows, "value"] = [float(value_of(c, q)) for c, q in zip(
        per_query.loc[rows, "config_id"], per_query.loc[rows, "query_id"], strict=True)]
    return replace(run, per_query=per_query, summary=summary_table(per_query, run.chunk_stats))


def test_every_config_at_the_ceiling_is_decided_by_cost_only(run, corpus):
    ceiling = scored(run, lambda c, q: 1)
    decision = dc.decide(ceiling, METRIC, "bm25", corpus=corpus)
    assert decision.decided_by == dc.COST_ONLY
    assert "all at the ceiling" in decision.reason and "not a verdict" in decision.reason
    assert f"about {dc.questions_needed()} questions" in decision.advice
    table = decision.figures.set_index("query_kind")
    table = table[table["scored"] > 0]  # title and body queries carry no answer span
    assert {"keyword", "partial", "all"} <= set(table.index)
    assert (table["ceiling"] == 1.0).all() and (table["pairs_separated"] == 0).all()
    assert (table["spread"] == 0).all()


def one_kind(run, leaking: set[str]):
    """The run with every query of kind ``written``, those of ``leaking`` (query ids) moved
    to kind ``leaky`` and found in a gold chunk's prefix, the rest in none."""
    per_query = run.per_query.copy()
    per_query["query_kind"] = per_query["query_id"].map(
        lambda q: "leaky" if q in leaking else "written")
    prefix = per_query["metric"] == "query_in_prefix"
    per_query.loc[prefix, "value"] = per_query.loc[prefix, "query_id"].isin(leaking) * 1.0
    return replace(run, per_query=per_query)


def test_kinds_that_separate_configs_decide(run, corpus):
    best = sorted(run.chunk_stats["config_id"])[0]
    queries = mine_all(corpus).queries
    leaking = {q.id for q in queries[:3]}
    separated = one_kind(scored(run, lambda c, q: c == best), leaking)
    decision = dc.decide(separated, METRIC, "bm25", corpus=corpus)
    figures = decision.figures.set_index("query_kind")
    whole = figures.loc["all"]
    assert whole["spread"] == 1.0 and whole["ceiling"] == 0.0 and whole["floor"] == 0.0
    assert whole["pairs"] == 1 and whole["pairs_separated"] == 1  # size 400 repeats 200
    assert whole["queries"] == len(queries) and whole["scored"] < len(queries)
    assert figures.loc["leaky", "in_prefix"] == 1.0 and not figures.loc["leaky", "leak_free"]
    assert decision.decided_by == dc.EVIDENCE and decision.kinds == ("written",)
    choice, final = dc.choose_deciding(separated, ChoiceRule(primary_metric=METRIC),
                                       decision=decision, corpus=corpus)
    assert choice.chosen["config_id"] == best and choice.decided_by == dc.EVIDENCE
    assert choice.rule.query_kinds == decision.kinds


def test_leaks_are_counted_per_kind(run, corpus):
    queries = mine_all(corpus).queries
    figures = kind_figures(run, METRIC, "bm25", queries=queries, docs=corpus)
    by_kind = figures.set_index("query_kind")
    per_query = run.per_query
    prefix = per_query[per_query["metric"] == "query_in_prefix"].groupby(
        ["query_kind", "query_id"])["value"].max().groupby("query_kind").mean()
    for kind, share in prefix.items():
        assert by_kind.loc[kind, "in_prefix"] == pytest.approx(share)
    assert (by_kind["terms_in_prefix"] >= by_kind["in_prefix"]).all()  # a term of it at least
    assert by_kind.loc["all", "queries"] == len(queries)


def test_cost_only_is_written_to_the_yaml_and_the_top_of_the_index(run, corpus, tmp_path):
    ceiling = scored(run, lambda c, q: 1)
    choice, decision = dc.choose_deciding(ceiling, ChoiceRule(primary_metric=METRIC),
                                          corpus=corpus)
    written = cx.export(choice, tmp_path, decision)
    data = yaml.safe_load(written[0].read_text())
    assert data["decided_by"] == "cost only"
    assert "ceiling" in data["decision"] and data["to_decide"].startswith("Write about")
    assert (tmp_path / cx.KINDS_FILE).is_file()
    for name in ("run.json", "summary.csv", "chunk_stats.csv", "per_query.parquet",
                 "chunks.parquet", "retrieved.parquet", "significance.csv"):
        source = run.run_dir / name
        if source.is_file():
            (tmp_path / name).write_bytes(source.read_bytes())
    page = write_index(tmp_path, [], _params(corpus.root)).read_text()
    choice_at = page.index("<h2>The choice</h2>")
    assert page.index('id="decided-by"') < page.index("Chosen:") and choice_at < page.index(
        'id="decided-by"')
    assert "Decided by cost only" in page and "Write about" in page
    assert "What each kind of query can tell" in page


def _params(root):
    return SweepParams(corpus=str(root), strategies=("rct", "ast_breadcrumb"), sizes=(200, 400))


def test_questions_needed_grows_as_the_difference_shrinks():
    assert dc.questions_needed(0.36, 0.36) < dc.questions_needed() < dc.questions_needed(0.1)
    assert dc.questions_needed(0.2, 0.3) == 59  # (1.96 + 0.84)^2 * 0.3 / 0.04, rounded up
