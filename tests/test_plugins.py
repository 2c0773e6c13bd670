"""Plug-in strategies: a splitter of your own named by its import path or by an entry point of
the ``chunkproof.strategies`` group, its spans or texts aligned, measured as the peers are, and
exported by its import path. The plug-ins live in a temporary package the test writes (with the
dist-info folder an install leaves, so its entry point is found)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from chunkproof import chunk_document, load_config, make_config, make_document
from chunkproof.chunking.registry import REGISTRY
from chunkproof.cli import main
from chunkproof.errors import PluginError, UnknownStrategyError
from chunkproof.evaluation.choice.choose import choose
from chunkproof.evaluation.choice.export import export_choice
from chunkproof.evaluation.choice.rules import ChoiceRule
from chunkproof.evaluation.run.sweep import SweepParams, run_sweep
from chunkproof.evaluation.scoring.invariants import check
from chunkproof.notebooks import strategy_sweep
from conftest import SAMPLE, fixture_doc

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = '''
"""Splitters a team deploys."""


def by_paragraph(text, config):
    """Blank-line paragraphs, as texts."""
    return [part for part in text.split("\\n\\n") if part.strip()]


def halves(text, config, doc):
    """Each document cut in two halves, as spans; it asks for the parsed Document."""
    assert doc.text == text and config.size > 0
    middle = len(text) // 2
    return [(middle, len(text)), (0, middle)]


def shouted(text, config):
    return [text.upper()]


def number(text, config):
    return 42


def too_far(text, config):
    return [(0, len(text) + 5)]


def failing(text, config):
    raise RuntimeError("the model server is down")

not_a_function = 3
'''
PACKAGE = "teamsplit"


@pytest.fixture
def plugins(tmp_path, monkeypatch):
    """The package ``teamsplit`` importable, its entry point ``paragraphs`` installed; the
    plug-ins it registers are forgotten afterwards."""
    folder = tmp_path / "site"
    (folder / PACKAGE).mkdir(parents=True)
    (folder / PACKAGE / "__init__.py").write_text(PLUGINS, encoding="utf-8")
    info = folder / f"{PACKAGE}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[chunkproof.strategies]\nparagraphs = {PACKAGE}:by_paragraph\n"
        f"broken = {PACKAGE}:not_a_function\n")
    monkeypatch.syspath_prepend(str(folder))
    before = set(REGISTRY)
    yield folder
    for name in set(REGISTRY) - before:
        del REGISTRY[name]
    sys.modules.pop(PACKAGE, None)


TEXT = "# Guide\n\nFirst paragraph.\n\n```python\nx = 1\n\ny = 2\n```\n\nLast words.\n"


def test_a_plug_in_s_texts_are_aligned_to_their_spans(plugins):
    config = make_config(strategy=f"{PACKAGE}:by_paragraph", size=500)
    doc = make_document("guide.md", TEXT)
    chunks = chunk_document(doc, config)
    assert config.strategy == "teamsplit:by_paragraph" and REGISTRY[config.strategy].family \
        == "plugin"
    assert [c.text for c in chunks] == [p for p in TEXT.split("\n\n") if p.strip()]
    assert all(c.verbatim and TEXT[c.start:c.end] == c.text for c in chunks)
    report = check(doc, chunks, config)
    assert report.split_blocks == 1  # the fence holding a blank line is cut: counted
    assert report.lost_chars == 0 and report.false_verbatim == 0


def test_spans_are_taken_in_document_order_and_the_document_is_handed_over(plugins):
    config = make_config(strategy=f"{PACKAGE}:halves", size=500)
    doc = make_document("guide.md", TEXT)
    chunks = chunk_document(doc, config)
    middle = len(TEXT) // 2
    assert [(c.start, c.end) for c in chunks] == [(0, middle), (middle, len(TEXT))]
    assert all(c.verbatim for c in chunks) and chunks[0].breadcrumb == ()


def test_a_rewritten_text_is_kept_and_counted(plugins):
    config = make_config(strategy=f"{PACKAGE}:shouted", size=500)
    doc = fixture_doc("long_fence.md")
    chunks = chunk_document(doc, config)
    assert chunks[0].text == doc.text.upper()
    assert check(doc, chunks, config).non_verbatim == 1


def test_an_entry_point_names_the_plug_in_and_the_config_records_its_import_path(plugins):
    config = make_config(strategy="paragraphs", size=500)
    assert config.strategy == "teamsplit:by_paragraph"
    assert config == make_config(strategy="teamsplit:by_paragraph", size=500)


@pytest.mark.parametrize(("name", "message"), [
    (f"{PACKAGE}:number", "returned int for guide.md"),
    (f"{PACKAGE}:too_far", "returned the span (0, "),
    (f"{PACKAGE}:failing", "failed on guide.md: RuntimeError: the model server is down"),
])
def test_a_plug_in_that_breaks_the_contract_is_one_line(plugins, name, message):
    with pytest.raises(PluginError, match=re.escape(message)) as err:
        chunk_document(make_document("guide.md", TEXT), make_config(strategy=name))
    assert "\n" not in str(err.value) and name in str(err.value)


@pytest.mark.parametrize(("name", "error", "message"), [
    ("nosuchpackage.splitters:split", PluginError, "cannot import nosuchpackage.splitters"),
    (f"{PACKAGE}:nothing_here", PluginError, "has no function nothing_here"),
    ("broken", PluginError, "has no function not_a_function"),
    ("no_such_name", UnknownStrategyError, "unknown strategy 'no_such_name'"),
])
def test_a_name_that_cannot_be_used_is_one_line(plugins, name, error, message):
    with pytest.raises(error, match=re.escape(message)):
        make_config(strategy=name)


def test_the_cli_lists_chunks_with_and_refuses_a_plug_in_in_one_line(plugins, tmp_path,
                                                                      capsys):
    assert main(["strategies"]) == 0
    listed = capsys.readouterr().out
    assert re.search(r"^paragraphs +\[plugin\] Blank-line paragraphs, as texts\. "
                     r"\(teamsplit:by_paragraph\)$", listed, re.M)
    assert re.search(r"^broken +\[plugin\] teamsplit:not_a_function \[unavailable", listed,
                     re.M)
    out = tmp_path / "chunks.jsonl"
    assert main(["chunk", "--corpus", str(SAMPLE), "--strategy", "paragraphs", "--out",
                 str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and {r["strategy"] for r in rows} == {"teamsplit:by_paragraph"}
    capsys.readouterr()
    assert main(["chunk", "--corpus", str(SAMPLE), "--strategy", "gone.module:split",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "cannot import gone.module" in err


def test_a_sweep_measures_a_plug_in_as_a_peer_and_exports_its_import_path(plugins, tmp_path):
    params = SweepParams(corpus=str(SAMPLE), queries=str(SAMPLE / "queries.jsonl"),
                         strategies=("paragraphs", "ast_breadcrumb"), sizes=(800,),
                         budgets=(1024,), contrasts=("paragraphs:ast_breadcrumb",))
    assert params.strategies == ("teamsplit:by_paragraph", "ast_breadcrumb")
    assert params.planned_pairs()
    assert params.contrasts == ("teamsplit:by_paragraph:ast_breadcrumb",)
    result = run_sweep(params, tmp_path / "run", progress=False)
    stats = result.chunk_stats.set_index("strategy")
    assert stats.loc["teamsplit:by_paragraph", "chunks"] > 0
    assert stats.loc["teamsplit:by_paragraph", "code_integrity"] < 1.0  # fences cut, counted
    planned = result.significance[result.significance["family"] == "planned"]
    assert not planned.empty
    # a rule only the plug-in meets (it cuts fences; ast_breadcrumb never does)
    rule = ChoiceRule(primary_metric="answer_hit@b1024",
                      constraints=("code_integrity <= 0.99",))
    choice = choose(result, rule)
    assert choice.meets_rule and choice.config.strategy == "teamsplit:by_paragraph"
    path = export_choice(choice, tmp_path / "chosen_config.yaml")
    assert yaml.safe_load(path.read_text())["chunker"]["strategy"] == "teamsplit:by_paragraph"
    assert load_config(path).strategy == "teamsplit:by_paragraph"


def test_a_contrast_of_two_import_paths_is_read_at_the_colon_between_them(plugins):
    params = SweepParams(corpus=str(SAMPLE), mined_max_sources=3,
                         strategies=("teamsplit:by_paragraph", "teamsplit:halves"), sizes=(800,),
                         contrasts=("teamsplit:by_paragraph:teamsplit:halves",))
    a, b = params.planned_pairs()[0]
    configs = {c.config_id: c.strategy for c in params.configs()}
    assert (configs[a], configs[b]) == ("teamsplit:by_paragraph", "teamsplit:halves")


def test_notebook_03_takes_a_plug_in(plugins, tmp_path):
    setup = strategy_sweep.validate(
        CORPUS=str(SAMPLE), QUERIES=str(SAMPLE / "queries.jsonl"),
        STRATEGIES=["paragraphs", "rct"], SIZES=[800], RETRIEVERS=["bm25"],
        METRICS=["answer_hit@5"], OUT_DIR=str(tmp_path / "run"))
    assert setup.params.strategies == ("teamsplit:by_paragraph", "rct")


def docs_example() -> tuple[str, list[str]]:
    """docs/plugins.md's Python example and the commands it prints."""
    page = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", page, re.S)[1]
    commands = re.search(r"```bash\n(.*?)```", page, re.S)[1].strip().splitlines()
    return code, commands


