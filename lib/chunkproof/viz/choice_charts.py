"""Charts a reader acts on: every config's primary metric with its 95% interval and the
chosen config and runner-up marked, the trade-off between that metric and the bundle a
reader is handed, the per-query wins and losses behind a paired test, and the chunk-size
histograms that show the many tiny chunks a min-max box hides."""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd

from ..errors import ChartError
from ..evaluation.choice.rules import BUNDLE_TOKENS
from .altair_import import alt
from .charts import REALISED, config_label, note

ROLES = ("chosen", "runner-up", "meets the rule", "excluded by a constraint")
ROLE_COLOURS = ("#b45309", "#1d4ed8", "#64748b", "#cbd5e1")



def roles(candidates: pd.DataFrame, chosen: str, runner_up: str | None) -> pd.Series:
    """Each candidate's role: chosen, runner-up, meets the rule, or excluded (fails a
    constraint, or repeats another config's chunks)."""
    def role(row) -> str:
        if row["config_id"] == chosen:
            return ROLES[0]
        if runner_up is not None and row["config_id"] == runner_up:
            return ROLES[1]
        excluded = not row.get("passes", True) or bool(row.get("same_as", ""))
        return ROLES[3] if excluded else ROLES[2]
    return candidates.apply(role, axis=1)


def _frame(candidates: pd.DataFrame, metric: str, chosen: str,
           runner_up: str | None) -> pd.DataFrame:
    if metric not in candidates:
        raise ChartError(f"no column {metric!r} among the candidates")
    short = candidates.drop(columns=[c for c in REALISED if c in candidates])
    frame = candidates.assign(config=config_label(short),
                              role=roles(candidates, chosen, runner_up))
    return frame.dropna(subset=[metric])


def _role_colour(title: str | None = None) -> alt.Color:
    return alt.Color("role:N", title=title, scale=alt.Scale(domain=list(ROLES),
                                                            range=list(ROLE_COLOURS)))


def choice_intervals(candidates: pd.DataFrame, metric: str, *, chosen: str,
                     runner_up: str | None = None) -> alt.LayerChart:
    """One row per config, best first: the mean of ``metric`` as a dot, its 95% interval as
    a whisker, coloured by role (chosen, runner-up, meets the rule, excluded)."""
    frame = _frame(candidates, metric, chosen, runner_up)
    order = list(frame.sort_values(metric, ascending=False)["config"])
    base = alt.Chart(frame).encode(y=alt.Y("config:N", sort=order, title=None),
                                   color=_role_colour())
    tooltip = ["config", "role", alt.Tooltip(f"{metric}:Q", format=".3f"),
               alt.Tooltip("ci_low:Q", format=".3f"), alt.Tooltip("ci_high:Q", format=".3f")]
    whiskers = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("ci_low:Q", title=f"{metric} (mean, 95% interval)",
                scale=alt.Scale(zero=False)), x2="ci_high:Q")
    dots = base.mark_point(filled=True, size=80, opacity=1).encode(
        x=f"{metric}:Q", shape=alt.Shape("role:N", legend=None, scale=alt.Scale(
            domain=list(ROLES), range=["diamond", "circle", "circle", "circle"])),
        tooltip=tooltip)
    return (whiskers + dots).properties(width=380, height=alt.Step(20),
                                        title=f"{metric} per config")


def tradeoff(candidates: pd.DataFrame, metric: str, *, chosen: str,
             runner_up: str | None = None, size: str = BUNDLE_TOKENS) -> alt.LayerChart:
    """``metric`` against the bundle a reader is handed (``size``: by default its cost, the
    mean tokens of the top-k chunks' context labels and texts, as the tie-break and the
    verdict count it), one point per config; chosen and runner-up labelled apart from each
    other (``label_sides``), configs a constraint excludes greyed."""
    frame = _frame(candidates, metric, chosen, runner_up).dropna(subset=[size])
    if frame.empty:
        raise ChartError(f"no candidate carries {size!r}")
    unit = "tokens handed to the reader, labels included" if "token" in size else "chars"
    frame = frame.reset_index(drop=True)
    frame = frame.assign(label_side=label_sides(frame, metric, size))
    base = alt.Chart(frame).encode(
        x=alt.X(f"{size}:Q", title=f"bundle ({unit}, mean of the top-k)",
                scale=alt.Scale(zero=False),
                axis=alt.Axis(tickCount=6, labelOverlap="greedy")),
        y=alt.Y(f"{metric}:Q", title=metric, scale=alt.Scale(zero=False)),
        color=_role_colour())
    points = base.mark_point(filled=True, size=70, opacity=1).encode(
        tooltip=["config", "role", alt.Tooltip(f"{metric}:Q", format=".3f"),
                 alt.Tooltip(f"{size}:Q", format=".0f")])
    chart = alt.LayerChart(layer=[points])
    for side, (align, dx, dy) in LABEL_PLACES.items():
        chart += base.transform_filter(alt.datum.label_side == side).mark_text(
            fontSize=11, align=align, dx=dx, dy=dy).encode(text="config:N")
    return chart.properties(width=380, height=260, title=f"{metric} against bundle size")


LABEL_PLACES: dict[str, tuple[Literal["left", "right"], int, int]] = {
    "above": ("left", 7, -8), "below": ("left", 7, 12), "left": ("right", -7, -8)}
