"""A fast start: ``import chunkproof`` and ``chunkproof --help`` load no heavy module (checked by
what a fresh interpreter has imported, not by timing)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("numpy", "pandas", "scipy", "pyarrow", "bm25s", "torch", "sentence_transformers",
         "markdown_it", "pydantic", "tqdm", "altair", "ray", "yaml", "langchain_text_splitters",
         "chunkproof.document", "chunkproof.chunking", "chunkproof.evaluation.run.sweep")
"""Modules (and their submodules) that neither an import nor the help may load."""


def loaded_after(code: str) -> set[str]:
    script = (f"import json, sys\n{code}\n"
              "print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    return set(json.loads(out.strip().splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_import_chunkproof_loads_nothing_heavy():
    assert heavy(loaded_after("import chunkproof")) == []


@pytest.mark.parametrize("argv", [["--help"], ["sweep", "--help"], ["report", "--help"]])
def test_the_help_loads_nothing_heavy(argv):
    modules = loaded_after("from chunkproof.cli import main\n"
                           "try:\n"
                           f"    main({argv!r})\n"
                           "except SystemExit:\n"
                           "    pass")
    assert "chunkproof.cli" in modules
    assert heavy(modules) == []


def test_a_name_is_imported_when_first_used():
    modules = loaded_after("import chunkproof\nchunkproof.make_config")
    assert "chunkproof.chunking.config" in modules and "pandas" not in modules


def test_a_chart_module_loads_altair_without_the_iri_grammar():
    """jsonschema's optional IRI grammar (``rfc3987_syntax``) costs each kernel more CPU than
    altair itself; a notebook that draws imports altair without it."""
    modules = loaded_after("import chunkproof.viz.charts, chunkproof.viz.choice_charts\n"
                           "import sys\n"
                           "assert sys.modules['rfc3987_syntax'] is None")
    assert "altair" in modules and "jsonschema" in modules
