"""Tables as the report shows them: three decimals, shares as percentages, whole numbers
without a decimal point, intervals beside means, nothing for a missing value, the chosen row
highlighted; and the choice said in words."""

from __future__ import annotations

import math

import pandas as pd

from chunkproof.viz.tables import MISSING, Table, cell_text, interval_text, styled, table_html


def test_cells_read_as_numbers_not_floats():
    assert cell_text(0.87412) == "0.874"
    assert cell_text(0.5, percent=True) == "50.0%"
    assert cell_text(math.nan) == MISSING and cell_text(None) == MISSING
    assert cell_text({}) == "" and cell_text("{}") == ""
    assert cell_text({"overlap": 50}) == "overlap=50"
    assert cell_text(-0.0001) == "0.000"  # no "-0.000"
    assert cell_text(12) == "12" and cell_text(True) == "yes"


def test_an_interval_sits_beside_its_mean():
    assert interval_text(0.8741, 0.81, 0.93) == "0.874 [0.810, 0.930]"
    assert interval_text(0.8741, math.nan, math.nan) == "0.874"


def test_a_table_has_no_nan_no_float_ranks_and_its_chosen_row_marked():
    frame = pd.DataFrame({"rank": [1.0, 2.0, math.nan], "config": ["a", "b", "c"],
                          "recall@5": [0.91234, 0.8, math.nan], "tokens_p50": [412.6, 90.2, 3.0],
                          "options": ["{}", "{}", "overlap=50"],
                          "with_breadcrumb_share": [1.0, 0.25, 0.0]})
    html = table_html(styled(frame, highlight=[True, False, False]))
    assert "NaN" not in html and "nan" not in html and "{}" not in html
    assert ">1<" in html and ">1.0<" not in html  # a rank read back as float
    assert "0.912" in html and "0.91234" not in html
    assert ">413<" in html  # a size to the whole token
    assert "25.0%" in html  # a share as a percentage
    assert html.count('class="chunkproof-table"') == 1 and "overflow-x:auto" in html
    first_row = html.split("<tr>")[2]
    assert "chosen" in first_row and "chosen" not in html.split("<tr>")[3]


def test_an_interval_cell_is_kept_on_one_line():
    frame = pd.DataFrame({"config": ["rct/300"], "recall@5": [interval_text(0.9, 0.8, 1.0)]})
    html = table_html(styled(frame))
    assert 'class="data row0 col1 interval"' in html and "td.interval{white-space:nowrap" in html


def test_a_table_object_shows_formatted_in_a_notebook():
    shown = Table(pd.DataFrame({"x": [0.123456]}))._repr_html_()
    assert "0.123" in shown and "0.123456" not in shown


def test_a_whole_number_column_holding_infinity_is_shown_not_converted():
    """On a tiny corpus a ratio over nothing is inf in a column otherwise whole: it once met
    ``int(inf)`` (OverflowError) and notebook 06 ended without a verdict."""
    frame = pd.DataFrame({"config": ["a", "b", "c"], "ratio": [2.0, math.inf, -math.inf],
                          "n": [1.0, float("nan"), 3.0]})
    html = styled(frame).to_html()
    assert ">2<" in html and "∞" in html and "−∞" in html and ">3<" in html


def test_the_density_table_of_queries_whose_section_density_was_not_measured():
    """An all-code corpus with mined queries: every section_efficiency value was NaN, the
    pivot dropped the whole ``mean`` column and notebook 03 ended with KeyError: 'mean'."""
    from types import SimpleNamespace

    from chunkproof.notebooks.strategy_sweep import density_table

    rows = [{"config_id": "c1", "strategy": "rct", "size": 200, "unit": "chars",
             "options": "{}", "retriever": "bm25", "query_id": f"q{i}", "metric": metric,
             "value": value}
            for i in range(3) for metric, value in (("bundle_efficiency@5", 0.5),
                                                    ("section_efficiency@5", math.nan))]
    table = density_table(SimpleNamespace(params=SimpleNamespace(k=5),
                                          per_query=pd.DataFrame(rows)))
    assert len(table) == 1 and math.isnan(table["ratio"].iloc[0])
