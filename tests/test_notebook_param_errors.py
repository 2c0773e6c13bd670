"""Every notebook parameter given a bad value (as papermill -p would pass it) is refused in
one line naming the parameter, or accepted: never a traceback."""

from __future__ import annotations

import ast

import pytest

from chunkproof.errors import ConfigError
from chunkproof.notebooks import (
    choose_and_export,
    chunk_explorer,
    corpus_profile,
    splitter_panorama,
    strategy_sweep,
    structure_signal,
)
from chunkproof.notebooks.params import validate
from chunkproof.notebooks.report import notebook_values, notebooks_dir
from chunkproof.notebooks.sweep_inputs import SweepInputs, sweep_params
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"
MODELS = {"01_corpus_profile": corpus_profile.ProfileParams,
          "02_splitter_panorama": splitter_panorama.PanoramaParams,
          "03_strategy_sweep": strategy_sweep.StrategySweepParams,
          "04_chunk_explorer": chunk_explorer.ExplorerParams,
          "05_structure_signal": structure_signal.StructureSignalParams,
          "06_choose_and_export": choose_and_export.ChooseParams}
BAD = [None, "", "   ", -1, 0, 10**30, 1.5, float("nan"), True, "abc", [], [None], [[1]],
       [""], ["nope"], {"a": 1}, "x" * 5000, "/dev/null", "../" * 40 + "etc"]


def good_values(name: str, out_dir) -> dict:
    """The notebook's own defaults (its parameters cell), with a report's values on top."""
    papermill = pytest.importorskip("papermill")
    [source] = notebooks_dir().glob(f"{name}.ipynb")
    declared = papermill.inspect_notebook(str(source))
    defaults = {k: ast.literal_eval(v["default"]) for k, v in declared.items()}
    out_dir.mkdir()
    inputs = validate(SweepInputs, CORPUS=str(MINI),
                      QUERIES=str(MINI / "queries.jsonl"), HELD_OUT_QUERIES="", SPLIT_SEED=0,
                      STRATEGIES=["rct"], SIZES=[300], RETRIEVERS=["bm25"], K=5, BUDGETS=[],
                      CONTRASTS=[])
    values = notebook_values(out_dir, sweep_params(inputs), queries=inputs.QUERIES, name=name)
    return {k: v for k, v in {**defaults, **values}.items() if k in MODELS[name].model_fields}


@pytest.mark.parametrize("name", MODELS)
def test_a_bad_value_of_any_parameter_is_one_line_naming_it(name, tmp_path):
    good = good_values(name, tmp_path / "out")
    validate(MODELS[name], **good)  # the starting point is valid
    refused = 0
    for field in MODELS[name].model_fields:
        for bad in BAD:
            try:
                validate(MODELS[name], **{**good, field: bad})
            except ConfigError as err:
                refused += 1
                assert str(err).startswith(f"{field}: ") and "\n" not in str(err), str(err)
    assert refused > len(MODELS[name].model_fields) * len(BAD) // 2


def test_the_default_contrast_is_dropped_when_its_strategies_are_not_swept_and_named_ones_kept():
    def contrasts(strategies, given=None):
        values = {} if given is None else {"CONTRASTS": given}
        inputs = validate(SweepInputs, CORPUS=str(MINI), QUERIES="",
                          STRATEGIES=strategies, SIZES=[300], RETRIEVERS=["bm25"], **values)
        return sweep_params(inputs).contrasts

    assert contrasts(["rct", "ast_merge"]) == ()  # as the command line does
    assert contrasts(["rct", "ast_merge"], None) == ()
    assert contrasts(["ast_merge", "ast_breadcrumb"]) == ("ast_breadcrumb:ast_merge",)
    assert contrasts(["rct", "ast_merge"], ["rct:ast_merge"]) == ("rct:ast_merge",)
    with pytest.raises(ConfigError, match=r"^CONTRASTS: contrast 'ast_breadcrumb:ast_merge' "
                                          r"names ast_breadcrumb, .*add it to the strategies"):
        contrasts(["rct", "ast_merge"], ["ast_breadcrumb:ast_merge"])
