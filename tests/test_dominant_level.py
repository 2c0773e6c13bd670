"""The dominant_level strategy: sections at the document's dominant heading level are the
split backbone, deeper headings stay inside them and label the pieces they lead (seed 003)."""

from __future__ import annotations

from chunkproof import chunk_document, make_config, make_document
from chunkproof.chunking.registry import REGISTRY
from chunkproof.document.sections import dominant_level
from conftest import OURS, fixture_doc

GUIDE = """# Guide

Intro to the guide.

## Install

Get the package.

### From source

Clone and build it.

### From a wheel

Download and install it.

## Configure

Write the file.

### Options

Every option is listed here.
"""


def chunks_of(doc, size, **options):
    return chunk_document(doc, make_config(strategy="dominant_level", size=size, **options))


def test_registered_as_heading_aware_so_the_invariant_tests_hold_it():
    assert REGISTRY["dominant_level"].family == "ast"
    assert REGISTRY["dominant_level"].prefix
    assert "dominant_level" in OURS


def test_sections_at_the_dominant_level_are_the_chunks_when_they_fit():
    doc = make_document("guide.md", GUIDE)
    assert dominant_level(doc.blocks) == 2
    chunks = chunks_of(doc, 1000)
    assert [c.text.splitlines()[0] for c in chunks] == ["# Guide", "## Install", "## Configure"]
    install = chunks[1]
    assert "### From source" in install.text and "### From a wheel" in install.text
    assert install.breadcrumb == ("Install",)
    assert install.embed_text.startswith("Context: Guide > Install\n\n")
    # ast_breadcrumb cuts at every heading instead
    every = chunk_document(doc, make_config(strategy="ast_breadcrumb", size=1000))
    assert len(every) == 6


def test_a_split_section_labels_each_piece_with_the_deepest_heading_at_it():
    doc = fixture_doc("standard_deep.md")
    assert dominant_level(doc.blocks) == 2
    chunks = chunks_of(doc, 500, number_parts=True)
    body = [c for c in chunks if "Default value" in c.text]
    assert len(body) > 2
    assert body[0].breadcrumb[0] == "5 Classification"  # it holds 5's own text too
    for piece in body[1:]:  # inside 5.9.2 alone
        assert piece.breadcrumb[:3] == ("5 Classification", "5.9 Special cases",
                                        "5.9.2 Parameter defaults")
    assert all(c.n_chars <= 500 for c in chunks)


def test_a_document_without_a_repeated_level_splits_at_its_shallowest():
    doc = make_document("one.md", "# Only\n\nText.\n\n### Deep\n\nMore text.\n")
    [chunk] = chunks_of(doc, 1000)
    assert chunk.text == doc.text.rstrip("\n")
