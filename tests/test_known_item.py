"""Known-item queries: each term drawn from its section (body or heading path), the answer a
sentence of that section holding a drawn body term, the same queries on every run; and the two
numbers the kind draws by are what the study's written questions measure."""

from __future__ import annotations

import pytest

from chunkproof.document.corpus import load_corpus
from chunkproof.evaluation.queries.kinds import known_item as ki
from chunkproof.evaluation.queries.mining import mine_all
from chunkproof.evaluation.queries.queries import load_queries
from chunkproof.evaluation.queries.query_terms import stem_set
from chunkproof.evaluation.queries.reading import Site
from chunkproof.evaluation.study.sites import find_sites
from conftest import ROOT


@pytest.fixture(scope="module")
def sample():
    corpus = load_corpus(ROOT / "data" / "sample")
    return corpus, [q for q in mine_all(corpus).queries if q.kind == "known_item"]


def test_each_term_comes_from_its_section_and_the_answer_holds_a_body_term(sample):
    corpus, queries = sample
    site = Site(corpus)
    assert len(queries) > 50
    heading_terms = body_terms = 0
    for query in queries:
        gold = query.gold_spans[0]
        reading = site.reading(gold.doc)
        heading = stem_set([" ".join(reading.path(gold.start))])
        body = stem_set([reading.doc.text[gold.start:gold.end]])
        asked = stem_set([query.query])
        assert 3 <= len(asked) <= ki.TERMS
        assert asked <= heading | body, query.query
        assert query.answer in reading.doc.text[gold.start:gold.end]
        assert (asked - heading) & stem_set([query.answer]), query.query
        heading_terms += len(asked & heading)
        body_terms += len(asked - heading)
    share = heading_terms / (heading_terms + body_terms)
    assert 0.1 < share < 0.4  # drawn at HEADING_SHARE, less where a path runs out of words


def test_the_same_corpus_gives_the_same_queries(sample):
    corpus, queries = sample
    again = [q for q in mine_all(corpus).queries if q.kind == "known_item"]
    assert [q.as_dict() for q in again] == [q.as_dict() for q in queries]


@pytest.mark.slow
def test_the_numbers_it_draws_by_are_what_the_studys_written_questions_do():
    held, in_heading, total = [], 0, 0
    for site in find_sites(ROOT / "data" / "study"):
        corpus = load_corpus(site.docs)
        found = ki.written_shape(Site(corpus), load_queries(site.queries, corpus))
        held += found[0]
        in_heading += found[1]
        total += found[2]
    assert len(held) == 421
    terms, share = ki.shape_figures(held, in_heading, total)
    assert (terms, round(share, 2)) == (ki.TERMS, ki.HEADING_SHARE)
