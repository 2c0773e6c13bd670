"""Pick a config from a finished sweep by a stated rule, and export it as chosen_config.yaml."""

from __future__ import annotations

import json
import math
import operator
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..chunking.config import ChunkerConfig, make_config, save_config
from ..errors import ChoiceError, ConfigError, RuleError
from ..util.values import missing, plain
from . import stats
from .runs import SweepResult, load_run

OPERATORS = {"==": operator.eq, ">=": operator.ge, "<=": operator.le, ">": operator.gt,
             "<": operator.lt}
ALIASES = {"≥": ">=", "≤": "<="}
"""Spellings without '=' (papermill skips a parameter line holding more than one '=')."""
_CONSTRAINT = re.compile(
    r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:@\d+)?)\s*(?P<op>==|>=|<=|>|<|≥|≤)\s*"
    r"(?P<value>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$")
TIE_BREAKS = {
    "smaller_bundle": "smaller mean length (chars of context_text) of the top-k bundle a "
                      "reader is handed",
    "bundle_efficiency": "larger bundle_efficiency@k (gold-source share of the bundle)",
    "smaller_size": "smaller configured chunk size",
}
CONFIG_FIELDS = ("config_id", "strategy", "size", "unit", "options")
NOT_A_MEASURE = {"documents", "size", "over_encoder_limit_method", *CONFIG_FIELDS}
BUNDLE = "bundle_chars"
"""Mean chars of the top-k bundle per query (context_text, what a reader is handed)."""


@dataclass(frozen=True, slots=True)
class Constraint:
    """``name op value``, e.g. ``code_integrity == 1.0``; NaN never satisfies one."""

    name: str
    op: str
    value: float

    def holds(self, measured: float) -> bool:
        return not missing(measured) and OPERATORS[self.op](float(measured), self.value)

    def __str__(self) -> str:
        return f"{self.name} {self.op} {self.value:g}"


def parse_constraint(text: str) -> Constraint:
    """Parse ``name op number`` (op one of ==, >=, <=, >, <, or ≥ ≤); nothing is evaluated."""
    match = _CONSTRAINT.match(text) if isinstance(text, str) else None
    if not match:
        ops = ", ".join([*OPERATORS, *ALIASES])
        raise ConfigError(f"cannot parse constraint {text!r}: expected `name op number` with op "
                         f"one of {ops}, e.g. 'over_encoder_limit <= 0.05'")
    op = ALIASES.get(match["op"], match["op"])
    return Constraint(match["name"], op, float(match["value"]))


