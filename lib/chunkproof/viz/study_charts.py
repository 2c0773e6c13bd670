"""The study drawn: a forest plot of one retriever and metric, each config's effect over the
study's reference on every site (dots), pooled (a bar for its 95% interval) and as expected on
a new site (the thin bar of the prediction interval)."""

from __future__ import annotations

import pandas as pd

from .altair_import import alt


def forest(pooled: pd.DataFrame, sites: pd.DataFrame, *, title: str) -> alt.TopLevelMixin:
    """``pooled``: a row per config (``config``, ``effect``, ``ci_low``, ``ci_high``,
    ``pi_low``, ``pi_high``); ``sites``: a row per config and site (``config``, ``site``,
    ``effect``). Configs are ordered by pooled effect, best at the top."""
    order = list(pooled.sort_values(["effect", "config"], ascending=[False, True])["config"])
    y = alt.Y("config:N", sort=order, title=None)
    label = "effect over the reference (share of questions answered)"
    axis = alt.X("effect:Q", title=label)
    base = alt.Chart(pooled)
    prediction = base.mark_rule(color="#94a3b8", strokeWidth=1).encode(
        y=y, x=alt.X("pi_low:Q", title=label), x2="pi_high:Q")
    interval = base.mark_rule(color="#1d4ed8", strokeWidth=4).encode(
        y=y, x="ci_low:Q", x2="ci_high:Q",
        tooltip=["config", alt.Tooltip("effect:Q", format="+.3f"),
                 alt.Tooltip("ci_low:Q", format="+.3f"), alt.Tooltip("ci_high:Q", format="+.3f"),
                 alt.Tooltip("pi_low:Q", format="+.3f"), alt.Tooltip("pi_high:Q", format="+.3f"),
                 alt.Tooltip("i2:Q", format=".0%", title="I²")])
    centre = base.mark_point(color="#1d4ed8", filled=True, size=50, shape="diamond").encode(
        y=y, x=axis)
    dots = alt.Chart(sites).mark_circle(color="#f97316", size=18, opacity=0.7).encode(
        y=y, x="effect:Q", tooltip=["site", "config", alt.Tooltip("effect:Q", format="+.3f")])
    zero = alt.Chart(pd.DataFrame({"effect": [0.0]})).mark_rule(
        color="#111827", strokeDash=[3, 3]).encode(x="effect:Q")
    height = max(160, 16 * len(order))
    return alt.layer(prediction, interval, dots, centre, zero).properties(
        title=title, width=520, height=height)
