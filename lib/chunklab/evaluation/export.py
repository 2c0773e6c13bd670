"""A choice written as chosen_config.yaml: the config, the rule, the scores on the tuning and
held-out queries, the runner-up and the verdict, with the chunklab version and the corpus
fingerprint that ``chunklab chunk --config`` checks."""

from __future__ import annotations

import os
from pathlib import Path

from ..chunking.config import save_config
from ..util.values import missing
from .choose import Choice, PairedRow
from .rules import BUNDLE, CONFIG_FIELDS, TIE_BREAKS
from .runs import versions


def export_choice(choice: Choice, path: str | os.PathLike) -> Path:
    """Write the chosen config (a folder gets ``chosen_config.yaml``) with the rule, whether a
    config met it, the scores, the held-out report, the corpus fingerprint, the chunklab
    version, the run id, the runner-up and the verdict; ``chunklab chunk --config`` reads it."""
    target = Path(path)
    if target.suffix not in (".yaml", ".yml"):
        target = target / "chosen_config.yaml"
    runner = choice.runner_up
    return save_config(
        choice.config, target,
        rule={**choice.rule.model_dump(), "constraints": list(choice.rule.constraints),
              "query_kinds": list(choice.rule.query_kinds),
              "tie_break_means": TIE_BREAKS[choice.rule.tie_break]},
        meets_rule=choice.meets_rule, note=choice.note, chosen_on=choice.query_set,
        scores=choice.scores, held_out=_held_out(choice), corpus=choice.corpus,
        chunklab_version=versions()["chunklab"], run_id=choice.run_id,
        runner_up=None if runner is None else {
            name: runner[name] for name in (*CONFIG_FIELDS, choice.rule.primary_metric,
                                            "ci_low", "ci_high", BUNDLE)},
        verdict=verdict_text(choice), identical_configs=choice.identical,
        excluded_by_constraints=choice.excluded, constraints_not_binding=choice.not_binding)


def _held_out(choice: Choice) -> dict | None:
    if not choice.held_out:
        return None
    margin = choice.held_out["margin_over_runner_up"]
    return {"queries": choice.held_out["queries"], "scores": choice.held_out["scores"],
            "margin_over_runner_up": None if margin is None else paired_text(margin)}


def paired_text(row: PairedRow) -> str:
    """A paired test in one line: A - B with its interval, the p-value and the verdict."""
    diff, low, high = (_shown(v, "+.4f") for v in (row["mean_diff"], row["ci_low"],
                                                    row["ci_high"]))
    if missing(row.get("p_holm")):
        p_text = f"p={_shown(row['p_value'], '.4g')} (uncorrected)"
    else:
        p_text = f"p_holm={_shown(row['p_holm'], '.4g')} (Holm-corrected over every pair)"
    return (f"{row['metric']}: chosen - runner-up = {diff} [{low}, {high}], "
            f"{p_text}: {row['verdict']} (A = chosen; {row.get('source', '')})")


def verdict_text(choice: Choice) -> str:
    """The paired test on the primary metric in one line (A = chosen)."""
    row = choice.comparison
    return choice.verdict if row is None else paired_text(row)


def _shown(value, spec: str) -> str:
    """``value`` formatted, or ``n/a`` when it could not be measured."""
    return "n/a" if missing(value) else format(value, spec)
