"""Figures as plain values: what counts as missing, numpy scalars made JSON/YAML-safe, and a
size in MiB read from the environment."""

from __future__ import annotations

import math
import os
from typing import Any

from ..errors import ConfigError


def missing(value: Any) -> bool:
    """None or a float NaN: a figure that could not be measured."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def plain(value: Any, *, digits: int | None = None):
    """numpy scalars as Python values, NaN as None, -0.0 as 0.0, lists item by item (YAML-
    and JSON-safe); floats rounded to ``digits`` when given."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float):
        if math.isnan(value):
            return None
        value += 0.0  # -0.0 shown as 0.0
        return value if digits is None else round(value, digits) + 0.0
    if isinstance(value, list | tuple):
        return [plain(v, digits=digits) for v in value]
    return value


def mib_from_env(variable: str, default_bytes: int, *, what: str, example: int,
                 limit_mib: float) -> int:
    """Bytes of the MiB ``$variable`` holds (unset or blank: ``default_bytes``); ConfigError
    naming the value when it is not a number in (0, ``limit_mib``) (NaN and inf fail too):
    ``what`` says what the number is, in MiB, ``example`` a value that would do."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return default_bytes
    try:
        mib = float(value)
    except ValueError:
        mib = 0.0
    if not 0 < mib < limit_mib:
        raise ConfigError(f"{variable}: expected {what}, a number > 0 (e.g. {example}); "
                          f"got {value!r}")
    return int(mib * 2**20)
