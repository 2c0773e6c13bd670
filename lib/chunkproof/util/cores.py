"""The cores this process may run on."""

from __future__ import annotations

import os


def all_cores() -> int:
    """The cores this process may run on (its CPU affinity on Linux, else every core)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
