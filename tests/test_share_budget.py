"""Shared pages keep to a size budget, and a report can leave the documents' text out."""

from __future__ import annotations

import json
import shutil

import pytest

from chunkproof import cli
from chunkproof.chunking.build import chunk_document
from chunkproof.chunking.config import make_config
from chunkproof.document.corpus import make_document
from chunkproof.evaluation.run.runs import load_run
from chunkproof.notebooks.chunk_explorer import save_views, shown_views, static_views, validate
from chunkproof.notebooks.report import build_report
from chunkproof.viz.boundaries import BoundaryView
from chunkproof.viz.budget import PAGE_BUDGET, VIEW_HEIGHT, fit, weight
from conftest import FIXTURES
from test_explorer import big_markdown

MINI = FIXTURES / "mini_corpus"
SENTENCE = "The violet heron counts eleven lanterns before the tide turns at Marrow Quay."
"""A sentence of one document only (no query, answer or heading holds it)."""


def heron_page() -> str:
    parts = ["# Harbour log\n\nKept by the quay office.\n"]
    for i in range(1, 40):
        parts.append(f"\n## Watch {i}\n\nWatch {i} walks the north wall twice a night. "
                     f"{SENTENCE if i == 20 else ''}\n\n```sh\nquay log --watch {i}\n```\n")
    return "".join(parts)


@pytest.fixture(scope="module")
def huge_corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("huge") / "docs"
    folder.mkdir()
    (folder / "huge.md").write_text(big_markdown(400_000), encoding="utf-8")
    (folder / "small.md").write_text("# Small\n\nA short page.\n\n## More\n\nIts end.\n",
                                     encoding="utf-8")
    return folder


