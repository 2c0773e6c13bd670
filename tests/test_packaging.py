"""Project files agree with each other: dependencies, public API, ignore rules."""

from __future__ import annotations

import re
import subprocess
import tomllib

import pytest
import yaml

import chunklab
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


def test_public_api_is_pinned():
    assert set(chunklab.__all__) == {
        "Block", "Breadcrumbs", "Chunk", "ChunkerConfig", "ChunklabError", "ConfigError",
        "Corpus", "CorpusError", "Document", "MissingExtraError", "QueryValidationError",
        "UnknownRetrieverError", "UnknownStrategyError", "breadcrumb_at",
        "chunk_corpus", "chunk_document", "chunk_text", "dominant_level", "get_strategy",
        "load_config",
        "load_corpus", "make_config", "make_document", "parse_blocks", "save_config",
        "strategy_names", "ComparisonError", "GoldValidationError", "MetricError", "Query",
        "RetrieverError", "SweepParams", "SweepResult", "load_queries", "make_retriever",
        "mine_queries", "retriever_names", "run_sweep", "save_queries",
    }
    assert all(hasattr(chunklab, name) for name in chunklab.__all__)


def test_gitignore_keeps_the_library():
    ignored = subprocess.run(["git", "check-ignore", "-q", "lib/chunklab/__init__.py"],
                             cwd=ROOT, check=False)
    assert ignored.returncode == 1  # 1 = not ignored


def test_the_default_grid_is_the_same_everywhere():
    import ast
    import json

    from chunklab.evaluation.defaults import (
        DEFAULT_BUDGETS,
        DEFAULT_CONTRASTS,
        DEFAULT_SIZES,
        DEFAULT_STRATEGIES,
    )

    makefile = (ROOT / "Makefile").read_text()
    assert f"SIZES ?= {' '.join(map(str, DEFAULT_SIZES))}\n" in makefile
    assert f"STRATEGIES ?= {' '.join(DEFAULT_STRATEGIES)}\n" in makefile
    assert f"BUDGETS ?= {' '.join(map(str, DEFAULT_BUDGETS))}\n" in makefile
    assert f"CONTRASTS ?= {' '.join(DEFAULT_CONTRASTS)}\n" in makefile
    cells = json.loads((ROOT / "notebooks" / "03_strategy_sweep.ipynb").read_text())["cells"]
    source = "".join(next(c for c in cells if c.get("id") == "parameters")["source"])
    values = {n.target.id: ast.literal_eval(n.value) for n in ast.parse(source).body}
    assert tuple(values["STRATEGIES"]) == DEFAULT_STRATEGIES
    assert tuple(values["SIZES"]) == DEFAULT_SIZES
    assert tuple(values["BUDGETS"]) == DEFAULT_BUDGETS
    assert tuple(values["CONTRASTS"]) == DEFAULT_CONTRASTS


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
    from chunklab.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
