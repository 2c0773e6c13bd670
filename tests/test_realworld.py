"""Real-world Markdown (tests/fixtures/realworld): nothing cut, nothing lost, nothing empty.

Numbered install steps with fenced code in list items, fences and tables in quotes, a README
whose links are reference-style, VitePress ``:::`` containers, empty headings, front-matter
pages, long unwrapped paragraphs and CJK text, for every heading-aware strategy and
``paragraph`` (which cuts at blank lines, so a fence with a blank line in it: measured).
"""

from __future__ import annotations

import itertools

import pytest

from chunkproof import chunk_document, load_corpus, make_config, make_document
from chunkproof.chunking.build import ChunkBuilder
from chunkproof.chunking.records import Piece
from chunkproof.chunking.registry import REGISTRY
from chunkproof.evaluation.scoring.chunk_stats import chunk_intact, chunk_stats
from chunkproof.evaluation.scoring.invariants import InvariantReport, check, split_blocks
from chunkproof.notebooks.splitter_panorama import intact_blocks, on_block_boundary
from chunkproof.viz.boundaries import chunk_flags
from conftest import FIXTURES, fixture_doc

REALWORLD = FIXTURES / "realworld"
FILES = sorted(p.name for p in REALWORLD.glob("*.md*"))
AST = [name for name, s in REGISTRY.items() if s.family == "ast"]
SIZES = [80, 200, 400, 800]
MIN_SIZES = [0, 60]


def doc_of(name: str):
    return fixture_doc(f"realworld/{name}")


def report_of(doc, strategy: str) -> InvariantReport:
    total = InvariantReport()
    for size, min_size in itertools.product(SIZES, MIN_SIZES):
        config = make_config(strategy=strategy, size=size, min_size=min_size)
        total = total + check(doc, chunk_document(doc, config), config)
    return total


def chunks_of(name: str, strategy: str = "ast_merge", **options):
    doc = doc_of(name)
    return doc, chunk_document(doc, make_config(strategy=strategy, **options))


def has_words(text: str) -> bool:
    """A letter or digit outside HTML comments."""
    while "<!--" in text:
        head, _, rest = text.partition("<!--")
        text = head + rest.partition("-->")[2]
    return any(ch.isalnum() for ch in text)


def test_the_fixture_set_holds_every_case():
    assert len(FILES) >= 9
    kinds = {b.kind for name in FILES for b in doc_of(name).blocks}
    assert {"list", "blockquote", "container", "reference", "front_matter", "empty_heading",
            "html", "hr"} <= kinds
    nested = [a for name in FILES for a in doc_of(name).atoms
              if not any(a is b for b in doc_of(name).blocks)]
    assert {a.kind for a in nested} >= {"fence", "table"}


@pytest.mark.parametrize("name", FILES)
@pytest.mark.parametrize("strategy", AST)
def test_heading_aware_strategies_hold_every_invariant(name, strategy):
    report = report_of(doc_of(name), strategy)
    assert report.non_verbatim == report.false_verbatim == 0
    assert report.lost_chars == 0
    assert report.split_blocks == 0
    assert report.wrong_breadcrumbs == 0
    assert report.heading_only == 0
    assert report.cut_labels == report.labels_lost == 0


@pytest.mark.parametrize("name", FILES)
def test_paragraph_holds_every_invariant_but_intact_blocks(name, record_property):
    report = report_of(doc_of(name), "paragraph")
    record_property(f"paragraph_split_blocks_{name}", report.split_blocks)
    assert report.non_verbatim == report.false_verbatim == 0
    assert report.lost_chars == 0
    assert report.wrong_breadcrumbs == 0
    assert report.heading_only == 0


def test_paragraph_cuts_a_fence_with_a_blank_line_and_the_check_sees_it():
    # Step 4's TOML fence, nested in a list item, holds a blank line.
    doc, chunks = chunks_of("install_steps.md", "paragraph")
    assert split_blocks(doc, chunks) == 1
    assert sum(not chunk_intact(c, {doc.id: doc}) for c in chunks) == 2


@pytest.mark.parametrize("strategy", [*AST, "paragraph"])
def test_no_chunk_is_wordless_or_front_matter_alone(strategy):
    for name, size in itertools.product(FILES, SIZES):
        _doc, chunks = chunks_of(name, strategy, size=size)
        assert all(has_words(c.text) for c in chunks), (name, size)
        assert all(c.kind != "front_matter" for c in chunks), (name, size)


# --- 1. nested fences and tables: never cut, and every check sees a cut ------------------


