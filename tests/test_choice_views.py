"""The choice as a reader sees it: query-by-query wins and losses against the runner-up and
rct, the picture of every config's interval and trade-off, chunk-size histograms, and the
boundary strip of where each splitter cuts."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from chunkproof.chunking.build import chunk_document
from chunkproof.chunking.config import make_config
from chunkproof.evaluation.choice import choose as ch
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep
from chunkproof.notebooks import choose_and_export as cx
from chunkproof.viz import charts, choice_charts
from chunkproof.viz.strip import BoundaryStrip
from conftest import FIXTURES, fixture_doc

MINI = FIXTURES / "mini_corpus"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("views") / "run"
    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("rct", "ast_breadcrumb"), sizes=(200, 400))
    run_sweep(params, out, progress=False)
    return ch.load_run(out)


@pytest.fixture(scope="module")
def choice(run):
    return ch.choose(run, ch.ChoiceRule(primary_metric="answer_hit@5"))


def test_per_query_differences_are_chosen_minus_the_other(run, choice):
    differences = cx.per_query_differences(choice, run)
    rows = run.per_query[(run.per_query.metric == "answer_hit@5")
                         & (run.per_query.retriever == "bm25")]
    value = rows.set_index(["config_id", "query_id"])["value"]
    runner = choice.runner_up["config_id"]
    against = differences[differences.comparison.str.startswith("vs runner-up")]
    assert len(against) == rows.query_id.nunique()
    for row in against.itertuples():
        assert row.difference == pytest.approx(value[choice.chosen["config_id"], row.query_id]
                                               - value[runner, row.query_id])
    comparisons = set(differences.comparison)
    assert (choice.chosen["strategy"] == "rct") == (len(comparisons) == 1)
    counts = cx.win_loss_counts(differences)
    total = counts[["wins", "ties", "losses"]].sum(axis=1).groupby(counts.comparison).sum()
    assert (total == rows.query_id.nunique()).all()
    chart = str(choice_charts.win_loss(differences).to_dict())
    assert "'field': 'query_kind'" in chart and "'field': 'difference'" in chart
    order = choice_charts.win_loss(differences).to_dict()["facet"]["row"]["sort"]
    assert order[0].startswith("vs runner-up")  # the panel the text calls the top one


def test_the_choice_picture_marks_the_chosen_and_the_runner_up(run, choice):
    table = ch.candidates(run, choice.rule)
    roles = choice_charts.roles(table, choice.chosen["config_id"],
                                choice.runner_up["config_id"])
    assert sorted(roles.value_counts().to_dict().items())[0][0] in choice_charts.ROLES
    assert (roles == "chosen").sum() == 1 and (roles == "runner-up").sum() == 1
    spec = str(choice_charts.choice_picture(table, "answer_hit@5",
                                            chosen=choice.chosen["config_id"],
                                            runner_up=choice.runner_up["config_id"]).to_dict())
    assert "ci_low" in spec and "bundle_tokens" in spec


def drawn_labels(chart) -> dict[str, tuple[float, float, float, float]]:
    """The box (left, top, right, bottom) of each text the rendered SVG writes, by its text:
    11 px high, at most 7 px a char wide, on the side of its anchor its alignment says."""
    svg = charts.to_svg(chart)
    boxes = {}
    for tag, x, y, text in re.findall(r'(<text[^>]*transform="translate\(([-\d.]+),([-\d.]+)'
                                      r'\)"[^>]*>)([^<]*)</text>', svg):
        left, width = float(x), 7 * len(text)
        if 'text-anchor="end"' in tag:
            left -= width
        boxes[text] = (left, float(y) - 11, left + width, float(y))
    return boxes


@pytest.mark.parametrize("scores", [(0.70, 0.705), (0.70, 0.70)])
def test_neighbouring_configs_never_write_their_names_over_each_other(scores):
    configs = pd.DataFrame({
        "config_id": ["a", "b", "c"], "strategy": ["ast_merge", "ast_merge", "rct"],
        "size": [300, 600, 300], "unit": "chars", "options": "{}", "mode": "plain",
        "answer_hit@b1024": [*scores, 0.5], "ci_low": 0.4, "ci_high": 0.8,
        "bundle_tokens": [900, 905, 700], "passes": True, "same_as": ""})
    chart = choice_charts.tradeoff(configs, "answer_hit@b1024", chosen="a", runner_up="b",
                                   size="bundle_tokens")
    found = drawn_labels(chart)
    a, b = found["ast_merge/300"], found["ast_merge/600"]
    assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1], (a, b)  # apart
    assert "rct/300" not in found  # only the chosen config and the runner-up are named


def test_size_histograms_draw_one_panel_per_strategy(run):
    spec = choice_charts.size_histograms(run.chunks).to_dict()
    assert "'y2': {'datum': 0}" in str(spec)  # bars rise from zero, not thin strips at height
    (rows,) = spec["datasets"].values()
    drawn: dict = {}
    for row in rows:
        key = (row["strategy"], row["size"])
        drawn[key] = drawn.get(key, 0) + row["chunks"]
    made = run.chunks.groupby(["strategy", "size"]).size().to_dict()
    assert drawn == made  # every chunk in a bar, the largest too


def test_the_boundary_strip_ticks_every_cut_and_flags_one_inside_a_fence():
    doc = fixture_doc("long_fence.md")
    chunks = {name: chunk_document(doc, make_config(strategy=name, size=120))
              for name in ("rct", "ast_merge")}
    strip = BoundaryStrip(doc, chunks)
    html = strip.html()
    for label, found in chunks.items():
        assert f'data-config="{label}"' in html
        assert 0 < len(strip.cuts(label)) <= len(found)
    inside = {label: [c for c in strip.cuts(label) if strip.inside_atom(c)] for label in chunks}
    assert inside["ast_merge"] == []  # ours never cuts a fence
    assert inside["rct"], "rct at 120 chars cuts the long fence"
    assert html.count('class="tick inside"') == len(inside["rct"])
