"""Figures as plain values: what counts as missing, and numpy scalars made JSON/YAML-safe."""

from __future__ import annotations

import math
from typing import Any


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
