"""The aligner's compact texts (the source kept to its non-space runs, or to its letters and
digits): built a slab at a time, they map every position as a char-by-char reading would; and
an output found as it is never builds one."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chunkproof.chunking.strategies import baselines
from chunkproof.chunking.strategies.baselines import _LETTERS, _SOLID, Aligner, _Compact

# Spaces of several kinds (the no-break space and the ideographic space count as whitespace),
# CJK, accents, underscores and markup.
TEXT = st.text(alphabet=st.sampled_from(list("ab_Z9 \t\n\u00a0\u3000中文é*`#|-")), max_size=300)


def char_by_char(text: str, keep) -> tuple[str, list[int]]:
    """The kept chars, and the source offset of each."""
    offsets = [i for i, ch in enumerate(text) if keep(ch)]
    return "".join(text[i] for i in offsets), offsets


@pytest.mark.parametrize(("pattern", "keep"), [
    (_SOLID, lambda ch: not ch.isspace()),
    (_LETTERS, lambda ch: ch.isalnum()),
])
@settings(max_examples=150, deadline=None)
@given(text=TEXT, slab=st.integers(1, 40))
def test_a_compact_read_in_slabs_maps_every_position_like_a_char_by_char_reading(
        pattern, keep, text, slab):
    kept, offsets = char_by_char(text, keep)
    saved = baselines._SLAB
    baselines._SLAB = slab
    try:
        compact = _Compact(text, pattern)
    finally:
        baselines._SLAB = saved
    assert compact.text == kept
    assert [compact.offset(p) for p in range(len(kept))] == offsets
    for offset in range(len(text) + 1):  # the first kept char at or after each offset
        assert compact.position(offset) == sum(1 for o in offsets if o < offset)


def test_texts_found_as_they_are_build_no_compact_text():
    text = "# Install\n\nRun `make`.\n\n## Use\n\nCall it.\n"
    aligner = Aligner(text)
    assert aligner.locate("## Use\n\nCall it.", 0) == (text.index("## Use"), len(text) - 1)
    assert aligner._compact == {}
    assert aligner.locate("Run make.", 0) is not None  # a rewritten text: now they are built
    assert set(aligner._compact) == {_SOLID, _LETTERS}
