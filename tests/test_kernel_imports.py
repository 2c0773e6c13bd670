"""A notebook's kernel imports only what its notebook uses: each notebook's cells up to its
validation cell run in a real kernel, which then lists its modules."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import KernelManager

from chunkproof.evaluation.run.sweep import SweepParams, run_sweep
from chunkproof.notebooks.kernels import kernel_config
from chunkproof.notebooks.report import notebook_values
from conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow

MINI = FIXTURES / "mini_corpus"
NOTEBOOKS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
NEVER = ("rfc3987_syntax", "torch", "sentence_transformers", "ray", "onnxruntime")
"""Loaded by no notebook's start: jsonschema's IRI grammar (seconds of CPU per kernel, and
no chart validates an IRI), the dense model's runtimes (no default retriever is dense), Ray
(no default engine is)."""
ONLY_IN = {
    "altair": {"01", "02", "03", "05", "06"},  # the notebooks that draw a chart
    "pandas": {"01", "02", "03", "05", "06", "07"},  # and those that show a table
    "scipy": {"06"},  # 06 chooses in its validation cell; the others test later, if at all
}
"""A heavy module, and the notebooks (by number) whose start may load it."""


def setup_code(name: str, values: dict) -> str:
    """The notebook's cells up to its validation cell (the one after ``parameters``), with
    ``values`` assigned after the parameters cell as papermill does."""
    cells = [c for c in nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4).cells
             if c.cell_type == "code"]
    tagged = next(i for i, c in enumerate(cells) if "parameters" in c.metadata.get("tags", []))
    declared = {line.split(":")[0].strip() for line in cells[tagged].source.splitlines()
                if line[:1].isupper()}
    injected = "\n".join(f"{k} = {v!r}" for k, v in values.items() if k in declared)
    return "\n".join([*(c.source for c in cells[: tagged + 1]), injected,
                      cells[tagged + 1].source])


def kernel_modules(code: str, sockets: Path) -> dict:
    """What a fresh kernel (started as the report starts it) holds after running ``code``."""
    report = ("import json, sys\n"
              "print(json.dumps({'loaded': sorted(k for k, v in sys.modules.items() if v),"
              " 'blocked': sorted(k for k, v in sys.modules.items() if v is None)}))")
    manager = KernelManager(kernel_name="python3", config=kernel_config(sockets))
    manager.start_kernel(cwd=str(ROOT))
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=120)
    out: list[str] = []
    errors: list[str] = []

    def hook(message) -> None:
        content = message["content"]
        if message["msg_type"] == "stream" and content.get("name") == "stdout":
            out.append(content["text"])
        elif message["msg_type"] == "error":
            errors.append(f"{content['ename']}: {content['evalue']}")

    try:
        for cell in (code, report):
            client.execute_interactive(cell, output_hook=hook, timeout=300)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert not errors, errors
    return json.loads("".join(out).strip().splitlines()[-1])


@pytest.fixture(scope="module")
def values(tmp_path_factory) -> dict:
    """Every parameter a notebook may declare, on the mini corpus, with a finished run."""
    out = tmp_path_factory.mktemp("kernels")
    params = SweepParams(corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                         strategies=("rct", "ast_breadcrumb"), sizes=(200,),
                         retrievers=("bm25",))
    run_sweep(params, out / "run", progress=False)
    found = notebook_values(out / "run", params, queries=params.queries)
    return {**found, "OUT_DIR": str(out / "out"), "PRESET_DOCS": [], "DOC": "",
            "QUERIES": params.queries}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_kernel_loads_only_what_its_notebook_uses(name, values, tmp_path):
    found = kernel_modules(setup_code(name, values), tmp_path / "kernel")
    loaded = {m.split(".")[0] for m in found["loaded"]}
    assert "chunkproof" in loaded  # the setup ran
    assert sorted(loaded & set(NEVER)) == []
    number = name[:2]
    extra = sorted(m for m, allowed in ONLY_IN.items() if m in loaded and number not in allowed)
    assert extra == [], f"{name} loads {extra} at start"
    if "jsonschema" in loaded:  # altair's validator: its IRI grammar is held off
        assert "rfc3987_syntax" in found["blocked"]
