"""Running again, and running from anywhere: a changed run goes into its own folder and says
what differs, --overwrite replaces, the notebooks are found from the package, a mistyped
notebook parameter is refused naming the valid ones."""

from __future__ import annotations

import json

import pytest

from chunkproof.errors import ConfigError, NotebookNotFoundError
from chunkproof.evaluation.run.run_folder import prepare, recorded_run, run_folder
from chunkproof.evaluation.run.sweep import SweepParams
from chunkproof.notebooks import report
from chunkproof.notebooks.params import notebook_parameters
from chunkproof.notebooks.strategy_sweep import validate as validate_sweep
from conftest import FIXTURES, ROOT

MINI = FIXTURES / "mini_corpus"


def params(**changes) -> SweepParams:
    values = {"corpus": str(MINI), "queries": str(MINI / "queries.jsonl"),
              "strategies": ("rct",), "sizes": (200,), **changes}
    return SweepParams(**values)


def test_the_same_run_reuses_its_folder(tmp_path):
    first = params()
    prepare(first, tmp_path)
    folder = run_folder(tmp_path, first)
    assert folder.path == tmp_path and folder.note == "" and not folder.overwrite


def test_a_changed_run_goes_into_its_own_subfolder_and_names_what_differs(tmp_path):
    prepare(params(), tmp_path)
    changed = params(sizes=(200, 400))
    folder = run_folder(tmp_path, changed)
    assert folder.path == tmp_path / f"run-{changed.run_id}"
    assert "sizes: [200] -> [200, 400]" in folder.note
    assert "--overwrite" in folder.note
    prepare(changed, folder.path)  # the subfolder is its own: an identical run finds it again
    assert recorded_run(folder.path)["run_id"] == changed.run_id
    assert recorded_run(tmp_path)["run_id"] == params().run_id


def test_overwrite_replaces_the_run_there(tmp_path):
    prepare(params(), tmp_path)
    changed = params(k=3)
    folder = run_folder(tmp_path, changed, overwrite=True, switch="OVERWRITE=True")
    assert folder.path == tmp_path and folder.overwrite
    assert f"k: {params().k} -> 3" in folder.note
    with pytest.raises(ConfigError, match="holds an unfinished other run"):
        prepare(changed, tmp_path)  # without overwrite the folder is still refused
    prepare(changed, tmp_path, overwrite=True)
    assert json.loads((tmp_path / "params.json").read_text())["run_id"] == changed.run_id


def test_notebook_03_moves_a_changed_run_aside(tmp_path):
    values = {"CORPUS": str(MINI), "QUERIES": str(MINI / "queries.jsonl"),
              "HELD_OUT_QUERIES": "", "SPLIT_SEED": 0, "STRATEGIES": ["rct"], "SIZES": [200],
              "RETRIEVERS": ["bm25"], "K": 10, "BUDGETS": [], "CONTRASTS": [],
              "METRICS": ["recall@10"], "OUT_DIR": str(tmp_path)}
    setup = validate_sweep(**values)
    prepare(setup.params, setup.out_dir)
    again = validate_sweep(**{**values, "SIZES": [300]})
    assert again.out_dir == tmp_path / f"run-{again.params.run_id}"
    assert "sizes: [200] -> [300]" in again.describe()
    assert "OVERWRITE=True" in again.describe()
    replaced = validate_sweep(**{**values, "SIZES": [300], "OVERWRITE": True})
    assert replaced.out_dir == tmp_path and replaced.overwrite


def test_a_mistyped_notebook_parameter_reaches_the_validator():
    namespace = {"In": ["SIZES: list[int] = [300]\nCORPUS = 'data/sample'",
                        "# Parameters\nSIZE = 300\n", "from x import DEFAULT_K"],
                 "__annotations__": {"SIZES": list}, "SIZES": [300], "CORPUS": "data/sample",
                 "SIZE": 300, "DEFAULT_K": 10, "setup": None}
    assert notebook_parameters(namespace) == {"CORPUS": "data/sample", "SIZE": 300,
                                              "SIZES": [300]}
    with pytest.raises(ConfigError, match="SIZE: not a parameter of this notebook; valid "
                                          "parameters: CORPUS"):
        validate_sweep(SIZE=300)


def test_the_notebooks_are_the_packages_not_the_working_folders(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'other'\n")
    monkeypatch.chdir(tmp_path)
    assert report.notebooks_dir() == ROOT / "notebooks"
    found = report.find_notebooks(report.DEFAULT_NOTEBOOKS)
    assert [name for name, _ in found] == list(report.DEFAULT_NOTEBOOKS)


def test_a_missing_notebook_is_an_error_naming_it_and_the_ones_there():
    with pytest.raises(NotebookNotFoundError, match=r"no notebook 07_nothing in .*notebooks; "
                                                    r"there are: 01_corpus_profile"):
        report.find_notebooks(["03_strategy_sweep", "07_nothing"])
