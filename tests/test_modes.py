"""Retrieval modes (plain, boost, expand=parent, expand=siblings) on hand-computed rankings and
bundles at an equal token budget."""

from __future__ import annotations

import dataclasses

import pytest

from chunkproof.document.corpus import make_document
from chunkproof.errors import ConfigError, UnknownModeError
from chunkproof.evaluation.queries.queries import Query
from chunkproof.evaluation.retrieval import modes
from chunkproof.evaluation.retrieval.budget import cost, fill_budget
from chunkproof.evaluation.scoring.metrics import score_run
from test_metrics import make_chunk

# Six parts of one page: ordinals 1-3 are one section (Guide > Install), cut in three; 5 is
# under the same heading path again, after another section, so it is a section of its own.
PARTS = [
    (("Guide",), "The guide starts here."),
    (("Guide", "Install"), "Download the installer first."),
    (("Guide", "Install"), "Run it with the flag --quiet set."),
    (("Guide", "Install"), "The default prefix is /opt/tool on every system."),
    (("Guide", "Configure"), "Settings live in tool.toml."),
    (("Guide", "Install"), "A second install section with the same path."),
]


@pytest.fixture
def page():
    return page_chunks()


def page_chunks():
    """The page of ``PARTS`` and its six chunks (each charged 10 tokens, no label)."""
    text, spans = "", []
    for _, body in PARTS:
        spans.append((len(text), len(text) + len(body)))
        text += body + "\n\n"
    doc = make_document("guide.md", text)
    ids = ["s-guide", "s-install", "s-install", "s-install", "s-configure", "s-install-2"]
    chunks = [dataclasses.replace(make_chunk(doc.id, a, b, text[a:b], ordinal=i),
                                  breadcrumb=crumb, n_tokens=10, section_id=section)
              for i, ((crumb, _), (a, b), section) in enumerate(zip(PARTS, spans, ids,
                                                                   strict=True))]
    return doc, chunks


def ids(chunks):
    return [c.ordinal for c in chunks]


# --- sections -----------------------------------------------------------------------------


def test_a_section_is_a_run_of_consecutive_parts_with_one_heading_path(page):
    _, chunks = page
    found = modes.sections(chunks)
    assert ids(found[chunks[2].id]) == [1, 2, 3]
    assert ids(found[chunks[0].id]) == [0]
    assert ids(found[chunks[4].id]) == [4]
    assert ids(found[chunks[5].id]) == [5]  # same path as 1-3, a section of its own


def test_two_adjacent_sections_of_one_heading_path_stay_apart_by_their_ids(page):
    _, chunks = page
    twins = [chunks[1], dataclasses.replace(chunks[2], section_id="s-install-again")]
    assert ids(modes.sections(twins)[twins[0].id]) == [1]
    without_ids = [dataclasses.replace(c, section_id="") for c in chunks]
    found = modes.sections(without_ids)  # records without ids: by heading path, adjacent runs
    assert ids(found[chunks[2].id]) == [1, 2, 3] and ids(found[chunks[5].id]) == [5]


# --- expansion ----------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "hit", "expected"), [
    (modes.PARENT, 2, [2, 3, 1]),      # the hit, then the nearest parts, the next one first
    (modes.PARENT, 3, [3, 2, 1]),      # the last part: the section grows backwards
    (modes.PARENT, 4, [4]),            # a section of one part
    (modes.SIBLINGS, 2, [2, 3, 1]),    # the parts either side
    (modes.SIBLINGS, 1, [1, 2]),       # the part before belongs to another section
    (modes.SIBLINGS, 3, [3, 2]),
])
def test_expansion_of_one_hit_in_priority_order(page, mode, hit, expected):
    _, chunks = page
    assert ids(modes.expansion(chunks[hit], modes.Groups.of(chunks, mode), mode)) == expected


