"""Many small generated corpora through the whole ``chunkproof report``: every run ends with a
chosen_config.yaml or one line saying why there is none, and every page renders.
``CHUNKPROOF_FUZZ_REPORTS=N`` runs N corpora (default 3; the kinds cycle every 8)."""

from __future__ import annotations

import csv
import io
import json
import os
from html.parser import HTMLParser

import pytest

from chunkproof.cli import main
from chunkproof.util.sheets import FORMULA_STARTS
from fuzz_corpora import make_corpus

pytestmark = pytest.mark.slow
COUNT = int(os.environ.get("CHUNKPROOF_FUZZ_REPORTS", "3"))
SEED = int(os.environ.get("CHUNKPROOF_FUZZ_SEED", "0"))


def report_argv(made: dict, corpus, out) -> list[str]:
    argv = ["report", "--corpus", str(corpus), "--out", str(out), "--budgets", "none",
            "--sizes", ",".join(map(str, made["sizes"])),
            "--strategies", ",".join(made["strategies"])]
    return argv + (["--queries", made["queries"]] if made["queries"] else [])


def errors_in(notebook) -> list[str]:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [f"{o.get('ename')}: {o.get('evalue')}" for c in cells for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


def parses(page) -> bool:
    parser = HTMLParser()
    parser.feed(page.read_text(encoding="utf-8"))
    parser.close()
    return "<body" in page.read_text(encoding="utf-8")


@pytest.mark.parametrize("index", range(COUNT))
def test_a_report_of_a_generated_corpus_ends_with_a_verdict_or_one_line(index, tmp_path,
                                                                        capsys):
    made = make_corpus(tmp_path / "docs", index, seed=SEED)
    out = tmp_path / "report"
    code = main(report_argv(made, tmp_path / "docs", out))
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("chunkproof: error")]
    if code == 2:  # refused before any notebook ran: one line, nothing written
        assert len(errors) == 1 and "unexpected" not in errors[0], (made, err)
        assert not out.exists(), made
        return
    assert code == 0, (made, err)
    assert (out / "chosen_config.yaml").is_file(), made
    notebooks = sorted(out.glob("0*.ipynb"))
    assert len(notebooks) == 6, made
    for notebook in notebooks:
        assert errors_in(notebook) == [], (made, notebook.name)
        assert parses(notebook.with_suffix(".html")), (made, notebook.name)
    assert parses(out / "index.html"), made
    for table in out.rglob("*.csv"):  # nothing a spreadsheet would evaluate
        assert formulas(table.read_text(encoding="utf-8")) == [], (made, table.name)


def formulas(text: str) -> list[str]:
    """Cells that start like a spreadsheet formula and are no number."""
    found = []
    for cell in (c for row in csv.reader(io.StringIO(text)) for c in row):
        try:
            float(cell)
        except ValueError:
            found += [cell] if cell.startswith(FORMULA_STARTS) else []
    return found
