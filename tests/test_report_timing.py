"""Where a report's time went: each notebook's kernel start, imports, cells and export from
papermill's timings, and the sweep's stages from run.json."""

from __future__ import annotations

import json

import pytest

from chunkproof.notebooks.timing import notebook_time, start_share, sweep_stages, time_lines


def executed(path, duration, cells):
    """An executed notebook: papermill's run duration and, per code cell, (tags, seconds)."""
    path.write_text(json.dumps({
        "metadata": {"papermill": {"duration": duration}},
        "cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Title"}] + [
            {"cell_type": "code", "source": "", "metadata": {
                "tags": tags, "papermill": {"duration": seconds}}} for tags, seconds in cells]}))
    return path


def test_the_cells_before_the_parameters_cell_are_the_imports(tmp_path):
    notebook = executed(tmp_path / "a.ipynb", 10.0,
                        [([], 1.5), ([], 0.5), (["parameters"], 0.1), ([], 3.0), ([], 2.0)])
    found = notebook_time("a", notebook, total=12.0)
    assert found.imports == pytest.approx(2.0)
    assert found.cells == pytest.approx(5.1)
    assert found.kernel == pytest.approx(10.0 - 7.1)
    assert found.export == pytest.approx(2.0)
    assert found.start == pytest.approx(4.9)
    assert start_share([found]) == pytest.approx(4.9 / 12.0)


def test_a_notebook_that_never_ran_has_no_time(tmp_path):
    (tmp_path / "b.ipynb").write_text(json.dumps({"metadata": {}, "cells": []}))
    assert notebook_time("b", tmp_path / "b.ipynb", 1.0) is None
    assert notebook_time("c", tmp_path / "c.ipynb", 1.0) is None


def test_the_lines_name_each_notebook_the_share_and_the_stages(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"seconds": {"load": 0.5, "chunk": 2.25}}))
    stages = sweep_stages(tmp_path)
    assert stages == {"load": 0.5, "chunk": 2.25}
    times = [notebook_time("01_x", executed(tmp_path / "x.ipynb", 4.0, [([], 1.0),
                                                                        (["parameters"], 0)]),
                           5.0)]
    text = "\n".join(time_lines(times, stages, 6.0))
    assert "01_x" in text and "kernel start + imports: 80%" in text
    assert "chunk 2.2 s" in text or "chunk 2.3 s" in text
    assert sweep_stages(tmp_path / "missing") == {}


def test_the_lines_give_cpu_seconds_beside_wall_seconds(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"seconds": {"retrieve": 40.0},
                                                   "cpu_seconds": {"retrieve": 9.5}}))
    times = [notebook_time("03_x", executed(tmp_path / "x.ipynb", 4.0, [([], 1.0),
                                                                        (["parameters"], 0)]),
                           30.0, cpu=7.25, export_cpu=0.5)]
    lines = time_lines(times, sweep_stages(tmp_path), 31.0,
                       stage_cpu=sweep_stages(tmp_path, "cpu_seconds"))
    assert "the notebooks 7.2 CPU-s" in lines[0] or "the notebooks 7.3 CPU-s" in lines[0]
    header, row = lines[1].split(), lines[2].split()
    assert header[:4] == ["notebook", "total", "s", "CPU"]
    assert row[:3] == ["03_x", "30.0", "7.2"] or row[:3] == ["03_x", "30.0", "7.3"]
    assert row[-1] == "0.5"  # the export's CPU seconds
    assert "retrieve 40.0 s (9.5 CPU-s)" in lines[-1]


def test_a_kernel_watch_counts_the_cpu_of_the_process_and_its_children():
    import subprocess
    import sys

    from chunkproof.notebooks.kernel_watch import KernelWatch

    spin = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    burn = (f"import subprocess, sys, time\nsubprocess.run([sys.executable, '-c', {spin!r}])\n"
            f"{spin}sys.stdout.write('done\\n'); sys.stdout.flush(); time.sleep(30)\n")
    process = subprocess.Popen([sys.executable, "-c", burn], stdout=subprocess.PIPE, text=True)
    try:
        watch = KernelWatch(stderr=None)  # type: ignore[arg-type]
        watch.pid = process.pid
        assert process.stdout.readline() == "done\n"
        assert watch.cpu_seconds() >= 0.55  # its own 0.3 CPU-s and the child's it waited for
    finally:
        process.kill()
        process.wait()
    assert KernelWatch(stderr=None).cpu_seconds() == 0.0  # type: ignore[arg-type]
