"""Section ids: every chunk names the section it lies in and that section's parent, by ids made
from the document id, the heading path and the heading's offset, the same in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from chunkproof import chunk_corpus, chunk_document, make_config, make_document
from chunkproof.chunking.build import dedup_title
from chunkproof.document.blocks import Block
from chunkproof.document.sections import section_id
from conftest import SAMPLE

HEADING_AWARE = ["ast_merge", "ast_breadcrumb", "heading_flush", "paragraph"]


def ids_of(corpus, strategy: str) -> list[tuple[str, str, str]]:
    chunks = chunk_corpus(corpus, make_config(strategy=strategy, size=300))
    return [(c.id, c.section_id, c.parent_section_id) for c in chunks]


def test_section_ids_are_the_same_in_another_process(sample_corpus):
    script = ("import json, sys\nfrom chunkproof import load_corpus, chunk_corpus, make_config\n"
              "chunks = chunk_corpus(load_corpus(sys.argv[1]), "
              "make_config(strategy='ast_breadcrumb', size=300))\n"
              "print(json.dumps([(c.id, c.section_id, c.parent_section_id) for c in chunks]))\n")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}  # another str hash than this process's
    out = subprocess.run([sys.executable, "-c", script, str(SAMPLE)], env=env, check=True,
                         capture_output=True, text=True).stdout
    theirs = [tuple(row) for row in json.loads(out)]
    mine = ids_of(sample_corpus, "ast_breadcrumb")
    assert theirs == mine
    assert len({s for _, s, _ in mine}) > len(sample_corpus)  # more than one section a page


def test_a_section_id_is_a_digest_of_document_path_and_offset():
    assert section_id("a.md", ("Guide", "Install"), 40) == section_id("a.md", ("Guide",
                                                                                "Install"), 40)
    others = {section_id("b.md", ("Guide", "Install"), 40),
              section_id("a.md", ("Guide", "Use"), 40),
              section_id("a.md", ("Guide", "Install"), 41),
              section_id("a.md", (), 0)}
    assert len(others | {section_id("a.md", ("Guide", "Install"), 40)}) == 5


def heading_stack_at(doc, offset: int) -> list[Block]:
    """The headings in force at ``offset``, outermost first (read here from the top-level
    blocks, without the chunker's heading stack)."""
    stack: list[Block] = []
    for block in doc.blocks:
        if block.start > offset:
            break
        if block.is_heading:
            while stack and stack[-1].level >= block.level:
                stack.pop()
            stack.append(block)
    return stack


def expected_ids(doc, chunk) -> tuple[str, str]:
    """The section a chunk's breadcrumb names, where its content starts, and that section's
    parent: found by matching the breadcrumb against the headings in force there."""
    body = [b for b in doc.blocks if b.is_body and b.end > chunk.start and b.start < chunk.end]
    stack = heading_stack_at(doc, max(body[0].start, chunk.start) if body else chunk.start)
    titles = tuple(b.title for b in stack)
    depth = max(d for d in range(len(stack) + 1)
                if dedup_title(titles[:d], (), doc.title)[0] == chunk.breadcrumb
                or (d == 0 and not stack))
    ids = [section_id(doc.id, (), 0)] + [section_id(doc.id, titles[: n + 1], b.start)
                                         for n, b in enumerate(stack)]
    return ids[depth], ids[depth - 1] if depth else ""


@pytest.mark.parametrize("strategy", HEADING_AWARE)
def test_parent_ids_form_a_tree_matching_the_breadcrumbs(strategy, sample_corpus):
    config = make_config(strategy=strategy, size=300)
    parents: dict[str, str] = {}
    for doc in sample_corpus:
        for chunk in chunk_document(doc, config):
            assert (chunk.section_id, chunk.parent_section_id) == expected_ids(doc, chunk)
            parents.setdefault(chunk.section_id, chunk.parent_section_id)
            assert parents[chunk.section_id] == chunk.parent_section_id
    roots = {doc.id: section_id(doc.id, (), 0) for doc in sample_corpus}
    assert all(parent == "" for sid, parent in parents.items() if sid in roots.values())
    assert all(parent for sid, parent in parents.items() if sid not in roots.values())


def test_same_named_sections_differ_and_share_their_parent():
    doc = make_document("guide.md", "# Guide\n\n## Example\n\none\n\n## Example\n\ntwo\n")
    chunks = chunk_document(doc, make_config(strategy="ast_merge", size=20))
    examples = [c for c in chunks if c.breadcrumb == ("Example",)]
    assert len(examples) == 2
    assert examples[0].section_id != examples[1].section_id
    guide = section_id("guide.md", ("Guide",), 0)
    assert examples[0].parent_section_id == examples[1].parent_section_id == guide


def test_a_chunk_before_any_heading_lies_in_the_root_section():
    doc = make_document("intro.md", "Some words first.\n\n# Title\n\n## Part\n\nbody\n")
    first, *rest = chunk_document(doc, make_config(strategy="paragraph"))
    assert (first.section_id, first.parent_section_id) == (section_id("intro.md", (), 0), "")
    assert rest[-1].parent_section_id == section_id("intro.md", ("Title",),
                                                    doc.text.index("# Title"))


def test_a_document_without_headings_is_one_root_section():
    doc = make_document("notes.md", "one paragraph\n\nanother paragraph\n")
    chunks = chunk_document(doc, make_config(strategy="paragraph"))
    assert {(c.section_id, c.parent_section_id) for c in chunks} == {
        (section_id("notes.md", (), 0), "")}


def test_a_chunk_spanning_two_same_named_sections_is_labelled_by_their_parent():
    # Tiny sibling sections merge up to min_size: the chunk holds both "Ex" sections, which
    # are two sections, so its breadcrumb and section are their parent's.
    text = "# Guide\n\n## A\n\n### Ex\n\none\n\n### Ex\n\ntwo\n"
    doc = make_document("g.md", text)
    merged = make_config(strategy="ast_merge", size=1000, min_size=100)
    (chunk,) = [c for c in chunk_document(doc, merged) if "one" in c.text]
    assert "two" in chunk.text
    assert chunk.breadcrumb == ("A",)
    assert chunk.section_id == section_id("g.md", ("Guide", "A"), text.index("## A"))


def test_a_baseline_chunk_lies_in_the_section_holding_its_content():
    # rct has no heading metadata (an empty breadcrumb); its section is the document's.
    text = "# Guide\n\n## A\n\none\n\n## B\n\ntwo\n"
    doc = make_document("g.md", text)
    (chunk,) = chunk_document(doc, make_config(strategy="rct", size=1000))
    assert chunk.section_id == section_id("g.md", ("Guide",), 0)
    assert chunk.parent_section_id == section_id("g.md", (), 0)


def test_the_adapters_metadata_and_the_written_records_carry_the_ids():
    from chunkproof.chunking.records import Chunk
    from chunkproof.integrations.common import chunk_metadata

    doc = make_document("g.md", "# Guide\n\n## A\n\none\n")
    chunk = chunk_document(doc, make_config(strategy="ast_merge"))[-1]
    meta = chunk_metadata(chunk)
    assert (meta["section_id"], meta["parent_section_id"]) == (chunk.section_id,
                                                               chunk.parent_section_id)
    assert Chunk.from_dict(json.loads(json.dumps(chunk.as_dict()))) == chunk
    assert chunk.as_dict()["section_id"] == section_id("g.md", ("Guide", "A"), 9)
