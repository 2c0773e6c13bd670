"""Parts and cached work are keyed by the version of every installed package that can change a
result: a part made under another version of one of them is made again."""

from __future__ import annotations

import re
import shutil
import tomllib

import pytest

from chunkproof.evaluation.run.sweep import SweepParams, run_sweep
from chunkproof.util import code_version as code_module
from chunkproof.util.code_version import KEY_PACKAGES, NOT_KEY_PACKAGES
from conftest import FIXTURES, ROOT


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def dependencies() -> set[str]:
    """Every package pyproject.toml names, but the dev tools."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    wanted += [r for extra, found in project["optional-dependencies"].items()
               if extra != "dev" for r in found]
    return {normal(re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0]) for r in wanted}


def test_every_dependency_is_said_to_decide_results_or_not():
    key, other = {normal(n) for n in KEY_PACKAGES}, {normal(n) for n in NOT_KEY_PACKAGES}
    assert not key & other
    assert dependencies() - key - other == set()
    for name in ("blingfire", "langchain-text-splitters", "pystemmer", "chonkie",
                 "semantic-text-splitter", "torch", "sentence-transformers", "tokenizers"):
        assert name in key


@pytest.fixture()
def fresh_version():
    """``code_version`` worked out again in the test and after it."""
    code_module.code_version.cache_clear()
    yield
    code_module.code_version.cache_clear()


@pytest.mark.parametrize("package", ["blingfire", "langchain-text-splitters", "PyStemmer",
                                     "chonkie", "torch"])
def test_another_version_of_a_package_makes_the_parts_again(package, tmp_path, monkeypatch,
                                                            fresh_version):
    root = tmp_path / "docs"
    shutil.copytree(FIXTURES / "mini_corpus", root)
    params = SweepParams(corpus=str(root), queries=str(root / "queries.jsonl"),
                         strategies=("rct", "ast_breadcrumb"), sizes=(300,), budgets=())
    out = tmp_path / "run"
    run_sweep(params, out, progress=False)
    assert run_sweep(params, out, progress=False).run_info["reused_parts"] > 0
    real = code_module.package_version
    monkeypatch.setattr(code_module, "package_version",
                        lambda name: "99.0" if name == package else real(name))
    code_module.code_version.cache_clear()
    assert run_sweep(params, out, progress=False).run_info["reused_parts"] == 0
