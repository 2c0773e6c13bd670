"""The report reference: what ``chunkproof report``'s sweep (notebook 03) and choice (notebook
06) gave on a small corpus with queries mined from it and the default grid, recorded from the
code that mined the queries in every notebook again: each config's per-query values with the
columns the sweep adds to them, and the choice (chosen config, runner-up, what decided it, the
chosen config's primary metric). ``tests/test_report_reference.py`` holds today's sweep and
choice to it, with the queries mined once and read back from the run folder.

    python tests/report_reference.py     # rewrite tests/fixtures/report_reference/

Rewrite it only when a metric, the mining or the choice is meant to change, and say so in the
commit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
FOLDER = Path(__file__).resolve().parent / "fixtures" / "report_reference"
CORPUS = ROOT / "tests" / "fixtures" / "realworld"
COLUMNS = ["config_id", "query_id", "metric", "value", "query_kind", "structure_source",
           "applied_strategy", "source", "query_set", "query_group"]
"""What the reference keeps of each per-query row (sorted by its first three)."""


def sweep_params():
    """The report's sweep of ``CORPUS``: queries mined, the default grid."""
    from chunkproof.evaluation.run import defaults
    from chunkproof.notebooks.params import validate
    from chunkproof.notebooks.sweep_inputs import SweepInputs, sweep_params

    return sweep_params(validate(
        SweepInputs, CORPUS=str(CORPUS), QUERIES="", STRATEGIES=list(defaults.DEFAULT_STRATEGIES),
        SIZES=list(defaults.DEFAULT_SIZES), RETRIEVERS=list(defaults.DEFAULT_RETRIEVERS),
        BUDGETS=list(defaults.DEFAULT_BUDGETS),
        CONTRASTS=defaults.contrasts_for(None, list(defaults.DEFAULT_STRATEGIES))))


def per_query_values(per_query: pd.DataFrame) -> pd.DataFrame:
    """``COLUMNS`` of the rows, sorted, as plain objects and floats."""
    frame = per_query[COLUMNS].astype({c: object for c in COLUMNS if c != "value"})
    return frame.sort_values(COLUMNS[:3], ignore_index=True)


def choice_of(run_dir: Path) -> dict:
    """Notebook 06's choice on the run in ``run_dir`` with the report's rule (its default
    primary metric and constraints), as a small record."""
    from chunkproof.evaluation.choice.rules import default_constraints
    from chunkproof.evaluation.run.defaults import default_primary_metric
    from chunkproof.evaluation.run.runs import load_run
    from chunkproof.notebooks import choose_and_export

    run = load_run(run_dir)
    answers = bool(run.per_query["query_kind"].isin(["keyword", "partial", "xref",
                                                      "identifier"]).any())
    primary = default_primary_metric(run.params.budgets, run.params.k, answers=answers)
    setup = choose_and_export.validate(
        CORPUS=str(CORPUS), QUERIES="", RUN_DIR=str(run_dir), PRIMARY_METRIC=primary,
        RETRIEVER="bm25", CONSTRAINTS=default_constraints(primary), TIE_BREAK="index_tokens",
        OUT_DIR=str(run_dir))
    choice = choose_and_export.choice_for(setup)
    runner_up = choice.runner_up
    return {"primary_metric": primary, "chosen": str(choice.chosen["config_id"]),
            "chosen_value": float(choice.chosen[primary]),
            "runner_up": str(runner_up["config_id"]) if runner_up is not None else None,
            "decided_by": str(choice.decided_by), "meets_rule": bool(choice.meets_rule)}


def write() -> None:
    import tempfile

    from chunkproof.evaluation.run.engine import Engine
    from chunkproof.evaluation.run.sweep import run_sweep

    FOLDER.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        result = run_sweep(sweep_params(), tmp, engine=Engine(workers=1), progress=False)
        per_query_values(result.per_query).to_parquet(FOLDER / "per_query.parquet",
                                                      index=False, compression="zstd")
        choice = choice_of(Path(tmp))
    (FOLDER / "choice.json").write_text(json.dumps(choice, indent=2) + "\n", encoding="utf-8")
    print(f"{result.run_info['queries']} queries, {result.run_info['configs']} configs; "
          f"choice: {choice}", file=sys.stderr)


if __name__ == "__main__":
    write()
