"""Where a sweep runs changes nothing in its results: local processes give the same files,
byte for byte, as one process; documents are parsed once and shared by every config."""

from __future__ import annotations

import json
import pickle
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from chunkproof import load_corpus
from chunkproof.document import corpus as corpus_module
from chunkproof.evaluation.run import units
from chunkproof.evaluation.run.engine import Engine, ordered
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep
from conftest import SAMPLE

QUERIES = str(SAMPLE / "queries.jsonl")
RUN_ONLY = ("seconds", "cpu_seconds", "costs", "engine")
"""run.json entries about how the run went, not what it found."""


def small_params(**extra) -> SweepParams:
    return SweepParams(corpus=str(SAMPLE), queries=QUERIES, strategies=("rct", "ast_breadcrumb"),
                       sizes=(400, 900), budgets=(256,), contrasts=("ast_breadcrumb:rct",),
                       **extra)


def run_files(run_dir: Path) -> dict[str, bytes]:
    """Every file of a run folder (parts included) by relative path; run.json without the
    entries that say how the run went."""
    files = {str(p.relative_to(run_dir)): p.read_bytes()
             for p in sorted(run_dir.rglob("*")) if p.is_file()}
    info = json.loads(files.pop("run.json"))
    files["run.json"] = json.dumps({k: v for k, v in info.items() if k not in RUN_ONLY},
                                   sort_keys=True).encode()
    return files


def assert_same_files(a: Path, b: Path) -> None:
    first, second = run_files(a), run_files(b)
    assert sorted(first) == sorted(second)
    differ = [name for name in first if first[name] != second[name]]
    assert not differ, f"files differ: {differ}"


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    out = tmp_path_factory.mktemp("engine") / "one"
    run_sweep(small_params(), out, progress=False, engine=Engine(workers=1))
    return out


def test_two_local_workers_write_the_same_files_as_one_process(one_process, tmp_path):
    result = run_sweep(small_params(), tmp_path / "two", progress=False,
                       engine=Engine(workers=2))
    assert result.run_info["engine"] == {"kind": "local", "workers": 2, "address": "",
                                         "chosen": "given"}
    assert_same_files(one_process, tmp_path / "two")


def test_a_sweep_without_a_folder_holds_the_same_chunks(one_process):
    result = run_sweep(small_params(), None, progress=False, engine=Engine(workers=2))
    written = pd_read(one_process / "chunks.parquet")
    assert result.chunks.equals(written)


def pd_read(path: Path):
    import pandas as pd

    return pd.read_parquet(path)


def test_the_default_engine_is_every_local_core():
    assert Engine() == Engine(kind="local", workers=None, address="")


def test_workers_must_be_positive():
    with pytest.raises(ValueError, match="workers"):
        Engine(workers=0)


