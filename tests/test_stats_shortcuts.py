"""Chunk statistics' shortcuts give what the long way gives: lost chars counted from the words
of the gaps between spans are those a per-char mask counts; the tokens of an embed text are
its prefix's and its text's added up, as encoding the embed text counts them."""

from __future__ import annotations

import dataclasses
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunkproof import chunk_document, make_config, make_document
from chunkproof.chunking.sizes import count_tokens
from chunkproof.evaluation.scoring.chunk_stats import embed_token_counts
from chunkproof.evaluation.scoring.invariants import lost_chars
from generated import markdown_docs

SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2028\u202f\u205f\u3000"


def _masked(text: str, spans: list[tuple[int, int]]) -> tuple[int, int]:
    """Lost chars as a mask of every char counts them."""
    covered = np.zeros(len(text), dtype=bool)
    for start, end in spans:
        covered[start:end] = True
    solid = np.fromiter((not ch.isspace() for ch in text), dtype=bool, count=len(text))
    return int((solid & ~covered).sum()), int(solid.sum())


@dataclasses.dataclass
class _Span:
    start: int
    end: int


def test_split_cuts_at_every_char_isspace_holds_and_no_other():
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert (char.split() == []) == char.isspace(), hex(code)


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.sampled_from(["a", "数", "é", "-", *SPACES]), max_size=60),
       spans=st.lists(st.tuples(st.integers(0, 70), st.integers(0, 70)), max_size=6))
@example(text="ab  cd\u3000ef", spans=[(3, 1), (0, 2), (1, 3)])
@example(text="x y", spans=[])
def test_lost_chars_are_those_a_mask_of_every_char_counts(text, spans):
    doc = make_document("gen.txt", text)
    assert lost_chars(doc, [_Span(a, b) for a, b in spans]) == _masked(text, spans)


@pytest.mark.needs("tokenizer")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_docs(), size=st.sampled_from([60, 300, 1000]),
       control=st.sampled_from(["", "\x0b", "\x1f", "\u0301"]))
@example(text="# Setup\n\n\u0301alpha \x0bbeta\n\n## Run\n\nrun it\n", size=60, control="")
def test_embed_tokens_are_those_of_the_embed_text_encoded(text, size, control):
    doc = make_document("gen.md", text.replace(" ", " " + control, 3))
    chunks = chunk_document(doc, make_config(strategy="ast_breadcrumb", size=size))
    chunks += [dataclasses.replace(c, embed_prefix="Path: ") for c in chunks[:2]]
    counts, method = embed_token_counts(chunks)
    assert method == "tokenizer"
    assert counts == count_tokens([c.embed_text for c in chunks], special=True)
