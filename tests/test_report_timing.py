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
