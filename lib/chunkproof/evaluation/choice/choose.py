"""Pick a config from a finished sweep by the stated rule: among the configs meeting every
constraint, the user's evidence first, the shipped study second, cost last (``verdict``);
when no config meets the constraints, the closest one, reported and not endorsed."""

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
from ..retrieval.modes import PLAIN
from ..run.runs import load_run
from ..scoring import families, stats
from ..study.results import StudyResults, shipped
from ..study.rule import Evidence
from .candidates import candidates, label, summary_rows
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
from .user_evidence import UserEvidence, evidence_table, user_evidence
from .verdict import Verdict, verdict_for

SHIPPED = "shipped"
"""``choose(..., study=SHIPPED)``: the study shipped with chunkproof (None: no study)."""


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


CandidateRow = dict[str, Any]
"""A row of ``candidates`` as plain values: config columns, every metric mean, chunk_stats
figures, ``bundle_chars``, ``ci_low``/``ci_high``/``n`` of the primary metric, ``failed``,
``passes``, ``shortfall``, ``same_as``, then what ``choose`` adds: ``role``, ``rank``,
``inseparable``, ``gap_to_best``, ``p_vs_best`` and ``study_effect``."""


class PairedRow(TypedDict, total=False):
    """A paired test of two configs on one metric, oriented A = chosen."""

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
    test: str
    interval: str
    verdict: str
    source: str


class CorpusRef(TypedDict):
    """The corpus a run scored: its folder and content fingerprint."""

    root: str
    fingerprint: str


@dataclass
class Choice:
    """The chosen config with its evidence and the verdict that picked it."""

    rule: ChoiceRule
    config: ChunkerConfig
    chosen: CandidateRow
    """The chosen config's row of ``candidates`` (the closest one when none meets the rule)."""
    runner_up: CandidateRow | None
    """The config the pick was chosen over (``verdict.runner_up``); None when alone."""
    comparison: PairedRow | None
    """The paired test of chosen against runner-up on the user's evidence (None without)."""
    candidates: pd.DataFrame
    scores: dict[str, Any]
    """Metric name -> mean, interval and n over the queries the rule reads; chunk figures."""
    run_id: str
    corpus: CorpusRef
    run_dir: Path | None = None
    meets_rule: bool = True
    """False when no config meets every constraint: ``chosen`` is then the closest."""
    note: str = ""
    verdict: Verdict | None = None
    """What decided the pick and how sure it is (None when no config meets the rule)."""
    used: UserEvidence | None = None
    """The queries read as the user's evidence, and why those."""
    excluded: list[str] = field(default_factory=list)
    not_binding: list[str] = field(default_factory=list)
    identical: list[str] = field(default_factory=list)
    tokenizer: dict[str, Any] | None = None
    """The tokenizer the run counted sizes in and its encoder window (run.json ``tokenizer``;
    None for a run made before it was recorded): ``chunkproof chunk --config`` uses them."""
    embedder: dict[str, Any] | None = None
    """The dense model the run embedded with (run.json ``embedder``: folder, name, digest;
    None for a run made before it was recorded)."""
    mode: str = PLAIN

    @property
    def decided_by(self) -> str:
        return self.verdict.decided_by if self.verdict is not None else "closest to the rule"


def choose(result_or_run_dir, rule: ChoiceRule, *, strict: bool = False,
           study: StudyResults | str | None = SHIPPED, queries=(), corpus=None) -> Choice:
    """Apply ``rule`` to a SweepResult or a run folder, with ``study`` as the prior (the
    shipped study by default; None: none). When no config meets the constraints the closest
    one is returned (fewest constraints missed, then the smallest summed relative shortfall)
    with ``meets_rule`` False; with ``strict`` that raises ChoiceError instead."""
    run = _as_run(result_or_run_dir)
    prior = shipped() if study == SHIPPED else cast(StudyResults | None, study)
    used = user_evidence(run, rule, prior, queries=queries, corpus=corpus)
    reading = rule.model_copy(update={"query_kinds": used.kinds}) if used.kinds else rule
    table = candidates(run, reading)
    eligible = table[table["passes"] & (table["same_as"] == "")]
    info = run.run_info
    base = {"rule": rule, "candidates": table, "run_id": info.get("run_id", ""),
            "run_dir": run.run_dir, "used": used, "tokenizer": info.get("tokenizer"),
            "embedder": info.get("embedder"),
            "corpus": {"root": info.get("corpus", {}).get("root", ""),
                       "fingerprint": info.get("corpus", {}).get("fingerprint", "")},
            "excluded": excluded(table, rule), "not_binding": rule.not_binding()}
    if eligible.empty:
        return _closest_choice(run, reading, table, strict, base)
    ids = list(eligible["config_id"])
    labels = {c: label(r) for c, r in zip(table["config_id"], table.to_dict("records"),
                                          strict=True)}
    evidence = evidence_table(run, reading, ids, used)
    verdict = verdict_for(table, ids, evidence, prior, retriever=rule.retriever,
                          metric=rule.primary_metric, labels=labels,
                          cost=dict(zip(eligible["config_id"], eligible[rule.tie_break],
                                        strict=True)),
                          margin=rule.tie_margin, alpha=rule.alpha)
    table = annotated(table, verdict, rule)
    chosen = _record(table[table["config_id"] == verdict.pick].iloc[0])
    runner = None if verdict.runner_up is None else _record(
        table[table["config_id"] == verdict.runner_up].iloc[0])
    return Choice(
        config=rebuild_config(run, chosen["config_id"]), chosen=chosen, runner_up=runner,
        comparison=_paired(evidence, rule, chosen, runner), scores=_scores(
            run, reading, chosen["config_id"]), verdict=verdict,
        identical=[n for n in str(chosen.get("identical") or "").split(", ") if n],
        mode=split_candidate(chosen["config_id"])[1], **{**base, "candidates": table})


