"""Shared files name paths relative to the repo (the working folder) or under ``~``, never
the machine's absolute folders."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from chunkproof.util.paths import shown_path, shown_paths
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"


@pytest.fixture()
def home(tmp_path, monkeypatch):
    folder = tmp_path / "home" / "someone"
    folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    return folder


def test_a_path_is_shown_relative_to_the_working_folder_or_home(tmp_path, home, monkeypatch):
    work = tmp_path / "repo"
    (work / "data").mkdir(parents=True)
    monkeypatch.chdir(work)
    assert shown_path(work / "data") == "data"
    assert shown_path(work) == "."
    assert shown_path(home / "docs" / "a.md") == "~/docs/a.md"
    assert shown_path(home) == "~"
    assert shown_path("/elsewhere/x/y") == ".../x/y"  # outside both: its last two names
    assert shown_path("/x") == ".../x"


def test_every_spelling_of_a_folder_is_replaced_where_its_name_ends(tmp_path, home):
    text = f'CORPUS = "{home}/docs"; {home}/docs2/x.md; {home}x'
    assert shown_paths(text, [home / "docs"], base=tmp_path / "repo") == (
        'CORPUS = "~/docs"; ~/docs2/x.md; ' + f"{home}x")


def test_a_folder_written_inside_a_relative_path_is_left_as_written(tmp_path, home):
    """A command run in the report folder names the corpus relative to it; that path ends
    in the corpus folder's own spelling, which is not replaced inside it."""
    text = "chunkproof chunk --corpus ../../srv/docs; loaded /srv/docs"
    assert shown_paths(text, ["/srv/docs"], base=tmp_path / "repo") == (
        "chunkproof chunk --corpus ../../srv/docs; loaded .../srv/docs")


def test_run_json_names_the_corpus_as_the_user_does(tmp_path, home, monkeypatch):
    from chunkproof.evaluation.run.sweep import SweepParams, run_sweep

    corpus = shutil.copytree(MINI, home / "docs")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    params = SweepParams(corpus=str(corpus), queries=str(corpus / "queries.jsonl"),
                         strategies=("rct",), sizes=(300,), retrievers=("bm25",))
    run_sweep(params, home / "run", progress=False)
    info = json.loads((home / "run" / "run.json").read_text(encoding="utf-8"))
    assert info["corpus"]["root"] == "~/docs"


@pytest.mark.slow
def test_a_report_page_names_no_folder_of_the_machine(home):
    from chunkproof.notebooks.report import build_report

    corpus = shutil.copytree(MINI, home / "docs")
    report = build_report(home / "report", corpus=str(corpus),
                          queries=str(corpus / "queries.jsonl"), sizes=[300],
                          strategies=["rct"], retrievers=["bm25"], budgets=[],
                          notebooks=["01_corpus_profile"], progress=False)
    assert not report.failed, [r.error for r in report.failed]
    pages = [report.index, *report.out_dir.glob("01_corpus_profile.*")]
    assert len(pages) == 3
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert str(home) not in text, page.name
    assert "~/docs" in report.index.read_text(encoding="utf-8")
    assert "~/docs" in (report.out_dir / "01_corpus_profile.html").read_text(encoding="utf-8")


def test_a_run_made_with_absolute_paths_records_them_shared_and_resumes_from_elsewhere(
        tmp_path, home, monkeypatch):
    from chunkproof.evaluation.run.runs import load_run
    from chunkproof.evaluation.run.sweep import SweepParams, run_sweep

    corpus = shutil.copytree(MINI, home / "docs")
    for folder in ("a", "b"):
        (home / folder).mkdir()
    monkeypatch.chdir(home / "a")
    given = {"strategies": ("rct",), "sizes": (300,), "retrievers": ("bm25",)}
    first = SweepParams(corpus=str(corpus), queries=str(corpus / "queries.jsonl"), **given)
    run_sweep(first, home / "run", progress=False)
    for name in ("params.json", "run.json"):
        text = (home / "run" / name).read_text(encoding="utf-8")
        assert str(home) not in text and str(tmp_path) not in text, name
    assert json.loads((home / "run" / "params.json").read_text())["corpus"] == "~/docs"
    monkeypatch.chdir(home / "b")  # the same run spelled from another folder
    again = SweepParams(corpus="../docs", queries="../docs/queries.jsonl", **given)
    assert again.run_id == first.run_id
    resumed = run_sweep(again, home / "run", progress=False)
    assert resumed.run_info["reused_parts"] > 0
    loaded = load_run(home / "run")
    assert loaded.params.corpus == str(corpus) and loaded.params.run_id == first.run_id
    assert len(loaded.summary) == len(resumed.summary)


def test_a_corpus_outside_the_repo_and_home_is_named_by_its_last_two_names_in_the_export(
        tmp_path, home, monkeypatch):
    from chunkproof.evaluation.choice import choose, export
    from chunkproof.evaluation.choice.rules import ChoiceRule
    from chunkproof.evaluation.run.sweep import SweepParams, run_sweep

    corpus = shutil.copytree(MINI, tmp_path / "srv" / "docs")  # neither repo nor home
    queries = shutil.copy(MINI / "queries.jsonl", tmp_path / "srv" / "q.jsonl")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    params = SweepParams(corpus=str(corpus), queries=str(queries), strategies=("rct",),
                         sizes=(300, 600), retrievers=("bm25",))
    result = run_sweep(params, tmp_path / "work" / "run", progress=False)
    rule = ChoiceRule(primary_metric=result.run_info["primary_metric"])  # no budgets swept
    path = export.export_choice(choose.choose(result, rule), tmp_path / "work")
    text = path.read_text(encoding="utf-8")
    assert str(tmp_path) not in text
    assert yaml.safe_load(text)["corpus"]["root"] == ".../srv/docs"


@pytest.mark.slow
def test_a_report_on_files_outside_the_repo_and_home_names_no_folder_of_the_machine(
        tmp_path, home):
    from chunkproof.notebooks.report import build_report

    corpus = shutil.copytree(MINI, tmp_path / "srv" / "docs")
    (tmp_path / "srv" / "q").mkdir()
    queries = shutil.copy(MINI / "queries.jsonl", tmp_path / "srv" / "q" / "queries.jsonl")
    (tmp_path / "out" / "rep").mkdir(parents=True)
    (tmp_path / "out" / "rep" / "params.json").write_text('{"run_id": "0123456789ab"}')
    report = build_report(tmp_path / "out" / "rep", corpus=str(corpus), queries=str(queries),
                          sizes=[300], strategies=["rct"], retrievers=["bm25"], budgets=[],
                          notebooks=["01_corpus_profile", "03_strategy_sweep"],
                          progress=False)
    assert not report.failed, [r.error for r in report.failed]
    assert report.out_dir.parent == tmp_path / "out" / "rep"  # rerun into its own subfolder
    pages = [report.index, *report.out_dir.glob("0*.html"), *report.out_dir.glob("0*.ipynb")]
    assert len(pages) == 5
    for page in pages:
        assert str(tmp_path) not in page.read_text(encoding="utf-8"), page.name
    sweep = (report.out_dir / "03_strategy_sweep.html").read_text(encoding="utf-8")
    assert f".../rep/{report.out_dir.name}" in sweep
