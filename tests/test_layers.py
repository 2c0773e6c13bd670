"""The package's stages import one way (errors/util <- document <- chunking <- evaluation <-
viz <- notebooks <- cli and the framework adapters), and no module takes part in an import
cycle. Read from the modules' own import statements (function-local ones included)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "lib" / "chunklab"
LAYERS = [
    ("chunklab.errors", "chunklab.util"),
    ("chunklab.document",),
    ("chunklab.chunking",),
    ("chunklab.evaluation",),
    ("chunklab.viz",),
    ("chunklab.notebooks",),
    ("chunklab.cli", "chunklab.__main__", "chunklab.bench", "chunklab.integrations",
     "chunklab"),
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


def imports(module: str) -> set[str]:
    """The chunklab modules ``module`` imports (a name that is a submodule counts as it)."""
    path = MODULES[module]
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
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
        for target in sorted(GRAPH[module]):
            visit(target, [*path, module])
        done.add(module)

    for module in sorted(GRAPH):
        visit(module, [])


def test_the_graph_is_read():
    # a check that the reader sees imports at all: the CLI reaches into every stage
    assert {layer(m) for m in GRAPH["chunklab.cli"]} >= {0, 2}
    assert "chunklab.chunking.registry" in GRAPH["chunklab.chunking.config"]
