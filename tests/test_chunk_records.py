"""A Chunk record holds its text once: the embed and context renderings are its prefixes, shared
by the chunks of one section, and made whole when read or written."""

from dataclasses import fields
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chunkproof.chunking.build import (
    CODE,
    TABLE,
    ChunkBuilder,
    block_kind,
    chunk_document,
    kind_bits,
)
from chunkproof.chunking.config import make_config
from chunkproof.chunking.records import Chunk, Piece
from chunkproof.document.blocks import ATOMIC, atomic_blocks
from chunkproof.document.corpus import make_document
from chunkproof.document.sections import Breadcrumbs
from chunkproof.evaluation.retrieval.budget import truncate
from generated import markdown_docs

REALWORLD = Path(__file__).parent / "fixtures" / "realworld"


@pytest.fixture(scope="module")
def install_chunks() -> list[Chunk]:
    """Numbered install steps with fences inside list items, cut small so sections split."""
    doc = make_document("install_steps.md", (REALWORLD / "install_steps.md").read_text())
    return chunk_document(doc, make_config(strategy="ast_breadcrumb", size=120, unit="chars"))


def test_no_field_holds_a_second_copy_of_the_text(install_chunks):
    assert len(install_chunks) > 3
    for chunk in install_chunks:
        strings = [f.name for f in fields(chunk) if isinstance(getattr(chunk, f.name), str)]
        copies = [name for name in strings
                  if name != "text" and chunk.text and chunk.text in getattr(chunk, name)]
        assert not copies, (chunk.ordinal, copies)


def test_the_renderings_are_the_prefix_then_the_text(install_chunks):
    for chunk in install_chunks:
        assert chunk.embed_text == chunk.embed_prefix + chunk.text
        assert chunk.context_text == chunk.context_prefix + chunk.text
        assert chunk.embed_prefix.endswith("\n\n") and chunk.context_prefix.endswith("\n\n")
        assert chunk.context_prefix.startswith(chunk.title)


def test_chunks_of_one_section_share_one_prefix(install_chunks):
    by_path: dict[tuple, list[Chunk]] = {}
    for chunk in install_chunks:
        by_path.setdefault(chunk.breadcrumb, []).append(chunk)
    shared = [group for group in by_path.values() if len(group) > 1]
    assert shared, "the fixture should split one section into several chunks"
    for group in shared:
        assert all(c.embed_prefix is group[0].embed_prefix for c in group)


def test_a_config_without_prefix_renders_the_bare_text():
    doc = make_document("install_steps.md", (REALWORLD / "install_steps.md").read_text())
    for chunk in chunk_document(doc, make_config(strategy="ast_merge", size=120, unit="chars")):
        assert chunk.embed_prefix == chunk.context_prefix == ""
        assert chunk.embed_text is chunk.text and chunk.context_text is chunk.text


def test_written_records_carry_the_renderings_whole_and_read_back_equal(install_chunks, tmp_path):
    rows = [c.as_dict() for c in install_chunks]
    assert {"embed_text", "context_text"} <= set(rows[0])
    assert not {"embed_prefix", "context_prefix"} & set(rows[0])
    assert rows[0]["embed_text"] == install_chunks[0].embed_text
    path = tmp_path / "chunks.parquet"
    pd.DataFrame(rows).to_parquet(path, index=False)
    back = [Chunk.from_dict(r) for r in pd.read_parquet(path).to_dict("records")]
    assert back == install_chunks


def test_a_record_whose_rendering_does_not_end_with_its_text_is_refused(install_chunks):
    row = install_chunks[0].as_dict() | {"embed_text": "something else entirely"}
    with pytest.raises(ValueError, match="embed_text does not end with the chunk's text"):
        Chunk.from_dict(row)


def test_a_truncated_chunk_keeps_its_prefix_before_the_shorter_text(install_chunks):
    chunk = max(install_chunks, key=lambda c: c.n_tokens)
    cut = truncate(chunk, 3)
    assert cut.context_text == chunk.context_prefix + cut.text
    assert len(cut.text) < len(chunk.text) and chunk.text.startswith(cut.text)


