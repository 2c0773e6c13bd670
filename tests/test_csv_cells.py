"""Every CSV chunkproof writes opens in a spreadsheet as data: a text cell starting with
= + - @ (a heading ``=HYPERLINK(...)``) is led by a quote, and read back as it was."""

from __future__ import annotations

import csv
import io

import pandas as pd

from chunkproof import make_document
from chunkproof.chunking.section_lengths import sections_table
from chunkproof.document.corpus import Corpus
from chunkproof.evaluation.run import tables
from chunkproof.notebooks.corpus_profile import export_profile
from chunkproof.util.sheets import FORMULA_STARTS, csv_text, read_csv

HOSTILE = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tx"]


def cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def formulas(text: str) -> list[str]:
    return [cell for cell in cells(text) if cell.startswith(FORMULA_STARTS)]


def test_a_text_cell_that_starts_like_a_formula_is_quoted_and_numbers_are_not(tmp_path):
    frame = pd.DataFrame({"title": [*HOSTILE, "plain"], "delta": [-1.5, 2, -3, 4, 5, -6]})
    text = csv_text(frame)
    assert [float(c) for c in formulas(text)] == [-1.5, -3, -6]  # the numbers, as numbers
    (tmp_path / "t.csv").write_text(text, encoding="utf-8")
    back = read_csv(tmp_path / "t.csv")
    assert back["title"].tolist()[:4] == HOSTILE[:4] and back["delta"].tolist()[0] == -1.5


def test_the_corpus_profile_csvs_neutralise_hostile_titles_and_headings(tmp_path):
    docs = [make_document(f"{name}.md", f"# {name}\n\nText.\n\n## {name}\n\nMore text.\n\n"
                          f'=== "{name}"\n\n    A tab.\n')  # dialects.csv: a line '=== ...'
            for name in HOSTILE[:4]]
    corpus = Corpus(str(tmp_path), tuple(docs), ())
    written = export_profile(tmp_path, corpus, sections_table(corpus))
    for path in written:
        if path.suffix == ".csv":
            text = path.read_text(encoding="utf-8")
            assert [c for c in formulas(text) if not c.lstrip("-").replace(".", "").isdigit()] \
                == [], path.name
            assert "'=HYPERLINK" in text or "'===" in text, path.name


def test_a_result_table_round_trips_a_hostile_cell(tmp_path):
    table = tables.SUMMARY
    row = {c.name: ("=cmd" if c.kind == "str" else 1) for c in table.columns}
    table.write(tmp_path, pd.DataFrame([row]))
    assert "'=cmd" in (tmp_path / table.file).read_text(encoding="utf-8")
    back = table.read(tmp_path)
    assert all(back[c.name].iloc[0] == "=cmd" for c in table.columns if c.kind == "str")
