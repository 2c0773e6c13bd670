"""Hostile structure stays bounded: containers left open or nested past any real page never
make the rest of a page one chunk, and no breadcrumb grows past its cap."""

from __future__ import annotations

import pytest

from chunkproof import chunk_document, make_config, make_document
from chunkproof.document.dialects import MAX_DEPTH
from chunkproof.document.sections import MAX_LABELS
from chunkproof.evaluation.scoring.invariants import check

REPEATS = 400
"""Openings of each family: far past every depth limit (the dialects' and markdown-it's)."""
SIZE = 600
HEADINGS = 6
"""The deepest heading path: Markdown has six levels."""


def page(unit) -> str:
    return "# Guide\n\nIntro text.\n\n" + "".join(unit(i) for i in range(REPEATS)) + \
        "# After\n\nThe end.\n"


def alerts(i: int) -> str:
    marks = "> " * min(i + 1, 150)
    return f"{marks}[!NOTE]\n{marks}Note {i} says a few words here.\n{marks.rstrip()}\n"


FAMILIES = {
    "unclosed :::{note}": page(lambda i: f":::{{note}}\nNote {i} says a few words here.\n\n"),
    "unclosed ```{warning}": page(lambda i: f"```{{warning}}\nWarning {i} says words.\n\n"),
    "unclosed ///": page(lambda i: f"/// note | Title {i}\nBody {i} says a few words.\n\n"),
    "unclosed :::note": page(lambda i: f":::note Title {i}\nNote {i} says a few words.\n\n"),
    "unclosed <Tabs>": page(lambda i: f"<Tabs>\nTabs {i} say a few words here.\n\n"),
    "unclosed <TabItem>": page(
        lambda i: f'<TabItem value="v{i}" label="Tab {i}">\nItem {i} says words.\n\n'),
    "nested !!! note": page(lambda i: "    " * min(i, 60) + f"!!! note \"N{i}\"\n"
                            + "    " * (min(i, 60) + 1) + f"Body {i} says words.\n\n"),
    "nested alerts": page(alerts),
    "MyST options never ended": page(lambda i: f"```{{note}}\n---\nkey{i}: value {i}\n"),
}


def oversize(doc, chunk, limit: int) -> bool:
    """A chunk over ``limit`` chars that no fence or table over the size explains."""
    if chunk.n_chars <= limit:
        return False
    return not any(a.kind in ("fence", "code", "table") and a.end - a.start > SIZE
                   and a.start < chunk.end and chunk.start < a.end for a in doc.atoms)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("strategy", ["ast_merge", "ast_breadcrumb"])
def test_no_chunk_over_twice_the_size_and_no_breadcrumb_past_the_cap(family, strategy):
    doc = make_document("hostile.md", FAMILIES[family])
    config = make_config(strategy=strategy, size=SIZE)
    chunks = chunk_document(doc, config)
    big = [c.n_chars for c in chunks if oversize(doc, c, 2 * SIZE)]
    assert not big, f"{family}: chunks of {big} chars at size {SIZE}"
    deepest = max(len(c.breadcrumb) for c in chunks)
    assert deepest <= HEADINGS + MAX_LABELS
    report = check(doc, chunks, config)
    assert report.split_blocks == report.lost_chars == report.wrong_breadcrumbs == 0


def test_the_eighth_container_holds_the_rest_read_flat():
    doc = make_document("deep.md", FAMILIES["unclosed :::{note}"])
    block = next(b for b in doc.blocks if b.kind == "container")
    depth = 1
    while inner := [c for c in block.children if c.kind == "container"]:
        block, depth = inner[0], depth + 1
    assert depth == MAX_DEPTH and block.label == "Note"
    kinds = [child.kind for child in block.children]
    assert set(kinds) == {"paragraph", "text", "heading"}
    assert kinds.count("text") == REPEATS - MAX_DEPTH  # each opening line past the eighth
