"""The six invariants, for every strategy, on the sample corpus and on generated Markdown.

Our strategies must hold every one. A baseline that breaks one is measured, not fixed: its
figures are recorded (pytest -rA shows them; record_property puts them in junit XML).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chunklab import chunk_document, make_config, make_document
from chunklab.chunking.strategies.paragraph import is_heading_block
from chunklab.evaluation.invariants import InvariantReport, check
from conftest import AVAILABLE, BASELINES, OURS

SIZES = [200, 800]


def corpus_report(corpus, strategy: str, size: int) -> InvariantReport:
    config = make_config(strategy=strategy, size=size)
    total = InvariantReport()
    for doc in corpus:
        total = total + check(doc, chunk_document(doc, config), config)
    return total


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("strategy", [s for s in OURS if s != "paragraph"])
def test_heading_aware_strategies_hold_every_invariant(sample_corpus, strategy, size):
    report = corpus_report(sample_corpus, strategy, size)
    assert report.chunks > len(sample_corpus)
    assert report.non_verbatim == report.false_verbatim == 0
    assert report.lost_chars == 0
    assert report.split_blocks == 0
    assert report.wrong_breadcrumbs == 0
    assert report.heading_only == 0


def test_paragraph_holds_provenance_loss_and_breadcrumbs(sample_corpus):
    """The seed-000 chunker: verbatim, lossless, true breadcrumbs; its cuts are blank lines."""
    report = corpus_report(sample_corpus, "paragraph", 800)
    assert report.false_verbatim == report.non_verbatim == report.lost_chars == 0
    assert report.wrong_breadcrumbs == 0
    config = make_config(strategy="paragraph")
    for doc in sample_corpus:  # an ATX heading never stands alone unless it ends the file
        chunks = chunk_document(doc, config)
        for chunk in chunks[:-1]:
            assert not is_heading_block(chunk.text), chunk


@pytest.mark.parametrize("strategy", BASELINES)
def test_baselines_are_measured(sample_corpus, strategy, record_property):
    report = corpus_report(sample_corpus, strategy, 800)
    record_property(f"{strategy}_invariants", report.as_dict())
    print(f"{strategy}: {report.as_dict()}")
    assert report.false_verbatim == 0  # a claim of verbatim text is always checked
    assert report.chunks > 0 and report.total_chars > 50_000


def test_known_baseline_failures_show_up_in_the_figures(sample_corpus):
    """The measurement sees what the panorama is about: RCT cuts fences, EMSTS drops text."""
    assert corpus_report(sample_corpus, "rct", 800).split_blocks > 0
    assert corpus_report(sample_corpus, "emsts", 800).lost_chars > 0


@pytest.mark.parametrize("strategy", AVAILABLE)
def test_deterministic_across_runs(sample_corpus, strategy):
    config = make_config(strategy=strategy, size=500)
    doc = sample_corpus.documents[0]
    first = [c.as_dict() for c in chunk_document(doc, config)]
    rebuilt = make_document(doc.id, doc.text)
    assert first == [c.as_dict() for c in chunk_document(rebuilt, config)]


# --- generated Markdown ------------------------------------------------------------------

words = st.sampled_from(["alpha", "beta", "gamma", "delta", "renewal", "#", "`x`", "**b**",
                         "|", "~~~", "```", "-", "1.", "##[error]", "é", "数据"])
line = st.lists(words, min_size=1, max_size=12).map(" ".join)


@st.composite
def markdown_blocks(draw):
    kind = draw(st.sampled_from(["heading", "para", "fence", "open_fence", "table", "list",
                                 "blank", "setext"]))
    if kind == "heading":
        return "#" * draw(st.integers(1, 6)) + " " + draw(line)
    if kind == "setext":
        underline = draw(st.sampled_from(["===", "---"]))
        return draw(line).replace("#", "x").strip("-= ") + "\n" + underline
    if kind == "para":
        return "\n".join(draw(st.lists(line, min_size=1, max_size=4)))
    if kind in ("fence", "open_fence"):
        mark = draw(st.sampled_from(["```", "~~~"]))
        body = "\n".join(draw(st.lists(line, min_size=0, max_size=5)))
        return f"{mark}py\n{body}" + (f"\n{mark}" if kind == "fence" else "")
    if kind == "table":
        rows = draw(st.integers(1, 4))
        return "| a | b |\n|---|---|\n" + "\n".join(f"| {i} | v{i} |" for i in range(rows))
    if kind == "list":
        return "\n".join(f"- {draw(line)}" for _ in range(draw(st.integers(1, 3))))
    return ""


@st.composite
def markdown_docs(draw):
    blocks = draw(st.lists(markdown_blocks(), min_size=1, max_size=14))
    gaps = draw(st.lists(st.sampled_from(["\n\n", "\n\n\n", "\n"]), min_size=len(blocks),
                         max_size=len(blocks)))
    text = "".join(b + g for b, g in zip(blocks, gaps, strict=True))
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_docs(), size=st.sampled_from([40, 120, 400]),
       strategy=st.sampled_from(["ast_merge", "ast_breadcrumb", "heading_flush"]),
       min_size=st.sampled_from([0, 30]))
def test_invariants_hold_on_generated_markdown(text, size, strategy, min_size):
    doc = make_document("gen.md", text)
    config = make_config(strategy=strategy, size=size, min_size=min(min_size, size))
    report = check(doc, chunk_document(doc, config), config)
    assert report.false_verbatim == report.non_verbatim == 0
    assert report.lost_chars == 0
    assert report.split_blocks == 0
    assert report.wrong_breadcrumbs == 0
    assert report.heading_only == 0


@settings(max_examples=80, deadline=None)
@given(text=markdown_docs())
def test_paragraph_loses_nothing_on_generated_markdown(text):
    doc = make_document("gen.md", text)
    config = make_config(strategy="paragraph")
    report = check(doc, chunk_document(doc, config), config)
    assert report.lost_chars == 0 and report.non_verbatim == 0
