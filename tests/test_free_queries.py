"""Free mined kinds (keyword, partial, xref, identifier): each query carries an answer found
once in its gold document, inside its gold section; no term of any heading path a gold
chunk may carry; no sentence copied whole; links and code spans resolved to the section they
name."""

from __future__ import annotations

import pytest

from chunkproof.document.corpus import load_corpus
from chunkproof.evaluation.queries.kinds import FREE_KINDS
from chunkproof.evaluation.queries.kinds.keyword import keyword_text
from chunkproof.evaluation.queries.mining import free_queries, mine_all
from chunkproof.evaluation.queries.query_terms import stem_set, terms
from chunkproof.evaluation.queries.question_check import answer_problems
from chunkproof.evaluation.queries.reading import Reading, Site, resolve_link

GUIDE = """# Deploying the relay

The relay forwards sensor readings from greenhouse gateways to the archive cluster.

## Rotating credentials

Operators replace the signing secret every ninety days using the vault command line tool.
Each gateway fetches the new secret during its nightly maintenance window and reloads it
without dropping buffered readings.
Expired secrets stay valid for a grace period of six hours so that slow gateways catch up.

## Throttling

When the archive falls behind, see [the backlog rules](reference.md#backlog-limits) for how
gateways pause uploads and queue readings on local flash storage.
Gateways call `drain_queue` after the archive acknowledges the oldest pending batch of
readings.
"""

REFERENCE = """# Relay reference

The reference lists every limit and function the relay exposes to gateway firmware.

## Backlog limits

A gateway stops uploading once forty thousand readings wait unacknowledged in its queue.
Uploads resume automatically after the archive confirms receipt of half of those readings.

## Functions

| name | meaning |
| --- | --- |
| `drain_queue` | empties the local queue once every reading is acknowledged |

Firmware authors should treat every function as idempotent and safe to repeat after a
power failure interrupts the gateway.
"""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("free")
    (root / "guide.md").write_text(GUIDE, encoding="utf-8")
    (root / "reference.md").write_text(REFERENCE, encoding="utf-8")
    return load_corpus(root)


@pytest.fixture(scope="module")
def found(corpus):
    return free_queries(corpus)


def test_every_kind_is_mined(found):
    assert {q.kind for q in found} == set(FREE_KINDS)
    assert len({q.id for q in found}) == len(found)


def test_each_answer_is_found_once_inside_its_gold_section(found, corpus):
    docs = {d.id: d for d in corpus}
    for query in found:
        [gold] = query.gold_spans
        doc = docs[gold.doc]
        assert query.sources == (gold.doc,)
        assert answer_problems(query.answer, doc) == [], query
        start = doc.text.find(query.answer)
        assert gold.start <= start and start + len(query.answer) <= gold.end, query


def test_no_query_holds_a_word_of_a_heading_its_gold_chunks_may_carry(found, corpus):
    docs = {d.id: d for d in corpus}
    for query in found:
        [gold] = query.gold_spans
        banned = Reading(docs[gold.doc]).span_stems(gold.start, gold.end)
        assert not stem_set([query.query]) & banned, (query.kind, query.query)


def test_no_query_copies_a_sentence_whole(found, corpus):
    whole = {" ".join(s.plain.split()).casefold() for doc in corpus
             for paragraph in Reading(doc).paragraphs for s in paragraph.sentences}
    assert not [q.query for q in found if q.query.casefold() in whole]


def test_a_link_gives_an_xref_query_whose_gold_is_the_section_it_names(found, corpus):
    [xref] = [q for q in found if q.kind == "xref"]
    docs = {d.id: d for d in corpus}
    [gold] = xref.gold_spans
    assert docs["reference.md"].text[gold.start:].startswith("## Backlog limits")
    assert "backlog rules" not in xref.query  # the link text is cut out
    assert "pause uploads" in xref.query
    assert xref.answer.startswith("A gateway stops uploading once forty thousand")


def test_a_code_span_naming_a_symbol_another_page_defines_gives_an_identifier_query(found):
    [ident] = [q for q in found if q.kind == "identifier"]
    assert ident.sources == ("reference.md",)
    assert "acknowledges" in ident.query
    assert ident.query.endswith(" drain_queue")  # moved to the end: not the sentence as written
    assert ident.answer.startswith("Firmware authors should treat every function")


def test_keyword_query_takes_the_rarest_terms_out_of_sentence_order(corpus):
    site = Site(corpus)
    reading = site.reading("guide.md")
    sentence = next(p.sentences[0] for p in reading.paragraphs
                    if "ninety" in p.sentences[0].plain)
    text = keyword_text(reading.sentence_terms(sentence), frozenset({"rotat", "credenti"}),
                        site.rarity)
    words = text.split()
    assert 3 <= len(words) <= 4
    order = [w for w, _s in terms(sentence.plain)]
    assert [order.index(w) for w in words] != sorted(order.index(w) for w in words)


@pytest.mark.parametrize(("href", "expected"), [
    ("reference.md#backlog-limits", ("reference.md", "backlog-limits")),
    ("./reference.md", ("reference.md", "")),
    ("reference", ("reference.md", "")),
    ("https://example.org/reference.md", None),
    ("#throttling", None),
    ("missing.md", None),
])
def test_links_resolve_to_documents_of_the_corpus(corpus, href, expected):
    assert resolve_link("guide.md", href, {d.id: d for d in corpus}) == expected


def test_mine_all_adds_the_free_kinds_to_the_heading_kinds(corpus):
    mined = mine_all(corpus)
    kinds = {q.kind for q in mined.queries}
    assert set(FREE_KINDS) <= kinds and "section" in kinds
    assert mined.sources()["keyword query"] == sum(q.kind == "keyword" for q in mined.queries)
