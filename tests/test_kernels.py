"""The report's kernels: the next notebook's kernel is started while the current one runs, and
every kernel is shut down when its notebook is done, or when the report ends early."""

from __future__ import annotations

import pytest

from chunkproof.notebooks.kernels import Kernels
from conftest import ROOT

pytestmark = pytest.mark.slow


def test_the_next_kernel_starts_while_the_first_is_used_and_none_outlives_its_turn():
    with Kernels(ROOT, 2) as kernels:
        first = kernels.take()
        assert first.is_alive()
        ahead = kernels.ahead[0]
        assert ahead is not first and ahead.has_kernel  # started before the first is done
        kernels.done(first)  # asked to end; waited for by the end of the report
        second = kernels.take()
        assert second is ahead and kernels.ahead is None  # no third is started
        kernels.done(second)
    assert not first.is_alive() and not second.is_alive()


def test_a_report_that_ends_early_leaves_no_kernel_running():
    with pytest.raises(RuntimeError), Kernels(ROOT, 3) as kernels:
        first = kernels.take()
        ahead = kernels.ahead[0]
        raise RuntimeError("a notebook could not be written")
    assert not first.is_alive() and not ahead.is_alive()


def test_a_kernel_s_blas_runs_on_one_thread_unless_the_environment_says(monkeypatch):
    from chunkproof.notebooks.kernels import kernel_env

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert kernel_env()["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    assert kernel_env()["OPENBLAS_NUM_THREADS"] == "4"
