"""Folded output: closed under its summary, a chart as SVG, a table formatted, text escaped."""

from __future__ import annotations

import pandas as pd

from chunkproof.viz import charts
from chunkproof.viz.fold import Folded


def test_a_folded_chart_is_closed_and_drawn_as_svg():
    html = Folded("sizes <chart>", charts.note("nothing to compare"))._repr_html_()
    assert html.startswith('<details class="chunkproof-fold"') and " open" not in html
    assert "<summary" in html and "sizes &lt;chart&gt;</summary>" in html
    assert "<svg" in html and "nothing to compare" in html


def test_a_folded_table_goes_through_the_table_formatter_and_text_is_escaped():
    table = Folded("t", pd.DataFrame({"share": [0.5]}))._repr_html_()
    assert 'class="chunkproof-table"' in table
    assert "<pre>&lt;b&gt;</pre>" in Folded("x", "<b>")._repr_html_()