def test_a_chunk_pickled_and_unpickled_is_the_same_frozen_record(sample_corpus):
    import dataclasses
    import pickle

    from chunkproof import chunk_corpus, make_config

    chunks = chunk_corpus(sample_corpus, make_config(strategy="ast_breadcrumb", size=300))
    back = pickle.loads(pickle.dumps(chunks, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == chunks and all(type(c) is type(chunks[0]) for c in back)
    assert [c.embed_text for c in back] == [c.embed_text for c in chunks]
    with pytest.raises(dataclasses.FrozenInstanceError):
        back[0].text = "changed"


def test_records_made_a_column_at_a_time_are_those_made_row_by_row(sample_corpus):
    from chunkproof import chunk_corpus, make_config
    from chunkproof.chunking.records import Chunk

    chunks = chunk_corpus(sample_corpus, make_config(strategy="ast_breadcrumb", size=300))
    rows = [c.as_dict() for c in chunks]
    rows[0]["heading_provenance"] = None  # as a table with a missing list reads back
    columns = {name: [row[name] for row in rows] for name in Chunk.column_names()}
    assert Chunk.from_columns(columns) == [Chunk.from_dict(row) for row in rows]
    rows[1]["embed_text"] = "not the text"
    with pytest.raises(ValueError, match="embed_text does not end with the chunk's text"):
        Chunk.from_columns({name: [row[name] for row in rows] for name in Chunk.column_names()})



def kinds_held(block, lo, hi) -> set[str]:
    """The kinds a content block stands for in a chunk over [lo, hi): its own and those of the
    atomic blocks nested in it inside the span; a container stands for what its content
    blocks overlapping the span stand for (itself when none does)."""
    if block.kind != "container":
        nested = atomic_blocks([block]) if block.children else []
        return {block.kind} | {a.kind for a in nested if lo <= a.start and a.end <= hi}
    held = [kinds_held(c, lo, hi) if c.is_body and c.kind not in ATOMIC
            else {a.kind for a in atomic_blocks([c]) if lo <= a.start and a.end <= hi}
            for c in block.children if c.end > lo and c.start < hi]
    return set().union(*held) or {"container"}


def kind_the_long_way(blocks, span) -> str:
    """``block_kind`` as sets of kinds: what its bits stand for."""
    lo, hi = span
    body = set().union(*(kinds_held(b, lo, hi) for b in blocks if b.is_body))
    if not body:
        if any(b.is_heading for b in blocks):
            return "heading"
        leading = any(b.kind in ("front_matter", "metadata") for b in blocks)
        return "front_matter" if leading else "prose"
    if "table" in body:
        return "table"
    code = body & {"fence", "code"}
    return ("code" if body == code else "mixed") if code else "prose"


def nested_kinds_the_long_way(block, lo, hi) -> set[str]:
    """What ``kind_bits`` finds, as kinds (table, code): those of the block and of every atomic
    block nested in it that lies inside [lo, hi)."""
    nested = atomic_blocks(block.children) if block.kind not in ATOMIC else []
    kinds = {block.kind} | {a.kind for a in nested if lo <= a.start and a.end <= hi}
    return ({"table"} & kinds) | ({"code"} if kinds & {"fence", "code"} else set())


def kinds_of(bits: int) -> set[str]:
    return {name for bit, name in ((TABLE, "table"), (CODE, "code")) if bits & bit}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_docs(), data=st.data())
@example(text="1. a\n\n   ```sh\n   x\n   ```\n\n2. b\n\n   | a |\n   |---|\n   | 1 |\n\n"
              "3. c\n", data=None)
def test_kind_bits_reads_the_nested_blocks_inside_the_span(text, data):
    """The walk that starts at the span and stops past it (a chunk cut from a long list) finds
    the fences and tables that every nested block inside the span gives."""
    end = len(text) + 1
    for block in make_document("gen.md", text).blocks:
        spans = [(0, float("inf")), (block.start, block.end), (block.start + 1, block.end - 1)]
        if data is None:  # the example: a grid of spans
            spans += [(lo, hi) for lo in range(0, end, 7) for hi in range(lo, end, 5)]
        else:
            lo = data.draw(st.integers(0, end), label="lo")
            spans.append((lo, data.draw(st.integers(lo, end), label="hi")))
        for lo, hi in spans:
            assert kinds_of(kind_bits(block, lo, hi)) == nested_kinds_the_long_way(
                block, lo, hi), (block.kind, lo, hi)


LABEL_CONFIGS = [
    {"strategy": "ast_breadcrumb", "size": 120},
    {"strategy": "ast_merge", "size": 300, "number_parts": True},
    {"strategy": "ast_breadcrumb", "size": 40, "unit": "tokens", "min_size": 10},
    {"strategy": "heading_flush", "size": 200, "position_anchors": True},
]


def assert_built_as_label_and_block_kind(doc, options: dict) -> None:
    """Each chunk's breadcrumb, provenance, prefixes and kind are what ``ChunkBuilder.label``,
    ``prefixes`` and ``block_kind`` (and the kinds as sets) make of its span."""
    config = make_config(**options)
    chunks = chunk_document(doc, config)
    builder = ChunkBuilder(doc, config, prefix=config.strategy == "ast_breadcrumb",
                           strategy=config.strategy)
    for chunk in chunks:
        part = tuple(int(n) for n in chunk.part.split(" of ")) if chunk.part else None
        piece = Piece(chunk.start, chunk.end, part=part)  # type: ignore[arg-type]
        blocks = builder.blocks_in(chunk.start, chunk.end)
        assert (chunk.breadcrumb, chunk.heading_provenance) == builder.label(piece)
        assert (chunk.embed_prefix, chunk.context_prefix) == builder.prefixes(
            chunk.breadcrumb)
        span = (chunk.start, chunk.end)
        assert chunk.kind == block_kind(blocks, span) == kind_the_long_way(blocks, span)


@pytest.mark.parametrize("options", LABEL_CONFIGS, ids=lambda o: "-".join(map(str, o.values())))
def test_built_labels_and_kinds_are_those_of_label_and_block_kind(options, sample_corpus):
    docs = [*sample_corpus, *(make_document(p.name, p.read_text(encoding="utf-8"))
                              for p in sorted(REALWORLD.glob("*.md*")))]
    for doc in docs:
        assert_built_as_label_and_block_kind(doc, options)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_docs(), options=st.sampled_from(LABEL_CONFIGS))
