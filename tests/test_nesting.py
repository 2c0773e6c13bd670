"""Past markdown-it's nesting limit the structure after the deep region survives: the deep
region is one block of its own, parsed on its own, never cut through a fence."""

from __future__ import annotations

import pytest

from chunkproof import chunk_document, make_config, make_document
from chunkproof.document.corpus import Corpus, load_corpus
from chunkproof.document.nesting import MAX_NESTING, MAX_ROUNDS
from chunkproof.evaluation.scoring.invariants import check
from conftest import FIXTURES, fixture_doc


def deep(blocks, kind="deep"):
    for block in blocks:
        if block.kind == kind:
            return block
        found = deep(block.children, kind)
        if found:
            return found
    return None


def test_the_headings_after_a_list_nested_ten_deep_stay_headings():
    doc = fixture_doc("deep_list.md")
    headings = [b.title for b in doc.blocks if b.is_heading]
    assert headings == ["Cluster settings", "Networking", "Upgrades"]
    assert [b.kind for b in doc.blocks] == ["heading", "paragraph", "list", "heading",
                                            "paragraph", "fence", "heading", "paragraph"]


def test_the_deep_region_is_one_block_holding_its_own_blocks():
    doc = fixture_doc("deep_list.md")
    region = deep(doc.blocks)
    assert region is not None
    assert doc.text[region.start : region.end].lstrip().startswith("- `flush`")
    assert doc.text[region.start : region.end].endswith("```")
    fence = deep(region.children, "fence")
    assert fence in doc.atoms and fence.title == "yaml"


def test_the_document_is_flagged_where_it_reached_the_limit():
    doc = fixture_doc("deep_list.md")
    line = doc.text[: deep(doc.blocks).start].count("\n") + 1
    assert doc.nesting_limit == (line,)
    row = next(r for r in Corpus("mem", (doc,)).report() if r["path"] == doc.id)
    assert row["status"] == "loaded" and f"nesting limit reached (line {line})" in row["reason"]
    assert all(r["reason"] == "" for r in load_corpus(FIXTURES / "mini_corpus").report()
               if r["status"] == "loaded")


@pytest.mark.parametrize("strategy", ["ast_merge", "ast_breadcrumb", "heading_flush"])
@pytest.mark.parametrize("size", [60, 200])
def test_chunks_never_cut_the_deep_fence_and_keep_true_breadcrumbs(strategy, size):
    doc = fixture_doc("deep_list.md")
    config = make_config(strategy=strategy, size=size)
    chunks = chunk_document(doc, config)
    report = check(doc, chunks, config)
    assert report.split_blocks == report.lost_chars == report.wrong_breadcrumbs == 0
    assert any(c.breadcrumb == ("Upgrades",) for c in chunks)


def test_quotes_nested_far_past_the_limit_keep_the_heading_after_them():
    depth = MAX_NESTING * (MAX_ROUNDS + 2)  # deeper than deep regions are parsed again
    text = "> " * depth + "deep\n\n# After\n\nText.\n"
    doc = make_document("q.md", text)
    assert doc.blocks[-2].is_heading and doc.blocks[-2].title == "After"
    innermost = deep(doc.blocks)
    while deep(innermost.children) is not None:
        innermost = deep(innermost.children)
    # past MAX_ROUNDS regions the rest is read flat: the quotes left are one paragraph
    assert [b.kind for b in innermost.children] == ["paragraph"]
    assert doc.text[innermost.start : innermost.end].endswith("> deep")
    assert doc.nesting_limit[0] == 1


@pytest.mark.parametrize("window", [60, 400])
def test_window_by_window_the_same_blocks_and_limit_lines(window):
    from chunkproof.document.blocks import parse_blocks
    from chunkproof.document.nesting import LIMIT_KEY

    text = "# Before\n\nSome text.\n\n" + fixture_doc("deep_list.md").text + "\n\n# After\n"
    whole_env: dict = {}
    whole = parse_blocks(text, env=whole_env, window=10**9)
    windowed_env: dict = {}
    assert parse_blocks(text, env=windowed_env, window=window) == whole
    assert whole_env[LIMIT_KEY] and windowed_env[LIMIT_KEY] == whole_env[LIMIT_KEY]
