"""Notebook 03, the strategy sweep: its parameters, the sweep they describe and the numbers it
exports."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..evaluation.sweep import KEY_METRICS, SweepParams, SweepResult, headline
from ..util.atomic import write_text_atomic
from .params import (
    CorpusFolder,
    NotebookParams,
    OutputFolder,
    PositiveInt,
    QueryFile,
    Retrievers,
    Sizes,
    Strategies,
    Texts,
    Unit,
)
from .params import validate as validate_params


class SweepInputs(NotebookParams):
    """What every notebook that runs a sweep passes (03, 05 and the report)."""

    CORPUS: CorpusFolder
    QUERIES: QueryFile
    STRATEGIES: Strategies
    SIZES: Sizes
    RETRIEVERS: Retrievers
    K: PositiveInt = 5
    UNIT: Unit = "chars"


class StrategySweepParams(SweepInputs):
    """Notebook 03's parameters."""

    METRICS: Texts
    OUT_DIR: OutputFolder


@dataclass(frozen=True, slots=True)
class StrategySweepSetup:
    """Notebook 03's parameters, checked."""

    params: SweepParams
    metrics: list[str]
    """The metrics charted; the first is broken down and tested pairwise."""
    out_dir: Path

    def describe(self) -> str:
        return (f"run {self.params.run_id}: {len(self.params.configs())} configs x "
                f"{len(self.params.retrievers)} retriever(s) -> {self.out_dir}")


def sweep_params(inputs: SweepInputs, *, options: dict[str, Any] | None = None) -> SweepParams:
    """The SweepParams the checked inputs describe (paths already absolute); ``options`` are
    config options fixed for every config of the sweep."""
    return SweepParams(corpus=inputs.CORPUS, queries=inputs.QUERIES,
                       strategies=tuple(inputs.STRATEGIES), sizes=tuple(inputs.SIZES),
                       retrievers=tuple(inputs.RETRIEVERS), k=inputs.K, unit=inputs.UNIT,
                       options=options or {})


def validate(**params: Any) -> StrategySweepSetup:
    """Check notebook 03's parameters (errors name the parameter)."""
    checked = validate_params(StrategySweepParams, **params)
    return StrategySweepSetup(sweep_params(checked), check_metrics(checked.METRICS, k=checked.K),
                              Path(checked.OUT_DIR))


def check_metrics(metrics: list[str], *, k: int, name: str = "METRICS") -> list[str]:
    """Metric names ``<metric>@k``; the first one must be among the metrics the sweep tests
    pairwise (its significance matrix is drawn)."""
    wrong = [m for m in metrics if not m.endswith(f"@{k}")]
    if wrong:
        raise ConfigError(f"{name}: every metric must be measured at K={k} (name@{k}); "
                          f"got {wrong}")
    tested = [t.format(k=k) for t in KEY_METRICS]
    if metrics[0] not in tested:
        raise ConfigError(f"{name}: the first metric is tested pairwise and must be one of "
                          f"{', '.join(tested)}; got {metrics[0]!r}")
    return list(metrics)


def export_sweep_numbers(result: SweepResult, out_dir: str | os.PathLike) -> Path:
    """Write strategy_sweep.json: run id, corpus fingerprint, sizes of the grid and the
    headline means per config (what a test or a reader compares against)."""
    info = result.run_info
    numbers = {"run_id": info["run_id"], "fingerprint": info["corpus"]["fingerprint"],
               "configs": info["configs"], "queries": info["queries"],
               "headline": headline(result).to_dict("records")}
    return write_text_atomic(Path(out_dir) / "strategy_sweep.json",
                             json.dumps(numbers, indent=2, default=float))
