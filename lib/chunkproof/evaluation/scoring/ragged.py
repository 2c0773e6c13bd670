"""Interval arithmetic over many groups at once (numpy): the union of each group's intervals,
its size, and the pairs a ragged join makes. A group is a query (or a query and a document);
an interval is a span of chars or of token positions. Every count is an exact integer."""

from __future__ import annotations

import numpy as np

INT = np.int64


def as_ints(values) -> np.ndarray:
    return np.asarray(values, dtype=INT)


def merged(group, lo, hi) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of each group's intervals [lo, hi) as disjoint intervals, sorted by group,
    then start: empty intervals are dropped and touching ones joined (``[0, 5)`` and
    ``[5, 9)`` make ``[0, 9)``). Bounds are non-negative; groups are non-negative integers."""
    group, lo, hi = as_ints(group), as_ints(lo), as_ints(hi)
    keep = hi > lo
    group, lo, hi = group[keep], lo[keep], hi[keep]
    if not len(lo):
        return group, lo, hi
    width = int(hi.max()) + 1  # each group on its own stretch of one axis
    starts, ends = lo + group * width, hi + group * width
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reached = np.maximum.accumulate(ends)
    fresh = np.ones(len(starts), dtype=bool)
    fresh[1:] = starts[1:] > reached[:-1]
    first = np.flatnonzero(fresh)
    run_start, run_end = starts[first], np.maximum.reduceat(ends, first)
    owner = run_start // width
    return owner, run_start - owner * width, run_end - owner * width


def union_size(group, lo, hi, groups: int) -> np.ndarray:
    """For each of ``groups`` groups, how many integer points the union of its intervals
    [lo, hi) covers (0 for a group without one)."""
    owner, start, end = merged(group, lo, hi)
    return sums(owner, end - start, groups)


def sums(group, values, groups: int) -> np.ndarray:
    """The sum of ``values`` (integers) in each of ``groups`` groups, as integers."""
    group = as_ints(group)
    if not len(group):
        return np.zeros(groups, dtype=INT)
    return np.bincount(group, weights=as_ints(values), minlength=groups).astype(INT)


def counts(group, groups: int) -> np.ndarray:
    """How many items each of ``groups`` groups holds."""
    return np.bincount(as_ints(group), minlength=groups).astype(INT)


def pairs(first, count) -> tuple[np.ndarray, np.ndarray]:
    """A ragged join: for item i, the ``count[i]`` positions ``first[i]``, ``first[i] + 1``,
    ...; returned as (item, position) arrays, item by item."""
    first, count = as_ints(first), np.maximum(as_ints(count), 0)
    item = np.repeat(np.arange(len(count), dtype=INT), count)
    if not len(item):
        return item, item.copy()
    begins = np.cumsum(count) - count
    return item, first[item] + np.arange(len(item), dtype=INT) - begins[item]


def ratio(numerator, denominator) -> np.ndarray:
    """``numerator / denominator`` of integer arrays as floats, NaN where the denominator is
    0 (each an exact integer division, as Python's ``a / b``)."""
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def shares(group, values, groups: int) -> np.ndarray:
    """The mean of each group's 0/1 ``values``, NaN values left out (NaN for a group with
    none): a share of flags, as an exact count over a count."""
    values = np.asarray(values, dtype=float)
    counted = ~np.isnan(values)
    group = as_ints(group)[counted]
    return ratio(sums(group, values[counted] == 1, groups), counts(group, groups))


def overlaps(lo, hi, item_lo, item_hi) -> tuple[np.ndarray, np.ndarray]:
    """Every pair (interval i, item j) where item j's interval [item_lo, item_hi) meets
    [lo_i, hi_i), that is ``item_lo < hi`` and ``item_hi > lo``; as (i, j) arrays. Items are
    looked up by their start among the starts a span of the longest item could reach, not
    tried one by one."""
    lo, hi, item_lo, item_hi = (as_ints(v) for v in (lo, hi, item_lo, item_hi))
    if not len(item_lo) or not len(lo):
        empty = as_ints([])
        return empty, empty.copy()
    order = np.argsort(item_lo, kind="stable")
    starts = item_lo[order]
    longest = int((item_hi - item_lo).max())
    first = np.searchsorted(starts, lo - longest + 1, side="left")
    last = np.searchsorted(starts, hi, side="left")
    which, at = pairs(first, last - first)
    item = order[at]
    meets = item_hi[item] > lo[which]
    return which[meets], item[meets]
