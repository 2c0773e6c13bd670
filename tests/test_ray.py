"""The Ray engine on a local instance gives the same result files as one process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chunkproof.evaluation.run.engine import Engine
from chunkproof.evaluation.run.sweep import run_sweep
from test_engine import assert_same_files, small_params

pytestmark = [pytest.mark.slow, pytest.mark.needs("ray")]

START_ATTEMPTS = 2
AGENTS_LATE = "Timed out waiting for file"
"""What a raylet logs when its agents did not report their ports within its fixed 15 seconds;
it then exits and the instance does not start."""
SLOW_IMPORT = "rfc3987_syntax"
"""jsonschema's optional IRI checker (installed here by the notebook tools): importing it
builds an Earley grammar, about 3 s of CPU, and every Ray process imports jsonschema as it
starts (``import ray``: 3.4 s CPU with it, 1.0 s without). On a loaded machine the agents
then miss the raylet's window: 0 of 8 starts at load 6-9 on 2 cores, against 8 of 8 with it
left out. Left out of this test's Ray processes (jsonschema checks IRIs without it)."""


def raylet_log() -> str:
    log = Path("/tmp/ray/session_latest/logs/raylet.out")
    return log.read_text(errors="replace") if log.exists() else ""


def without_slow_import(folder: Path) -> str:
    """A PYTHONPATH whose first folder holds a ``SLOW_IMPORT`` that cannot be imported."""
    stub = folder / SLOW_IMPORT
    stub.mkdir()
    (stub / "__init__.py").write_text(
        f'raise ImportError("{SLOW_IMPORT} is left out of these Ray processes")\n')
    return os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory):
    import ray

    with pytest.MonkeyPatch.context() as env:
        env.setenv("PYTHONPATH", without_slow_import(tmp_path_factory.mktemp("ray_path")))
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
                break
            except Exception:
                ray.shutdown()
                if attempt < START_ATTEMPTS:
                    continue
                if AGENTS_LATE in raylet_log():
                    pytest.skip("a local Ray instance could not start: its raylet timed out "
                                "waiting for its agents (machine too loaded)")
                raise
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


def busy_workers() -> list[int]:
    """Processes of this machine running a sweep actor's unit right now (Ray names a worker
    process after the call it runs)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            title = cmdline.read_bytes().decode(errors="replace")
        except OSError:
            continue
        if "SweepWorker.chunk" in title or "SweepWorker.score" in title:
            found.append(int(cmdline.parent.name))
    return found


def test_a_worker_killed_mid_sweep_is_replaced_and_the_results_are_the_same(local_ray,
                                                                             tmp_path):
    import signal
    import threading
    import time

    from test_engine import small_params

    if not Path("/proc/self/cmdline").exists():
        pytest.skip("finds the worker to kill in /proc (Linux)")
    params = small_params(retrievers=("bm25",))
    run_sweep(params, tmp_path / "one", progress=False, engine=Engine(workers=1))
    killed: list[int] = []
    done = threading.Event()

    def kill_one() -> None:
        while not done.is_set() and not killed:
            for pid in busy_workers():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.02)

    killer = threading.Thread(target=kill_one)
    killer.start()
    try:
        run_sweep(params, tmp_path / "ray", progress=False, engine=Engine(kind="ray"))
    finally:
        done.set()
        killer.join()
    assert killed, "no worker was caught running a unit"
    assert_same_files(tmp_path / "one", tmp_path / "ray")


def test_a_worker_that_keeps_dying_is_one_line():
    import ray

    from chunkproof.errors import WorkerLostError
    from chunkproof.evaluation.run.ray_engine import RETRIES, _lost_workers

    with pytest.raises(WorkerLostError, match=f"restarted {RETRIES} times"):
        with _lost_workers(ray):
            raise ray.exceptions.ActorDiedError()
