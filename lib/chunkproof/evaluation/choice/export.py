"""A choice written as chosen_config.yaml: the config, the rule, what decided it and how sure
it is, the scores, the runner-up, with the chunkproof version and the corpus fingerprint that
``chunkproof chunk --config`` checks."""

from __future__ import annotations

import os
from pathlib import Path

from ...chunking.config import save_config
from ...util.values import missing
from ..run.runs import versions
from .choose import Choice, PairedRow
from .rules import CONFIG_FIELDS, INDEX_TOKENS, TIE_BREAKS


def export_choice(choice: Choice, path: str | os.PathLike) -> Path:
    """Write the chosen config (a folder gets ``chosen_config.yaml``) and its retrieval mode
    (``retrieval_mode``, what the adapters apply) with the rule, whether a config met it,
    what decided it (``decided_by``) and the verdict in words, the evidence, the study and
    the cost it read, how sure it is (``confidence``: the study's simulation for this many
    questions), what would settle it, the scores, the corpus fingerprint, the chunkproof
    version, the run id, the tokenizer sizes were counted in and the runner-up;
    ``chunkproof chunk --config`` reads it."""
    target = Path(path)
    if target.suffix not in (".yaml", ".yml"):
        target = target / "chosen_config.yaml"
    runner = choice.runner_up
    verdict = choice.verdict.as_dict() if choice.verdict is not None else {
        "decided_by": choice.decided_by, "verdict": verdict_text(choice)}
    return save_config(
        choice.config, target,
        rule={**choice.rule.model_dump(), "constraints": list(choice.rule.constraints),
              "query_kinds": list(choice.rule.query_kinds),
              "tie_break_means": TIE_BREAKS[choice.rule.tie_break]},
        retrieval_mode=choice.mode, meets_rule=choice.meets_rule, note=choice.note,
        **verdict,
        evidence_kinds=None if choice.used is None else {
            "kinds": list(choice.used.kinds), "why": choice.used.reason},
        scores=choice.scores, corpus=choice.corpus,
        chunkproof_version=versions()["chunkproof"], run_id=choice.run_id,
        tokenizer=choice.tokenizer,
        runner_up=None if runner is None else {
            name: runner[name] for name in (*CONFIG_FIELDS, choice.rule.primary_metric,
                                            "ci_low", "ci_high", INDEX_TOKENS)},
        comparison=None if choice.comparison is None else paired_text(choice.comparison),
        identical_configs=choice.identical, excluded_by_constraints=choice.excluded,
        constraints_not_binding=choice.not_binding)


SIDES = {"A better": "the chosen config is better", "B better": "the runner-up is better",
         "no significant difference": "no significant difference"}
"""The verdict of a test oriented chosen (A) against runner-up (B), in words."""


def paired_text(row: PairedRow) -> str:
    """A paired test in one line: chosen minus runner-up with its 95% interval, the
    p-value and the verdict in words."""
    return (f"{row['metric']}: chosen - runner-up = {_difference(row, ' (')}): "
            f"{SIDES.get(row['verdict'], row['verdict'])}"
            + (f" ({row['source']})" if row.get("source") else ""))


def verdict_text(choice: Choice) -> str:
    """The choice in words: what decided it and how sure it is, or why none met the rule."""
    if choice.verdict is None:
        return choice.note
    return " ".join(choice.verdict.sentences())


def _difference(row: PairedRow, joint: str) -> str:
    """``+0.042<joint>95% interval -0.01 to +0.09, p = 0.21``."""
    diff, low, high = (_shown(row.get(k), "+.3f") for k in ("mean_diff", "ci_low", "ci_high"))
    return f"{diff}{joint}95% interval {low} to {high}, {_p_text(row)}"


def _p_text(row: PairedRow) -> str:
    return f"p = {_shown(row.get('p_value'), '.3g')}"


def _shown(value, spec: str) -> str:
    """``value`` formatted, or ``n/a`` when it could not be measured."""
    return "n/a" if missing(value) else format(value, spec)
