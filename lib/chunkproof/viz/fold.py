"""Folded output: a table or chart shown closed under a one-line summary until a reader opens
it, so a page leads with what decides and keeps the rest one click away."""

from __future__ import annotations

from html import escape

import pandas as pd
from pandas.io.formats.style import Styler

from .altair_import import alt
from .render import SVG, offline_bundle
from .tables import table_html

STYLE = ("margin:6px 0;border:1px solid #cbd5e1;border-radius:4px;padding:4px 8px;"
         "font:14px system-ui,sans-serif")
SUMMARY_STYLE = "cursor:pointer;font-weight:600;color:#1e3a8a"


def item_html(item) -> str:
    """``item`` as HTML: a chart as the SVG the HTML export shows, a table through the one
    table formatter, anything with an HTML form as that, else its text, escaped."""
    if isinstance(item, alt.TopLevelMixin):
        return offline_bundle(item.to_dict())[0][SVG]
    if isinstance(item, pd.DataFrame | Styler):
        return table_html(item)
    html = getattr(item, "_repr_html_", None)
    return html() if callable(html) else f"<pre>{escape(str(item))}</pre>"


class Folded:
    """``item`` in a closed ``<details>`` block whose summary line is ``summary``."""

    def __init__(self, summary: str, item):
        self.summary = summary
        self.item = item

    def _repr_html_(self) -> str:
        return (f'<details class="chunkproof-fold" style="{STYLE}">'
                f'<summary style="{SUMMARY_STYLE}">{escape(self.summary)}</summary>'
                f"{item_html(self.item)}</details>")