def test_siblings_stop_at_the_neighbours_parent_takes_the_whole_section():
    doc = make_document("long.md", "x" * 100)
    chunks = [dataclasses.replace(make_chunk(doc.id, i * 10, i * 10 + 9, "x" * 9, ordinal=i),
                                  breadcrumb=("Long",)) for i in range(7)]
    groups = modes.Groups.of(chunks, modes.PARENT)
    assert ids(modes.expansion(chunks[3], groups, modes.SIBLINGS)) == [3, 4, 2]
    assert ids(modes.expansion(chunks[3], groups, modes.PARENT)) == [3, 4, 2, 5, 1, 6, 0]


def test_expanded_ranking_adds_each_hits_section_once(page):
    _, chunks = page
    ranked = [chunks[4], chunks[2], chunks[3], chunks[0]]
    groups = modes.Groups.of(chunks, modes.PARENT)
    assert ids(modes.expanded(ranked, groups, modes.PARENT)) == [4, 2, 3, 1, 0]
    assert ids(modes.expanded(ranked, groups, modes.SIBLINGS)) == [4, 2, 3, 1, 0]
    assert ids(modes.expanded([chunks[1], chunks[5]], groups, modes.SIBLINGS)) == [1, 2, 5]


def test_an_expansion_fills_the_same_budget_as_plain(page):
    _, chunks = page
    ranked = [chunks[4], chunks[2], chunks[0]]  # every part costs 10 tokens, no label
    budget = 25
    plain = fill_budget(ranked, budget)
    parent = fill_budget(modes.expanded(ranked, modes.Groups.of(chunks, modes.PARENT),
                                        modes.PARENT), budget)
    assert ids(plain) == [4, 2, 0] and ids(parent) == [4, 2, 3]
    assert sum(cost(c) for c in plain) == sum(cost(c) for c in parent) == budget
    assert parent[-1].n_tokens == 5 and plain[-1].n_tokens == 5  # the third cut to fit


def test_parent_finds_the_answer_in_the_unretrieved_part_at_an_equal_budget(page):
    doc, chunks = page
    query = Query(id="q1", query="default prefix", sources=[doc.id],
                  answer="The default prefix is /opt/tool")
    results = [[(chunks[4].id, 2.0), (chunks[2].id, 1.0), (chunks[0].id, 0.5)]]
    scored = {}
    for mode in (modes.PLAIN, modes.PARENT, modes.SIBLINGS):
        rows = score_run(results, [query], chunks, docs=[doc], ks=(), budgets=(30,),
                         reader=modes.reader(mode, chunks))
        scored[mode] = {r["metric"]: r["value"] for r in rows}
    assert scored[modes.PLAIN]["answer_recall@b30"] == 0.0   # part 3 was never retrieved
    assert scored[modes.PARENT]["answer_recall@b30"] == 1.0  # the hit's section holds it
    assert scored[modes.SIBLINGS]["answer_recall@b30"] == 1.0
    assert scored[modes.PARENT]["answer_hit@b30"] == 1.0


NESTED = """# Guide

The guide starts here.

## Install

Download the installer, then run it.

### On Linux

Use the tarball.

### On macOS

Use the disk image.

## Configure

Settings live in tool.toml.
"""


def nested_chunks():
    from chunkproof import chunk_text, make_config

    return chunk_text(NESTED, make_config(strategy="ast_merge", size=40), doc_id="guide.md")


def text_of(chunks):
    return [c.text.splitlines()[-1] for c in chunks]


def test_parent_reaches_the_parent_section_and_the_hit_s_siblings_nearest_first():
    chunks = nested_chunks()
    linux = next(c for c in chunks if "tarball" in c.text)  # alone in its section
    groups = modes.Groups.of(chunks, modes.PARENT)
    assert len(groups.sections[linux.id]) == 1
    assert text_of(modes.expansion(linux, groups, modes.PARENT)) == [
        "Use the tarball.", "Use the disk image.", "Download the installer, then run it."]
    assert text_of(modes.expansion(linux, groups, modes.SIBLINGS)) == ["Use the tarball."]
    install = next(c for c in chunks if "installer" in c.text)  # its parent is the page's
    assert text_of(modes.expansion(install, groups, modes.PARENT)) == [
        "Download the installer, then run it.", "Use the tarball.", "The guide starts here.",
        "Use the disk image.", "Settings live in tool.toml."]


