"""A run as the choice sees it: each config x retrieval mode a candidate of its own, known by
one id (the config id, then ``+`` and the mode for any mode but plain), so the rule, the tests,
the repeated splits and the export pick a retrieval mode together with the config."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from ..retrieval.modes import PLAIN
from ..scoring.families import MODES

SEPARATOR = "+"
"""Between a config id (hexadecimal) and a mode in a candidate id."""


def candidate_id(config_id: str, mode: str = PLAIN) -> str:
    """The id of ``config_id`` retrieved in ``mode``: the config id itself for plain."""
    return config_id if mode == PLAIN else f"{config_id}{SEPARATOR}{mode}"


def split_candidate(candidate: str) -> tuple[str, str]:
    """(config id, mode) of a candidate id."""
    config_id, _, mode = str(candidate).partition(SEPARATOR)
    return config_id, mode or PLAIN


def mode_suffix(candidate: str) -> str:
    """`` +boost`` after a config's name when its candidate is not plain, else ""."""
    mode = split_candidate(candidate)[1]
    return "" if mode == PLAIN else f" {SEPARATOR}{mode}"


def _ids(config_ids: pd.Series, modes: pd.Series) -> np.ndarray:
    plain = modes.to_numpy() == PLAIN
    joined = config_ids.astype(str) + SEPARATOR + modes.astype(str)
    return np.where(plain, config_ids.to_numpy(), joined.to_numpy())


def _keyed(frame: pd.DataFrame) -> pd.DataFrame:
    if "mode" not in frame or frame.empty:
        return frame
    return frame.assign(config_id=_ids(frame["config_id"], frame["mode"]))


def _tests(sig: pd.DataFrame) -> pd.DataFrame:
    """Significance rows keyed by candidate: both sides in the row's mode, except in the
    modes family, whose B side is plain."""
    if "mode" not in sig or sig.empty:
        return sig
    b_modes = sig["mode"].where(sig["family"] != MODES, PLAIN)
    return sig.assign(config_a=_ids(sig["config_a"], sig["mode"]),
                      config_b=_ids(sig["config_b"], b_modes))


def by_candidate(run: Any) -> Any:
    """``run`` (a SweepResult) with its config ids replaced by candidate ids in every table
    the choice reads, a chunk_stats row and an ``identical_configs`` entry per candidate; the
    run itself when only plain was scored (or it was keyed already)."""
    modes = list(run.per_query["mode"].unique()) if "mode" in run.per_query else []
    if modes in ([], [PLAIN]) or run.per_query["config_id"].astype(str).str.contains(
            SEPARATOR, regex=False).any():
        return run
    stats = pd.concat([run.chunk_stats.assign(config_id=[candidate_id(c, m) for c in
                                                         run.chunk_stats["config_id"]])
                       for m in modes], ignore_index=True)
    info = dict(run.run_info)
    info["identical_configs"] = [
        {**s, "config_id": candidate_id(s["config_id"], m), "same_as": candidate_id(
            s["same_as"], m)} for m in modes for s in run.run_info.get("identical_configs", [])]
    return dataclasses.replace(run, per_query=_keyed(run.per_query),
                               retrieved=_keyed(run.retrieved), summary=_keyed(run.summary),
                               significance=_tests(run.significance), chunk_stats=stats,
                               run_info=info)
