"""A run's folder: locked while a run writes it, refused when it holds another run (or that
run replaced, or this one moved into a subfolder of its own), what a killed run left
half-written removed before a run of the same parameters writes again."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from ...errors import ConfigError
from ...util.atomic import remove_leftovers, write_text_atomic
from . import tables

if TYPE_CHECKING:
    from .runs import SweepParams

RUN_RECORDS = ("run.json", "params.json")
"""Where a folder records the run it holds: run.json when finished, params.json from the
start (so a run stopped half way is recognised too)."""
RUN_SUBFOLDER = "run-{run_id}"
"""The folder, inside a folder holding another run, that a run with other parameters uses."""


def recorded_run(out: Path) -> dict[str, Any] | None:
    """The run a folder holds, ``{"run_id": ..., "file": run.json or params.json,
    **params}`` (run id "unreadable" for a record that cannot be read), or None."""
    for name in RUN_RECORDS:
        path = out / name
        if path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                params = data.get("params", data) if name == "run.json" else data
                return {**params, "run_id": str(data.get("run_id")), "file": name}
            except (OSError, ValueError, AttributeError):
                return {"run_id": "unreadable", "file": name}
    return None


def refuse_other_run(out: Path, run_id: str, *, name: str = "") -> None:
    """A folder holding another run, finished (run.json) or killed part way (params.json),
    would mix two runs' results: refuse it."""
    recorded = recorded_run(out)
    if recorded is None or recorded["run_id"] == run_id:
        return
    file, other = recorded["file"], recorded["run_id"]
    where = f"{name}: {out}" if name else str(out)
    state = "another run" if file == "run.json" else "an unfinished other run"
    raise ConfigError(f"{where} holds {state} ({other}, {file}); these parameters are run "
                      f"{run_id}: choose another output folder, or overwrite it")


@dataclass(frozen=True, slots=True)
class RunFolder:
    """Where a run writes: the folder asked for, or its own subfolder when that one holds a
    run with other parameters."""

    path: Path
    note: str = ""
    """What differs from the run already there and where this one goes ("" when nothing
    moved)."""
    overwrite: bool = False
    """The run already there is replaced (its files removed before this one writes)."""


def run_folder(out: str | os.PathLike, params: SweepParams, *, overwrite: bool = False,
               switch: str = "--overwrite") -> RunFolder:
    """The folder a run of ``params`` writes into. A folder that is empty or holds the same
    run is used (its finished parts are reused); with ``overwrite`` one holding another run
    is replaced; otherwise the run goes into ``<out>/run-<run_id>`` (where an identical later
    run finds it again) and ``note`` names the parameters that differ. ``switch`` is how the
    caller spells overwrite, for the note."""
    out = Path(out)
    recorded = recorded_run(out)
    if recorded is None or recorded["run_id"] == params.run_id:
        return RunFolder(out)
    differs = differing_params(recorded, params)
    if overwrite:
        return RunFolder(out, f"{out} held run {recorded['run_id']} ({differs}): replaced by "
                              f"run {params.run_id}", overwrite=True)
    target = out / RUN_SUBFOLDER.format(run_id=params.run_id)
    return RunFolder(target, f"{out} holds run {recorded['run_id']}; these parameters differ "
                             f"({differs}): this run goes into {target} ({switch} replaces the "
                             "earlier run instead)")


def differing_params(recorded: dict[str, Any], params: SweepParams) -> str:
    """``name: old -> new`` for every parameter that differs, joined by "; "."""
    now = params.shared()
    changed = [f"{key}: {_shown(recorded.get(key))} -> {_shown(value)}"
               for key, value in now.items() if recorded.get(key) != value]
    return "; ".join(changed) or "a run id of another chunkproof version"


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return repr(value) if isinstance(value, str) else str(value)


def clear_run(out: Path) -> None:
    """Remove the files of the run a folder holds (its tables, records and parts), nothing
    else, so another run can be written there."""
    for name in {*tables.RUN_FILES, *RUN_RECORDS, *(t.file for t in tables.RESULT_TABLES)}:
        (out / name).unlink(missing_ok=True)
    parts = out / "parts"
    if parts.is_dir():
        for part in parts.iterdir():
            if part.is_file():
                part.unlink()


LOCK_FILES = {"sweep": ".chunkproof-sweep.lock", "report": ".chunkproof-report.lock"}
"""The lock a writer of each kind holds on its folder (a report's notebook 03 sweeps into
the report folder under its own lock)."""


@contextmanager
def writing(folder: str | os.PathLike | None, *, kind: str = "sweep",
            name: str = "") -> Iterator[Path | None]:
    """Hold ``folder``'s lock of ``kind`` while a run writes it (the folder is created); a
    second writer of the same kind is refused at once with ConfigError. None: no folder,
    nothing locked."""
    if folder is None:
        yield None
        return
    path = Path(folder)
    where = f"{name}: {path}" if name else str(path)
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{where} is a file, not a folder: name a folder for the run")
    path.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path / LOCK_FILES[kind])
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise ConfigError(f"{where} is being written by another chunkproof {kind} (it holds "
                          f"{LOCK_FILES[kind]}): wait for it to finish or choose another "
                          "output folder") from None
    try:
        yield path
    finally:
        lock.release()


def prepare(params: SweepParams, out_dir: str | os.PathLike | None, *,
            overwrite: bool = False) -> Path | None:
    """The run folder, with ``parts/`` and params.json; one holding another run is refused
    (with ``overwrite``, that run's files are removed first) and what a killed run of these
    parameters left half-written is removed. Call it holding the folder's lock
    (``writing``)."""
    if out_dir is None:
        return None
    run_dir = Path(out_dir)
    recorded = recorded_run(run_dir)
    if overwrite and recorded is not None and recorded["run_id"] != params.run_id:
        clear_run(run_dir)
    refuse_other_run(run_dir, params.run_id)
    (run_dir / "parts").mkdir(parents=True, exist_ok=True)
    remove_leftovers(run_dir / "parts")
    remove_leftovers(run_dir, names=[*tables.RUN_FILES, tables.SIGNIFICANCE.file, "params.json"])
    write_text_atomic(run_dir / "params.json", json.dumps(
        {"run_id": params.run_id, **params.shared()}, indent=2, default=str))
    return run_dir
