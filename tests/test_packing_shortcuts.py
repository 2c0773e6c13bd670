"""The chunk path's shortcuts give what the long way gives: a section that fits is the one
piece packing would make of it, in every unit; a span weighed alone counts what a batch
counts; tiny sections merge as they did when every span was measured again; a breadcrumb
looked up at the first and last offset is the common path of them all; the control-char
check is the character class's; sentence starts are those of blingfire's own wrapper; an
HTML block that cannot be a heading by its ends is what reading it whole finds."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunkproof import make_config, make_document
from chunkproof.chunking.packing import Section, Sizer, sections
from chunkproof.chunking.records import Piece
from chunkproof.chunking.sentences import sentence_starts
from chunkproof.chunking.sizes import count_one, count_tokens
from chunkproof.chunking.strategies.heading_aware import (
    _related,
    ast_pieces,
    merge_tiny,
    packed_pieces,
    section_pieces,
)
from chunkproof.chunking.word_table import SPLIT_UNSAFE, split_unsafe
from chunkproof.document.blocks import _HeadingText, html_heading
from chunkproof.document.sections import Breadcrumbs, common_prefix
from generated import markdown_docs

CONTROL = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"


def _with_controls(text: str, where: list[int]) -> str:
    """``text`` with control chars (which ``str.split`` cuts at and the tokenizer deletes)
    put after some of its spaces."""
    parts = text.split(" ")
    for n, at in enumerate(where):
        if parts and at < len(parts):
            parts[at] += CONTROL[n % len(CONTROL)]
    return " ".join(parts)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_docs(), unit=st.sampled_from(["chars", "words", "tokens"]),
       size=st.sampled_from([20, 60, 200, 1000]),
       controls=st.lists(st.integers(0, 40), max_size=4))
@example(text="# Setup\n\nalpha\x0bbeta gamma\n\n```sh\nrun\x1f it\n```\n", unit="tokens",
         size=6, controls=[])
def test_a_section_that_fits_is_the_piece_packing_makes(text, unit, size, controls):
    doc = make_document("gen.md", _with_controls(text, controls))
    config = make_config(strategy="ast_merge", size=size, unit=unit)
    sizer = Sizer(doc.text, unit)
    for section in sections(doc.blocks):
        short, packed = section_pieces(doc, section, config, sizer), packed_pieces(
            doc, section, config, sizer)
        if sizer(section.blocks[0].start, section.blocks[-1].end) <= size:
            assert [(p.start, p.end, p.part) for p in short] == [
                (p.start, p.end, p.part) for p in packed]
        else:
            assert short == packed


@settings(max_examples=100, deadline=None)
@given(text=markdown_docs(), picks=st.lists(st.floats(0, 1), min_size=1, max_size=8))
@example(text="# alpha alpha\n\none\n\n# alpha alpha\n\ntwo\n", picks=[0.2, 0.9])
def test_the_common_path_of_offsets_is_that_of_every_one(text, picks):
    doc = make_document("gen.md", text)
    crumbs = Breadcrumbs(doc.blocks)
    offsets = sorted(int(p * len(text)) for p in picks)
    chains = [_heading_chain(crumbs, o) for o in offsets]
    shared = common_prefix(chains)  # the same headings, not only the same titles
    path = crumbs.at(offsets[0])[: len(shared)]
    assert crumbs.common(offsets) == path
    assert crumbs.label(offsets) == (path, crumbs.provenance_at(offsets[0])[: len(path)])


def _heading_chain(crumbs: Breadcrumbs, offset: int) -> tuple[int, ...]:
    """Where each heading of the path in force at ``offset`` starts: for each prefix of the
    path, the nearest heading at or before ``offset`` whose path it is."""
    path = crumbs.at(offset)
    entries = [i for i, start in enumerate(crumbs.starts) if start <= offset]
    return tuple(next(crumbs.starts[i] for i in reversed(entries)
                      if crumbs.paths[i] == path[:depth])
                 for depth in range(1, len(path) + 1))


@given(text=st.text(alphabet=st.sampled_from(["a", " ", "\n", "数", *CONTROL, "\x85", "\t"])))
def test_the_control_char_check_is_the_character_class(text):
    assert SPLIT_UNSAFE == CONTROL
    assert split_unsafe(text) == bool(re.search("[\x0b\x0c\x1c-\x1f\x85]", text))


@settings(max_examples=100, deadline=None)
@given(text=markdown_docs(), controls=st.lists(st.integers(0, 40), max_size=3),
       cut=st.tuples(st.floats(0, 1), st.floats(0, 1)))
def test_a_span_weighed_alone_counts_what_a_batch_counts(text, controls, cut):
    text = _with_controls(text, controls)
    a, b = sorted(int(c * len(text)) for c in cut)
    assert count_one(text[a:b]) == count_tokens([text[a:b]])[0]


def _merged_measuring_every_time(pieces, crumbs, config, sizer):
    """merge_tiny as it was: every span measured again at every comparison."""
    merged: list[Piece] = []
    for piece in pieces:
        prev = merged[-1] if merged else None
        if (prev is not None and prev.part is None and piece.part is None
                and min(sizer(prev.start, prev.end), sizer(piece.start, piece.end))
                < config.min_size
                and sizer(prev.start, piece.end) <= config.size
                and _related(crumbs, prev, piece)):
            prev.end = piece.end
            continue
        merged.append(piece)
    return merged


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_docs(), unit=st.sampled_from(["chars", "words", "tokens"]),
       size=st.sampled_from([20, 60, 200]), share=st.sampled_from([0.2, 0.5, 1.0]))
@example(  # two tiny sections merged are no longer tiny: the next one stays apart
    text="# Guide\n\n## A\n\nalpha beta gamma\n\n## B\n\nalpha beta gamma delta\n\n"
         "## C\n\nalpha beta gamma delta alpha beta gamma delta alpha\n", unit="chars",
    size=200, share=0.2)
def test_tiny_sections_merge_as_when_every_span_was_measured_again(text, unit, size, share):
    doc = make_document("gen.md", text)
    config = make_config(strategy="ast_merge", size=size, unit=unit, min_size=int(size * share))
    sizer, crumbs = Sizer(doc.text, unit), Breadcrumbs(doc.blocks)
    unmerged = make_config(strategy="ast_merge", size=size, unit=unit, min_size=0)
    once = [(p.start, p.end) for p in merge_tiny(ast_pieces(doc, unmerged), crumbs, config,
                                                 sizer)]
    again = _merged_measuring_every_time(ast_pieces(doc, unmerged), crumbs, config, sizer)
    assert once == [(p.start, p.end) for p in again]


@given(text=st.lists(st.sampled_from(
    ["Run it", ". ", "! ", "? ", "\n", "\n\n", "e.g. ", "数据", "完了。", "😀", "é", "e\u0301",
     "  ", "Dr. ", "x"]), min_size=1).map("".join))
def test_sentence_starts_are_those_of_blingfire_s_own_wrapper(text):
    from blingfire import text_to_sentences_and_offsets

    assert sentence_starts(text) == [start for start, _ in text_to_sentences_and_offsets(text)[1]]


def _heading_read_whole(html: str) -> tuple[int, str] | None:
    """``html_heading`` as it was before its look at the ends: every block parsed."""
    parser = _HeadingText()
    parser.feed(html.strip())
    parser.close()
    text = " ".join("".join(parser.parts).split())
    stripped = html.strip().lower()
    if parser.level and text and stripped.startswith("<h") and stripped.endswith(
            f"h{parser.level}>"):
        return parser.level, text
    return None


_HTML_PARTS = st.sampled_from([
    "<h2>", "</h2>", "<H3 id='a'>", "</H3>", "<h7>", "</h7>", "<hr>", "<html>", "</html>",
    "<div>", "</div>", "<p>", "</p>", "<!-- note -->", "Install", " Güte ", "\n", "  ", "h2>",
    "<h", "<details><summary>More</summary>", "</details>", "<img src='h1>'>", "&amp;"])


@settings(max_examples=400, deadline=None)
@given(parts=st.lists(_HTML_PARTS, max_size=8))
@example(parts=["  <H2>", "Install", "</H2>  "])
@example(parts=["<h1>", "<h2>", "Two", "</h2>", "</h1>"])
@example(parts=["<hr>", "<p>", "x", "</p>", "h2>"])
def test_an_html_heading_is_found_as_reading_it_whole_finds_it(parts):
    html = "".join(parts)
    assert html_heading(html) == _heading_read_whole(html)


@pytest.mark.parametrize(("text", "size", "expected"), [
    # greedy gives [p0 p1 p2] [p3] (a last piece under a quarter): rebalanced, the first cut
    # at an exact tie between two group ends taken at the earlier one
    ("x" * 50 + "\n\n" + "y" * 8 + "\n\n" + "z" * 34 + "\n\n" + "w" * 12 + "\n", 100,
     [(0, 50, (1, 2)), (52, 110, (2, 2))]),
    # a table after a list is no caption: the list packs with the paragraph before it
    ("a" * 30 + "\n\n- item\n\n| a |\n|---|\n| 1 |\n", 45,
     [(0, 38, (1, 2)), (40, 57, (2, 2))]),
    # a table after a short paragraph is its caption's: they stay together
    ("a" * 30 + "\n\nitem\n\n| a |\n|---|\n| 1 |\n", 45,
     [(0, 30, (1, 2)), (32, 55, (2, 2))]),
], ids=["even-tie", "no-caption", "caption"])
def test_the_packer_on_cases_that_decide_a_cut(text, size, expected):
    doc = make_document("case.md", text)
    config = make_config(strategy="ast_merge", size=size)
    packed = packed_pieces(doc, Section(list(doc.blocks)), config, Sizer(doc.text, "chars"))
    assert [(p.start, p.end, p.part) for p in packed] == expected
