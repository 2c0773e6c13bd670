"""The Makefile's own behaviour, on a stand-in venv whose python and jupyter log their calls:
one install at a time, and JupyterLab started the way this user can start it."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


@pytest.fixture()
def venv(tmp_path) -> Path:
    """A folder make takes for .venv: ``bin/python`` logs each pip call and takes a second
    over it, ``bin/jupyter`` logs its arguments."""
    folder = tmp_path / "venv"
    (folder / "bin").mkdir(parents=True)
    log = folder / "calls"
    for name, wait in (("python", "sleep 1"), ("jupyter", "")):
        script = folder / "bin" / name
        script.write_text(f'#!/bin/sh\necho {name} "$@" >> {log}\n{wait}\n')
        script.chmod(0o755)
    return folder


def make(*args: str, venv: Path, **options) -> subprocess.Popen:
    return subprocess.Popen(["make", "--no-print-directory", "-C", str(ROOT), *args,
                             f"VENV={venv}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, **options)


def test_a_make_that_needs_the_install_under_way_waits_for_it_and_installs_nothing(venv):
    first = make("install", venv=venv)
    deadline = time.monotonic() + 30
    while not (venv / ".install-lock").is_dir() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = make("lab", venv=venv)
    said, _ = second.communicate(timeout=120)
    first.communicate(timeout=120)
    calls = (venv / "calls").read_text().splitlines()
    assert calls.count("python -m pip install --quiet -e .[dev]") == 1, calls
    assert calls[-1].startswith("jupyter lab notebooks/") and "waiting for the install" in said
    assert not (venv / ".install-lock").exists()


def test_make_lab_starts_jupyter_the_way_this_user_can():
    said = subprocess.run(["make", "--no-print-directory", "-n", "-C", str(ROOT), "lab"],
                          capture_output=True, text=True, check=True).stdout
    lab = next(line for line in said.splitlines() if "jupyter lab" in line)
    assert lab.endswith("--allow-root") == (os.geteuid() == 0)  # Jupyter refuses root without