def test_built_labels_and_kinds_hold_on_generated_markdown(text, options):
    assert_built_as_label_and_block_kind(make_document("gen.md", text), options)


def folded(text: str) -> str:
    return " ".join(text.casefold().replace("`", "").split())


def labels_the_long_way(doc, template: str, prefix: bool) -> list:
    """Each heading's path and provenance, a first heading that repeats the title (in any
    case, backticks aside) dropped, and the prefixes rendered from the template."""
    crumbs, title = Breadcrumbs(doc.blocks), doc.title
    made = []
    for path, provenance in zip(crumbs.paths[1:], crumbs.provenances[1:], strict=True):
        if path and folded(path[0]) == folded(title):
            path, provenance = path[1:], provenance[1:]
        full = " > ".join((title, *path))
        source = f"{title} — {' > '.join(path)}" if path else title
        embed, context = ((template.format(path=full) + "\n\n", source + "\n\n") if prefix
                          else ("", ""))
        made.append((path, provenance, embed, context))
    return made


def heading_labels(doc, config, prefix: bool) -> list:
    """``label`` and ``prefixes`` of a piece holding each heading of ``doc``."""
    builder = ChunkBuilder(doc, config, prefix=prefix, strategy=config.strategy)
    made = []
    for heading in (b for b in doc.blocks if b.kind == "heading"):
        path, provenance = builder.label(Piece(heading.start, heading.end))
        made.append((path, provenance, *builder.prefixes(path)))
    return made


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_docs(), prefix=st.booleans(),
       template=st.sampled_from(["Context: {path}", "{path}", "{{doc}} {path}"]))
@example(text="# Guide\n\n## Install\n\n# guide\n\n### Deep\n\n# Other\n\ntext\n",
         prefix=True, template="Context: {path}")
def test_heading_labels_drop_the_title_a_first_heading_repeats(text, prefix, template):
    doc = make_document("guide.md", text)
    config = make_config(strategy="ast_breadcrumb", prefix_template=template)
    assert heading_labels(doc, config, prefix) == labels_the_long_way(doc, template, prefix)


def test_a_first_heading_repeating_the_title_leaves_the_paths():
    doc = make_document("guide.md", "# Guide\n\n## Install\n\n# guide\n\n### Deep\n\n"
                        "# Other\n\ntext\n")
    labels = heading_labels(doc, make_config(strategy="ast_breadcrumb"), True)
    assert [label[0] for label in labels] == [(), ("Install",), (), ("Deep",), ("Other",)]
    assert labels[1][2:] == ("Context: Guide > Install\n\n", "Guide — Install\n\n")
