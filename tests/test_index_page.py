"""The index says why a config was chosen once, in the verdict's sentences as chosen_config.yaml
records them (what decided it, the study's line, how sure, what would settle it); the rule's own
note only when no config meets the rule (it names what the closest missed)."""

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
DECISION = ("Decided by the study: Your 40 questions cannot separate 2 configs (ast_merge/600, "
            "ast_merge/300), so the study's pooled result chose among them.")
STUDY_LINE = "Across 8 documentation sites and 421 written questions, ast_merge/300 is best."
SURE = "Picks made this way from 40 written questions were within 0.05 of the best on 8 of 10."
NOTE = "a note of the rule"
CLOSEST = "no config meets every constraint; ast_merge/300 is the closest (misses x >= 1)"


def index_text(tmp_path, **choice) -> str:
    data = {"chunker": {"strategy": "ast_merge", "size": 300, "unit": "chars"},
            "runner_up": {"strategy": "ast_merge", "size": 600}, "config_id": "0cb7f783ab8b",
            "decision": DECISION, "verdict": " ".join((DECISION, STUDY_LINE, SURE)),
            "decided_by": "the study", "study": {"line": STUDY_LINE},
            "confidence": {"text": SURE},
            "to_settle": {"against": "ast_merge/600", "text": "about 300 questions"}, **choice}
    (tmp_path / "chosen_config.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return write_index(tmp_path, [], PARAMS).read_text(encoding="utf-8")


def test_the_verdict_is_said_once_sentence_by_sentence(tmp_path):
    page = index_text(tmp_path, note=NOTE, meets_rule=True)
    for line in (DECISION, STUDY_LINE, SURE, "To settle it against ast_merge/600: about 300 "
                                            "questions."):
        assert page.count(str(escape(line))) == 1, line
    assert 'decided by <b id="decided-by">the study</b>' in page
    assert NOTE not in page


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
