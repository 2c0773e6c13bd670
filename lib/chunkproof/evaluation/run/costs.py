"""What a sweep's units of work cost, measured: each unit (a shard chunked under a config, a
config x retriever scored) reports its own CPU seconds wherever it ran, and a sweep that did
any records the costs per unit of work (CPU seconds per MB chunked, per query scored) in its
run.json and in the cache folder, where ``engine.auto_workers`` reads the last ones."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass
from typing import Any

from ...util.atomic import write_text_atomic
from ...util.cache import cache_root

COSTS_FILE = "sweep-costs.json"
"""The last measured costs, in the cache folder (``util.cache.cache_root``)."""
SWITCH_VARIABLE = "CHUNKPROOF_COSTS"
"""Environment variable: ``0`` neither reads nor records measured costs (the defaults are
used)."""
LIMITS = {"chunk_per_mb": 1000.0, "score_per_query": 10.0}
"""The largest value read back of each cost: a larger one (or none, or one not above 0) is
no measurement, and the default is used instead."""


@dataclass(frozen=True, slots=True)
class Costs:
    """CPU seconds a sweep's units take per unit of work."""

    chunk_per_mb: float = 0.35
    """To chunk one MB of corpus under one config (default: 4 configs of the sample grown to
    2 MB)."""
    score_per_query: float = 0.0007
    """To index one config's chunks and rank and score one query (default: the sample's 95
    queries cost about 0.07 CPU-s a config)."""
    source: str = "default"
    """``default``, or ``measured``: by the last sweep that chunked and scored anything."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def enabled() -> bool:
    return os.environ.get(SWITCH_VARIABLE, "1").strip() != "0"


def measured(chunk_cpu: float, chunked_mb: float, score_cpu: float,
             scored_queries: int) -> Costs | None:
    """The costs of a sweep's units: ``chunk_cpu`` CPU seconds to chunk ``chunked_mb`` MB
    (summed over the configs chunked), ``score_cpu`` to score ``scored_queries`` queries
    (summed over the configs x retrievers scored); None when it did not both chunk and score
    (its parts were read back)."""
    if chunked_mb <= 0 or scored_queries <= 0:
        return None
    return Costs(chunk_cpu / chunked_mb, score_cpu / scored_queries, "measured")


def load() -> Costs:
    """The costs the last sweep recorded, each checked (a number above 0, below ``LIMITS``),
    else the default of each; the defaults when none is recorded or the switch is off."""
    if not enabled():
        return Costs()
    try:
        data = json.loads((cache_root() / COSTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Costs()
    if not isinstance(data, dict):
        return Costs()
    found: dict[str, Any] = {name: data.get(name) for name in LIMITS}
    if not all(_sound(value, LIMITS[name]) for name, value in found.items()):
        return Costs()
    return Costs(**{name: float(value) for name, value in found.items()}, source="measured")


def _sound(value: Any, limit: float) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and 0 < value <= limit)


def record(costs: Costs | None) -> None:
    """Keep ``costs`` for the next sweep's ``auto_workers`` (nothing when None or the switch
    is off; a cache folder that cannot be written is left as it is)."""
    if costs is None or not enabled():
        return
    try:
        write_text_atomic(cache_root() / COSTS_FILE, json.dumps(costs.as_dict(), indent=1))
    except OSError:
        pass
