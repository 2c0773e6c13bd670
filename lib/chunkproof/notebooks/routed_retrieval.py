"""Notebook 05's retrieval: structure_routed against the strategies it routes between, split."""

from __future__ import annotations

import pandas as pd

from ..errors import ConfigError
from ..evaluation.run.sweep import GROUP, SweepResult, run_sweep, summary_table, with_mode
from ..evaluation.scoring.structure import SOURCES
from ..util.values import missing
from ..viz import charts

ROUTED = "structure_routed"
COMPARED = (ROUTED, "ast_breadcrumb", "rct")
"""The routed strategy first, then the two strategies it routes between."""
SPLITS = ("all", "structure_source", "route")
"""Retrieval is reported blended, per structure source of the query's document, and per route
(the strategy ``structure_routed`` applies to that document), side by side."""


def run_retrieval(setup) -> SweepResult:
    """The routed strategy and the two it routes between, on the whole corpus, in memory
    (``setup``: the notebook's ``structure_report.StructureSignalSetup``); mined queries are
    read back from the sweep folder ``setup.run_dir`` when it keeps them for this corpus."""
    parts = setup.run_dir / "parts" if setup.run_dir else None
    return run_sweep(setup.sweep, None, corpus=setup.corpus, progress=False, mined_from=parts)


def query_routes(per_query: pd.DataFrame) -> dict[str, str]:
    """query id -> the strategy ``structure_routed`` applied to the query's document."""
    routed = per_query[per_query["strategy"] == ROUTED]
    if routed.empty:
        raise ConfigError(f"the sweep has no {ROUTED} rows to read the routes from")
    return dict(zip(routed["query_id"], routed["applied_strategy"], strict=True))


def retrieval_splits(result: SweepResult) -> pd.DataFrame:
    """Every metric per config: the blend (``all``), per structure source of the query's
    document, and per ``route``: the queries whose document ``structure_routed`` sends to
    each strategy, scored for every config (for the routed config it is its applied-strategy
    split). Columns as the sweep summary: split, split_value, mean, ci_low, ci_high, n."""
    summary = result.summary
    kept = summary[summary["split"].isin(["all", "structure_source"])]
    per_query = result.per_query
    routes = per_query["query_id"].map(query_routes(per_query))
    by_route = summary_table(with_mode(per_query)[[*GROUP, "query_id", "metric", "value"]]
                         .assign(applied_strategy=routes))
    by_route = by_route[by_route["split"] == "applied_strategy"].assign(split="route")
    frame = pd.concat([kept, by_route], ignore_index=True)
    order = {name: i for i, name in enumerate(COMPARED)}
    frame = frame.assign(_config=frame["strategy"].map(order),
                         _split=frame["split"].map(SPLITS.index),
                         _value=frame["split_value"].map(_value_order))
    return (frame.sort_values(["metric", "_config", "_split", "_value"], kind="stable")
            .drop(columns=["_config", "_split", "_value"]).reset_index(drop=True))


def split_table(splits: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per strategy; the blend, each structure source and each route side by side as
    ``mean [95% interval]``; every column says how many queries it averages."""
    rows = splits[splits["metric"] == metric]
    if rows.empty:
        raise ConfigError(f"no retrieval rows for metric {metric!r}; have "
                          f"{', '.join(sorted(set(splits['metric'])))}")
    rows = rows.assign(column=_column_labels(rows),
                       cell=[_cell(r) for r in rows.itertuples()])
    wide = rows.pivot_table(index="strategy", columns="column", values="cell", aggfunc="first",
                            sort=False)
    wide = wide.reindex(index=[s for s in COMPARED if s in wide.index],
                        columns=list(dict.fromkeys(rows["column"])))
    wide.columns.name = f"{metric} [95% CI]"
    return wide


def chart_frame(splits: pd.DataFrame) -> pd.DataFrame:
    """``splits`` shaped for ``charts.per_source``: the blend as ``all`` and every source and
    route under one split, ``source_and_route``, labelled with its number of queries; the
    options column is dropped so configs are labelled ``strategy/size``."""
    split_rows = splits[splits["split"] != "all"]
    labels = _column_labels(split_rows)
    frame = pd.concat([splits[splits["split"] == "all"],
                       split_rows.assign(split="source_and_route", split_value=labels)],
                      ignore_index=True)
    return frame.drop(columns="options")  # one option set per sweep: labels stay short


def split_chart(splits: pd.DataFrame, metric: str, *, retriever: str | None = None):
    """Grouped bars per strategy: the blend next to each structure source and each route."""
    return charts.per_source(chart_frame(splits), metric, retriever=retriever,
                             split="source_and_route")


def _column_labels(rows: pd.DataFrame) -> list[str]:
    n = rows.groupby(["metric", "split", "split_value"])["n"].transform("max")
    return [_label(split, value, count)
            for split, value, count in zip(rows["split"], rows["split_value"], n, strict=True)]


def _label(split: str, value: str, n: int) -> str:
    if split == "all":
        return f"all (blend, n={n})"
    if split == "route":
        return f"routed to {value} (n={n})"
    return f"source: {value} (n={n})"


def _cell(row) -> str:
    if missing(row.mean):
        return "n/a"
    return f"{row.mean:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}]"


def _value_order(value: str) -> tuple[int, str]:
    known = ("all", *SOURCES, *COMPARED)
    return (known.index(value) if value in known else len(known), str(value))