def test_the_docs_example_runs_as_printed(tmp_path):
    code, commands = docs_example()
    (tmp_path / "team_splitters.py").write_text(textwrap.dedent(code), encoding="utf-8")
    (tmp_path / "data").symlink_to(ROOT / "data")
    chunkproof = Path(sys.executable).with_name("chunkproof")
    env = {**os.environ, "CHUNKPROOF_WORKERS": "1"}
    for line in commands:
        assignment, program, *args = line.split()
        assert (assignment, program) == ("PYTHONPATH=.", "chunkproof")
        done = subprocess.run([str(chunkproof), *args], cwd=tmp_path, capture_output=True,
                              text=True, env={**env, "PYTHONPATH": "."}, check=False)
        assert done.returncode == 0, done.stderr
    stats = (tmp_path / "results" / "team" / "chunk_stats.csv").read_text()
    assert "team_splitters:paragraphs" in stats
    rows = (tmp_path / "chunks.jsonl").read_text().splitlines()
    assert rows and all(json.loads(r)["strategy"] == "team_splitters:paragraphs" for r in rows)


def test_a_report_s_kernels_find_a_plug_in_on_a_relative_pythonpath(tmp_path, monkeypatch):
    # the report's kernels work in another folder: PYTHONPATH=. must still mean where the
    # command was run
    from chunkproof.notebooks.kernels import kernel_env

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([".", "lib", str(ROOT)]))
    found = kernel_env()["PYTHONPATH"].split(os.pathsep)
    assert found == [str(tmp_path.resolve()), str((tmp_path / "lib").resolve()), str(ROOT)]