"""Where a labelled point's name is written beside it: alignment, dx and dy in pixels."""


def label_sides(frame: pd.DataFrame, metric: str, size: str) -> pd.Series:
    """Where the trade-off chart names each point: only the chosen config and the runner-up
    are named ("" for the rest), apart from each other: the one scoring higher above its
    point and the other below, or, on equal scores, the one with the smaller bundle to the
    left of its point, so two neighbouring configs never write their names over each other."""
    sides = pd.Series("", index=frame.index)
    named = frame[frame["role"].isin(ROLES[:2])]
    if len(named) == 1:
        sides[named.index] = "above"
    elif len(named) == 2:
        first, second = named.index
        a, b = named.loc[first], named.loc[second]
        if a[metric] != b[metric]:
            high = first if a[metric] > b[metric] else second
            sides[[first, second]] = ["above" if i == high else "below" for i in (first, second)]
        else:
            left = first if a[size] <= b[size] else second
            sides[[first, second]] = ["left" if i == left else "above" for i in (first, second)]
    return sides


def choice_picture(candidates: pd.DataFrame, metric: str, *, chosen: str,
                   runner_up: str | None = None) -> alt.HConcatChart | alt.LayerChart:
    """The intervals and, when bundle sizes were measured, the trade-off beside them."""
    intervals = choice_intervals(candidates, metric, chosen=chosen, runner_up=runner_up)
    if BUNDLE_TOKENS not in candidates or candidates[BUNDLE_TOKENS].isna().all():
        return intervals
    return alt.hconcat(intervals, tradeoff(candidates, metric, chosen=chosen,
                                           runner_up=runner_up)).resolve_legend(color="shared")


def win_loss(differences: pd.DataFrame) -> alt.FacetChart | alt.Chart:
    """Per query, chosen minus the other config on the primary metric (``differences``:
    comparison, query_id, query_kind, difference, and optionally query), one bar per query
    sorted by the difference, coloured by query kind; one panel per comparison. Bars above
    zero are queries the chosen config wins; with no other config, a line saying so."""
    if differences.empty:
        return note("no other config to compare the chosen one with, query by query")
    frame = differences.copy()
    frame["order"] = frame.groupby("comparison")["difference"].rank(method="first",
                                                                     ascending=False)
    tooltip = ["query_id", "query_kind", alt.Tooltip("difference:Q", format="+.3f")]
    if "query" in frame:
        tooltip.insert(1, "query")
    bars = alt.Chart().mark_bar().encode(
        x=alt.X("order:O", title="queries, sorted by the difference", axis=None),
        y=alt.Y("difference:Q", title="chosen − other"),
        color=alt.Color("query_kind:N", title="query kind"), tooltip=tooltip)
    zero = alt.Chart().mark_rule(color="#334155").encode(y=alt.datum(0))
    return alt.layer(bars, zero, data=frame).properties(width=520, height=120).facet(
        row=alt.Row("comparison:N", title=None, sort=list(dict.fromkeys(frame["comparison"])),
                    header=alt.Header(labelAngle=0, labelAlign="left")))  # runner-up first


def size_histograms(chunks: pd.DataFrame, *, field: str = "n_tokens",
                    bins: int = 30) -> alt.FacetChart:
    """Chunk sizes per strategy as histograms on log-spaced bins (tiny chunks get bins of
    their own instead of vanishing below a box), one line per requested size."""
    values = chunks[field].astype(float)
    if values.empty:
        raise ChartError("no chunks to draw")
    low, high = max(values.min(), 1.0), max(values.max(), 2.0)
    edges = np.unique(np.geomspace(low, high * 1.0001, bins + 1).round(1))
    if len(edges) < 2:  # every chunk the same size: one bin
        edges = np.array([low, low + 1.0])
    frame = chunks.assign(value=values.clip(lower=low))
    # bin i holds [edges[i], edges[i+1]); the largest chunk goes into the last bin
    frame["bin"] = np.clip(np.searchsorted(edges, frame["value"], side="right") - 1, 0,
                           len(edges) - 2)
    counts = (frame.groupby(["strategy", "size", "bin"]).size().rename("chunks")
              .reset_index())
    counts["start"] = edges[counts["bin"].astype(int)]
    counts["end"] = edges[counts["bin"].astype(int) + 1]
    unit = {"n_tokens": "tokens", "n_chars": "chars", "n_words": "words"}.get(field, field)
    bars = alt.Chart().mark_bar(opacity=0.55, binSpacing=0).encode(
        x=alt.X("start:Q", scale=alt.Scale(type="log", domain=[float(edges[0]),
                                                                float(edges[-1])]),
                title=f"chunk size ({unit}, log scale)"),
        x2="end:Q", y=alt.Y("chunks:Q", stack=None, title="chunks"), y2=alt.datum(0),
        color=alt.Color("size:N", title="requested size"),
        tooltip=["strategy", "size", alt.Tooltip("start:Q", format=".0f"),
                 alt.Tooltip("end:Q", format=".0f"), "chunks"])
    return alt.layer(bars, data=counts).properties(width=420, height=90).facet(
        row=alt.Row("strategy:N", title=None, header=alt.Header(labelAngle=0,
                                                                 labelAlign="left"))
    ).resolve_scale(y="independent")
