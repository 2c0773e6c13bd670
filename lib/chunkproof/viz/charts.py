"""Altair charts of the sweep and profile tables (drawn with no network: ``render.py``)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..chunking.config import LINK_FIELDS
from ..chunking.sizes import SIZE_FIELDS, encoder_window
from ..errors import ChartError
from ..evaluation.choice.mode_candidates import SEPARATOR, split_candidate
from ..evaluation.retrieval.modes import PLAIN
from ..evaluation.scoring.families import EXPLORATORY, PLANNED, swap_sides
from . import render
from .altair_import import alt

# The notebooks and the report draw through charts.*; the renderer is render.py's.
RENDERER, SVG, LAB_MIME = render.RENDERER, render.SVG, render.LAB_MIME
to_svg, offline_bundle = render.to_svg, render.offline_bundle
enable_offline_renderer = render.enable_offline_renderer
WIDTH = 220
HEIGHT = 160
NO_DIFFERENCE = "no significant difference"
REALISED = ("tokens_p50", "tokens_p95")


# --- labels -------------------------------------------------------------------------------


def config_label(frame: pd.DataFrame) -> pd.Series:
    """``strategy/size`` plus the options that differ from the defaults, when any, the
    retrieval mode unless plain (a ``mode`` column, or a candidate id), then the realised
    median and p95 chunk size in tokens when the frame carries them."""
    label = frame["strategy"].astype(str) + "/" + frame["size"].astype(str)
    if "options" in frame:
        extra = frame["options"].map(_options_text)
        label = label + extra.where(extra == "", " " + extra)
    if "mode" in frame or "config_id" in frame:
        modes = (frame["mode"] if "mode" in frame else
                 frame["config_id"].map(lambda c: split_candidate(c)[1]))
        label = label + modes.map(lambda m: "" if m in (PLAIN, None) or pd.isna(m)
                                  else f" {SEPARATOR}{m}")
    if {"tokens_p50", "tokens_p95"} <= set(frame.columns):
        label = label + [realised_text(a, b) for a, b in zip(frame["tokens_p50"],
                                                             frame["tokens_p95"], strict=True)]
    return label


def realised_text(p50, p95) -> str:
    """`` (p50 142 · p95 310 tok)``: a config's realised chunk size, or nothing when unknown."""
    if pd.isna(p50) or pd.isna(p95):
        return ""
    return f" (p50 {p50:.0f} · p95 {p95:.0f} tok)"


def _options_text(options) -> str:
    """The options that shape a config's chunks (not how they link into the site: every
    config of a sweep links the same way)."""
    values = json.loads(options) if isinstance(options, str) and options else {}
    return ",".join(f"{k}={v}" for k, v in sorted(values.items()) if k not in LINK_FIELDS)


