"""The package's stages import one way (errors/util <- document <- chunking <- evaluation <-
viz <- notebooks <- cli and the framework adapters), evaluation's sub-packages too (queries <-
retrieval <- scoring <- run <- study <- choice), and no module takes part in an import
cycle. Read from
the modules' own import statements (function-local ones included)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "lib" / "chunkproof"
LAYERS = [
    ("chunkproof.errors", "chunkproof.util"),
    ("chunkproof.document",),
    ("chunkproof.chunking",),
    ("chunkproof.evaluation", "chunkproof.evaluation.queries"),
    ("chunkproof.evaluation.retrieval",),
    ("chunkproof.evaluation.scoring",),
    ("chunkproof.evaluation.run",),
    ("chunkproof.evaluation.study",),
    ("chunkproof.evaluation.choice",),
    ("chunkproof.viz",),
    ("chunkproof.notebooks",),
    ("chunkproof.cli", "chunkproof.__main__", "chunkproof.bench", "chunkproof.integrations",
     "chunkproof.study_runner", "chunkproof"),
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> int:
    best = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (index, len(prefix))
    assert best is not None, f"{module} belongs to no layer"
    return best[0]


def typing_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:``, which never run."""
    nodes: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            nodes |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return nodes


def imports(module: str, runtime: bool = False) -> set[str]:
    """The chunkproof modules ``module`` imports (a name that is a submodule counts as it); with
    ``runtime``, only the imports that run (not those under ``if TYPE_CHECKING:``)."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = typing_only(tree) if runtime else set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join([*here, base] if base else here)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return {m for m in found if m in MODULES and m != module}


GRAPH = {module: imports(module) for module in MODULES}
RUNTIME_GRAPH = {module: imports(module, runtime=True) for module in MODULES}
"""Type-only imports follow the stage order like any other (GRAPH) but cannot make an import
cycle, so a record and the contract that names it may refer to each other for the checker."""


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_later_stage(module):
    later = sorted(m for m in GRAPH[module] if layer(m) > layer(module))
    assert not later, f"{module} (layer {layer(module)}) imports later stages: {later}"


def test_no_import_cycle():
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycle = path[path.index(module):] + [module]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        for target in sorted(RUNTIME_GRAPH[module]):
            visit(target, [*path, module])
        done.add(module)

    for module in sorted(GRAPH):
        visit(module, [])


def test_evaluation_modules_live_in_its_sub_packages():
    flat = sorted(p.name for p in (PACKAGE / "evaluation").glob("*.py") if p.name != "__init__.py")
    assert not flat, f"evaluation/ modules outside a sub-package (queries, retrieval, ...): {flat}"


def test_the_graph_is_read():
    # a check that the reader sees imports at all: the CLI reaches into every stage
    assert {layer(m) for m in GRAPH["chunkproof.cli"]} >= {0, 2}
    assert "chunkproof.chunking.registry" in GRAPH["chunkproof.chunking.config"]
    # a type-only import counts for the stage order, not for cycles
    assert "chunkproof.chunking.config" in GRAPH["chunkproof.chunking.records"]
    assert "chunkproof.chunking.config" not in RUNTIME_GRAPH["chunkproof.chunking.records"]


def notebook_modules() -> dict[str, str]:
    """Each ``chunkproof.notebooks`` module one notebook alone imports (its own), by the
    notebook's name; a module several import (``params``) is shared and owned by none."""
    importers: dict[str, set[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            try:
                tree = ast.parse("".join(cell["source"]))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if not isinstance(node, ast.ImportFrom) or not (node.module or "").startswith(
                        "chunkproof.notebooks"):
                    continue
                names = ([f"{node.module}.{a.name}" for a in node.names]
                         if node.module == "chunkproof.notebooks" else [node.module])
                for name in names:
                    importers.setdefault(name, set()).add(path.stem)
    return {module: next(iter(by)) for module, by in importers.items() if len(by) == 1}


def test_a_notebook_s_module_imports_no_other_notebook_s_module():
    """Logic two notebooks (or a notebook and the report) need lives in a stage or a shared
    module (params, sweep_inputs), never in one notebook's module."""
    owners = notebook_modules()
    assert len(set(owners.values())) == 7  # every notebook has its own module
    for module in MODULES:
        if not module.startswith("chunkproof.notebooks."):
            continue
        for imported in imports(module):
            theirs = owners.get(imported)
            assert theirs in (None, owners.get(module)), (
                f"{module} imports {imported}, notebook {theirs}'s own module")


def test_every_module_says_what_it_holds():
    """ARCHITECTURE.md keeps no list of modules: each module's docstring is its entry."""
    unsaid = [name for name, path in MODULES.items()
              if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))]
    assert not unsaid
