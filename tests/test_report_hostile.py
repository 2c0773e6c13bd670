"""A report of a corpus full of hostile names, headings, front matter and query text, opened
in a real headless Chromium: every page renders and no payload runs."""

from __future__ import annotations

import pytest

from browser import chromium, needs_chromium
from chunkproof.notebooks.report import build_report
from hostile import RAN, carriers, write_hostile_corpus

pytestmark = [*needs_chromium, pytest.mark.slow]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    made = write_hostile_corpus(root / "docs")
    built = build_report(root / "report", corpus=str(root / "docs"),
                         queries=str(made["queries"]), sizes=[200, 400],
                         strategies=["rct", "ast_breadcrumb"], retrievers=["bm25"],
                         budgets=[], progress=False)
    return built


def test_every_notebook_of_a_hostile_corpus_runs(report):
    assert [run.name for run in report.failed] == [], [run.error for run in report.failed]


def test_the_browser_sees_a_payload_that_runs(tmp_path):
    page = tmp_path / "control.html"
    page.write_text(f"<html><body><p>{carriers('control')[0]}</p></body></html>")
    dom = chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", page.as_uri())
    assert RAN + "control" in dom  # so the check below can fail


def test_no_payload_runs_on_any_report_page(report, tmp_path):
    pages = sorted(report.out_dir.rglob("*.html"))
    names = {page.name for page in pages}
    assert {"index.html", *(f"{run.name}.html" for run in report.runs)} <= names, names
    ran = {}
    for page in pages:  # the index, every notebook and every boundary view they exported
        dom = chromium(tmp_path, "--virtual-time-budget=3000", "--dump-dom", page.as_uri())
        assert "</body>" in dom, page.name  # the page rendered
        if RAN in dom:
            ran[page.name] = dom.split(RAN, 1)[1].split('"', 1)[0]
    print(f"payloads executed: {len(ran)} on {len(pages)} pages {ran}")
    assert ran == {}