def test_documents_are_parsed_once_whatever_the_configs(monkeypatch):
    corpus = load_corpus(SAMPLE)
    calls = []
    original = corpus_module.parse_blocks
    monkeypatch.setattr(corpus_module, "parse_blocks",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    params = small_params()
    run_sweep(params, None, corpus=corpus, progress=False, engine=Engine(workers=1))
    assert calls == []  # 4 configs, 2 sizes: no document parsed again
    # a worker is handed documents pickled with their blocks: unpickling does not parse
    docs = pickle.loads(pickle.dumps(list(corpus)))
    assert calls == [] and [d.blocks for d in docs] == [d.blocks for d in corpus]


def test_shards_keep_document_order_and_cover_every_document():
    docs = list(load_corpus(SAMPLE))
    for n in (1, 2, 3, 8, 100):
        runs = units.shards(docs, n)
        assert 1 <= len(runs) <= min(n, len(docs))
        assert [d.id for run in runs for d in run] == [d.id for d in docs]
        assert all(runs)
    assert units.shards([], 4) == []


def test_results_come_back_in_order_with_a_bounded_window():
    submitted = []
    with ThreadPoolExecutor(2) as pool:
        def submit(item):
            submitted.append(item)
            return pool.submit(lambda x: x * x, item)

        results = ordered(submit, range(10), window=3)
        assert next(results) == 0 and len(submitted) == 3  # no more than 3 ahead
        assert list(results) == [x * x for x in range(1, 10)]


def test_the_default_worker_count_comes_from_the_environment(monkeypatch):
    from chunkproof.errors import ConfigError
    from chunkproof.evaluation.run.engine import default_workers

    monkeypatch.setenv("CHUNKPROOF_WORKERS", "3")
    assert default_workers() == 3
    monkeypatch.setenv("CHUNKPROOF_WORKERS", "auto")
    assert default_workers() is None  # decided from the work
    monkeypatch.delenv("CHUNKPROOF_WORKERS")
    assert default_workers() is None
    monkeypatch.setenv("CHUNKPROOF_WORKERS", "many")
    with pytest.raises(ConfigError, match="CHUNKPROOF_WORKERS must be a positive integer or "
                                          "auto; got 'many'"):
        default_workers()


@pytest.mark.parametrize(("mb", "units", "queries", "cores", "busy", "expected"), [
    (0.12, 12, 95, 8, 0.0, 1),    # the sample: a pool's start costs more than it saves
    (2.0, 4, 95, 2, 0.0, 1),      # 2 MB, 4 configs: not yet
    (20.0, 12, 95, 2, 0.0, 2),    # 20 MB, 12 configs on a quiet machine: both cores
    (20.0, 12, 95, 8, 0.0, 8),
    (20.0, 12, 95, 2, 2.0, 1),    # both cores busy with other work: no worker gets one
    (20.0, 12, 95, 8, 5.0, 3),    # three free: three
])
def test_auto_starts_workers_only_where_they_pay(mb, units, queries, cores, busy, expected):
    from chunkproof.evaluation.run.costs import Costs
    from chunkproof.evaluation.run.engine import Work, auto_workers

    work = Work(chars=int(mb * 1e6), units=units, queries=queries)
    assert auto_workers(work, cores=cores, busy=busy, costs=Costs()) == expected


def test_auto_weighs_the_costs_the_last_sweep_measured(tmp_path, monkeypatch):
    """A sweep records what its units cost per MB chunked and per query scored (run.json and
    the cache folder); the next auto choice weighs those, not the defaults: a real site's
    thousands of mined queries are what make a pool pay."""
    from chunkproof.evaluation.run import costs
    from chunkproof.evaluation.run.engine import Work, auto_workers

    monkeypatch.setenv("CHUNKPROOF_CACHE", str(tmp_path))
    monkeypatch.setenv(costs.SWITCH_VARIABLE, "1")
    assert costs.load() == costs.Costs()  # nothing recorded yet: the defaults
    info = run_sweep(small_params(), None, progress=False, engine=Engine(workers=1)).run_info
    recorded = info["costs"]
    assert recorded["source"] == "measured"
    assert recorded["chunk_per_mb"] > 0 and recorded["score_per_query"] > 0
    assert costs.load().as_dict() == recorded
    site = Work(chars=int(0.75e6), units=12, queries=2690)
    cheap = costs.Costs(chunk_per_mb=0.05, score_per_query=0.00002, source="measured")
    slow = costs.Costs(chunk_per_mb=0.35, score_per_query=0.001, source="measured")
    assert auto_workers(site, cores=2, busy=0.0, costs=cheap) == 1
    assert auto_workers(site, cores=2, busy=0.0, costs=slow) == 2
    (tmp_path / costs.COSTS_FILE).write_text('{"chunk_per_mb": -1, "score_per_query": "x"}')
    assert costs.load() == costs.Costs()  # a value that is no measurement is not read
    monkeypatch.setenv(costs.SWITCH_VARIABLE, "0")
    (tmp_path / costs.COSTS_FILE).write_text(json.dumps(recorded))
    assert costs.load() == costs.Costs()


def test_run_json_says_whether_the_workers_were_chosen(monkeypatch):
    monkeypatch.delenv("CHUNKPROOF_WORKERS")
    auto = run_sweep(small_params(), None, progress=False).run_info["engine"]
    assert auto["workers"] == 1 and auto["chosen"] == "auto"  # the sample: one
    given = run_sweep(small_params(), None, progress=False,
                      engine=Engine(workers=1)).run_info["engine"]
    assert given["chosen"] == "given"


def test_a_part_of_another_key_is_recomputed_by_local_workers(tmp_path):
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(SAMPLE, corpus)
    params = small_params().model_copy(update={"corpus": str(corpus)})
    out = tmp_path / "run"
    run_sweep(params, out, progress=False, engine=Engine(workers=2))
    before = {p.name for p in (out / "parts").glob("*.parquet")}
    page = next(p for p in sorted(corpus.rglob("*.md")))
    page.write_text(page.read_text(encoding="utf-8") + "\n## Added later\n\nA new section.\n",
                    encoding="utf-8")
    run_sweep(params, out, progress=False, engine=Engine(workers=2))
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert info["reused_parts"] == 0
    assert not before & {p.name for p in (out / "parts").glob("*.parquet")}
    fresh = tmp_path / "fresh"
    run_sweep(params, fresh, progress=False, engine=Engine(workers=1))
    assert_same_files(out, fresh)


SWEEP_SCRIPT = """
import sys
from chunkproof.evaluation.run.engine import Engine
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep

if __name__ == "__main__":
    params = SweepParams(corpus=sys.argv[1], queries=sys.argv[2], retrievers=("bm25",),
                         strategies=("rct", "ast_merge", "ast_breadcrumb", "mhs_rct"),
                         sizes=(100, 200, 300, 400, 600, 800, 1200))
    run_sweep(params, sys.argv[3], engine=Engine(kind="local", workers=2), progress=False)
"""


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (from /proc: Linux)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        here = todo.pop()
        children = [p for p, parent in parents.items() if parent == here]
        found.update(children)
        todo += children
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
def test_a_killed_sweep_leaves_no_worker_running(tmp_path):
    """``kill -9`` of a sweep once left its forkserver, both workers and the resource tracker
    running (some 500 MB): each worker ends with the process that started it."""
    import os
    import signal
    import subprocess
    import sys
    import time

    if not Path("/proc/self/stat").exists():
        pytest.skip("reads processes from /proc (Linux)")
    script = tmp_path / "sweep.py"
    script.write_text(SWEEP_SCRIPT)
    sweep = subprocess.Popen([sys.executable, str(script), str(SAMPLE),
                              str(SAMPLE / "queries.jsonl"), str(tmp_path / "run")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline, below = time.monotonic() + 120, set()
    while time.monotonic() < deadline and len(below) < 4 and sweep.poll() is None:
        time.sleep(0.5)  # the resource tracker, the forkserver and two workers
        below = descendants(sweep.pid)
    assert len(below) >= 4 and sweep.poll() is None, "the sweep did not start its workers"
    os.kill(sweep.pid, signal.SIGKILL)
    sweep.wait()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(running(p) for p in below):
        time.sleep(0.5)
    left = [p for p in below if running(p)]
    for pid in left:  # so that a failure leaves nothing behind either
        os.kill(pid, signal.SIGKILL)
    assert left == []


def test_the_workers_option_takes_a_count_or_auto():
    import argparse

    from chunkproof.cli_args import workers_count

    assert workers_count("auto") is None and workers_count("3") == 3
    with pytest.raises(argparse.ArgumentTypeError, match="positive integer or auto"):
        workers_count("many")
