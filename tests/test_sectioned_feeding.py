"""Peers whose library slows with the length of the text it is given (semantic-text-splitter,
LlamaIndex's MarkdownNodeParser) are fed whole top-level sections at a time: every call gets
a bounded text, and the chunks are those of the whole-text run."""

from __future__ import annotations

import pytest

from chunkproof import chunk_document, make_config, make_document
from chunkproof.bench.scale import generated_markdown
from chunkproof.chunking.strategies import peers, sectioned
from chunkproof.chunking.strategies.sectioned import fed_in_sections, top_level_cuts
from conftest import fixture_doc, strategy_params

FIXTURES = ["sectioned_guide.md", "standard_deep.md", "hostile.md", "h1_h3_jump.md",
            "fence_hash.md", "long_fence.md", "contract_renewal.md", "deep_list.md",
            "stack_truncation.md", "unterminated_fence.md"]
LIMITS = [1, 300]
"""Piece sizes that cut each fixture at every top-level heading, or at some of them."""




def spans(chunks) -> list[tuple]:
    return [(c.start, c.end, c.text, c.breadcrumb, c.verbatim) for c in chunks]


def test_pieces_start_at_the_sections_below_the_title():
    doc = fixture_doc("sectioned_guide.md")
    assert [doc.text[at:].split("\n", 1)[0] for at in top_level_cuts(doc)] == [
        "## Nightly backup", "## Weekly verification", "Verification results",  # setext
        "## Full restore", "## Contacts"]
    several = make_document("t.md", "# A\n\n## a\n\n# B\n\ntext\n\nC\n=\n\n```\n# D\n```\n")
    assert [several.text[at] for at in top_level_cuts(several)] == ["#", "C"]
    assert top_level_cuts(make_document("t.md", "# Only\n\ntext\n")) == []


@pytest.mark.parametrize("fixture", FIXTURES)
@pytest.mark.parametrize(("size", "overlap"), [(60, 0), (200, 0), (1000, 0), (200, 50)])
@pytest.mark.parametrize("limit", LIMITS)
@pytest.mark.needs("peers")
def test_text_splitter_in_pieces_gives_the_whole_run(fixture, size, overlap, limit):
    doc = fixture_doc(fixture)
    splitter = peers._markdown_splitter(size, overlap, "chars")
    assert fed_in_sections(doc, splitter.chunk_indices, limit=limit) == splitter.chunks(doc.text)


@pytest.mark.needs("peers")
@pytest.mark.parametrize("fixture", FIXTURES)
@pytest.mark.parametrize("limit", LIMITS)
def test_llamaindex_sections_in_pieces_give_the_whole_run(fixture, limit):
    """Heading paths included: the guide's ``# copied log line`` inside a ``~~~`` fence is a
    heading to MarkdownNodeParser, and stays in the path it carries past a piece's start."""
    doc = fixture_doc(fixture)
    whole = [section for _, section in peers._markdown_sections(doc.text)]
    fed = fed_in_sections(doc, peers._markdown_sections, lead=peers._heading_lines, limit=limit)
    assert fed == whole


@pytest.mark.parametrize("strategy", strategy_params(["text_splitter_md", "llamaindex_md"]))
def test_the_strategy_chunks_in_pieces_as_in_one(strategy, monkeypatch):
    doc = fixture_doc("sectioned_guide.md")
    config = make_config(strategy=strategy, size=120)
    monkeypatch.setattr(sectioned, "SECTION_CHARS", 1)
    fed = chunk_document(doc, config)
    monkeypatch.setattr(sectioned, "SECTION_CHARS", 10 ** 9)
    assert spans(fed) == spans(chunk_document(doc, config))


def _recorded(monkeypatch, strategy: str) -> list[int]:
    """Lengths of the texts the strategy's library is called on."""
    calls: list[int] = []
    if strategy == "text_splitter_md":
        real = peers._markdown_splitter

        class Recording:
            def __init__(self, splitter):
                self.splitter = splitter

            def chunks(self, text):
                calls.append(len(text))
                return self.splitter.chunks(text)

            def chunk_indices(self, text):
                calls.append(len(text))
                return self.splitter.chunk_indices(text)

        monkeypatch.setattr(peers, "_markdown_splitter", lambda *args: Recording(real(*args)))
    else:
        from llama_index.core.node_parser import MarkdownNodeParser

        parse = MarkdownNodeParser.get_nodes_from_documents

        def recording(self, documents, *args, **kwargs):
            calls.extend(len(d.text) for d in documents)
            return parse(self, documents, *args, **kwargs)

        monkeypatch.setattr(MarkdownNodeParser, "get_nodes_from_documents", recording)
    return calls


@pytest.mark.parametrize("strategy", strategy_params(["text_splitter_md", "llamaindex_md"]))
def test_a_long_document_reaches_the_library_in_bounded_pieces(strategy, monkeypatch):
    doc = make_document("long.md", generated_markdown(0.3))
    config = make_config(strategy=strategy, size=1000)
    calls = _recorded(monkeypatch, strategy)
    fed = chunk_document(doc, config)
    assert len(calls) >= len(doc.text) // sectioned.SECTION_CHARS
    assert max(calls) <= 2 * sectioned.SECTION_CHARS
    monkeypatch.setattr(sectioned, "SECTION_CHARS", 10 ** 9)
    assert spans(fed) == spans(chunk_document(doc, config))