def test_a_view_over_its_allowance_draws_its_start_and_says_what_is_left_out():
    doc = make_document("big.md", big_markdown(60_000))
    config = make_config(strategy="rct", size=400)
    view = BoundaryView(doc, chunk_document(doc, config), config)
    whole = view.html()
    assert fit(view.html, doc, weight(whole), "chunkproof view ...") == whole
    clipped = fit(view.html, doc, weight(whole) // 3, "chunkproof view --doc big.md")
    assert weight(clipped) <= weight(whole) // 3
    assert f"of {len(doc.lines.starts)} shown" in clipped
    assert "See it whole with: chunkproof view --doc big.md" in clipped
    shown = clipped.split('class="chunkproof-budget"')[0]
    assert doc.text[:200].split("\n")[2] in shown and "Area 300" not in shown
    assert "view left out" in fit(view.html, doc, 3000, "chunkproof view ...")


@pytest.mark.slow
def test_the_explorer_page_stays_under_budget_with_one_huge_document(huge_corpus, tmp_path):
    report = build_report(tmp_path / "report", corpus=str(huge_corpus), queries="",
                          notebooks=["04_chunk_explorer"], progress=False)
    assert not report.failed, [r.error for r in report.failed]
    pages = sorted(p for p in report.out_dir.iterdir() if p.suffix in {".html", ".ipynb"})
    sizes = {p.name: p.stat().st_size for p in pages}
    print(f"page bytes (budget {PAGE_BUDGET}): {sizes}")
    assert "04_chunk_explorer.ipynb" in sizes and "huge.md.ast_breadcrumb_vs_rct.html" in sizes
    assert max(sizes.values()) <= PAGE_BUDGET, sizes
    page = (report.out_dir / "04_chunk_explorer.html").read_text(encoding="utf-8")
    assert "huge.md: lines 1-" in page and "See it whole with: chunkproof view" in page
    boxes = page.count(f'class="chunkproof-box" style="max-height:{VIEW_HEIGHT}px;overflow:auto')
    assert boxes == 3  # the explorer's view and the two documents' side-by-sides
    small = (report.out_dir / "small.md.ast_breadcrumb_vs_rct.html").read_text(encoding="utf-8")
    assert "chunkproof-budget" not in small  # a view within its share is drawn whole


def test_the_notebook_draws_each_document_once():
    setup = validate(CORPUS=str(FIXTURES), QUERIES="", STRATEGY="ast_breadcrumb", SIZE=300,
                     VS_STRATEGY="rct", PRESET_DOCS=["long_fence.md"], OUT_DIR="")
    views = static_views(setup)
    assert len(views) == 2  # both saved as pages of their own
    assert [v.title for v in shown_views(setup, views)] == [
        "long_fence.md — ast_breadcrumb vs rct"]


def test_without_document_text_the_views_give_positions_only(tmp_path):
    (tmp_path / "heron.md").write_text(heron_page(), encoding="utf-8")
    values = dict(CORPUS=str(tmp_path), QUERIES="", STRATEGY="ast_breadcrumb", SIZE=300,
                  VS_STRATEGY="rct", PRESET_DOCS=["heron.md"], OUT_DIR="")
    with_text = static_views(validate(**values))
    assert any(SENTENCE in view.html() for view in with_text.values())  # the check can fail
    setup = validate(**values, SHARE_TEXT=False)
    written = save_views(static_views(setup), tmp_path / "views")
    assert [p.name for p in written] == ["heron.md.ast_breadcrumb.positions.html"]
    page = written[0].read_text(encoding="utf-8")
    assert "Watch 20" not in page and "heron counts" not in page and "quay log" not in page
    assert "heading level 2, line" in page and 'data-config="rct/300"' in page
    assert page.count("<tr>") > 10  # every chunk's lines and offsets


def test_the_report_option_leaves_document_text_out(tmp_path, monkeypatch):
    from chunkproof.notebooks import report

    asked = []

    def fake_report(out, **kwargs):
        asked.append(kwargs["share_text"])
        raise SystemExit(0)

    monkeypatch.setattr(report, "build_report", fake_report)
    for extra in (["--no-document-text"], []):
        with pytest.raises(SystemExit):
            cli.main(["report", "--out", str(tmp_path / "r"), *extra])
    assert asked == [False, True]


@pytest.fixture(scope="module")
def shared_report(tmp_path_factory):
    """A report made with absolute paths under the home folder, without document text."""
    root = tmp_path_factory.mktemp("shared")
    home = root / "home" / "someone"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        corpus = shutil.copytree(MINI, home / "docs")
        (corpus / "heron.md").write_text(heron_page(), encoding="utf-8")
        report = build_report(home / "report", corpus=str(corpus),
                              queries=str(corpus / "queries.jsonl"), sizes=[200, 400],
                              strategies=["rct", "ast_breadcrumb"], retrievers=["bm25"],
                              budgets=[], progress=False, share_text=False)
        yield root, home, report


@pytest.mark.slow
def test_a_report_without_document_text_holds_no_sentence_of_the_corpus(shared_report):
    _root, _home, report = shared_report
    assert not report.failed, [r.error for r in report.failed]
    assert (report.out_dir / "heron.md.ast_breadcrumb.positions.html").is_file()  # 04 drew it
    files = [p for p in report.out_dir.rglob("*") if p.suffix in {".html", ".ipynb", ".json"}]
    assert len(files) > 12
    holding = [p.name for p in files if SENTENCE in p.read_text(encoding="utf-8")]
    assert holding == []


@pytest.mark.slow
def test_a_report_made_with_absolute_paths_names_no_folder_of_the_machine(shared_report):
    root, home, report = shared_report
    assert not report.failed, [r.error for r in report.failed]
    out = report.out_dir
    shared = [out / "params.json", out / "run.json", out / "chosen_config.yaml",
              *out.glob("*.html")]
    assert len(shared) > 8 and all(p.is_file() for p in shared)
    naming = [p.name for p in shared if str(root) in p.read_text(encoding="utf-8")]
    assert naming == []
    params = json.loads((out / "params.json").read_text(encoding="utf-8"))
    info = json.loads((out / "run.json").read_text(encoding="utf-8"))
    recorded = info["params"]
    assert params["corpus"] == recorded["corpus"] == "~/docs"
    assert params["queries"] == "~/docs/queries.jsonl"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(home))
        patch.chdir(root)
        loaded = load_run(out)
        assert loaded.params.corpus == str(home / "docs")
        assert loaded.params.run_id == params["run_id"] == info["run_id"]