class ChoiceRule(BaseModel):
    """How a config is chosen: best ``primary_metric`` (blended mean) on ``retriever`` among
    configs meeting every constraint; configs within ``tie_margin`` of the best are tied and
    ``tie_break`` decides (see TIE_BREAKS), then the config's size, then its id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    primary_metric: str = "answer_hit@5"
    retriever: str = "bm25"
    constraints: tuple[str, ...] = ()
    tie_break: Literal["smaller_bundle", "bundle_efficiency", "smaller_size"] = "smaller_bundle"
    tie_margin: float = Field(0.0, ge=0.0, description="primary-metric gap still counted a tie")

    @field_validator("constraints")
    @classmethod
    def _parse(cls, texts: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(str(parse_constraint(t)) for t in texts)

    def parsed(self) -> list[Constraint]:
        return [parse_constraint(t) for t in self.constraints]


# --- reading a run ------------------------------------------------------------------------


def _as_run(result_or_run_dir):
    if isinstance(result_or_run_dir, str | os.PathLike):
        return load_run(result_or_run_dir)
    return result_or_run_dir


def measure_names(run) -> list[str]:
    """Every name a constraint may use: blended summary metrics, numeric chunk_stats columns
    and ``bundle_chars``."""
    metrics = set(run.summary["metric"])
    numeric = run.chunk_stats.select_dtypes("number").columns
    return sorted(metrics | {c for c in numeric if c not in NOT_A_MEASURE} | {BUNDLE})


def check_rule(rule: ChoiceRule, run) -> None:
    """Every name of the rule exists in ``run``; RuleError names the rule field otherwise."""
    retrievers = sorted(set(run.summary["retriever"]))
    if rule.retriever not in retrievers:
        raise RuleError("retriever", f"{rule.retriever!r} is not in this run; "
                                     f"run retrievers: {', '.join(retrievers)}")
    metrics = sorted(set(run.summary["metric"]))
    if rule.primary_metric not in metrics:
        raise RuleError("primary_metric", f"unknown metric {rule.primary_metric!r}; "
                                          f"valid metrics: {', '.join(metrics)}")
    names = measure_names(run)
    for constraint in rule.parsed():
        if constraint.name not in names:
            raise RuleError("constraints", f"unknown name {constraint.name!r} in "
                                           f"'{constraint}'; valid names: {', '.join(names)}")


# --- scoring ------------------------------------------------------------------------------


def bundle_chars(run, retriever: str) -> pd.Series:
    """Per config id: mean over queries of the total context_text chars of its top k."""
    ranks = run.retrieved[(run.retrieved["retriever"] == retriever)
                          & (run.retrieved["rank"] <= run.params.k)]  # deeper ranks: budgets
    lengths = run.chunks[["config_id", "id", "context_text"]].assign(
        chars=lambda f: f["context_text"].str.len()).drop(columns="context_text")
    joined = ranks.merge(lengths, left_on=["config_id", "chunk_id"],
                         right_on=["config_id", "id"], how="left")
    per_query = joined.groupby(["config_id", "query_id"])["chars"].sum()
    return per_query.groupby("config_id").mean().rename(BUNDLE)


def candidates(run, rule: ChoiceRule) -> pd.DataFrame:
    """One row per config on ``rule.retriever``: every blended metric mean, the primary
    metric's interval, chunk_stats figures, bundle_chars, whether it meets every constraint
    (``failed`` lists those it misses) and its ``rank`` (1 = chosen; NaN = excluded)."""
    check_rule(rule, run)
    blend = run.summary[(run.summary["split"] == "all")
                        & (run.summary["retriever"] == rule.retriever)]
    wide = blend.pivot_table(index="config_id", columns="metric", values="mean")
    primary = blend[blend["metric"] == rule.primary_metric].set_index("config_id")
    table = run.chunk_stats.set_index("config_id").join(wide, how="inner")
    table = table.join(primary[["ci_low", "ci_high", "n"]], how="left")
    table = table.join(bundle_chars(run, rule.retriever), how="left").reset_index()
    table["failed"] = [
        [str(c) for c in rule.parsed() if not c.holds(row[c.name])]
        for _, row in table.iterrows()
    ]
    table["passes"] = table["failed"].str.len() == 0
    return _rank(table, rule)


def _rank(table: pd.DataFrame, rule: ChoiceRule) -> pd.DataFrame:
    k = next((c.split("@")[1] for c in table.columns if c.startswith("bundle_efficiency@")),
             None)
    keys = {"smaller_bundle": (BUNDLE, True), "smaller_size": ("size", True),
            "bundle_efficiency": (f"bundle_efficiency@{k}", False)}
    tie_column, ascending = keys[rule.tie_break]
    ok = table[table["passes"]].copy()
    best = ok[rule.primary_metric].max() if len(ok) else math.nan
    ok["tied"] = ok[rule.primary_metric] >= best - rule.tie_margin - 1e-12
    ok["primary_key"] = ok[rule.primary_metric].where(~ok["tied"], best)
    ok = ok.sort_values(["primary_key", tie_column, "size", "config_id"],
                        ascending=[False, ascending, True, True], na_position="last")
    ok["rank"] = range(1, len(ok) + 1)
    ranked = table.merge(ok[["config_id", "rank", "tied"]], on="config_id", how="left")
    return ranked.sort_values(["rank", "config_id"], na_position="last", ignore_index=True)


def rebuild_config(run, config_id: str) -> ChunkerConfig:
    """The ChunkerConfig of ``config_id`` from the config fields the run's tables carry;
    raises ConfigError when they no longer hash to that id (another chunklab version)."""
    for frame in (run.chunks, run.chunk_stats):
        rows = frame[frame["config_id"] == config_id]
        if len(rows):
            break
    else:
        raise ChoiceError(f"config {config_id} is in neither chunks nor chunk_stats of the run")
    row = rows.iloc[0]
    options = json.loads(row["options"]) if row["options"] else {}
    config = make_config(options, strategy=row["strategy"], size=int(row["size"]),
                         unit=row["unit"])
    if config.config_id != config_id:
        raise ConfigError(f"config fields of {config_id} ({row['strategy']}, {row['size']} "
                          f"{row['unit']}, {row['options']}) hash to {config.config_id}: the "
                          "run was made by another chunklab version; re-run the sweep")
    return config


# --- the choice ---------------------------------------------------------------------------


CandidateRow = dict[str, Any]
"""A row of ``candidates`` as plain values: config columns, every blended metric mean,
chunk_stats figures, ``bundle_chars``, ``ci_low``/``ci_high``/``n`` of the primary metric,
``failed``, ``passes``, ``rank`` and ``tied``."""


class PairedRow(TypedDict, total=False):
    """A paired test of two configs on one metric (a row of significance.csv, oriented)."""

    metric: str
    config_a: str
    config_b: str
    n: int
    mean_a: float
    mean_b: float
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    p_holm: float
    verdict: str
    retriever: str
    source: str
    """Where the test comes from: the sweep's table, or a test of this pair alone."""


