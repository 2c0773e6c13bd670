"""The chunk path's shortcuts give what the long way gives: a section that fits is the one
piece packing would make of it, in every unit; a breadcrumb looked up at the first and last
offset is the common path of them all; the control-char check is the character class's."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunklab import make_config, make_document
from chunklab.chunking.packing import Sizer, sections
from chunklab.chunking.sizes import SPLIT_UNSAFE, split_unsafe
from chunklab.chunking.strategies.heading_aware import packed_pieces, section_pieces
from chunklab.document.sections import Breadcrumbs, common_prefix
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
def test_the_common_path_of_offsets_is_that_of_every_one(text, picks):
    doc = make_document("gen.md", text)
    crumbs = Breadcrumbs(doc.blocks)
    offsets = sorted(int(p * len(text)) for p in picks)
    assert crumbs.common(offsets) == common_prefix(crumbs.at(o) for o in offsets)


@given(text=st.text(alphabet=st.sampled_from(["a", " ", "\n", "数", *CONTROL, "\x85", "\t"])))
def test_the_control_char_check_is_the_character_class(text):
    assert SPLIT_UNSAFE == CONTROL
    assert split_unsafe(text) == bool(re.search("[\x0b\x0c\x1c-\x1f\x85]", text))
