"""Sign-flip sums over sign vectors too many to keep in memory (read from a generator, once)."""

from __future__ import annotations

import numpy as np

from chunklab.evaluation.stats import flipped_sums


def test_flipped_sums_read_a_batch_generator_once():
    n, resamples = 2100, 8000  # 2100 * 8000 * 4 bytes > 64 MB: batches come from a generator
    diffs = np.zeros((n, 1))
    diffs[:10, 0] = 1.0
    flipped, counts, exact = flipped_sums(diffs, n_resamples=resamples, seed=0)
    assert not exact and flipped.shape == (resamples, 1) and counts.shape == (resamples,)
    assert np.all(np.abs(flipped) <= 10) and np.all(np.abs(counts) <= n)
