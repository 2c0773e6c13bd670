"""Peer splitters: listed with or without their extra, measured like the LangChain baselines.

Each available peer is checked on the fixtures for span truth (a verbatim chunk is its
slice; spans move forward), measured loss, its size unit and determinism. The unavailable
path is checked by making an import fail, so it runs whether the extra is installed or not.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from chunkproof import chunk_document, make_config, make_document
from chunkproof.chunking.registry import REGISTRY, available_names
from chunkproof.chunking.sizes import measure_all
from chunkproof.chunking.strategies.baselines import Aligner
from chunkproof.cli import main
from chunkproof.errors import MissingExtraError
from chunkproof.evaluation.run.sweep import run_sweep
from chunkproof.evaluation.scoring.invariants import check
from chunkproof.notebooks import strategy_sweep
from conftest import FIXTURES as FIXTURE_DIR
from conftest import fixture_doc, strategy_params

PEERS = ["text_splitter_md", "chonkie_recursive", "llamaindex_md", "docling_hybrid",
         "semantic_embed"]
FIXTURES = ["standard_deep.md", "long_fence.md", "table_caption.md", "fence_hash.md",
            "hostile.md", "contract_renewal.md", "ci_log.md"]
SIZED = {"text_splitter_md", "chonkie_recursive", "llamaindex_md"}
"""Peers whose every chunk is held to size (semantic_embed and docling_hybrid keep a sentence
or an item whole, so one can pass it)."""
SOURCE_SLICES = {"text_splitter_md", "chonkie_recursive", "llamaindex_md", "semantic_embed"}
"""Peers that return slices of the source: aligned, they lose nothing."""




def lost_by_hand(doc, chunks) -> int:
    covered = np.zeros(len(doc.text), dtype=bool)
    for chunk in chunks:
        covered[chunk.start : chunk.end] = True
    return sum(1 for i, ch in enumerate(doc.text) if not ch.isspace() and not covered[i])


def test_every_peer_is_registered_in_its_own_family():
    for name in PEERS:
        assert REGISTRY[name].family == "peer"
        assert REGISTRY[name].requires, name


@pytest.mark.parametrize("fixture", FIXTURES)
@pytest.mark.parametrize("strategy", strategy_params(PEERS))
def test_span_truth_and_measured_loss(strategy, fixture):
    doc = fixture_doc(fixture)
    config = make_config(strategy=strategy, size=200)
    chunks = chunk_document(doc, config)
    assert chunks and all(c.strategy == strategy for c in chunks)
    for chunk in chunks:
        assert 0 <= chunk.start <= chunk.end <= len(doc.text)
        assert chunk.verbatim == (chunk.text == doc.text[chunk.start : chunk.end])
    starts = [c.start for c in chunks]
    assert starts == sorted(starts)  # forward alignment: never back to the top
    report = check(doc, chunks, config)
    assert report.false_verbatim == 0
    assert report.lost_chars == lost_by_hand(doc, chunks)
    if strategy in SOURCE_SLICES:
        assert report.non_verbatim == 0 and report.lost_chars == 0


@pytest.mark.parametrize("unit", ["chars", "words", "tokens"])
@pytest.mark.parametrize("strategy", strategy_params(sorted(SIZED)))
def test_size_is_counted_in_the_config_unit(strategy, unit):
    doc = fixture_doc("standard_deep.md")
    size = {"chars": 300, "words": 50, "tokens": 60}[unit]
    chunks = chunk_document(doc, make_config(strategy=strategy, size=size, unit=unit))
    sizes = measure_all([c.text for c in chunks], unit)
    assert len(chunks) > 2 and max(sizes) <= size, sizes


@pytest.mark.parametrize("strategy", strategy_params(PEERS))
def test_deterministic_on_a_rebuilt_document(strategy):
    doc = fixture_doc("standard_deep.md")
    config = make_config(strategy=strategy, size=300)
    first = [c.as_dict() for c in chunk_document(doc, config)]
    rebuilt = make_document(doc.id, doc.text, path=doc.path)
    assert first == [c.as_dict() for c in chunk_document(rebuilt, config)]


@pytest.mark.needs("peers")
def test_llamaindex_header_path_is_the_breadcrumb():
    doc = fixture_doc("standard_deep.md")
    chunks = chunk_document(doc, make_config(strategy="llamaindex_md", size=300))
    body = [c for c in chunks if "Default value 12" in c.text]
    # header_path names the headings above the section (the title is deduplicated)
    assert body and body[0].breadcrumb == ("5 Classification", "5.9 Special cases")


@pytest.mark.needs("peers")
def test_docling_headings_are_the_breadcrumb_and_contextualize_the_embed_text():
    doc = fixture_doc("standard_deep.md")
    chunks = chunk_document(doc, make_config(strategy="docling_hybrid", size=300))
    body = [c for c in chunks if "Default value 12" in c.text]
    assert body[0].breadcrumb == ("5 Classification", "5.9 Special cases",
                                  "5.9.2 Parameter defaults")
    assert body[0].embed_text.startswith("Standard XYZ\n5 Classification\n")
    assert body[0].embed_text.endswith(body[0].text)
    plain = chunk_document(doc, make_config(strategy="docling_hybrid", size=300, prefix=False))
    assert all(c.embed_text == c.text for c in plain)


def test_unavailable_peer_is_listed_with_its_install_command(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "semantic_text_splitter", None)  # the import now fails
    strategy = REGISTRY["text_splitter_md"]
    assert not strategy.available
    assert "text_splitter_md" not in available_names()
    assert main(["strategies"]) == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("text_splitter_md")]
    assert "unavailable (semantic-text-splitter not installed)" in line
    assert "pip install -e '.[peers]'" in line
    with pytest.raises(MissingExtraError) as caught:
        chunk_document(fixture_doc("standard_deep.md"), make_config(strategy="text_splitter_md"))
    assert "pip install -e '.[peers]'" in str(caught.value)
    assert "semantic-text-splitter is not installed" in str(caught.value)


def test_an_install_command_names_every_extra_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "chonkie", None)
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    status = REGISTRY["semantic_embed"].status()
    assert "chonkie, sentence-transformers not installed" in status
    assert "pip install -e '.[dense,peers]'" in status


@pytest.mark.needs("peers")
def test_available_peer_is_listed_with_its_package_version(capsys):
    available = [name for name in PEERS if REGISTRY[name].available]
    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    for name in available:
        [line] = [x for x in out.splitlines() if x.startswith(f"{name} ")]
        for requirement in REGISTRY[name].requires:
            assert f"{requirement.package} {requirement.version()}" in line


@pytest.mark.needs("peers")
def test_the_sweep_and_notebook_03_take_peers_like_any_strategy(tmp_path):
    peers = [name for name in PEERS if REGISTRY[name].available]
    mini = FIXTURE_DIR / "mini_corpus"
    setup = strategy_sweep.validate(CORPUS=str(mini), QUERIES=str(mini / "queries.jsonl"),
                                    STRATEGIES=["rct", *peers], SIZES=[300],
                                    RETRIEVERS=["bm25"], METRICS=["answer_hit@5"],
                                    OUT_DIR=str(tmp_path))
    assert setup.params.strategies == ("rct", *peers)
    result = run_sweep(setup.params, progress=False)
    assert set(result.chunks["strategy"]) == {"rct", *peers}
    assert set(result.per_query["strategy"]) == {"rct", *peers}


# --- the aligner a rewriting peer relies on ------------------------------------------------

def test_rewritten_markup_is_found_by_its_letters_and_digits():
    text = "# T\n\nSet `retries` to **3**.\n\n```sh\nrun --fast\n```\n\nSet `retries` to **3**.\n"
    aligner = Aligner(text)
    first = aligner.locate("Set retries to 3.", 0)
    assert first is not None and text[first[0] : first[1]] == "Set `retries` to **3"
    assert first[0] == text.index("Set")
    again = aligner.locate("Set retries to 3.", first[1])  # the repeat, never the first
    assert again is not None and again[0] > text.index("run --fast")
    fence = aligner.locate("```\nrun --fast\n```", first[1])  # the language tag dropped
    assert fence == (text.index("run --fast"), text.index("fast") + 4)


def test_a_rewritten_table_spans_from_its_first_to_its_last_anchor():
    rows = "\n".join(f"| {i} | value number {i} |" for i in range(10))
    after = "After the table comes a closing paragraph of plain words."
    text = f"# T\n\nIntro paragraph long enough to anchor on.\n\n{rows}\n\n{after}\n\nEnd.\n"
    table = ". ".join(f"Row {i}, Value = value number {i}" for i in range(10))
    rewritten = f"Intro paragraph long enough to anchor on.\n{table}\n{after}"
    span = Aligner(text).locate(rewritten, 0)
    assert span == (text.index("Intro"), text.index(after) + len(after) - 1)