def _labels(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.copy()
    frame["config"] = config_label(frame)
    return frame


def _config_order(frame: pd.DataFrame) -> list[str]:
    ordered = frame.sort_values(["strategy", "size"])
    return list(dict.fromkeys(config_label(ordered)))


def _interval_tooltip(*fields: str) -> list:
    """``fields``, then the mean and its 95% interval to 3 places, then n."""
    return [*fields, *(alt.Tooltip(f"{name}:Q", format=".3f")
                       for name in ("mean", "ci_low", "ci_high")), "n"]


def _pick(summary: pd.DataFrame, split: str, retriever: str | None,
          metrics=None) -> pd.DataFrame:
    rows = summary[summary["split"] == split]
    if retriever is not None:
        rows = rows[rows["retriever"] == retriever]
    if metrics is not None:
        rows = rows[rows["metric"].isin(list(metrics))]
    if rows.empty:
        raise ChartError(f"no summary rows for split={split!r}, retriever={retriever!r}, "
                         f"metrics={metrics!r}")
    return _labels(rows)


# --- sweep charts -------------------------------------------------------------------------


def interval_text(rows: pd.DataFrame) -> pd.Series:
    """``mean [ci_low, ci_high]`` per row, or ``mean (n=3, no interval)`` when the mean has
    no interval (fewer queries than ``MIN_INTERVAL_N``)."""
    return pd.Series([
        f"{m:.3f} (n={n}, no interval)" if pd.isna(lo) or pd.isna(hi) else
        f"{m:.3f} [{lo:.3f}, {hi:.3f}]"
        for m, lo, hi, n in zip(rows["mean"], rows["ci_low"], rows["ci_high"], rows["n"],
                                strict=True)], index=rows.index, dtype=object)


def results_table(summary: pd.DataFrame, metrics, *, retriever: str | None = None) -> pd.DataFrame:
    """One row per config x retriever, one column per metric: ``mean [ci_low, ci_high]``
    over all queries (blend), sorted by the first metric (``mean (n=..., no interval)`` below
    ``MIN_INTERVAL_N`` queries); the requested size and the realised median and p95 chunk
    size in tokens next to each config."""
    rows = _pick(summary, "all", retriever, metrics)
    rows = rows.assign(cell=interval_text(rows),
                       config=config_label(rows.drop(columns=list(REALISED))))
    index = ["config", "size", *REALISED, "retriever"]
    rows[list(REALISED)] = rows[list(REALISED)].fillna(-1)  # kept as rows by the pivots
    wide = rows.pivot_table(index=index, columns="metric", values="cell", aggfunc="first")
    order = rows.pivot_table(index=index, columns="metric", values="mean")
    wide = wide.loc[order.sort_values(list(metrics)[0], ascending=False).index]
    wide = wide.reindex(columns=[m for m in metrics if m in wide.columns]).reset_index()
    wide[list(REALISED)] = wide[list(REALISED)].replace(-1, np.nan)
    wide.columns.name = None
    return wide.rename(columns={"size": "requested size"})


CHUNK_COLUMNS = ("chunks", "tokens_p50", "tokens_p95", "chars_p50", "chars_p95", "chars_max",
                 "single_chunk_docs_share", "code_integrity", "label_kept",
                 "heading_only", "oversize", "oversize_share", "lost_chars", "verbatim_share",
                 "over_encoder_limit", "over_encoder_limit_method")


def chunk_stats_table(chunk_stats: pd.DataFrame) -> pd.DataFrame:
    """The structure figures of each config that fit on a screen, labelled by config."""
    frame = chunk_stats.assign(config=config_label(chunk_stats.drop(columns=list(REALISED))))
    frame = frame.sort_values(["strategy", "size", "config"], kind="stable")
    return frame[["config", *[c for c in CHUNK_COLUMNS if c in frame]]].reset_index(drop=True)


def significant_pairs(significance: pd.DataFrame, metric: str, labels: pd.DataFrame, *,
                      retriever: str | None = None) -> pd.DataFrame:
    """The pairs of the exploratory family whose difference on ``metric`` survives Holm's
    correction, better first."""
    rows = _family(significance, EXPLORATORY)
    rows = rows[(rows["metric"] == metric) & (rows["verdict"] != NO_DIFFERENCE)]
    if retriever is not None:
        rows = rows[rows["retriever"] == retriever]
    names = dict(zip(labels["config_id"], config_label(labels), strict=True))
    better_a = rows["verdict"] == "A better"
    return pd.DataFrame({
        "retriever": rows["retriever"],
        "better": rows["config_a"].where(better_a, rows["config_b"]).map(names),
        "worse": rows["config_b"].where(better_a, rows["config_a"]).map(names),
        "difference": rows["mean_diff"].abs().round(4),
        "ci": [f"[{lo:+.3f}, {hi:+.3f}]" if a else f"[{-hi:+.3f}, {-lo:+.3f}]"
               for lo, hi, a in zip(rows["ci_low"], rows["ci_high"], better_a, strict=True)],
        "p_holm": rows["p_holm"], "n": rows["n"],
    }).sort_values("difference", ascending=False, ignore_index=True)


def _family(significance: pd.DataFrame, family: str) -> pd.DataFrame:
    """The rows of one Holm family (a table without families is all exploratory)."""
    if "family" not in significance:
        return significance if family == EXPLORATORY else significance.iloc[:0]
    return significance[significance["family"] == family]


def planned_contrasts(significance: pd.DataFrame, labels: pd.DataFrame, *,
                      metrics=None, retriever: str | None = None) -> pd.DataFrame:
    """The planned contrasts, their own Holm family: per contrast, metric, size and query
    group (all queries, then heading-derived and leak-free kinds apart when the run has
    both), A and B with their means, the queries each wins, A - B with the interval that
    inverts the test, the raw and the Holm-corrected p-value and the verdict."""
    rows = _family(significance, PLANNED)
    if metrics is not None:
        rows = rows[rows["metric"].isin(list(metrics))]
    if retriever is not None:
        rows = rows[rows["retriever"] == retriever]
    names = dict(zip(labels["config_id"], config_label(labels), strict=True))
    return pd.DataFrame({
        "retriever": rows["retriever"], "metric": rows["metric"],
        "queries": rows["query_group"] if "query_group" in rows else "all",
        "A": rows["config_a"].map(names), "B": rows["config_b"].map(names),
        "mean_a": rows["mean_a"].round(3), "mean_b": rows["mean_b"].round(3),
        "wins_a": rows["wins_a"], "wins_b": rows["wins_b"],
        "A - B": rows["mean_diff"].round(4),
        "ci": [f"[{lo:+.3f}, {hi:+.3f}]" for lo, hi in zip(rows["ci_low"], rows["ci_high"],
                                                             strict=True)],
        "p_value": rows["p_value"], "p_holm": rows["p_holm"], "verdict": rows["verdict"],
        "n": rows["n"],
    }).reset_index(drop=True)


def metric_vs_size(summary: pd.DataFrame, metrics=None, *, retriever: str | None = None,
                   columns: int = 2, x: str = "size") -> alt.FacetChart:
    """Each metric against chunk size, one line per strategy, 95% intervals as error bars;
    one panel per metric (and per retriever when several are shown). ``x`` is the requested
    ``size`` or the realised median size in tokens, ``tokens_p50``."""
    if x not in ("size", *REALISED):
        raise ChartError(f"x must be size or one of {', '.join(REALISED)}; got {x!r}")
    rows = _pick(summary, "all", retriever, metrics).dropna(subset=[x])
    if rows.empty:
        raise ChartError(f"no summary rows carry {x!r}")
    sizes = sorted(rows[x].unique())
    title = "requested chunk size" if x == "size" else "realised median chunk size (tokens)"
    axis = alt.Axis(values=sizes) if x == "size" else alt.Axis()
    base = alt.Chart().encode(
        x=alt.X(f"{x}:Q", scale=alt.Scale(type="log", domain=[min(sizes) * 0.8,
                                                                max(sizes) * 1.25]),
                axis=axis, title=title),
        color=alt.Color("strategy:N"),
    )
    lines = base.mark_line(point=True).encode(
        y=alt.Y("mean:Q", title="mean (95% CI)", scale=alt.Scale(zero=False)),
        tooltip=_interval_tooltip("strategy", "size", *REALISED, "retriever", "metric"))
    bars = base.mark_errorbar(ticks=True).encode(
        y=alt.Y("ci_low:Q", title="mean (95% CI)"), y2="ci_high:Q")
    row_field = "metric" if rows["retriever"].nunique() == 1 else "panel"
    rows = rows.assign(panel=rows["metric"] + " · " + rows["retriever"])
    given = list(metrics) if metrics is not None else sorted(set(rows["metric"]))
    rank = {m: i for i, m in enumerate(given)}
    order = list(dict.fromkeys(rows.sort_values("metric", key=lambda m: m.map(rank))[row_field]))
    return alt.layer(bars, lines, data=rows).properties(width=WIDTH, height=HEIGHT).facet(
        facet=alt.Facet(f"{row_field}:N", title=None, sort=order), columns=columns,
    ).resolve_scale(y="independent")


def by_split(summary: pd.DataFrame, metric: str, *, split: str = "query_kind",
             retriever: str | None = None, with_blend: bool = True) -> alt.FacetChart:
    """One metric per config, broken down by ``split`` (query_kind, query_group,
    structure_source or applied_strategy), the blend over all queries first; one panel per
    value (and a row of panels per retriever when several are shown); dots with 95%
    intervals, none below ``MIN_INTERVAL_N`` queries; n in each panel's title."""
    rows = _pick(summary, split, retriever, [metric])
    if with_blend:
        blend = _pick(summary, "all", retriever, [metric]).assign(split_value="all (blend)")
        rows = pd.concat([blend, rows], ignore_index=True)
    n_range = rows.groupby("split_value")["n"].agg(lambda n: f"{n.min()}" if n.min() == n.max()
                                                   else f"{n.min()}-{n.max()}")
    rows["split_value"] = rows["split_value"].astype(str) + " (n=" + rows["split_value"].map(
        n_range) + ")"
    order = list(dict.fromkeys(rows["split_value"]))
    base = alt.Chart().encode(
        y=alt.Y("config:N", sort=_config_order(rows), title=None),
        color=alt.Color("strategy:N"),
    )
    dots = base.mark_point(filled=True, size=50).encode(
        x=alt.X("mean:Q", title=f"{metric} (95% CI)", scale=alt.Scale(domain=[0, 1])),
        tooltip=_interval_tooltip("config", "split_value"))
    bars = base.mark_rule().encode(x="ci_low:Q", x2="ci_high:Q")
    layers = alt.layer(bars, dots, data=rows).properties(width=170)
    if rows["retriever"].nunique() > 1:
        return layers.facet(column=alt.Column("split_value:N", sort=order, title=split),
                            row=alt.Row("retriever:N", title="retriever"))
    return layers.facet(facet=alt.Facet("split_value:N", sort=order, title=split), columns=4)


def by_query_kind(summary: pd.DataFrame, metric: str, *,
                  retriever: str | None = None) -> alt.FacetChart:
    """``by_split`` on the kind of query (where the question came from)."""
    return by_split(summary, metric, split="query_kind", retriever=retriever)


def matched_size(matched: pd.DataFrame) -> alt.FacetChart:
    """Strategies at matched realised size (``grid.matched_sizes``): one panel per reference
    size, each strategy's config closest to it as a dot with its 95% interval."""
    if matched.empty:
        raise ChartError("no matched sizes: the summary carries no realised sizes")
    frame = matched.assign(config=config_label(matched))
    metric = frame["metric"].iloc[0]
    base = alt.Chart().encode(y=alt.Y("strategy:N", title=None), color=alt.Color("strategy:N"))
    dots = base.mark_point(filled=True, size=60).encode(
        x=alt.X("mean:Q", title=f"{metric} (95% CI)", scale=alt.Scale(domain=[0, 1])),
        tooltip=["config", alt.Tooltip("size_ratio:Q", format=".2f"),
                 *_interval_tooltip()])
    bars = base.mark_rule().encode(x="ci_low:Q", x2="ci_high:Q")
    order = list(dict.fromkeys(frame["match"]))
    return alt.layer(bars, dots, data=frame).properties(width=200, height=alt.Step(18)).facet(
        facet=alt.Facet("match:N", sort=order, title="matched at the realised size of"),
        columns=3)


def per_source(summary: pd.DataFrame, metric: str, *, retriever: str | None = None,
               split: str = "structure_source") -> alt.LayerChart | alt.FacetChart:
    """Grouped bars: per config, the blend next to each structure source's mean, with
    95% intervals (none below ``MIN_INTERVAL_N`` queries; n in the tooltip); one panel per
    retriever when several are shown. A blend over sources of different quality hides their
    disagreement."""
    blend = _pick(summary, "all", retriever, [metric]).assign(split_value="all (blend)")
    rows = pd.concat([blend, _pick(summary, split, retriever, [metric])], ignore_index=True)
    groups = ["all (blend)", *sorted(set(rows["split_value"]) - {"all (blend)"})]
    base = alt.Chart().encode(
        x=alt.X("config:N", sort=_config_order(rows), title=None),
        xOffset=alt.XOffset("split_value:N", sort=groups),
        color=alt.Color("split_value:N", sort=groups, title=split),
    )
    bars = base.mark_bar().encode(
        y=alt.Y("mean:Q", title=f"{metric} (95% CI)", scale=alt.Scale(domain=[0, 1])),
        tooltip=_interval_tooltip("config", "split_value"))
    whiskers = base.mark_rule(color="black").encode(y="ci_low:Q", y2="ci_high:Q")
    width = min(960, max(360, 70 * rows["config"].nunique()))
    layers = alt.layer(bars, whiskers, data=rows).properties(width=width, height=HEIGHT + 40)
    if rows["retriever"].nunique() > 1:
        return layers.facet(row=alt.Row("retriever:N", title="retriever"))
    return layers


def note(text: str) -> alt.Chart:
    """A chart holding one line of text: what a view would show had there been anything to
    compare (a grid of one config)."""
    return alt.Chart(pd.DataFrame({"text": [text]})).mark_text(
        align="left", fontSize=13, color="#334155").encode(
        text="text:N").properties(width=520, height=24)


ONE_CONFIG = "one config: there is no other to compare it with"


def significance_matrix(significance: pd.DataFrame, metric: str, labels: pd.DataFrame, *,
                        retriever: str | None = None
                        ) -> alt.LayerChart | alt.FacetChart | alt.Chart:
    """Row config minus column config on ``metric`` (mean paired difference) as colour;
    ``▲``/``▼`` marks a Holm-significant difference (row better / worse), blank none; one
    panel per retriever when several are shown (each its own family of tests).

    ``labels`` is any table with config_id, strategy, size (and options), e.g. chunk_stats.
    """
    rows = _family(significance, EXPLORATORY)
    if rows.empty and labels["config_id"].nunique() < 2:
        return note(ONE_CONFIG)
    if rows.empty:
        return note("no pair of configs to compare: the others make the same chunks (scored "
                    "once)")
    rows = rows[rows["metric"] == metric]
    if retriever is not None:
        rows = rows[rows["retriever"] == retriever]
    if rows.empty:
        raise ChartError(f"no significance rows for metric {metric!r}, retriever {retriever!r}")
    names = dict(zip(labels["config_id"], config_label(labels), strict=True))
    cells = _mirrored(rows).assign(row=lambda f: f["config_a"].map(names),
                                   column=lambda f: f["config_b"].map(names))
    order = _config_order(labels[labels["config_id"].isin(set(cells["config_a"]))])
    limit = float(np.nanmax(np.abs(cells["mean_diff"]))) or 1.0
    base = alt.Chart().encode(
        x=alt.X("column:N", sort=order, title="B"), y=alt.Y("row:N", sort=order, title="A"))
    heat = base.mark_rect().encode(
        color=alt.Color("mean_diff:Q", title=f"A − B ({metric})",
                        scale=alt.Scale(scheme="redblue", domain=[-limit, limit])),
        tooltip=["row", "column", alt.Tooltip("mean_diff:Q", format="+.3f"),
                 alt.Tooltip("ci_low:Q", format="+.3f"), alt.Tooltip("ci_high:Q", format="+.3f"),
                 alt.Tooltip("p_holm:Q", format=".4f"), "retriever", "verdict", "n"])
    marks = base.mark_text(fontSize=13).encode(text="mark:N")
    side = 22 * len(order)
    title = f"{metric}: ▲ A better, ▼ B better (Holm)"
    layers = alt.layer(heat, marks, data=cells).properties(width=side, height=side)
    if cells["retriever"].nunique() > 1:
        return layers.facet(column=alt.Column("retriever:N", title="retriever")).properties(
            title=title)
    return layers.properties(title=title)


def _mirrored(rows: pd.DataFrame) -> pd.DataFrame:
    """Both orientations of every pair, so the matrix is full; the mark follows the verdict."""
    both = pd.concat([rows, swap_sides(rows)], ignore_index=True)
    both["mark"] = both["verdict"].map({"A better": "▲", "B better": "▼"}).fillna("")
    return both


def constraint_margins(margins: pd.DataFrame) -> alt.FacetChart:
    """Each config's margin to each constraint (``candidates.margins``): one panel per
    constraint in its own unit, a bar per config right of zero when it holds, left (red) by
    how much it misses. Drawn whether or not any config meets the rule."""
    if margins.empty:
        raise ChartError("no constraints: the rule has none, so there are no margins to draw")
    frame = margins.assign(config=config_label(margins),
                           result=margins["holds"].map({True: "holds", False: "misses"}))
    base = alt.Chart().encode(y=alt.Y("config:N", sort=_config_order(frame), title=None))
    bars = base.mark_bar().encode(
        x=alt.X("margin:Q", title="margin (measure's unit; < 0 misses)"),
        color=alt.Color("result:N", scale=alt.Scale(domain=["holds", "misses"],
                                                     range=["#15803d", "#b91c1c"])),
        tooltip=["config", "constraint", alt.Tooltip("measured:Q", format=".4g"),
                 alt.Tooltip("margin:Q", format="+.4g"), "result"])
    ticks = base.mark_tick(thickness=2, size=12).encode(x="margin:Q", color="result:N")
    zero = alt.Chart().mark_rule(color="black").encode(x=alt.datum(0))
    layers = alt.layer(bars, ticks, zero, data=frame).properties(width=220,
                                                                 height=alt.Step(16))
    return layers.facet(facet=alt.Facet("constraint:N", title=None), columns=3).resolve_scale(
        x="independent")


def size_distribution(chunks: pd.DataFrame, *, unit: str = "chars") -> alt.LayerChart:
    """Chunk length per config as a box: whiskers min-max, box p25-p75, white median tick;
    the red tick is the config's target size (when ``unit`` is the config's unit)."""
    frame = _labels(chunks.assign(length=_lengths(chunks, unit)))
    boxes = frame.groupby(["config", "strategy", "size", "unit"])["length"].describe(
        percentiles=[0.25, 0.5, 0.75]).reset_index()
    boxes = boxes.rename(columns={"25%": "p25", "50%": "median", "75%": "p75"})
    boxes["target"] = boxes["size"].where(boxes["unit"] == unit)
    base = alt.Chart(boxes).encode(y=alt.Y("config:N", sort=_config_order(boxes), title=None))
    tooltip = ["config", "count", "min", "p25", "median", "p75", "max"]
    layers = alt.LayerChart(layer=[
        base.mark_rule().encode(x=alt.X("min:Q", title=f"chunk length ({unit})"), x2="max:Q"),
        base.mark_bar(size=12).encode(x="p25:Q", x2="p75:Q", color="strategy:N",
                                      tooltip=tooltip),
        base.mark_tick(color="white", thickness=2, size=12).encode(x="median:Q"),
        base.mark_tick(color="red", thickness=2, size=16).encode(x="target:Q"),
    ])
    return layers.properties(width=420, height=alt.Step(18))


def _lengths(chunks: pd.DataFrame, unit: str) -> pd.Series:
    """The sizes chunks.parquet records (``n_chars``, ``n_words``, ``n_tokens``)."""
    return chunks[SIZE_FIELDS[unit]].astype(float)


# --- corpus profile charts ----------------------------------------------------------------


def heading_depths(depths: pd.DataFrame) -> alt.Chart:
    """Headings per depth, stacked by how they were found (``profile.heading_depths``)."""
    return alt.Chart(depths).mark_bar().encode(
        x=alt.X("level:O", title="heading depth"),
        y=alt.Y("headings:Q", title="headings"),
        color=alt.Color("provenance:N"),
        tooltip=["level", "provenance", "headings"],
    ).properties(width=260, height=HEIGHT)


def section_lengths(sections: pd.DataFrame, *, unit: str = "tokens",
                    window: int | None = None, bins: int = 30) -> alt.Chart:
    """Histogram of section lengths (``chunking.section_lengths.sections_table``) with rules
    at the median, the 97th percentile and, in tokens, the encoder window the tail runs past
    (None: ``sizes.encoder_window``)."""
    window = window or encoder_window()
    values = sections[unit].to_numpy(dtype=float)
    counts, edges = np.histogram(values, bins=bins) if len(values) else (
        np.zeros(0, dtype=int), np.zeros(1))
    hist = pd.DataFrame({"start": edges[:-1], "end": edges[1:], "sections": counts})
    rules = pd.DataFrame([
        {"what": "median", "at": float(np.median(values)) if len(values) else 0.0},
        {"what": "p97", "at": float(np.percentile(values, 97)) if len(values) else 0.0},
        *([{"what": f"encoder window ({window})", "at": float(window)}] if unit == "tokens"
          else []),
    ])
    method = sections["token_method"].iloc[0] if unit == "tokens" and len(sections) else ""
    title = f"section length ({unit}{', ' + method if method == 'estimate' else ''})"
    bars = alt.Chart(hist).mark_bar(color="#94a3b8").encode(
        x=alt.X("start:Q", title=title), x2="end:Q", y=alt.Y("sections:Q"), y2=alt.datum(0),
        tooltip=[alt.Tooltip("start:Q", format=".0f"), alt.Tooltip("end:Q", format=".0f"),
                 "sections"])
    lines = alt.Chart(rules).mark_rule(strokeWidth=2).encode(
        x="at:Q", color=alt.Color("what:N", title=None, scale=alt.Scale(
            domain=rules["what"].tolist(), range=["#0f766e", "#b45309", "#b91c1c"][:len(rules)])),
        tooltip=["what", alt.Tooltip("at:Q", format=".0f")])
    return (bars + lines).properties(width=460, height=HEIGHT)
