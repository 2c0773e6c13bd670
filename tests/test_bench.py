"""The benchmark's budget: a slow strategy is timed on fewer whole copies of the corpus."""

from __future__ import annotations

from chunklab.bench import copies_within


def test_every_copy_when_the_passes_fit_the_budget():
    assert copies_within(0.1, copies=40, repeat=3, budget=60) == 40


def test_fewer_copies_when_they_do_not():
    assert copies_within(2.0, copies=40, repeat=3, budget=60) == 10


def test_never_fewer_than_one_copy():
    assert copies_within(100.0, copies=40, repeat=3, budget=60) == 1
