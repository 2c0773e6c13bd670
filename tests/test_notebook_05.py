"""Notebook 05 (structure signal): its shape, its parameters, and its figures run headless."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from chunkproof import SweepParams, load_corpus, run_sweep
from chunkproof.chunking.section_lengths import length_stats, sections_table
from chunkproof.chunking.strategies.routed import route
from chunkproof.evaluation.scoring.structure import load_gold, score_table, stratified_sample
from conftest import FIXTURES, ROOT

NOTEBOOK = ROOT / "notebooks" / "05_structure_signal.ipynb"
PARAMETERS = {"CORPUS": "str", "QUERIES": "str", "GOLD": "str", "QUOTA": "int", "SEED": "int",
              "INFER_HEADINGS": "bool", "SIZE": "int", "RETRIEVER": "str", "OUT_DIR": "str"}
STRUCTURE = FIXTURES / "structure"
FIXTURE_VALUES = {"CORPUS": "tests/fixtures/structure",
                  "QUERIES": "tests/fixtures/structure_queries.jsonl",
                  "GOLD": "tests/fixtures/structure/gold.yaml", "QUOTA": 1, "SEED": 0,
                  "INFER_HEADINGS": False, "SIZE": 300, "RETRIEVER": "bm25"}
WRITTEN = ["heading_errors.csv", "heading_scores.csv", "retrieval_splits.csv",
           "structure_signal.json"]


def cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def source(cell) -> str:
    return "".join(cell["source"])


def code_cells():
    return [c for c in cells() if c["cell_type"] == "code"]


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    papermill = pytest.importorskip("papermill")
    folder = tmp_path_factory.mktemp("nb05")
    papermill.execute_notebook(
        str(NOTEBOOK), str(folder / "05.ipynb"), kernel_name="python3", cwd=str(ROOT),
        parameters={**FIXTURE_VALUES, "OUT_DIR": str(folder / "out")}, progress_bar=False)
    return folder


@pytest.fixture(scope="module")
def direct():
    corpus = load_corpus(STRUCTURE, infer_headings=False)
    sample = stratified_sample(corpus, 1, seed=0)
    params = SweepParams(corpus=str(STRUCTURE), queries=str(FIXTURES / "structure_queries.jsonl"),
                         strategies=("structure_routed", "ast_breadcrumb", "rct"), sizes=(300,),
                         retrievers=("bm25",), options={"infer_headings": False})
    return {"corpus": corpus, "sample": sample,
            "scores": score_table(sample, load_gold(STRUCTURE / "gold.yaml")),
            "sweep": run_sweep(params, None, corpus=corpus, progress=False)}


@pytest.mark.slow
def test_notebook_writes_its_files_and_nothing_else(executed):
    out = executed / "out"
    assert sorted(p.name for p in out.iterdir()) == ["structure_signal"]
    assert sorted(p.name for p in (out / "structure_signal").iterdir()) == WRITTEN


@pytest.mark.slow
def test_exported_heading_scores_equal_score_table(executed, direct):
    numbers = json.loads((executed / "out" / "structure_signal" / "structure_signal.json")
                         .read_text())
    assert numbers["sample"] == [d.id for d in direct["sample"]]
    assert numbers["fingerprint"] == direct["corpus"].fingerprint
    table = direct["scores"]
    rows = table[table["group"] != "provenance"].set_index("key")
    assert set(numbers["heading_scores"]) == set(rows.index)
    for key, exported in numbers["heading_scores"].items():
        for column in ("documents", "tp", "fp", "fn", "precision", "recall",
                       "pages_fully_correct"):
            expected = rows.loc[key, column]
            if pd.isna(expected):
                assert exported[column] is None, (key, column)
            else:
                assert exported[column] == pytest.approx(expected), (key, column)


@pytest.mark.slow
def test_the_export_names_no_folder_of_the_machine(executed):
    text = (executed / "out" / "structure_signal" / "structure_signal.json").read_text()
    assert str(executed) not in text and str(ROOT) not in text
    parameters = json.loads(text)["parameters"]
    assert parameters["CORPUS"] == FIXTURE_VALUES["CORPUS"]  # in the repo: relative to it
    assert parameters["OUT_DIR"] == f".../{executed.name}/out"  # elsewhere: its last two names
    assert json.loads(text)["gold"] == FIXTURE_VALUES["GOLD"]


@pytest.mark.slow
def test_exported_retrieval_equals_run_sweep(executed, direct):
    numbers = json.loads((executed / "out" / "structure_signal" / "structure_signal.json")
                         .read_text())
    summary = direct["sweep"].summary
    retrieval = numbers["retrieval"]
    metric = retrieval["metric"]
    assert metric == "answer_hit@5" and retrieval["size"] == 300
    rows = summary[summary["metric"] == metric]
    for row in rows[rows["split"].isin(["all", "structure_source", "applied_strategy"])
                    ].itertuples():
        split = "route" if row.split == "applied_strategy" else row.split
        if split == "route" and row.strategy != "structure_routed":
            continue  # a baseline's own applied-strategy split is the blend
        exported = retrieval["configs"][row.strategy][split][row.split_value]
        assert exported["mean"] == pytest.approx(row.mean, abs=1e-6)
        if math.isnan(row.ci_low):  # too few queries for an interval: none exported
            assert exported["ci_low"] is None and exported["ci_high"] is None
        else:
            assert exported["ci_low"] == pytest.approx(row.ci_low, abs=1e-6)
        assert exported["n"] == row.n
    table = pd.read_csv(executed / "out" / "structure_signal" / "retrieval_splits.csv")
    kept = summary[summary["split"].isin(["all", "structure_source"])]
    merged = kept.merge(table, on=["strategy", "metric", "split", "split_value"],
                        suffixes=("", "_csv"))
    assert len(merged) == len(kept)
    assert ((merged["mean"] - merged["mean_csv"]).abs().fillna(0) < 1e-9).all()


@pytest.mark.slow
def test_exported_section_tail_equals_profile(executed, direct):
    numbers = json.loads((executed / "out" / "structure_signal" / "structure_signal.json")
                         .read_text())
    half = [d for d in direct["corpus"] if route(d) == "heading_aware"]
    sections = sections_table(half)
    stats = length_stats(sections).set_index("unit").loc["tokens"]
    tail = numbers["section_tail"]
    assert tail["sections"] == len(sections)
    assert tail["median_tokens"] == pytest.approx(stats["median"], abs=1e-4)
    assert tail["p97_tokens"] == pytest.approx(stats["p97"], abs=1e-4)
    assert tail["over_ceiling"] == int((sections["chars"] > 300).sum())


@pytest.mark.slow
def test_a_bad_parameter_stops_the_notebook_naming_it(tmp_path):
    papermill = pytest.importorskip("papermill")
    with pytest.raises(papermill.PapermillExecutionError, match="QUOTA: expected an integer"):
        papermill.execute_notebook(
            str(NOTEBOOK), str(tmp_path / "05.ipynb"), kernel_name="python3", cwd=str(ROOT),
            parameters={**FIXTURE_VALUES, "QUOTA": 0}, progress_bar=False)
    assert not any(p.name == "structure_signal" for p in tmp_path.iterdir())


def test_run_dir_is_recorded_as_a_shared_path_and_its_mined_queries_are_read(tmp_path,
                                                                              monkeypatch):
    from chunkproof.evaluation.queries import mined_part
    from chunkproof.evaluation.queries.mining import mine_all
    from chunkproof.notebooks import routed_retrieval, structure_signal

    run_dir = tmp_path / "report"
    values = {**FIXTURE_VALUES, "QUERIES": "", "OUT_DIR": "", "RUN_DIR": str(run_dir)}
    run_dir.mkdir()
    setup = structure_signal.validate(**values)
    assert setup.parameters["RUN_DIR"] == f".../{tmp_path.name}/report"
    mined_part.save_mined(run_dir / "parts", setup.corpus, mine_all(setup.corpus))
    monkeypatch.setattr(mined_part, "mine_all", lambda *a, **k: pytest.fail("mined again"))
    assert not routed_retrieval.run_retrieval(setup).per_query.empty
