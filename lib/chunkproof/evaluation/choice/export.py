"""A choice written as chosen_config.yaml: the config, the rule, the scores on the tuning and
held-out queries, the runner-up and the verdict, with the chunkproof version and the corpus
fingerprint that ``chunkproof chunk --config`` checks."""

from __future__ import annotations

import os
from pathlib import Path

from ...chunking.config import save_config
from ...util.values import missing
from ..run.runs import versions
from .choose import Choice, PairedRow
from .mode_candidates import mode_suffix, split_candidate
from .rules import BUNDLE_TOKENS, CONFIG_FIELDS, TIE_BREAKS, metric_phrase


def export_choice(choice: Choice, path: str | os.PathLike) -> Path:
    """Write the chosen config (a folder gets ``chosen_config.yaml``) and its retrieval mode
    (``retrieval_mode``, what the adapters apply) with the rule, whether a
    config met it, the scores, the held-out report, the corpus fingerprint, the chunkproof
    version, the run id, the tokenizer sizes were counted in, the dense model embedded with,
    the runner-up and the verdict;
    ``chunkproof chunk --config`` reads it."""
    target = Path(path)
    if target.suffix not in (".yaml", ".yml"):
        target = target / "chosen_config.yaml"
    runner = choice.runner_up
    return save_config(
        choice.config, target,
        rule={**choice.rule.model_dump(), "constraints": list(choice.rule.constraints),
              "query_kinds": list(choice.rule.query_kinds),
              "tie_break_means": TIE_BREAKS[choice.rule.tie_break]},
        retrieval_mode=choice.mode, meets_rule=choice.meets_rule, note=choice.note,
        chosen_on=choice.query_set,
        scores=choice.scores, held_out=_held_out(choice), corpus=choice.corpus,
        chunkproof_version=versions()["chunkproof"], run_id=choice.run_id,
        tokenizer=choice.tokenizer, embedder=choice.embedder,
        runner_up=None if runner is None else {
            name: runner[name] for name in (*CONFIG_FIELDS, choice.rule.primary_metric,
                                            "ci_low", "ci_high", BUNDLE_TOKENS)},
        verdict=verdict_text(choice), **choice.decision, identical_configs=choice.identical,
        stability=None if choice.stability is None else choice.stability.as_dict(choice.rule),
        excluded_by_constraints=choice.excluded, constraints_not_binding=choice.not_binding)


def _held_out(choice: Choice) -> dict | None:
    if not choice.held_out:
        return None
    margin = choice.held_out["margin_over_runner_up"]
    return {"queries": choice.held_out["queries"], "scores": choice.held_out["scores"],
            "margin_over_runner_up": None if margin is None else paired_text(margin)}


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
    """The choice in words: the chosen config against the runner-up on the primary metric,
    whether the paired test tells them apart, and why the chosen one was picked."""
    chosen, runner, row = choice.chosen, choice.runner_up, choice.comparison
    name, metric = config_name(chosen), metric_phrase(choice.rule.primary_metric)
    if runner is None or row is None:
        return f"{name} is the only config that meets the rule: there is no runner-up."
    other = config_name(runner)
    key = choice.rule.primary_metric
    scores = (f"{_shown(chosen.get(key), '.3f')} against {_shown(runner.get(key), '.3f')}"
              f"; difference {_difference(row, ', ')}")
    if row["verdict"] == "A better":
        return (f"{name} is significantly better than the runner-up {other} on {metric} "
                f"({scores}).")
    if row["verdict"] == "B better":
        return (f"The runner-up {other} is significantly better than {name} on {metric} "
                f"({scores}); {name} was chosen because {_reason(choice)}.")
    if _number(row.get("mean_diff")) < 0:
        return (f"{name} scores below the runner-up {other} on {metric}, but not "
                f"significantly ({scores}); chosen because {_reason(choice)}.")
    return (f"{name} is not significantly better than the runner-up {other} on {metric} "
            f"({scores}); chosen because {_reason(choice)}.")


def same_config(row, other) -> bool:
    """Whether two candidate rows are one config (in two retrieval modes)."""
    return split_candidate(row["config_id"])[0] == split_candidate(other["config_id"])[0]


def config_name(row) -> str:
    """``strategy/size`` of a candidate row, then its retrieval mode unless plain."""
    return f"{row['strategy']}/{row['size']}{mode_suffix(row['config_id'])}"


def _difference(row: PairedRow, joint: str) -> str:
    """``+0.042<joint>95% interval -0.01 to +0.09, p = 0.21``."""
    diff, low, high = (_shown(row.get(k), "+.3f") for k in ("mean_diff", "ci_low", "ci_high"))
    return f"{diff}{joint}95% interval {low} to {high}, {_p_text(row)}"


def _p_text(row: PairedRow) -> str:
    """The p-value with what it is: Holm-corrected over every pair, or uncorrected when the
    pair was not in the significance table."""
    if missing(row.get("p_holm")):
        return f"p={_shown(row.get('p_value'), '.4g')} (uncorrected)"
    return f"p = {_shown(row['p_holm'], '.3g')} (Holm-corrected over every pair)"


def _reason(choice: Choice) -> str:
    """Why the chosen config ranks above the runner-up when the test cannot tell them apart:
    a higher mean, or the tie-break (a smaller bundle or size, a more efficient bundle)."""
    chosen, runner, metric = choice.chosen, choice.runner_up, choice.rule.primary_metric
    assert runner is not None
    if not choice.meets_rule:
        return ("no config meets every constraint and it is the closest to them (misses "
                f"{', '.join(chosen.get('failed') or [])}): reported, not endorsed")
    steady = choice.stability
    if steady is not None and steady.verdict_id == chosen["config_id"] and (
            choice.note.startswith(config_name(chosen) + " is the config the rule chose")):
        return (f"the rule chose it most often over {steady.splits} seeded splits "
                f"({steady.share:.0%})")
    if _number(chosen.get(metric)) > _number(runner.get(metric)):
        return "its mean is higher"
    tie_break = choice.rule.tie_break
    tied = f"it is within the tie margin ({choice.rule.tie_margin:g}) of the best"
    if tie_break in ("smaller_bundle", "smaller_size"):
        column = BUNDLE_TOKENS if tie_break == "smaller_bundle" else "size"
        what = ("bundle (tokens handed to the reader, labels included)" if column ==
                BUNDLE_TOKENS else "configured chunk size")
        a, b = _number(chosen.get(column)), _number(runner.get(column))
        saving = 1 - a / b if b else 0.0
        unit = " tokens" if column == BUNDLE_TOKENS else ""
        if a == b and same_config(chosen, runner):
            return (f"{tied}, the two are one config in two retrieval modes at the same cost "
                    f"({a:,.0f}{unit}), and a mode is preferred to plain only when it scores "
                    "higher")
        return (f"{tied} and its {what} is {saving:.0%} smaller "
                f"({a:,.0f}{unit} against {b:,.0f}{unit})")
    key = next((k for k in chosen if str(k).startswith("bundle_efficiency@")), "")
    return (f"{tied} and its bundle is more on topic ({key} "
            f"{_shown(chosen.get(key), '.3f')} against {_shown(runner.get(key), '.3f')})")


def _number(value) -> float:
    return float("nan") if missing(value) else float(value)


def _shown(value, spec: str) -> str:
    """``value`` formatted, or ``n/a`` when it could not be measured."""
    return "n/a" if missing(value) else format(value, spec)
