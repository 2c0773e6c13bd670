"""Tables as a reader sees them: numbers to three places, shares as percentages, whole
numbers without a decimal point, nothing where a value is missing, a marked row highlighted,
and a wide table scrolling inside its column instead of running off the page. One pandas
Styler does it for the notebooks' tables (every DataFrame a cell shows, once
``enable_table_format`` ran) and for the report's index page."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from numbers import Number

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from ..evaluation.run import tables as schemas

DECIMALS = 3
MISSING = "–"
"""Shown where a value could not be measured (NaN, None)."""
HIGHLIGHT = "chosen"
"""The class of a highlighted row."""
CSS = """<style>
div.chunkproof-table{overflow-x:auto;max-width:100%;margin:4px 0 10px}
div.chunkproof-table table.chunkproof{border-collapse:collapse;font:12px/1.45 system-ui,sans-serif;
  margin:0;table-layout:auto}
div.chunkproof-table table.chunkproof th,div.chunkproof-table table.chunkproof td{
  border:1px solid #d4d4d8;
  padding:2px 8px;text-align:left;vertical-align:top;max-width:36em}
div.chunkproof-table table.chunkproof th{background:#f1f5f9;font-weight:600;white-space:nowrap}
div.chunkproof-table table.chunkproof tbody tr:nth-child(odd){background:#fafafa}
div.chunkproof-table table.chunkproof tbody tr:hover{background:#eef2ff}
div.chunkproof-table table.chunkproof td.num{text-align:right;font-variant-numeric:tabular-nums;
  white-space:nowrap}
div.chunkproof-table table.chunkproof td.interval{white-space:nowrap;
  font-variant-numeric:tabular-nums}
div.chunkproof-table table.chunkproof td.chosen{background:#fef3c7;font-weight:600}
div.chunkproof-table table.chunkproof caption{caption-side:top;text-align:left;color:#475569;
  padding:2px 0}
</style>"""
WHOLE_SIZES = ("tokens", "chars", "words", "bundle")
"""A column named with one of these words (``tokens_p50``, ``bundle_chars``) holds a size:
shown to the nearest whole unit."""
INTERVAL = re.compile(r"^-?[\d.]+ \[[-+]?[\d.]+, [-+]?[\d.]+\]$")
"""A ``mean [low, high]`` cell, kept on one line."""


def share_columns(columns: Iterable[str]) -> list[str]:
    """The columns holding a share (0 to 1): named ``*_share``, or declared as "share of
    ..." in a result table's schema."""
    declared = {c.name for table in schemas.RESULT_TABLES for c in table.columns
                if c.meaning.lower().startswith("share of")}
    return [c for c in columns if str(c).endswith("_share") or str(c) in declared]


def size_columns(columns: Iterable[str]) -> list[str]:
    """The columns holding a size in tokens, chars or words (see ``WHOLE_SIZES``)."""
    return [c for c in columns
            if set(re.split(r"[_\s]+", str(c).lower())) & set(WHOLE_SIZES)]


def cell_text(value, *, percent: bool = False, places: int = DECIMALS) -> str:
    """One value as text: a float to ``DECIMALS`` places (or as a percentage), a whole float
    as an integer, a missing value or an empty container as ``MISSING`` / nothing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict | list | tuple | set):
        return ", ".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) \
            else ", ".join(map(str, value))
    if isinstance(value, str):
        return "" if value.strip() in ("{}", "[]") else value
    if isinstance(value, Number):
        number = float(value)  # type: ignore[arg-type]
        if math.isinf(number):
            return "∞" if number > 0 else "−∞"
        if percent:
            return f"{number:.1%}"
        if number.is_integer() and not isinstance(value, float):
            return f"{int(number)}"
        text = f"{number:,.{places}f}" if not places else f"{number:.{places}f}"
        return text.lstrip("-") if float(text.replace(",", "")) == 0 else text
    return str(value)


def interval_text(mean, low, high) -> str:
    """``0.874 [0.812, 0.930]``, or the mean alone when the interval was not measured."""
    if pd.isna(mean):
        return ""
    if pd.isna(low) or pd.isna(high):
        return f"{mean:.3f}"
    return f"{mean:.3f} [{low:.3f}, {high:.3f}]"


def whole_columns(frame: pd.DataFrame) -> list[str]:
    """Float columns whose every value is whole, infinite or missing (a rank, a count read
    back with NaN, a ratio over nothing): shown without a decimal point."""
    found = []
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_float_dtype(column):
            values = column.dropna()
            finite = values[np.isfinite(values)]
            if len(values) and (finite == finite.round()).all():
                found.append(name)
    return found


def styled(frame: pd.DataFrame, *, highlight: Sequence[bool] | pd.Series | None = None,
           percent: Iterable[str] = (), caption: str = "") -> Styler:
    """``frame`` as a Styler: every cell through ``cell_text`` (shares and ``percent``
    columns as percentages, whole float columns as integers), numbers right-aligned, the
    rows where ``highlight`` is true marked as chosen, no index."""
    frame = frame.reset_index(drop=True)
    shares = set(share_columns(frame.columns)) | set(percent)
    whole = set(whole_columns(frame))
    sizes = set(size_columns(frame.columns)) - shares

    def text_of(name):
        if name in whole and name not in shares:
            return lambda v: cell_text(int(v) if pd.notna(v) and math.isfinite(v) else v)
        return lambda v: cell_text(v, percent=name in shares,
                                   places=0 if name in sizes else DECIMALS)

    numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])
               and not pd.api.types.is_bool_dtype(frame[c])]
    marked = [False] * len(frame) if highlight is None else [bool(m) for m in highlight]
    intervals = {c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])
                 and frame[c].map(lambda v: isinstance(v, str) and bool(INTERVAL.match(v))).any()}
    classes = pd.DataFrame([[" ".join(["num"] * (c in numeric) + ["interval"] * (c in intervals)
                                      + [HIGHLIGHT] * marked[i])
                             for c in frame.columns] for i in range(len(frame))],
                           index=frame.index, columns=frame.columns)
    styler = frame.style.format({name: text_of(name) for name in frame.columns},
                                escape="html").format_index(escape="html", axis=1)
    # the class outranks JupyterLab's right-aligned `.jp-RenderedHTMLCommon td` in exports
    styler = styler.hide(axis="index").set_td_classes(classes).set_table_attributes(
        'class="chunkproof"')
    if caption:
        styler = styler.set_caption(caption)
    return styler


def table_html(frame: pd.DataFrame | Styler, **options) -> str:
    """The table as HTML inside a block that scrolls sideways when the table is wider than
    the page, with the stylesheet."""
    styler = frame if isinstance(frame, Styler) else styled(frame, **options)
    return f'{CSS}<div class="chunkproof-table">{styler.to_html()}</div>'


class Table:
    """A table a notebook cell shows (``_repr_html_``), formatted by ``styled``."""

    def __init__(self, frame: pd.DataFrame | Styler, **options):
        self.styler = frame if isinstance(frame, Styler) else styled(frame, **options)

    @property
    def data(self) -> pd.DataFrame:
        return self.styler.data

    def _repr_html_(self) -> str:
        return table_html(self.styler)


def enable_table_format() -> None:
    """Every DataFrame and Styler a notebook cell shows goes through ``table_html`` (the
    plain-text form is left alone); a no-op outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the notebook stack
        return
    shell = get_ipython()
    if shell is None:
        return
    formatter = shell.display_formatter.formatters["text/html"]
    formatter.for_type(pd.DataFrame, table_html)
    formatter.for_type(Styler, table_html)
