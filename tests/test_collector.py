"""A parse and a chunking run with Python's cyclic garbage collector off, and leave it as they
found it."""

import gc

import pytest

from chunkproof.chunking import build
from chunkproof.chunking.config import make_config
from chunkproof.document import blocks
from chunkproof.document.corpus import make_document
from chunkproof.util.collector import collector_paused

STEPS = "1. Install:\n\n   ```sh\n   pip install x\n   ```\n\n2. Run it.\n"


def note_collector(monkeypatch, owner, name: str, seen: list[bool]) -> None:
    """Note in ``seen`` whether the collector is on, each time ``owner.name`` is called."""
    real = getattr(owner, name)

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)


def test_a_parse_holds_the_collector_off_and_turns_it_back_on(monkeypatch):
    seen: list[bool] = []
    note_collector(monkeypatch, blocks, "LineIndex", seen)  # made inside the parse
    assert gc.isenabled()
    found = blocks.parse_blocks(STEPS)
    assert [b.kind for b in found] == ["list"]
    assert seen == [False] and gc.isenabled()


def test_a_chunking_holds_the_collector_off(monkeypatch):
    doc = make_document("steps.md", STEPS)
    seen: list[bool] = []
    real = build.get_strategy

    def strategy_noting_the_collector(name):
        def chunk(*args):
            seen.append(gc.isenabled())
            return real(name)(*args)
        return chunk

    monkeypatch.setattr(build, "get_strategy", strategy_noting_the_collector)
    assert build.chunk_document(doc, make_config(strategy="ast_breadcrumb", size=40))
    assert seen == [False] and gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off():
    gc.disable()
    try:
        blocks.parse_blocks(STEPS)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_inside_turns_the_collector_back_on():
    with pytest.raises(ValueError, match="bad"), collector_paused():
        assert not gc.isenabled()
        raise ValueError("bad")
    assert gc.isenabled()
