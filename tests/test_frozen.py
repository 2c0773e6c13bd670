"""quick_init makes the records the dataclass's own __init__ makes, with the same signature."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from chunkproof import chunk_corpus, make_config
from chunkproof.chunking.records import Chunk
from chunkproof.document.blocks import Block
from chunkproof.util.frozen import quick_init


def walk(blocks):
    for block in blocks:
        yield block
        yield from walk(block.children)


def twin(cls):
    """A dataclass with the same fields and defaults, made with its generated ``__init__``."""
    specs = [(f.name, f.type) if f.default is dataclasses.MISSING
             else (f.name, f.type, dataclasses.field(default=f.default))
             for f in dataclasses.fields(cls)]
    return dataclasses.make_dataclass(f"{cls.__name__}Twin", specs, frozen=True, slots=True)


@pytest.mark.parametrize("cls", [Chunk, Block])
def test_the_signature_is_the_dataclasses_own(cls):
    mine, theirs = inspect.signature(cls), inspect.signature(twin(cls))
    assert [(p.name, p.default, p.kind) for p in mine.parameters.values()] == [
        (p.name, p.default, p.kind) for p in theirs.parameters.values()]


def test_records_of_the_sample_corpus_are_made_the_same(sample_corpus):
    chunks = chunk_corpus(sample_corpus, make_config(strategy="ast_breadcrumb", size=300))
    blocks = [b for doc in sample_corpus for b in walk(doc.blocks)]
    for records in (chunks, blocks):
        cls = type(records[0])
        other = twin(cls)
        for record in records:
            values = {f.name: getattr(record, f.name) for f in dataclasses.fields(cls)}
            made = cls(**values)
            assert made == record and hash(made) == hash(record)
            assert dataclasses.astuple(made) == dataclasses.astuple(other(**values))
            assert cls(*values.values()) == record
    assert pickle.loads(pickle.dumps(chunks)) == chunks


def test_defaults_positions_and_missing_arguments():
    assert dataclasses.astuple(Block("paragraph", 1, 2)) == dataclasses.astuple(
        twin(Block)("paragraph", 1, 2))
    assert Block("hr", 0, 3, content=False).content is False
    with pytest.raises(TypeError, match="end"):
        Block("paragraph", 1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        Block("paragraph", 1, 2, colour="red")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Block("paragraph", 1, 2).start = 5


def test_a_class_it_cannot_serve_the_same_way_is_refused():
    @dataclasses.dataclass(slots=True)
    class Mutable:
        x: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        x: int

        def __post_init__(self):
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class Listed:
        x: list = dataclasses.field(default_factory=list)

    for cls, message in ((Mutable, "frozen dataclass with slots"),
                         (Checked, "__post_init__"), (Listed, "plain defaults")):
        with pytest.raises(TypeError, match=message):
            quick_init(cls)


def test_quick_replace_makes_what_dataclasses_replace_makes(sample_corpus):
    from chunkproof.util.frozen import quick_replace

    chunks = chunk_corpus(sample_corpus, make_config(strategy="ast_breadcrumb", size=300))
    for chunk in chunks[:50]:
        changes = {"text": chunk.text[:10], "end": chunk.start + 10, "n_tokens": 3}
        assert quick_replace(chunk, **changes) == dataclasses.replace(chunk, **changes)
    with pytest.raises(TypeError, match="no field"):
        quick_replace(chunks[0], colour="red")
    plain = twin(Block)(**{f.name: getattr(walk(sample_corpus.documents[0].blocks).__next__(),
                                           f.name) for f in dataclasses.fields(Block)})
    assert quick_replace(plain, level=9).level == 9  # a record without quick_init: replace
