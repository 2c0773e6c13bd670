"""The Ray engine on a local instance gives the same result files as one process."""

from __future__ import annotations

import pytest

from chunklab.evaluation.engine import Engine
from chunklab.evaluation.sweep import run_sweep
from test_engine import assert_same_files, small_params

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install chunklab[ray])")

pytestmark = [pytest.mark.slow, pytest.mark.ray]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_writes_the_same_files_as_one_process(local_ray, tmp_path):
    params = small_params(retrievers=("bm25",))
    run_sweep(params, tmp_path / "one", progress=False, engine=Engine(workers=1))
    result = run_sweep(params, tmp_path / "ray", progress=False, engine=Engine(kind="ray"))
    assert result.run_info["engine"]["kind"] == "ray"
    assert result.run_info["engine"]["workers"] == 2  # the instance's CPUs
    assert_same_files(tmp_path / "one", tmp_path / "ray")
    assert local_ray.is_initialized()  # a running instance is joined, not shut down