def test_a_section_no_chunk_belongs_to_still_leads_to_its_parent():
    # "## Install" holds no text of its own: its heading goes with "### On Linux"'s chunk.
    text = NESTED.replace("Download the installer, then run it.\n\n", "")
    from chunkproof import chunk_text, make_config

    chunks = chunk_text(text, make_config(strategy="ast_merge", size=40), doc_id="g.md")
    macos = next(c for c in chunks if "disk image" in c.text)
    found = modes.expansion(macos, modes.Groups.of(chunks, modes.PARENT), modes.PARENT)
    assert text_of(found) == ["Use the disk image.", "Use the tarball."]


# --- boost --------------------------------------------------------------------------------


def test_boost_raises_chunks_whose_heading_path_holds_the_query_terms(page):
    _, chunks = page
    crumbs = modes.heading_terms(chunks)
    hits = [(chunks[0].id, 3.0), (chunks[4].id, 2.9), (chunks[2].id, 2.8)]
    # "installing" and "Install" share the retriever's stem; "the" is a stop word
    terms = modes.query_terms(["installing the configured tool"])[0]
    boosted = modes.boosted(hits, terms, crumbs, weight=0.25)
    # chunk 2: Guide > Install holds 1 of 3 terms: 2.8 * (1 + 0.25 / 3) = 3.0333
    # chunk 4: Guide > Configure holds 1 of 3 terms: 2.9 * (1 + 0.25 / 3) = 3.1417
    assert [h[0] for h in boosted] == [chunks[4].id, chunks[2].id, chunks[0].id]
    assert [h[1] for h in boosted] == pytest.approx([2.9 * (1 + 0.25 / 3),
                                                     2.8 * (1 + 0.25 / 3), 3.0])


def test_boost_of_a_full_match_and_of_a_negative_score(page):
    _, chunks = page
    crumbs = modes.heading_terms(chunks)
    terms = modes.query_terms(["guide install"])[0]
    hits = [(chunks[4].id, 1.0), (chunks[1].id, -0.4)]
    boosted = modes.boosted(hits, terms, crumbs, weight=0.5)
    # chunk 4 holds "guide" (1 of 2): 1.0 * 1.25; chunk 1 both: -0.4 + 0.5 * 0.4 = -0.2
    assert boosted == [(chunks[4].id, pytest.approx(1.25)), (chunks[1].id, pytest.approx(-0.2))]


def test_boost_without_query_terms_keeps_the_ranking(page):
    _, chunks = page
    hits = [(chunks[0].id, 1.0), (chunks[1].id, 1.0)]
    assert modes.boosted(hits, frozenset(), modes.heading_terms(chunks)) == hits
    assert modes.query_terms(["the of and"])[0] == frozenset()


def test_ties_after_a_boost_keep_the_retrievers_order(page):
    _, chunks = page
    hits = [(chunks[1].id, 2.0), (chunks[2].id, 2.0), (chunks[0].id, 1.0)]
    terms = modes.query_terms(["install"])[0]
    assert modes.boosted(hits, terms, modes.heading_terms(chunks)) == [
        (chunks[1].id, pytest.approx(2.0 * 1.25)), (chunks[2].id, pytest.approx(2.5)),
        (chunks[0].id, 1.0)]


# --- names --------------------------------------------------------------------------------


def test_mode_names_are_checked():
    assert modes.check_modes(["plain", "boost"], budgets=()) == ("plain", "boost")
    with pytest.raises(UnknownModeError, match="valid retrieval modes: boost, expand=parent"):
        modes.check_modes(["parent"], budgets=(512,))
    with pytest.raises(ConfigError, match="expand=siblings.*token budget"):
        modes.check_modes(["plain", "expand=siblings"], budgets=())
    with pytest.raises(ConfigError, match="at least one"):
        modes.check_modes([], budgets=(512,))