class Score(TypedDict):
    """A blended metric of the chosen config: mean, 95% interval and queries scored."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n: int


class CorpusRef(TypedDict):
    """The corpus a run scored: its folder and content fingerprint."""

    root: str
    fingerprint: str


@dataclass
class Choice:
    """The chosen config with its evidence: scores, runner-up and their paired test."""

    rule: ChoiceRule
    config: ChunkerConfig
    chosen: CandidateRow
    """The chosen config's row of ``candidates``."""
    runner_up: CandidateRow | None
    """The next-ranked config's row; None when only one config meets the rule."""
    comparison: PairedRow | None
    """The paired test on the primary metric, oriented A = chosen, B = runner-up."""
    candidates: pd.DataFrame
    scores: dict[str, Any]
    """Metric name -> a ``Score`` (blended mean and interval); chunk figures -> a number."""
    run_id: str
    corpus: CorpusRef
    run_dir: Path | None = None
    evidence: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Every key metric of the significance table for the chosen pair (A = chosen)."""

    @property
    def verdict(self) -> str:
        if self.comparison is None:
            return "no runner-up: only one config meets the rule"
        return self.comparison["verdict"]


def choose(result_or_run_dir, rule: ChoiceRule) -> Choice:
    """Apply ``rule`` to a SweepResult or a run folder; raises ChoiceError when no config
    meets the constraints (naming what each config missed)."""
    run = _as_run(result_or_run_dir)
    table = candidates(run, rule)
    ranked = table[table["rank"].notna()]
    if ranked.empty:
        misses = "; ".join(f"{_label(r)} fails {', '.join(r['failed'])}"
                           for _, r in table.iterrows())
        raise ChoiceError(f"no config meets {list(rule.constraints)}: {misses}")
    chosen = _record(ranked.iloc[0])
    runner = _record(ranked.iloc[1]) if len(ranked) > 1 else None
    evidence = _pair_rows(run, rule, chosen["config_id"], runner["config_id"]) if runner else None
    info = run.run_info
    return Choice(
        rule=rule, config=rebuild_config(run, chosen["config_id"]), chosen=chosen,
        runner_up=runner, comparison=_primary_row(run, rule, evidence, chosen, runner),
        candidates=table, scores=_scores(run, rule, chosen["config_id"]),
        run_id=info.get("run_id", ""), run_dir=run.run_dir,
        corpus={"root": info.get("corpus", {}).get("root", ""),
                "fingerprint": info.get("corpus", {}).get("fingerprint", "")},
        evidence=evidence if evidence is not None else pd.DataFrame())


def _label(row) -> str:
    return f"{row['strategy']}/{row['size']}"


def _record(row: pd.Series) -> dict[str, Any]:
    return {k: plain(v) for k, v in row.items()}


def _pair_rows(run, rule: ChoiceRule, a: str, b: str) -> pd.DataFrame:
    sig = run.significance
    if sig.empty:
        return pd.DataFrame()
    pair = sig[(sig["retriever"] == rule.retriever) & (sig["family"] == stats.EXPLORATORY)
               & (((sig["config_a"] == a) & (sig["config_b"] == b))
                  | ((sig["config_a"] == b) & (sig["config_b"] == a)))]
    out = stats.orient(pair, a).assign(source="sweep significance table (Holm over all pairs)")
    return out.reset_index(drop=True)


def _primary_row(run: SweepResult, rule: ChoiceRule, evidence: pd.DataFrame | None,
                 chosen: CandidateRow, runner: CandidateRow | None) -> PairedRow | None:
    if runner is None:
        return None
    if evidence is not None and rule.primary_metric in set(evidence.get("metric", [])):
        row = evidence[evidence["metric"] == rule.primary_metric].iloc[0]
        return cast(PairedRow, _record(row))
    rows = run.per_query[(run.per_query["retriever"] == rule.retriever)
                         & (run.per_query["metric"] == rule.primary_metric)]
    wide = rows.pivot(index="query_id", columns="config_id", values="value")
    test = stats.paired_comparison(wide[chosen["config_id"]], wide[runner["config_id"]])
    verdict = stats.verdict(test.mean_diff, test.p_value, alpha=stats.ALPHA,
                            higher_is_better=True)
    return cast(PairedRow, {
        "metric": rule.primary_metric, "config_a": chosen["config_id"],
        "config_b": runner["config_id"], **_record(pd.Series(test.as_dict())),
        "p_holm": test.p_value, "verdict": verdict,
        "source": "paired test of this pair alone (metric not in the sweep's table)"})


def _scores(run: SweepResult, rule: ChoiceRule, config_id: str) -> dict[str, Any]:
    blend = run.summary[(run.summary["split"] == "all") & (run.summary["config_id"] == config_id)
                        & (run.summary["retriever"] == rule.retriever)]
    scores = {row["metric"]: {"mean": plain(row["mean"]), "ci_low": plain(row["ci_low"]),
                              "ci_high": plain(row["ci_high"]), "n": int(row["n"])}
              for _, row in blend.iterrows()}
    stats_row = run.chunk_stats[run.chunk_stats["config_id"] == config_id].iloc[0]
    for name in ("chunks", "code_integrity", "oversize_share", "lost_chars",
                 "over_encoder_limit", "heading_only"):
        if name in stats_row:
            scores[name] = plain(stats_row[name])
    return scores


def export_choice(choice: Choice, path: str | os.PathLike) -> Path:
    """Write the chosen config (a folder gets ``chosen_config.yaml``) with the rule, scores,
    corpus fingerprint, run id, runner-up and verdict; ``chunklab chunk --config`` reads it."""
    target = Path(path)
    if target.suffix not in (".yaml", ".yml"):
        target = target / "chosen_config.yaml"
    runner = choice.runner_up
    return save_config(
        choice.config, target,
        rule={**choice.rule.model_dump(), "constraints": list(choice.rule.constraints),
              "tie_break_means": TIE_BREAKS[choice.rule.tie_break]},
        scores=choice.scores, corpus=choice.corpus, run_id=choice.run_id,
        runner_up=None if runner is None else {
            name: runner[name] for name in (*CONFIG_FIELDS, choice.rule.primary_metric,
                                            "ci_low", "ci_high", BUNDLE)},
        verdict=verdict_text(choice))


def verdict_text(choice: Choice) -> str:
    """The paired test on the primary metric in one line (A = chosen)."""
    row = choice.comparison
    if row is None:
        return choice.verdict
    diff, low, high = (_shown(v, "+.4f") for v in (row["mean_diff"], row["ci_low"],
                                                    row["ci_high"]))
    p = _shown(row["p_holm"], ".4g")
    return (f"{row['metric']}: chosen - runner-up = {diff} [{low}, {high}], p_holm={p}: "
            f"{row['verdict']} (A = chosen)")


def _shown(value, spec: str) -> str:
    """``value`` formatted, or ``n/a`` when it could not be measured (one query: no CI)."""
    return "n/a" if missing(value) else format(value, spec)
