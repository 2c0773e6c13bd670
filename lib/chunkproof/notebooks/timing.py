"""Where a report's time went: each notebook's kernel start, imports, cells and export, and the
sweep's stages as its run.json records them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PARAMETERS_TAG = "parameters"


@dataclass(frozen=True, slots=True)
class NotebookTime:
    """Wall seconds of one executed notebook, split where they went."""

    name: str
    total: float
    """The whole run of the notebook: execution, then the HTML export."""
    kernel: float
    """Execution outside every cell: the kernel's start and shutdown, papermill's messages."""
    imports: float
    """The cells before the ``parameters`` cell (the imports and the renderer's setup)."""
    cells: float
    """Every other cell."""
    cpu: float = 0.0
    """CPU seconds of the whole run: the kernel and every process it started, and the
    report's own process while it ran and exported the notebook (0 when not measured)."""
    export_cpu: float = 0.0
    """CPU seconds of the HTML export (the report's process)."""

    @property
    def start(self) -> float:
        """Kernel start and imports: what a notebook pays before its first parameter."""
        return self.kernel + self.imports

    @property
    def export(self) -> float:
        """What is left of ``total``: reading and writing the notebook, the HTML export."""
        return max(self.total - self.kernel - self.imports - self.cells, 0.0)


def notebook_time(name: str, notebook: Path, total: float, *, cpu: float = 0.0,
                  export_cpu: float = 0.0) -> NotebookTime | None:
    """The split of ``total`` seconds read from the papermill timings of the executed
    ``notebook`` (with its ``cpu`` and ``export_cpu`` seconds as measured); None when it
    holds none (it did not run)."""
    try:
        data = json.loads(notebook.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    executed = (data.get("metadata", {}).get("papermill") or {}).get("duration")
    if executed is None:
        return None
    imports = cells = 0.0
    before_parameters = True
    for cell in data.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {})
        if PARAMETERS_TAG in meta.get("tags", ()):
            before_parameters = False
        seconds = float((meta.get("papermill") or {}).get("duration") or 0.0)
        if before_parameters:
            imports += seconds
        else:
            cells += seconds
    kernel = max(float(executed) - imports - cells, 0.0)
    return NotebookTime(name, total, kernel, imports, cells, cpu, export_cpu)


def sweep_stages(run_dir: Path, key: str = "seconds") -> dict[str, float]:
    """The sweep's wall seconds per stage from ``run_dir/run.json`` ({} without one);
    ``key="cpu_seconds"``: its CPU seconds per stage."""
    try:
        info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    seconds = info.get(key) if isinstance(info, dict) else None
    return {str(k): float(v) for k, v in (seconds or {}).items()}


def start_share(times: Sequence[NotebookTime]) -> float:
    """Kernel start and imports over the notebooks' total time (0 when nothing ran)."""
    total = sum(t.total for t in times)
    return sum(t.start for t in times) / total if total else 0.0


def time_lines(times: Sequence[NotebookTime], stages: dict[str, float],
               wall: float, *, stage_cpu: dict[str, float] | None = None) -> list[str]:
    """The lines ``chunkproof report`` ends with: one per notebook, wall seconds beside CPU
    seconds (work, where wall seconds also count waiting for a busy machine), the start
    share, and the sweep's stages."""
    cpu = sum(t.cpu for t in times)
    lines = [f"where the time went ({wall:.1f} s wall; the notebooks {cpu:.1f} CPU-s):",
             f"  {'notebook':<26}{'total s':>8}{'CPU s':>8}{'kernel s':>9}{'imports s':>10}"
             f"{'cells s':>8}{'export s':>9}{'export CPU s':>13}"]
    for t in times:
        lines.append(f"  {t.name:<26}{t.total:>8.1f}{t.cpu:>8.1f}{t.kernel:>9.1f}"
                     f"{t.imports:>10.1f}{t.cells:>8.1f}{t.export:>9.1f}{t.export_cpu:>13.1f}")
    if times:
        lines.append(f"  kernel start + imports: {start_share(times):.0%} of the notebooks' "
                     f"{sum(t.total for t in times):.1f} s")
    if stages:
        stage_cpu = stage_cpu or {}
        lines.append("  sweep stages (run.json): " + ", ".join(
            f"{name} {seconds:.1f} s" + (f" ({stage_cpu[name]:.1f} CPU-s)"
                                         if name in stage_cpu else "")
            for name, seconds in stages.items()))
    return lines


def as_record(times: Sequence[NotebookTime], stages: dict[str, float],
              wall: float) -> dict[str, Any]:
    """The same figures as plain JSON values (what the report bench reads)."""
    return {"wall": wall, "start_share": start_share(times), "stages": stages,
            "notebooks": [{"name": t.name, "total": t.total, "cpu": t.cpu, "kernel": t.kernel,
                           "imports": t.imports, "cells": t.cells, "export": t.export,
                           "export_cpu": t.export_cpu}
                          for t in times]}
