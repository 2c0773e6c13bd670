"""An exported report in a real headless Chromium with no network: the charts are drawn."""

from __future__ import annotations

import re

import pytest

from browser import chromium, count_near, needs_chromium, screenshot
from chunklab.notebooks.report import build_report
from conftest import FIXTURES

pytestmark = [*needs_chromium, pytest.mark.slow]
MINI = FIXTURES / "mini_corpus"
# Vega's default category colours: the first two strategies of the sweep are drawn in these.
BLUE, ORANGE = "#4c78a8", "#f58518"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    built = build_report(out, corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         sizes=[200, 400], strategies=["rct", "ast_breadcrumb"],
                         retrievers=["bm25"], notebooks=["03_strategy_sweep"], progress=False)
    assert not built.failed
    return out


def test_index_page_loads_offline_and_links_the_notebook(report, tmp_path):
    dom = chromium(tmp_path, "--virtual-time-budget=2000", "--dump-dom",
                   (report / "index.html").as_uri())
    assert 'href="03_strategy_sweep.html"' in dom
    assert "ast_breadcrumb" in dom  # the headline table is on the page
    assert screenshot(tmp_path, report / "index.html").std() > 10  # not a blank page


def test_notebook_charts_are_drawn_with_no_network(report, tmp_path):
    page = report / "03_strategy_sweep.html"
    html = page.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]+src=[\"']https?:", html)
    # The same page with its SVG charts cut out: those colours come from the charts alone.
    bare = tmp_path / "bare.html"
    bare.write_text(re.sub(r"<svg.*?</svg>", "", html, flags=re.S), encoding="utf-8")
    drawn, without = (chart_pixels(screenshot(tmp_path, p, width=1280, height=7000))
                      for p in (page, bare))
    print(f"chart-coloured pixels: {drawn} with the charts, {without} without")
    assert html.count("<svg") >= 3
    assert drawn > 500 and drawn > 10 * max(without, 1)


def chart_pixels(pixels) -> int:
    return count_near(pixels, BLUE) + count_near(pixels, ORANGE)
