"""Project files agree with each other: dependencies, public API, ignore rules."""

from __future__ import annotations

import re
import subprocess
import tomllib

import pytest
import yaml

import chunkproof
from conftest import ROOT


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def test_environment_yml_names_the_pyproject_runtime_packages():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {_name(d) for d in env["dependencies"] if isinstance(d, str)} - {"python", "pip"}
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    pip = {_name(r) for r in pip_section if not r.startswith("-e")}
    assert conda | pip == runtime
    assert "-e .[dev]" in pip_section


def test_every_public_name_resolves_and_says_what_it_is():
    """The API is declared once (``__init__.pyi``; docs/api.md, made from it, pins it): each
    name it declares is there, and documented."""
    assert len(chunkproof.__all__) == len(set(chunkproof.__all__)) > 30
    for name in chunkproof.__all__:
        assert getattr(chunkproof, name).__doc__, name
    with pytest.raises(AttributeError):
        chunkproof.not_a_public_name  # noqa: B018


def test_gitignore_keeps_the_library():
    ignored = subprocess.run(["git", "check-ignore", "-q", "lib/chunkproof/__init__.py"],
                             cwd=ROOT, check=False)
    assert ignored.returncode == 1  # 1 = not ignored


def test_the_default_grid_is_the_same_everywhere():
    import ast
    import json

    from chunkproof.evaluation.run.defaults import (
        DEFAULT_BUDGETS,
        DEFAULT_CONTRASTS,
        DEFAULT_SIZES,
        DEFAULT_STRATEGIES,
    )

    makefile = (ROOT / "Makefile").read_text()
    assert f"SIZES ?= {' '.join(map(str, DEFAULT_SIZES))}\n" in makefile
    assert f"STRATEGIES ?= {' '.join(DEFAULT_STRATEGIES)}\n" in makefile
    assert f"BUDGETS ?= {' '.join(map(str, DEFAULT_BUDGETS))}\n" in makefile
    assert "CONTRASTS ?= default\n" in makefile  # the defaults whose strategies are swept
    assert " ".join(DEFAULT_CONTRASTS) in makefile
    cells = json.loads((ROOT / "notebooks" / "03_strategy_sweep.ipynb").read_text())["cells"]
    source = "".join(next(c for c in cells if c.get("id") == "parameters")["source"])
    values = {n.target.id: ast.literal_eval(n.value) for n in ast.parse(source).body}
    assert tuple(values["STRATEGIES"]) == DEFAULT_STRATEGIES
    assert tuple(values["SIZES"]) == DEFAULT_SIZES
    assert tuple(values["BUDGETS"]) == DEFAULT_BUDGETS
    assert values["CONTRASTS"] is None  # DEFAULT_CONTRASTS, those whose strategies are swept


