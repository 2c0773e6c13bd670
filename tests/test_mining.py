"""Mined queries with section-level gold: nested sections, a symbol defined twice, a title-only
document, a fence holding ``#`` lines, symbols from signatures, definition lists and option
tables, leak-free body sentences, and junk left out with its reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chunkproof.document.corpus import load_corpus
from chunkproof.errors import QueryValidationError
from chunkproof.evaluation.queries.mining import mine
from chunkproof.evaluation.queries.queries import load_queries, save_queries
from chunkproof.evaluation.queries.query_text import junk_reason

FIXTURES = Path(__file__).parent / "fixtures" / "mining"


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(FIXTURES)


@pytest.fixture(scope="module")
def mined(corpus):
    return mine(corpus)


def _query(mined, kind: str, text: str):
    found = [q for q in mined.queries if q.kind == kind and q.query == text]
    assert len(found) == 1, f"{kind} {text!r}: {[q.query for q in mined.queries]}"
    return found[0]


def _gold_texts(query, corpus) -> list[str]:
    docs = {d.id: d for d in corpus}
    return [docs[g.doc].text[g.start:g.end] for g in query.gold_spans]


def test_a_section_runs_to_the_next_heading_of_the_same_or_a_shallower_level(mined, corpus):
    [loading] = _gold_texts(_query(mined, "section", "Loading a style"), corpus)
    assert loading.startswith("## Loading a style\n")
    assert "### From a URL" in loading and "### From an object" in loading
    assert loading.endswith("nothing is fetched until a source needs tiles.")
    [url] = _gold_texts(_query(mined, "section", "From a URL"), corpus)
    assert url == ("### From a URL\n\nThe map fetches the style document and every sprite it "
                   "names.")


def test_a_symbol_defined_twice_has_both_sections_as_gold(mined, corpus):
    query = _query(mined, "symbol", "upload_bundle")
    assert query.sources == ("twice.md",)
    texts = _gold_texts(query, corpus)
    assert [t.splitlines()[0] for t in texts] == ["## `upload_bundle`",
                                                  "## `upload_bundle` with a progress bar"]
    assert all(g.scope == "section" for g in query.gold_spans)


def test_a_title_only_document_is_its_own_gold_and_says_so(mined, corpus):
    query = _query(mined, "title", "Release checklist for the field gateways")
    [span] = query.gold_spans
    text = {d.id: d for d in corpus}["title_only.md"].text
    assert (span.scope, span.start, span.end) == ("document", 0, len(text.rstrip()))


def test_a_title_with_a_lead_gets_the_lead_section(mined, corpus):
    query = _query(mined, "title", "Map styles")
    assert [g.scope for g in query.gold_spans] == ["lead"]
    assert _gold_texts(query, corpus) == [
        "# Map styles\n\nA map draws its layers with the style it is given at start-up."]
    # a title followed straight by a subheading has no lead: the whole document, said so
    assert [g.scope for g in _query(mined, "title", "Shell setup").gold_spans] == ["document"]


def test_hash_lines_in_a_fence_neither_end_a_section_nor_become_queries(mined, corpus):
    [profile] = _gold_texts(_query(mined, "section", "Profile lines"), corpus)
    assert "## not a heading either" in profile
    assert profile.endswith("The lines above take effect in the next shell you open.")
    texts = {q.query for q in mined.queries}
    assert not any("not a heading" in t or "Put the tools" in t for t in texts)


def test_symbols_from_signatures_definition_lists_and_option_tables(mined, corpus):
    assert _query(mined, "symbol", "setStyle()").gold_spans[0].start == (
        {d.id: d for d in corpus}["nested.md"].text.index("## setStyle(style)"))
    assert not [q for q in mined.queries if q.kind == "section" and "setStyle" in q.query]
    for term in ("--fly-speed", "--zoom-limit"):
        [camera] = _gold_texts(_query(mined, "symbol", term), corpus)
        assert camera.startswith("## Camera options")
    assert "Pitch" not in {q.query for q in mined.queries}  # a table cell that is no symbol
    origins = {mined.origins[q.id] for q in mined.queries if q.kind == "symbol"}
    assert origins == {"heading code span", "heading signature", "definition list", "table"}
    sources = mined.sources()
    assert sources["heading signature"] == sources["definition list"] == sources["table"] == 1
    assert sum(sources.values()) == len(mined.queries)


def test_junk_is_dropped_and_counted_by_reason(mined):
    texts = {q.query for q in mined.queries}
    assert "Layers" in texts  # a heading that is a link: its text, not its markup
    assert not any("](" in t or t.endswith(".md") for t in texts)
    assert mined.junk["file name"] == ["README.md"]
    assert mined.junk["navigational heading"] == ["See also"]
    report = mined.report()
    assert report["by_reason"] == {"file name": 1, "navigational heading": 1}
    assert report["count"] == 2
    assert "1 mined query dropped as file name (e.g. 'README.md')" in report["reason"]


def test_body_queries_come_from_section_text_with_that_section_as_gold(mined, corpus):
    bodies = [q for q in mined.queries if q.kind == "body"]
    headings = {q.query for q in mined.queries if q.kind != "body"}
    assert bodies and not headings & {q.query for q in bodies}
    for query in bodies:
        [gold] = _gold_texts(query, corpus)
        assert query.query.rstrip(".:") in " ".join(gold.replace("`", "").split())
    url = _query(mined, "body", "The map fetches the style document and every sprite it names.")
    assert _gold_texts(url, corpus)[0].startswith("### From a URL")
    assert not [q for q in bodies if "--fly-speed" in q.query]  # a definition list is no prose


def test_mined_gold_spans_round_trip_through_a_file(tmp_path, mined, corpus):
    path = save_queries(mined.queries, tmp_path / "mined.jsonl")
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert set(first["gold_spans"][0]) == {"doc", "start", "end", "scope"}
    assert load_queries(path, corpus) == mined.queries


@pytest.mark.parametrize(("spans", "problem"), [
    ([{"doc": "twice.md", "start": 0, "end": 10}], "is not one of the sources"),
    ([{"doc": "nested.md", "start": 5, "end": 5}], "is not a span of 'nested.md'"),
    ([{"doc": "nested.md", "start": 0, "end": 10**6}], "is not a span of 'nested.md'"),
    ([{"doc": "nested.md", "start": "0", "end": 10}], "must be integers"),
    ([{"doc": "nested.md", "start": 0, "end": 10, "scope": "page"}], "scope must be one of"),
    ([{"doc": "nested.md", "start": 0}], "must be integers"),
    ({"doc": "nested.md"}, "gold_spans must be a list"),
])
def test_gold_spans_are_validated_like_answers(tmp_path, corpus, spans, problem):
    record = {"id": "q1", "query": "map styles", "sources": ["nested.md"], "gold_spans": spans}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(QueryValidationError, match=problem):
        load_queries(path, corpus)


def test_queries_mine_writes_gold_spans_and_counts_each_source(tmp_path, capsys, corpus):
    from chunkproof.cli import main

    out = tmp_path / "mined.jsonl"
    assert main(["queries", "mine", "--corpus", str(FIXTURES), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "heading signature 1" in printed and "definition list 1" in printed
    assert "table 1" in printed and "body sentence" in printed
    assert "dropped: navigational heading 1, file name 1" in printed
    written = load_queries(out, corpus)
    assert written and all(q.gold_spans for q in written)


@pytest.mark.parametrize(("text", "reason"), [
    ("認証", None),  # two wide characters: one word of Japanese, a query
    ("認", "too short"),
    ("auth", None),
    ("./guide.md", "file name"),
])
def test_a_wide_character_counts_as_two_towards_the_shortest_query(text, reason):
    assert junk_reason(text) == reason