def cut_inside(doc, needle: str) -> list:
    """Two chunks cut in the middle of the line holding ``needle``."""
    cut = doc.text.index(needle) + len(needle) // 2
    builder = ChunkBuilder(doc, make_config(strategy="ast_merge"), prefix=False,
                           strategy="ast_merge")
    return builder.build([Piece(0, cut), Piece(cut, len(doc.text.rstrip()))])


@pytest.mark.parametrize("name,needle,kind", [
    ("install_steps.md", "sudo install -m 0755", "fence"),
    ("blockquote_fences.md", "tern backup --verify", "fence"),
    ("blockquote_fences.md", "`transfer.max_size`", "table"),
    ("blockquote_fences.md", 'unknown key "sync.interval"', "fence"),
    ("vitepress_page.md", "journalctl -u tern-daemon", "fence"),
])
def test_a_cut_through_a_nested_block_is_seen_everywhere(name, needle, kind):
    doc = doc_of(name)
    chunks = cut_inside(doc, needle)
    assert check(doc, chunks, make_config()).split_blocks == 1
    assert intact_blocks(doc, chunks) < 1.0
    assert on_block_boundary(doc, chunks) == 0.0
    flags = [f.reason for flag_set in chunk_flags(doc, chunks, make_config()) for f in flag_set]
    assert f"splits {kind}" in flags
    if kind == "fence":
        assert not any(chunk_intact(c, {doc.id: doc}) for c in chunks)


def test_code_integrity_is_one_for_heading_aware_strategies_on_nested_fences():
    corpus = load_corpus(REALWORLD)
    for strategy, size in itertools.product(AST, [120, 300]):
        config = make_config(strategy=strategy, size=size)
        chunks = [c for doc in corpus for c in chunk_document(doc, config)]
        assert chunk_stats(chunks, config, docs=corpus).code_integrity == 1.0
    rct = make_config(strategy="rct", size=120)
    chunks = [c for doc in corpus for c in chunk_document(doc, rct)]
    assert chunk_stats(chunks, rct, docs=corpus).code_integrity < 1.0


def test_a_list_is_split_between_items_and_a_parent_item_keeps_its_children():
    doc, chunks = chunks_of("install_steps.md", size=300)
    assert len([c for c in chunks if "Installation" in c.breadcrumb]) > 1
    inside = [c for c in chunks if c.part]
    assert on_block_boundary(doc, inside) == 1.0
    parameters = [c for c in chunks if "**Parameters:**" in c.text]
    assert len(parameters) == 1 and "`--dry-run`" in parameters[0].text
    exit_codes = [c for c in chunks if "**Exit codes:**" in c.text][0]
    assert "refused the token" in exit_codes.text


def test_a_one_line_introduction_in_a_list_or_quote_stays_with_what_follows():
    for name, size in itertools.product(FILES, [80, 150]):
        doc, chunks = chunks_of(name, size=size)
        for chunk in chunks:
            last = chunk.text.rstrip().splitlines()[-1].lstrip("> ")
            nested = any(b.children and b.start < chunk.end < b.end for b in doc.blocks)
            closing = not last.strip(":")  # a directive's closing ``::::`` line
            assert not (nested and last.endswith(":") and len(last) < 40 and not closing), (
                name, size, last)


# --- 2. nothing lost: definitions lie in a chunk and resolve ----------------------------


def test_reference_definitions_are_blocks_and_resolve_from_any_chunk():
    doc, chunks = chunks_of("readme_refs.md", "ast_breadcrumb", size=300)
    assert len(doc.references) == 12
    assert doc.resolve("Guide") == "https://docs.example.org/tern/guide/"
    assert doc.resolve("forum") == "https://forum.example.org/c/tern"  # nested in a list item
    intro = [c for c in chunks if "[user guide][guide]" in c.text][0]
    assert ("user guide", "https://docs.example.org/tern/guide/") in doc.links(intro.text)
    assert ("changelog", "https://docs.example.org/tern/changelog/") in doc.links(intro.text)
    last = chunks[-1]
    assert last.text.endswith("[issues]: https://bugs.example.org/tern")
    assert last.kind == "prose" and last.breadcrumb == ("License",)


# --- 3. no empty or content-free pieces --------------------------------------------------


@pytest.mark.parametrize("strategy", ["ast_breadcrumb", "heading_flush", "paragraph"])
def test_empty_headings_never_enter_a_breadcrumb_or_clear_the_stack(strategy):
    doc, chunks = chunks_of("empty_headings.md", strategy, size=150, prefix=True)
    assert doc.title == "Release checklist"
    for chunk in chunks:
        assert all(chunk.breadcrumb), chunk.breadcrumb
        assert ">  >" not in chunk.embed_text and not chunk.embed_text.startswith("Context:  ")
    merge = [c for c in chunks if "Merge the pending" in c.text][0]
    assert merge.breadcrumb == ("Before the freeze",)  # `### ###` above it cleared nothing


