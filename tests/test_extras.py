"""A test that needs an optional part says so with ``needs(...)``, and the list of parts is
pyproject's: the base install collects every module and skips, with the command, what it
cannot run."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from extras import EXTRAS, MODULE_EXTRAS, Extra, extras_of_module

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
NOT_EXTRAS = {"tokenizer", "chromium"}
"""Parts that are not extras of pyproject.toml: the tokenizer package ``make install`` adds
with --no-deps, and a system Chromium."""


def imported_modules(tree: ast.AST) -> list[tuple[str, bool]]:
    """(module, at module level) for every import and ``pytest.importorskip("name")``."""
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend((alias.name, top) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, top))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "importorskip" and node.args
              and isinstance(node.args[0], ast.Constant)):
            found.append((str(node.args[0].value), top))
        inner = top and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, True)
    return found


def declared_extras(tree: ast.AST) -> set[str]:
    """Every name passed to a ``needs(...)`` mark in the module."""
    return {str(arg.value) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "needs"
            for arg in node.args if isinstance(arg, ast.Constant)}


def module_marks(tree: ast.Module) -> set[str]:
    """The parts a module's ``pytestmark = ...`` declares for every test in it."""
    return {name for node in tree.body if isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
            for name in declared_extras(node)}


def functions_under_test(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The test functions of a module, methods of its test classes included."""
    found = []
    for node in tree.body:
        body = node.body if isinstance(node, ast.ClassDef) else [node]
        found += [f for f in body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                  and f.name.startswith("test_")]
    return found


def problems_of(source: str) -> list[str]:
    """A test that imports an optional package must carry ``needs`` for it (its own mark or
    the module's ``pytestmark``), so ``make test-extras`` (``-m needs``) runs it; a helper or
    fixture is covered by any ``needs`` of its module. No optional import at module level."""
    tree = ast.parse(source)
    problems, everywhere, marked = [], declared_extras(tree), module_marks(tree)
    checked = [(imported_modules(t), marked | {n for d in t.decorator_list
                                               for n in declared_extras(d)}, f" in {t.name}")
               for t in functions_under_test(tree)]
    seen = {id(t) for t in functions_under_test(tree)}
    rest = ast.Module(body=[n for n in tree.body if id(n) not in seen], type_ignores=[])
    rest.body = [n if not isinstance(n, ast.ClassDef) else ast.ClassDef(
        name=n.name, bases=[], keywords=[], decorator_list=[], type_params=[],
        body=[f for f in n.body if id(f) not in seen] or [ast.Pass()]) for n in rest.body]
    for modules, declared, where in [*checked, (imported_modules(rest), everywhere, "")]:
        for module, top in modules:
            extras = extras_of_module(module)
            if not extras:
                continue
            if top:
                problems.append(f"imports {module} at module level: the base install cannot "
                                "collect it; import it inside the test")
            if not declared & set(extras):
                problems.append(f"imports {module}{where} without needs("
                                f"{' or '.join(map(repr, extras))})")
    return problems


@pytest.mark.parametrize("path", sorted(TESTS.glob("*.py")), ids=lambda p: p.name)
def test_a_module_importing_an_optional_package_declares_its_extra(path):
    if path.name in {"extras.py", "test_extras.py"}:
        return
    assert problems_of(path.read_text(encoding="utf-8")) == []


def test_the_checker_finds_an_undeclared_or_top_level_import():
    assert problems_of("import ray\n") == [
        "imports ray at module level: the base install cannot collect it; import it inside "
        "the test", "imports ray without needs('ray')"]
    assert problems_of("def test_a():\n    pytest.importorskip('llama_index.core')\n") == [
        "imports llama_index.core in test_a without needs('llamaindex' or 'peers')"]
    # another test's mark does not cover it: make test-extras would never select it
    assert problems_of("@pytest.mark.needs('ray')\ndef test_a():\n    pass\n\n\n"
                       "def test_b():\n    import ray\n") == [
        "imports ray in test_b without needs('ray')"]
    assert problems_of("pytestmark = pytest.mark.needs('ray')\n\n\n"
                       "def test_b():\n    import ray\n") == []
    assert problems_of("@pytest.mark.needs('ray')\ndef test():\n    import ray\n") == []
    assert problems_of("import numpy\n") == []


def test_the_extras_are_pyproject_s():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = set(pyproject["project"]["optional-dependencies"]) - {"dev"}
    assert set(EXTRAS) - NOT_EXTRAS == extras
    assert {e for extras in MODULE_EXTRAS.values() for e in extras} <= set(EXTRAS)


def test_a_missing_part_is_skipped_with_its_install_command():
    missing = Extra("nothing", ("no_such_module_here",), "pip install -e '.[nothing]'")
    assert missing.skip_reason() == ("needs the nothing extra (no_such_module_here missing): "
                                     "pip install -e '.[nothing]'")
    assert Extra("base", ("numpy",), "-").skip_reason() is None


def test_lint_reads_every_optional_package_as_untyped():
    """mypy skips the extras' packages (``follow_imports = skip``), so ``make lint`` gives the
    same result in the base install and with every extra."""
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    skipped = {module.removesuffix(".*") for override in mypy["overrides"]
               if override.get("follow_imports") == "skip" for module in override["module"]}
    assert set(MODULE_EXTRAS) <= skipped
