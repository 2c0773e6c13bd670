"""structure_routed: explicit headings get ast_breadcrumb, everything else rct, said per chunk."""

from __future__ import annotations

import pytest

from chunkproof import chunk_corpus, chunk_document, get_strategy, load_corpus, make_config
from chunkproof.chunking.strategies.routed import ROUTE_STRATEGIES, routed_strategy
from chunkproof.evaluation.scoring.invariants import check
from conftest import SAMPLE

MANUAL = "manuals/perch-200-field-gateway.txt"
MEMO = "misc/q2-planning-meeting-notes.md"
WIKI = "wiki/it-access-handbook.md"


def routed_config(**options):
    return make_config({"strategy": "structure_routed", "size": 800, **options})


def by_doc(chunks):
    grouped: dict[str, list] = {}
    for chunk in chunks:
        grouped.setdefault(chunk.doc_id, []).append(chunk)
    return grouped


def test_registered_outside_the_pure_ast_family():
    strategy = get_strategy("structure_routed")
    assert strategy.family == "routed" and strategy.prefix
    assert set(ROUTE_STRATEGIES.values()) == {"ast_breadcrumb", "rct"}


def test_each_sample_document_goes_where_its_provenance_says(sample_corpus):
    config = routed_config()
    chunks = by_doc(chunk_corpus(sample_corpus, config))
    for doc in sample_corpus:
        expected = "ast_breadcrumb" if doc.structure_source == "explicit" else "rct"
        assert routed_strategy(doc) == expected
        assert {c.applied_strategy for c in chunks[doc.id]} == {expected}, doc.id
        assert {c.structure_source for c in chunks[doc.id]} == {doc.structure_source}
    applied = {d: {c.applied_strategy for c in chunks[d]} for d in (MANUAL, MEMO)}
    assert applied[MANUAL] == applied[MEMO] == {"rct"}
    assert {c.strategy for cs in chunks.values() for c in cs} == {"structure_routed"}
    assert {c.applied_strategy for c in chunks[WIKI]} == {"ast_breadcrumb"}  # one ATX H1: explicit
    assert {c.config_id for cs in chunks.values() for c in cs} == {config.config_id}


def test_inferring_headings_makes_the_wiki_mixed_so_it_is_routed_to_rct():
    corpus = load_corpus(SAMPLE, infer_headings=True)
    wiki = chunk_document(corpus.get(WIKI), routed_config(infer_headings=True))
    assert {(c.structure_source, c.applied_strategy) for c in wiki} == {("mixed", "rct")}


def test_rct_chunks_carry_no_heading_claims(sample_corpus):
    chunks = chunk_corpus(sample_corpus, routed_config())
    recursive = [c for c in chunks if c.applied_strategy == "rct"]
    assert recursive and all(c.breadcrumb == () for c in recursive)
    assert all(c.embed_text == c.text == c.context_text for c in recursive)
    assert all(c.heading_provenance == () for c in recursive)


def test_heading_aware_part_is_exactly_ast_breadcrumb(sample_corpus):
    routed = routed_config(min_size=200)
    direct = make_config(strategy="ast_breadcrumb", size=800, min_size=200)
    fields = ("start", "end", "text", "breadcrumb", "embed_text", "context_text", "part")
    for doc in sample_corpus:
        if doc.structure_source != "explicit":
            continue
        mine = [tuple(getattr(c, f) for f in fields) for c in chunk_document(doc, routed)]
        theirs = [tuple(getattr(c, f) for f in fields) for c in chunk_document(doc, direct)]
        assert mine == theirs, doc.id


@pytest.mark.parametrize("infer", [False, True])
@pytest.mark.parametrize("size", [200, 800])
def test_nothing_lost_and_the_ast_part_holds_its_invariants(infer, size):
    corpus = load_corpus(SAMPLE, infer_headings=infer)
    config = make_config(strategy="structure_routed", size=size, infer_headings=infer)
    for doc in corpus:
        chunks = chunk_document(doc, config)
        report = check(doc, chunks, config)
        assert report.lost_chars == 0 and report.false_verbatim == 0, doc.id
        if routed_strategy(doc) == "ast_breadcrumb":
            assert report.non_verbatim == report.split_blocks == 0, doc.id
            assert report.wrong_breadcrumbs == report.heading_only == 0, doc.id


def test_deterministic(sample_corpus):
    config = routed_config(overlap=100)
    first = [c.as_dict() for c in chunk_corpus(sample_corpus, config)]
    again = [c.as_dict() for c in chunk_corpus(load_corpus(SAMPLE), config)]
    assert first == again


def test_rct_part_uses_the_routed_size_and_overlap(sample_corpus):
    doc = sample_corpus.get(MANUAL)
    routed = chunk_document(doc, routed_config(size=400, overlap=80))
    plain = chunk_document(doc, make_config(strategy="rct", size=400, overlap=80))
    assert [(c.start, c.end) for c in routed] == [(c.start, c.end) for c in plain]
    assert max(len(c.text) for c in routed) <= 400