def test_breadcrumbs_are_the_headings_plain_text():
    doc, chunks = chunks_of("empty_headings.md", "ast_breadcrumb", size=150)
    titles = [b.title for b in doc.blocks if b.is_heading]
    assert titles[2:5] == ["Build and sign", "Build artifacts for every platform",
                           "Upload the artifacts"]
    assert [b.raw_title for b in doc.blocks if b.is_heading][4] == (
        "[Upload](https://releases.example.org) the `artifacts`")
    crumbs = {entry for c in chunks for entry in c.breadcrumb}
    assert {"Build artifacts for every platform", "Upload the artifacts"} <= crumbs
    assert not any(mark in entry for entry in crumbs for mark in "*[]`")


def test_an_empty_first_heading_never_names_the_document(tmp_path):
    (tmp_path / "notes.md").write_text("#\n\nSome notes.\n\n### ###\n\nMore.\n")
    doc = load_corpus(tmp_path).get("notes.md")
    assert doc.title == "notes"


@pytest.mark.parametrize("strategy", [*AST, "paragraph"])
@pytest.mark.parametrize("name,heading", [("vitepress_page.md", "# Configuring the daemon"),
                                          ("front_matter_page.md", "## Token types")])
def test_front_matter_joins_the_first_section(strategy, name, heading):
    doc, chunks = chunks_of(name, strategy, size=400)
    first = chunks[0]
    assert first.start == 0 and first.text.startswith("---\n") and heading in first.text
    assert first.kind == "prose"
    assert doc.description and doc.front_matter["title"] == doc.title


def test_vitepress_containers_are_one_block_each():
    doc = doc_of("vitepress_page.md")
    containers = [b for b in doc.blocks if b.kind == "container"]
    assert [b.title for b in containers] == ["tip", "warning Reloading TLS files",
                                             "details Where the data lives", "danger"]
    for block in containers:
        assert doc.text[block.start : block.end].rstrip().endswith(":::")
    lone = [b for b in doc.blocks if doc.text[b.start : b.end] == ":::"]
    assert len(lone) == 1 and not lone[0].content
    _doc, chunks = chunks_of("vitepress_page.md", size=150)
    assert not any(c.text.strip() in (":::", "---") for c in chunks)


# --- 4. cuts where a person would cut ----------------------------------------------------


@pytest.mark.parametrize("name,size", [("long_unwrapped.md", 300), ("long_unwrapped.md", 500),
                                       ("cjk.md", 100)])
def test_an_oversized_paragraph_is_cut_at_sentence_ends(name, size):
    _doc, chunks = chunks_of(name, size=size)
    assert any(c.part for c in chunks)
    for chunk in chunks:
        if "```" not in chunk.text and "|" not in chunk.text:
            assert chunk.text.rstrip()[-1] in ".!?。！？", chunk.text[-80:]
        assert len(chunk.text) <= size


def test_an_indented_paragraph_gives_no_empty_piece():
    """The sentence breaker starts past a nested paragraph's indentation: the indentation is
    part of the first sentence, never a sentence (an empty chunk) of its own."""
    from chunkproof.chunking.sentences import sentence_spans

    text = "1. step\n\n   2. alpha\n\n      one two three four\n      - nested item\n"
    start = text.index("      - nested")
    spans = sentence_spans(text, start, len(text.rstrip()))
    assert spans and all(end > begin for begin, end in spans) and spans[0][0] == start
    doc = make_document("nested.md", text)
    chunks = chunk_document(doc, make_config(strategy="ast_merge", size=20))
    assert all(c.end > c.start for c in chunks)


def tails(chunks) -> list:
    return [c for c in chunks if c.part and c.part.split(" of ")[0] == c.part.split()[-1]]


@pytest.mark.parametrize("body", [
    " ".join(f"Sentence {i:02d} of the long paragraph has a few words." for i in range(22)),
    "\n".join(f"- item {i:02d} of a list that keeps on going" for i in range(30)),
])
@pytest.mark.parametrize("size", range(150, 700, 25))
def test_split_sections_are_balanced_where_an_even_split_exists(body, size):
    doc = make_document("even.md", f"# Title\n\n## Section\n\n{body}\n")
    chunks = chunk_document(doc, make_config(strategy="ast_merge", size=size))
    parts = [c for c in chunks if c.part]
    assert len(parts) > 1
    assert all(len(c.text) <= size for c in parts)
    assert all(len(c.text) >= 0.25 * size for c in tails(parts)), [len(c.text) for c in parts]
