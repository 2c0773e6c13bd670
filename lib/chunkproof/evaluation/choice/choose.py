"""Pick a config from a finished sweep by a stated rule, on the tuning queries: the best that
meets every constraint (a cheaper one the best does not significantly beat is preferred), or
the closest to meeting them when none does; and report it on the held-out queries."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

import pandas as pd

from ...chunking.config import ChunkerConfig, make_config
from ...errors import ChoiceError, ConfigError
from ...util.values import plain
from ..queries.queries import HELD_OUT, TUNING
from ..retrieval.modes import PLAIN
from ..run.runs import SweepResult, load_run
from ..scoring import families, stats
from .candidates import (
    candidates,
    label,
    primary_values,
    query_ids,
    query_set,
    summary_rows,
)
from .mode_candidates import by_candidate, split_candidate
from .rules import (  # noqa: F401  (the rule's names are part of this module's API)
    BUNDLE,
    BUNDLE_TOKENS,
    CONFIG_FIELDS,
    TIE_BREAKS,
    ChoiceRule,
    Constraint,
    check_rule,
    measure_names,
    parse_constraint,
)
from .stability import Stability, stability


def _as_run(result_or_run_dir):
    """The run keyed by candidate (``mode_candidates.by_candidate``): a config in each
    retrieval mode is a candidate of its own."""
    if isinstance(result_or_run_dir, str | os.PathLike):
        return by_candidate(load_run(result_or_run_dir))
    return by_candidate(result_or_run_dir)


def rebuild_config(run, config_id: str) -> ChunkerConfig:
    """The ChunkerConfig of ``config_id`` (or of a candidate id: a config in a retrieval mode)
    from the config fields the run's tables carry (the config's own strategy, never the one
    structure_routed applied); raises ConfigError when they no longer hash to that id
    (another chunkproof version)."""
    config_id = split_candidate(config_id)[0]
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
                          "run was made by another chunkproof version; re-run the sweep")
    return config


# --- the choice ---------------------------------------------------------------------------


CandidateRow = dict[str, Any]
"""A row of ``candidates`` as plain values: config columns, every metric mean, chunk_stats
figures, ``bundle_chars``, ``ci_low``/``ci_high``/``n`` of the primary metric, ``failed``,
``passes``, ``shortfall``, ``same_as``, ``rank``, ``tied``, ``gap_to_best``, ``p_vs_best``."""


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
    p_kind: str
    """What the p beside the verdict is: Holm-corrected (``p_holm``, from the sweep's table)
    or uncorrected (``p_value``, a test of this pair alone; ``p_holm`` is then None)."""


class Score(TypedDict):
    """A metric of the chosen config: mean, 95% interval and queries scored."""

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
    """The chosen config's row of ``candidates`` (the closest one when none meets the rule)."""
    runner_up: CandidateRow | None
    """The next-ranked config's row; None when only one config meets the rule."""
    comparison: PairedRow | None
    """The paired test on the primary metric, oriented A = chosen, B = runner-up."""
    candidates: pd.DataFrame
    scores: dict[str, Any]
    """Metric name -> a ``Score`` on the tuning queries; chunk figures -> a number."""
    run_id: str
    corpus: CorpusRef
    run_dir: Path | None = None
    evidence: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Every key metric of the significance table for the chosen pair (A = chosen)."""
    meets_rule: bool = True
    """False when no config meets every constraint: ``chosen`` is then the closest."""
    note: str = ""
    """Why this config: the closest to the rule, or the tie-break preferring a cheaper one."""
    query_set: str = "all"
    """The queries the choice was made on: ``tuning`` or ``all`` (too few to split)."""
    held_out: dict[str, Any] = field(default_factory=dict)
    """The chosen config on the held-out queries: scores, and its margin over the runner-up
    with their paired test (empty when the queries were not split)."""
    excluded: list[str] = field(default_factory=list)
    """Configs a binding constraint kept out, best on the primary metric first, each with the
    constraints it fails and what was measured."""
    not_binding: list[str] = field(default_factory=list)
    """Constraints of the rule that do not apply to its retriever (so they excluded nothing)."""
    identical: list[str] = field(default_factory=list)
    """Configs whose chunks are identical to the chosen one's (the same config in effect)."""
    tokenizer: dict[str, Any] | None = None
    """The tokenizer the run counted sizes in and its encoder window (run.json ``tokenizer``;
    None for a run made before it was recorded): ``chunkproof chunk --config`` uses them."""
    embedder: dict[str, Any] | None = None
    """The dense model the run embedded with (run.json ``embedder``: folder, name, digest;
    None for a run made before it was recorded)."""
    stability: Stability | None = None
    """The rule over repeated seeded splits: how often each config is chosen, its held-out
    scores, the configs the evidence cannot separate, the smallest detectable difference
    (None when the rule asks for no splits or the queries are too few)."""
    decided_by: str = ""
    """``evidence`` (its questions separate configs), ``cost only`` (every config at the
    ceiling, or no pair separated: the tie-break decided), or "" (not assessed)."""
    decision: dict[str, Any] = field(default_factory=dict)
    """``decision.Decision.as_dict()``: the kinds chosen on, why, and what would decide it."""
    mode: str = PLAIN
    """The retrieval mode chosen with the config (``modes``): ``chosen["config_id"]`` is the
    candidate id of both."""

    @property
    def verdict(self) -> str:
        if self.comparison is None:
            return "no runner-up: only one config meets the rule"
        return self.comparison["verdict"]


def choose(result_or_run_dir, rule: ChoiceRule, *, strict: bool = False) -> Choice:
    """Apply ``rule`` to a SweepResult or a run folder. When no config meets the constraints
    the closest one is returned (fewest constraints missed, then the smallest summed relative
    shortfall) with ``meets_rule`` False; with ``strict`` that raises ChoiceError instead."""
    run = _as_run(result_or_run_dir)
    table = candidates(run, rule)
    ranked = table[table["rank"].notna()]
    meets = not ranked.empty
    if not meets:
        misses = "; ".join(f"{label(r)} fails " + ", ".join(
            f"{c} (measured {plain(r[parse_constraint(c).name], digits=4)})" for c in r["failed"])
            for _, r in table.iterrows() if r["failed"])
        if strict:
            raise ChoiceError(f"no config meets {list(rule.constraints)}: {misses}")
        ranked = _closest(table, rule)
    steady = stability(run, rule, table, splits=rule.splits, seed=rule.split_seed) if (
        rule.splits and meets) else None
    single = _record(ranked.iloc[0])
    if steady is not None:  # the config chosen most often over the splits comes first
        ranked = pd.concat([ranked[ranked["config_id"] == steady.verdict_id],
                            ranked[ranked["config_id"] != steady.verdict_id]])
    chosen = _record(ranked.iloc[0])
    runner = _record(ranked.iloc[1]) if len(ranked) > 1 else None
    evidence = _pair_rows(run, rule, chosen["config_id"], runner["config_id"]) if runner else None
    info = run.run_info
    name = query_set(run)
    return Choice(
        rule=rule, config=rebuild_config(run, chosen["config_id"]), chosen=chosen,
        runner_up=runner, comparison=_primary_row(run, rule, evidence, chosen, runner, name),
        candidates=table, scores=_scores(run, rule, chosen["config_id"], name),
        run_id=info.get("run_id", ""), run_dir=run.run_dir,
        corpus={"root": info.get("corpus", {}).get("root", ""),
                "fingerprint": info.get("corpus", {}).get("fingerprint", "")},
        evidence=evidence if evidence is not None else pd.DataFrame(), meets_rule=meets,
        note=_note(table, rule, chosen, meets, single, steady), query_set=name,
        held_out=_held_out(run, rule, chosen, runner) if name == TUNING else {},
        excluded=excluded(table, rule), not_binding=rule.not_binding(),
        identical=[n for n in str(chosen.get("identical") or "").split(", ") if n],
        stability=steady, tokenizer=info.get("tokenizer"), embedder=info.get("embedder"),
        mode=split_candidate(chosen["config_id"])[1])


def _closest(table: pd.DataFrame, rule: ChoiceRule) -> pd.DataFrame:
    rows = table[table["same_as"] == ""].assign(misses=table["failed"].str.len())
    return rows.sort_values(["misses", "shortfall", rule.primary_metric, "config_id"],
                            ascending=[True, True, False, True], ignore_index=True)


def _note(table: pd.DataFrame, rule: ChoiceRule, chosen: CandidateRow, meets: bool,
          single: CandidateRow, steady: Stability | None) -> str:
    if steady is not None and single["config_id"] != chosen["config_id"]:
        return (f"{label(chosen)} is the config the rule chose most often over "
                f"{steady.splits} seeded splits ({steady.share:.0%}); on the run's own tuning "
                f"half alone it picks {label(single)}")
    if not meets:
        return (f"no config meets every constraint; {label(chosen)} is the closest (misses "
                f"{', '.join(chosen['failed'])}): it is reported, not endorsed")
    best = table[table["gap_to_best"] == 0].sort_values("rank").iloc[0]
    if best["config_id"] == chosen["config_id"]:
        return ""
    return (f"{label(chosen)} chosen over {label(best)}: {label(best)} is best on "
            f"{rule.primary_metric} by {chosen['gap_to_best']:.3f} (tie margin "
            f"{rule.tie_margin:g}{_in_queries(rule, chosen)}) but not significantly better "
            f"(paired test p = "
            f"{chosen['p_vs_best']:.3g}), so the tie-break prefers the "
            f"{TIE_BREAKS[rule.tie_break]}: {_cheaper(chosen, best, rule)}")


def _in_queries(rule: ChoiceRule, row: CandidateRow) -> str:
    """The tie margin as queries of the set the choice was made on (``, 2.4 of 48 queries``)."""
    n = row.get("n")
    return "" if not n else f", {rule.tie_margin * n:.1f} of {int(n)} queries"


def _cheaper(chosen: CandidateRow, best: pd.Series, rule: ChoiceRule) -> str:
    column = {"smaller_bundle": BUNDLE_TOKENS, "smaller_size": "size"}.get(rule.tie_break)
    if column is None:
        key = next(k for k in chosen if str(k).startswith("bundle_efficiency@"))
        return f"{key} {chosen[key]:.3f} against {best[key]:.3f}"
    saving = 1 - chosen[column] / best[column] if best[column] else 0.0
    return f"{column} {chosen[column]:.0f} against {best[column]:.0f} ({saving:.0%} smaller)"


def _record(row: pd.Series) -> dict[str, Any]:
    return {k: plain(v) for k, v in row.items()}


def excluded(table: pd.DataFrame, rule: ChoiceRule) -> list[str]:
    """What the binding constraints kept out of the choice: each config failing one (its
    identical twins left out), best on the primary metric first, with what was measured."""
    failing = table[(table["failed"].str.len() > 0) & (table["same_as"] == "")]
    failing = failing.sort_values([rule.primary_metric, "config_id"], ascending=[False, True])
    found = []
    for _, row in failing.iterrows():
        misses = ", ".join(f"{c} (measured {plain(row[parse_constraint(c).name], digits=4)})"
                           for c in row["failed"])
        score = plain(row[rule.primary_metric], digits=4)
        found.append(f"{label(row)} ({rule.primary_metric} {score}) fails {misses}")
    return found


def _pair_rows(run, rule: ChoiceRule, a: str, b: str) -> pd.DataFrame:
    sig = run.significance
    if sig.empty:
        return pd.DataFrame()
    pair = sig[(sig["retriever"] == rule.retriever) & (sig["family"] == families.EXPLORATORY)
               & (sig.get("query_group", "all") == "all")
               & (((sig["config_a"] == a) & (sig["config_b"] == b))
                  | ((sig["config_a"] == b) & (sig["config_b"] == a)))]
    out = families.orient(pair, a).assign(
        source="sweep significance table (all queries, Holm over all pairs)", p_kind=P_HOLM)
    return out.reset_index(drop=True)


P_HOLM = "p_holm: Holm-corrected over every pair of configs"
P_RAW = "p: uncorrected (a test of this pair alone)"


def _pair_test(run, rule: ChoiceRule, a: str, b: str, name: str, source: str) -> PairedRow:
    values = primary_values(run, rule, name)
    test = stats.paired_comparison(values[a], values[b], confidence=1 - rule.alpha)
    verdict = families.verdict(test.mean_diff, test.p_value, alpha=rule.alpha,
                            higher_is_better=True)
    return cast(PairedRow, {
        "metric": rule.primary_metric, "config_a": a, "config_b": b,
        **_record(pd.Series(test.as_dict())), "p_holm": None, "verdict": verdict,
        "source": source, "p_kind": P_RAW})


def _primary_row(run: SweepResult, rule: ChoiceRule, evidence: pd.DataFrame | None,
                 chosen: CandidateRow, runner: CandidateRow | None,
                 name: str) -> PairedRow | None:
    if runner is None:
        return None
    if name == "all" and not rule.query_kinds and evidence is not None and (
            rule.primary_metric in set(evidence.get("metric", []))):
        row = evidence[evidence["metric"] == rule.primary_metric].iloc[0]
        return cast(PairedRow, _record(row))
    return _pair_test(run, rule, chosen["config_id"], runner["config_id"], name,
                      f"paired test of this pair alone on the {_queries_named(rule, name)}")


def _queries_named(rule: ChoiceRule, name: str) -> str:
    kinds = f" ({', '.join(rule.query_kinds)} kinds)" if rule.query_kinds else ""
    return f"{name.replace('_', '-')} queries{kinds}"


def _scores(run: SweepResult, rule: ChoiceRule, config_id: str, name: str) -> dict[str, Any]:
    blend = summary_rows(run, rule, name)
    blend = blend[blend["config_id"] == config_id]
    scores = {row["metric"]: {"mean": plain(row["mean"]), "ci_low": plain(row["ci_low"]),
                              "ci_high": plain(row["ci_high"]), "n": int(row["n"])}
              for _, row in blend.iterrows()}
    stats_row = run.chunk_stats[run.chunk_stats["config_id"] == config_id].iloc[0]
    for metric in ("chunks", "tokens_p50", "tokens_p95", "code_integrity", "label_kept",
                   "oversize_share",
                   "lost_chars", "over_encoder_limit", "heading_only"):
        if metric in stats_row:
            scores[metric] = plain(stats_row[metric])
    return scores


def _held_out(run, rule: ChoiceRule, chosen: CandidateRow,
              runner: CandidateRow | None) -> dict[str, Any]:
    """The chosen config's scores on the held-out queries and its margin over the runner-up
    there (the honest estimate: those queries played no part in the choice)."""
    scores = _scores(run, rule, chosen["config_id"], HELD_OUT)
    margin = None if runner is None else _pair_test(
        run, rule, chosen["config_id"], runner["config_id"], HELD_OUT,
        f"paired test of this pair alone on the {_queries_named(rule, HELD_OUT)}")
    return {"queries": len(query_ids(run, HELD_OUT, rule) or ()), "scores": scores,
            "margin_over_runner_up": margin}