def annotated(table: pd.DataFrame, verdict: Verdict, rule: ChoiceRule) -> pd.DataFrame:
    """The candidates with what the verdict says of each: its role, a rank (the pick first,
    then by the primary metric), whether the evidence could separate it from its best, its
    gap to that best with the paired test (Holm over the comparisons with it), and the
    study's pooled effect over its reference."""
    outcome, metric = verdict.outcome, rule.primary_metric
    best = outcome.evidence_best
    study = dict(outcome.study_order)
    roles = {verdict.pick: "chosen", **({verdict.runner_up: "runner-up"}
                                         if verdict.runner_up else {})}
    frame = table.assign(
        role=[roles.get(c, "") for c in table["config_id"]],
        inseparable=table["config_id"].isin(outcome.inseparable),
        gap_to_best=[(outcome.means[best] - outcome.means[c]) if best and c in outcome.means
                     else float("nan") for c in table["config_id"]],
        p_vs_best=[outcome.p_holm.get(c, 1.0 if c == best else float("nan"))
                   for c in table["config_id"]],
        study_effect=[study.get(c, float("nan")) for c in table["config_id"]])
    order = frame.assign(first=frame["config_id"] != verdict.pick, out=~(
        frame["passes"] & (frame["same_as"] == "")))
    order = order.sort_values(["out", "first", metric, "config_id"],
                              ascending=[True, True, False, True])
    ranks = {c: i + 1 for i, c in enumerate(order[~order["out"]]["config_id"])}
    frame["rank"] = frame["config_id"].map(ranks)
    return frame.sort_values(["rank", "config_id"], na_position="last", ignore_index=True)


def _closest_choice(run, rule: ChoiceRule, table: pd.DataFrame, strict: bool,
                    base: dict[str, Any]) -> Choice:
    misses = "; ".join(f"{label(r)} fails " + ", ".join(
        f"{c} (measured {plain(r[parse_constraint(c).name], digits=4)})" for c in r["failed"])
        for _, r in table.iterrows() if r["failed"])
    if strict:
        raise ChoiceError(f"no config meets {list(rule.constraints)}: {misses}")
    rows = table[table["same_as"] == ""].assign(misses=table["failed"].str.len())
    ranked = rows.sort_values(["misses", "shortfall", rule.primary_metric, "config_id"],
                              ascending=[True, True, False, True], ignore_index=True)
    closest = ranked.iloc[0]["config_id"]
    table = table.assign(role=(table["config_id"] == closest).map({True: "closest",
                                                                   False: ""}),
                         rank=float("nan"), inseparable=False, gap_to_best=float("nan"),
                         p_vs_best=float("nan"), study_effect=float("nan"))
    chosen = _record(table[table["config_id"] == closest].iloc[0])
    note = (f"no config meets every constraint; {label(chosen)} is the closest (misses "
            f"{', '.join(chosen['failed'])}): it is reported, not endorsed")
    return Choice(config=rebuild_config(run, closest), chosen=chosen, runner_up=None,
                  comparison=None, scores=_scores(run, rule, closest), meets_rule=False,
                  note=note, mode=split_candidate(closest)[1], **{**base, "candidates": table})


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


def _paired(evidence: Evidence | None, rule: ChoiceRule, chosen: CandidateRow,
            runner: CandidateRow | None) -> PairedRow | None:
    """Chosen against runner-up on the user's evidence, questions grouped by page."""
    if runner is None or evidence is None:
        return None
    a, b = chosen["config_id"], runner["config_id"]
    test = stats.paired_comparison(evidence.values[a], evidence.values[b],
                                   confidence=1 - rule.alpha, clusters=evidence.pages)
    return cast(PairedRow, {
        "metric": rule.primary_metric, "config_a": a, "config_b": b,
        **_record(pd.Series(test.as_dict())),
        "verdict": families.verdict(test.mean_diff, test.p_value, alpha=rule.alpha,
                                    higher_is_better=True),
        "source": f"paired test of this pair alone on {len(evidence)} "
                  f"{evidence.name.removeprefix('your ')}, grouped by page"})


SCORED_FIGURES = ("chunks", "index_tokens", "tokens_p50", "tokens_p95", "code_integrity",
                  "label_kept", "oversize_share", "lost_chars", "over_encoder_limit",
                  "heading_only")
"""Chunk figures chosen_config.yaml records beside the chosen config's scores."""


def _scores(run, rule: ChoiceRule, config_id: str) -> dict[str, Any]:
    blend = summary_rows(run, rule)
    blend = blend[blend["config_id"] == config_id]
    scores = {row["metric"]: {"mean": plain(row["mean"]), "ci_low": plain(row["ci_low"]),
                              "ci_high": plain(row["ci_high"]), "n": int(row["n"])}
              for _, row in blend.iterrows()}
    stats_row = run.chunk_stats[run.chunk_stats["config_id"] == config_id].iloc[0]
    for metric in SCORED_FIGURES:
        if metric in stats_row:
            scores[metric] = plain(stats_row[metric])
    return scores
