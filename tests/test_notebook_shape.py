"""Every notebook has the house shape: committed clean, a title with the question and the
papermill command, one imports cell, one parameters cell of commented literals, a validation
cell, numbered sections, and one export cell that is the only writer."""

from __future__ import annotations

import ast
import re

import nbformat
import pytest
from click.testing import CliRunner
from papermill.cli import papermill as papermill_cli

from conftest import ROOT

NB_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(p.stem for p in NB_DIR.glob("[0-9][0-9]_*.ipynb"))
WRITES = re.compile(r"export\w*\(|save_views\(|to_csv|\bwrite|open\(")


def read(name: str):
    return nbformat.read(NB_DIR / f"{name}.ipynb", as_version=4)


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def parameters_cell(nb):
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged parameters"
    return tagged[0]


def test_there_are_seven_notebooks():
    assert [n[:2] for n in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06", "07"]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_without_outputs_or_execution_counts(name):
    nb = read(name)
    nbformat.validate(nb)
    for cell in code_cells(nb):
        assert cell.outputs == [] and cell.execution_count is None, cell.id


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_title_states_the_question_and_the_command(name):
    title = read(name).cells[0]
    assert title.cell_type == "markdown" and title.source.startswith(f"# {name[:2]} · ")
    assert "**Question:**" in title.source
    assert f"papermill notebooks/{name}.ipynb" in title.source


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_imports_then_parameters_then_validation(name):
    nb = read(name)
    code = code_cells(nb)
    assert code[0].id == "imports"
    assert all(isinstance(n, ast.Import | ast.ImportFrom) for n in ast.parse(code[0].source).body)
    assert not any(re.search(r"^\s*(from|import) ", c.source, re.M) for c in code[1:])
    params = parameters_cell(nb)
    before = code[1:code.index(params)]
    assert all("enable_offline_renderer()" in c.source for c in before)  # at most the renderer
    after = code[code.index(params) + 1]
    assert after.id == "validate" and "validate(" in after.source


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_parameters_are_commented_upper_case_literals(name):
    cell = parameters_cell(read(name))
    lines = cell.source.splitlines()
    for node in ast.parse(cell.source).body:
        assert isinstance(node, ast.AnnAssign) and node.target.id.isupper()
        ast.literal_eval(node.value)  # literals only: nothing derived here
        assert "  # " in lines[node.end_lineno - 1], f"no comment on {node.target.id}"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_no_code_is_defined_in_a_notebook(name):
    for cell in code_cells(read(name)):
        tree = ast.parse(cell.source)
        assert not [n for n in ast.walk(tree)
                    if isinstance(n, ast.FunctionDef | ast.ClassDef | ast.Lambda)], cell.id


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_sections_are_numbered_and_say_why(name):
    sections = [c.source for c in read(name).cells[1:] if c.cell_type == "markdown"]
    numbered = [s for s in sections if re.match(r"## \d+\. ", s)]
    assert numbered
    assert [int(re.match(r"## (\d+)\.", s).group(1)) for s in numbered] == list(
        range(1, len(numbered) + 1))
    assert all(len(s.strip().splitlines()) > 2 for s in numbered)  # a heading and a why


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_export_cell_is_last_and_the_only_writer(name):
    code = code_cells(read(name))
    assert code[-1].id == "export"
    writers = [c for c in code  # comments dropped: only calls count
               if WRITES.search(ast.unparse(ast.parse(c.source)))]
    assert writers == [code[-1]]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_papermill_lists_every_parameter_with_type_and_comment(name):
    result = CliRunner().invoke(papermill_cli, ["--help-notebook", str(NB_DIR / f"{name}.ipynb")])
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    cell = parameters_cell(read(name))
    lines = cell.source.splitlines()
    for node in ast.parse(cell.source).body:
        comment = lines[node.end_lineno - 1].split("  # ", 1)[1]
        kind = ast.unparse(node.annotation)
        assert f"{node.target.id}: {kind} (default" in shown, node.target.id
        assert " ".join(comment.split()) in shown, node.target.id
    names = {node.target.id for node in ast.parse(cell.source).body}
    assert {"CORPUS", "QUERIES", "OUT_DIR"} <= names


def test_the_choice_notebook_links_its_config_instead_of_printing_it():
    export = code_cells(read("06_choose_and_export"))[-1].source
    assert "read_text" not in export and "written_links" in export


def test_the_sweep_leads_with_what_decides_and_folds_the_rest():
    cells = read("03_strategy_sweep").cells
    numbered = [c.source.splitlines()[0] for c in cells
                if c.cell_type == "markdown" and re.match(r"## \d+\. ", c.source)]
    assert numbered[:3] == ["## 1. What the sweep found", "## 2. The planned contrasts",
                            "## 3. Which differences are real"]
    assert len(numbered) <= 6
    after = cells[[c.source.splitlines()[0] if c.source else "" for c in cells].index(
        numbered[3]):]
    shown = [c.source for c in after if c.cell_type == "code"][:-1]  # the export cell aside
    assert shown and all(s.startswith("fold.Folded(") for s in shown)
