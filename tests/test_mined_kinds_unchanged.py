"""Each mined kind mines what it mined when every module read the documents for itself: per
kind, the number of its queries and a digest of them (text, sources, answer, gold spans, ids
in order), and a digest of what was dropped, why, and where each query was first found, on
the sample corpus, the VitePress study site and the mining fixtures. A kind that is replaced
loses its line here; no other line may change."""

from __future__ import annotations

import hashlib
import json

import pytest

from chunkproof.document.corpus import load_corpus
from chunkproof.evaluation.queries.mining import mine_all
from conftest import ROOT

BEFORE = {
    "data/sample": {
        "title": (24, "15cd28101ade2abd"), "section": (190, "0bacfb0217313dac"),
        "symbol": (66, "23b4e45cba599b34"), "body": (223, "68ee10c74aced4c2"),
        "keyword": (233, "b6fbcda1ac5cd4b8"), "partial": (205, "e195a8f379e5653d"),
        "xref": (2, "47507cf533410ed8"), "identifier": (26, "bdbc447352314eaa"),
    },
    "data/study/vitepress/docs": {
        "title": (34, "906dbbe7763437d1"), "section": (233, "46ed0e8af2339d8f"),
        "symbol": (37, "162153f3ed654000"), "body": (261, "3e60b1633a8bf843"),
        "keyword": (259, "161bbb72208ba9c5"), "partial": (229, "3e8cc0db97239107"),
        "xref": (95, "c2f9496fc1220fa1"), "identifier": (16, "f0eee304030f0656"),
    },
    "tests/fixtures/mining": {
        "title": (4, "4390df99158be242"), "section": (9, "61573571fbd03ff0"),
        "symbol": (4, "e0fb184efc7c2010"), "body": (13, "827303b5f9883504"),
        "keyword": (14, "3f17b6f65231a6c2"), "partial": (10, "c05f6a4d1887d6b8"),
    },
}
"""Per corpus, each kind's (queries, digest) as mined before the one reading; the VitePress site's
section and xref lines, and its dropped digest, as they are since heading titles are read
without their ``{#id}`` attribute block (two headings then share a text, and a link to an
explicit anchor lands)."""
DROPPED_BEFORE = {"data/sample": "7da6332c794f24a5", "data/study/vitepress/docs":
                  "2cff89fbdb825d3e", "tests/fixtures/mining": "0f3ed680568efae2"}
"""Per corpus, the digest of the dropped queries, the junk by reason and each query's origin."""


def digest(items) -> str:
    found = hashlib.sha256()
    for item in items:
        found.update(json.dumps(item, sort_keys=True, ensure_ascii=False).encode() + b"\n")
    return found.hexdigest()[:16]


@pytest.fixture(scope="module", params=sorted(BEFORE))
def mined(request):
    return request.param, mine_all(load_corpus(ROOT / request.param))


def test_every_kind_mines_the_queries_it_mined_before(mined):
    name, found = mined
    kinds: dict[str, list[dict]] = {}
    for query in found.queries:
        kinds.setdefault(query.kind, []).append(query.as_dict())
    now = {kind: (len(items), digest(items)) for kind, items in kinds.items()
           if kind in BEFORE[name]}
    assert now == BEFORE[name]


def test_what_is_dropped_and_where_each_query_came_from_is_unchanged(mined):
    name, found = mined
    assert digest([[q.as_dict() for q in found.dropped], found.junk, found.origins]) == \
        DROPPED_BEFORE[name]
