"""A report into a disk that fills up: no truncated or empty notebook is left behind, the
notebook is reported failed in one line naming the file, and a notebook written before
stays whole."""

from __future__ import annotations

import errno

import pytest

from chunkproof.notebooks.report import build_report
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"


def test_a_full_disk_leaves_no_half_written_notebook(tmp_path, monkeypatch):
    from papermill.iorw import LocalHandler

    out = tmp_path / "report"
    out.mkdir()
    before = '{"cells": [], "note": "an earlier, complete notebook"}'
    (out / "01_corpus_profile.ipynb").write_text(before, encoding="utf-8")

    def full_disk(self, buf, path):
        with open(path, "w", encoding="utf-8") as file:
            file.write(buf[: len(buf) // 2])  # half of it fits, then the disk is full
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(LocalHandler, "write", full_disk)
    report = build_report(out, corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                          sizes=[300], strategies=["rct"], retrievers=["bm25"], budgets=[],
                          notebooks=["01_corpus_profile"], progress=False)
    [run] = report.runs
    assert run.status == "failed"
    assert "disk is full" in run.error and "01_corpus_profile.ipynb" in run.error, run.error
    assert len(run.error.splitlines()) == 1
    assert (out / "01_corpus_profile.ipynb").read_text(encoding="utf-8") == before
    assert not list(out.glob(".*.tmp"))
    assert report.exit_code == 1


@pytest.mark.parametrize("leftover", [".01_corpus_profile.ipynb.k1ll3d.tmp",
                                      ".01_corpus_profile.html.k1ll3d.tmp"])
def test_what_a_killed_report_left_is_removed(tmp_path, monkeypatch, leftover):
    from chunkproof.notebooks import report as report_module

    out = tmp_path / "report"
    out.mkdir()
    (out / leftover).write_text("{half", encoding="utf-8")
    seen = []

    def not_run(name, source, out_dir, values, *, progress="", kernels=None):  # gone first
        seen.append((name, (out_dir / leftover).exists()))
        return report_module.NotebookRun(name, source, status="failed", error="not run here")

    monkeypatch.setattr(report_module, "run_notebook", not_run)
    build_report(out, corpus=str(MINI), queries=str(MINI / "queries.jsonl"), sizes=[300],
                 strategies=["rct"], retrievers=["bm25"], budgets=[], progress=False,
                 notebooks=["01_corpus_profile"])
    assert not (out / leftover).exists()
    assert seen == [("01_corpus_profile", False)]
