"""The index says why a config was chosen once: the tie-break is in the verdict sentence, so the
rule's own note is shown only when no config meets the rule (it names what the closest missed)."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import yaml
from markupsafe import escape

from chunkproof.notebooks.index_page import write_index
from conftest import ROOT

PARAMS = SimpleNamespace(corpus="data/sample", queries=None, strategies=["ast_merge"],
                         sizes=[300, 600], retrievers=["bm25"], k=5)
VERDICT = ("ast_merge/300 scores below the runner-up ast_merge/600 on answer_hit@5, but not "
           "significantly; chosen because it is within the tie margin (0.05) of the best")
NOTE = "ast_merge/300 chosen over ast_merge/600: ast_merge/600 is best on answer_hit@5 by 0.04"
CLOSEST = "no config meets every constraint; ast_merge/300 is the closest (misses x >= 1)"


def index_text(tmp_path, **choice) -> str:
    data = {"chunker": {"strategy": "ast_merge", "size": 300, "unit": "chars"},
            "runner_up": {"strategy": "ast_merge", "size": 600}, "config_id": "0cb7f783ab8b",
            "verdict": VERDICT, **choice}
    (tmp_path / "chosen_config.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return write_index(tmp_path, [], PARAMS).read_text(encoding="utf-8")


def test_a_tie_break_is_explained_once(tmp_path):
    page = index_text(tmp_path, note=NOTE, meets_rule=True)
    assert VERDICT in page and "chosen over" not in page


def test_the_closest_config_keeps_its_note(tmp_path):
    page = index_text(tmp_path, note=CLOSEST, meets_rule=False)
    assert str(escape(CLOSEST)) in page and "No config meets every constraint" in page


def test_the_page_ends_with_how_to_apply_the_pick(tmp_path):
    page = index_text(tmp_path, meets_rule=True)
    last = page.rindex("<h2")
    assert page[last:].startswith('<h2 id="apply">Apply the pick</h2>')
    tail = page[last:]
    corpus = Path(os.path.relpath(ROOT / "data" / "sample", tmp_path.resolve())).as_posix()
    assert (f"chunkproof chunk --corpus {corpus} --config chosen_config.yaml "
            "--out chunks.jsonl") in tail  # run in the report folder
    config = str(escape(repr("chosen_config.yaml")))
    for line in ("load_config(", "ChunkproofTextSplitter(", "ChunkproofNodeParser.from_config("):
        assert f"{line}{config})" in tail
    assert 'href="chosen_config.yaml"' in tail


def test_without_a_chosen_config_the_page_shows_no_way_to_apply_one(tmp_path):
    page = write_index(tmp_path, [], PARAMS).read_text(encoding="utf-8")
    assert "Apply the pick" not in page


def test_the_load_s_warnings_are_counted_with_the_first_few_and_a_link(tmp_path):
    from chunkproof.evaluation.run import tables
    from chunkproof.notebooks.index_page import FIRST_WARNINGS

    rows = [{"doc_id": f"page{n}.md", "kind": "no_headings", "line": 0,
             "message": "no headings detected: using line anchors"} for n in range(7)]
    rows.append({"doc_id": "big.md", "kind": "size_limit", "line": 0,
                 "message": "larger than the 8.0 MiB limit (9.0 MiB): not read"})
    tables.DOCUMENT_WARNINGS.write(tmp_path, tables.DOCUMENT_WARNINGS.frame(rows))
    page = index_text(tmp_path, meets_rule=True)
    assert "8 warnings" in page and "no_headings 7, size_limit 1" in page
    shown = [f"page{n}.md" for n in range(FIRST_WARNINGS)]
    assert all(name in page for name in shown)
    assert f"page{FIRST_WARNINGS}.md" not in page and "big.md" not in page
    assert 'href="document_warnings.csv"' in page


def test_no_warnings_section_without_the_file(tmp_path):
    assert "document_warnings.csv" not in index_text(tmp_path, meets_rule=True)