def test_the_commit_hooks_strip_notebooks_and_keep_their_cell_ids():
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert {"nbstripout", "ruff"} <= set(hooks)
    assert "--keep-id" in hooks["nbstripout"]["entry"]  # the shape tests name cells by id
    nbstripout = ROOT / ".venv" / "bin" / "nbstripout"
    if not nbstripout.exists():
        pytest.skip("nbstripout is not installed in .venv (make install)")
    notebooks = sorted(str(p) for p in (ROOT / "notebooks").glob("*.ipynb"))
    checked = subprocess.run([str(nbstripout), "--keep-id", "--verify", *notebooks],
                             capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout  # committed notebooks are already stripped


def test_version_is_printed():
    from chunkproof.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0


def test_pyproject_lists_every_package_and_maps_the_notebooks_in():
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    lib = ROOT / "lib"
    found = {".".join(p.parent.relative_to(lib).parts) for p in lib.rglob("__init__.py")}
    templates = {".".join(p.relative_to(lib).parts) for p in lib.rglob("templates")}
    assert set(tool["packages"]) == found | templates | {"chunkproof._notebooks"}
    assert tool["package-dir"]["chunkproof._notebooks"] == "notebooks"
    assert tool["package-data"]["chunkproof._notebooks"] == ["*.ipynb"]


def test_the_build_backend_is_the_pinned_one_and_dev_installs_it():
    """The wheel test builds without isolation (no index at test time), so the venv's
    backend must be the one pyproject pins: the dev extra installs it."""
    from importlib import metadata

    from packaging.requirements import Requirement

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    build = [Requirement(r) for r in pyproject["build-system"]["requires"]]
    dev = {Requirement(r).name: Requirement(r) for r in
           pyproject["project"]["optional-dependencies"]["dev"]}
    for requirement in build:
        assert requirement.name in dev and dev[requirement.name].specifier == \
            requirement.specifier, requirement
        assert requirement.specifier.contains(metadata.version(requirement.name)), requirement


@pytest.mark.slow
def test_the_built_wheel_carries_the_notebooks_and_the_index_template(tmp_path):
    import shutil
    import sys
    import zipfile

    source = tmp_path / "src"  # a copy: building writes build/ and *.egg-info beside it
    for name in ("pyproject.toml", "README.md", "lib", "notebooks"):
        source.mkdir(exist_ok=True)
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, source / name, **({"ignore": shutil.ignore_patterns(
            "__pycache__", "*.egg-info")} if (ROOT / name).is_dir() else {}))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-q", "-w", str(tmp_path), str(source)],
                           capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("chunkproof-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    notebooks = {f"chunkproof/_notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert len(notebooks) >= 7 and notebooks <= names
    assert "chunkproof/notebooks/templates/index.html.j2" in names


def test_the_dense_install_command_names_the_makefiles_torch_and_the_cpu_index():
    from chunkproof.errors import INSTALL_COMMANDS, TORCH_CPU_INDEX

    version = re.search(r"^TORCH_VERSION \?= (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert version and f"torch=={version.group(1)} --index-url {TORCH_CPU_INDEX}" in \
        INSTALL_COMMANDS["dense"]
    assert "$(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))" in (ROOT / "Makefile").read_text()
    assert f"torch=={version.group(1)} --index-url {TORCH_CPU_INDEX}" in \
        (ROOT / "docs" / "install.md").read_text()


@pytest.mark.parametrize("overrides,expected", [
    ([], []),  # no --contrast: the command's defaults, those whose strategies are swept
    (["STRATEGIES=rct ast_merge"], []),  # so a smaller grid drops the default, not an error
    (["CONTRASTS="], ["--contrast", "none"]),
    (["CONTRASTS=rct:ast_merge"], ["--contrast", "rct:ast_merge"]),
])
def test_make_run_passes_a_contrast_only_when_one_is_asked_for(overrides, expected):
    import shlex
    import shutil

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    dry = subprocess.run(["make", "-n", "run", "RUN_NAME=x", "STAMP=Makefile", *overrides],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    words = shlex.split(dry.replace("\\\n", " "))
    assert "report" in words
    given = [w for i, w in enumerate(words) if w == "--contrast" or words[i - 1] == "--contrast"]
    assert given == expected


def test_the_default_sizes_bracket_the_shipped_studys_best():
    # the study's pooled best at the default budget lies strictly inside the default sizes,
    # so a verdict on the default grid is never forced to the edge of what was tried
    from chunkproof.evaluation.run.defaults import DEFAULT_BUDGETS, DEFAULT_SIZES, middle_budget
    from chunkproof.evaluation.study.results import shipped

    study = shipped()
    if study is None:
        pytest.skip("no study is shipped")
    metric = f"answer_hit@b{middle_budget(DEFAULT_BUDGETS)}"
    best = {r["best"] for r in study.table("versus_best")
            if r["retriever"] == "bm25" and r["metric"] == metric}
    assert len(best) == 1
    size = int(best.pop().split("/")[1].split()[0])
    assert min(DEFAULT_SIZES) < size < max(DEFAULT_SIZES)
