"""Blocks: exact offsets, kinds and heading provenance from markdown-it-py."""

from __future__ import annotations

import pytest

from chunkproof.document import lines as lines_module
from chunkproof.document.blocks import (
    Block,
    _with_gaps,
    atomic_blocks,
    inside_block,
    parse_blocks,
    references_of,
    structure_source_of,
)
from chunkproof.document.corpus import make_document
from chunkproof.document.lines import LineIndex

TEXT = """---
title: T
---
# Atx title #

Setext title
------------

<h3>Html title</h3>

```python
# comment, not a heading
```

~~~
tilde
~~~

| a | b |
|---|---|
| 1 | 2 |

- item
- item

> quote

***
"""


def test_kinds_and_exact_offsets():
    blocks = parse_blocks(TEXT)
    kinds = [b.kind for b in blocks]
    assert kinds == ["front_matter", "heading", "heading", "heading", "fence", "fence", "table",
                     "list", "blockquote", "hr"]
    assert [TEXT[b.start : b.end] for b in blocks][:4] == [
        "---\ntitle: T\n---", "# Atx title #", "Setext title\n------------",
        "<h3>Html title</h3>",
    ]
    assert TEXT[blocks[4].start : blocks[4].end].endswith("heading\n```")


def test_heading_provenance_level_and_title():
    headings = [b for b in parse_blocks(TEXT) if b.is_heading]
    assert [(b.level, b.title, b.provenance) for b in headings] == [
        (1, "Atx title", "markdown_atx"),
        (2, "Setext title", "markdown_setext"),
        (3, "Html title", "html_heading"),
    ]
    assert structure_source_of(parse_blocks(TEXT)) == "explicit"


def test_crlf_offsets_are_exact():
    text = "# One\r\n\r\nBody line\r\nsecond\r\n\r\n## Two\r\n"
    blocks = parse_blocks(text)
    assert [text[b.start : b.end] for b in blocks] == ["# One", "Body line\r\nsecond", "## Two"]


def test_unterminated_fence_runs_to_the_end():
    text = "# T\n\n```\ncode\nmore"
    fence = parse_blocks(text)[-1]
    assert fence.kind == "fence" and text[fence.start : fence.end] == "```\ncode\nmore"


@pytest.mark.parametrize("html", ["<div>x</div>", "<h2>a</h2><p>b</p>", "<h2>\n</h2>"])
def test_html_that_is_not_a_single_heading_stays_html(html):
    assert [b.kind for b in parse_blocks(f"{html}\n")] == ["html"]


def test_log_markers_are_not_headings():
    text = "##[error]Process completed\n##[group]Run\n"
    assert not any(b.is_heading for b in parse_blocks(text))


def test_plain_text_gets_inferred_headings_only():
    text = "1. INTRODUCTION\nThe unit.\n\n# not markdown here\n"
    blocks = parse_blocks(text, False)
    assert [(b.kind, b.provenance) for b in blocks] == [
        ("heading", "inferred_numbered"), ("paragraph", ""), ("paragraph", "")]


# --- nested blocks, definitions, containers, wordless and empty blocks -------------------

NESTED = """1. Run:

   ```bash
   npm i
   ```
2. Then read [the docs][d].

   [d]: https://example.org/docs

> | a | b |
> |---|---|
> | 1 | 2 |
>
> > ```py
> > x = 1
> > ```

::: tip Note
Text.
:::

[top]: https://example.org "Top"
"""


def spans(text, blocks):
    return [(b.kind, text[b.start : b.end]) for b in blocks]


def test_containers_record_their_children_with_exact_offsets():
    env: dict = {}
    steps, quote, tip, top = parse_blocks(NESTED, env=env)
    assert [b.kind for b in steps.children] == ["item", "item"]
    assert spans(NESTED, steps.children[0].children) == [
        ("paragraph", "1. Run:"), ("fence", "   ```bash\n   npm i\n   ```")]
    assert spans(NESTED, steps.children[1].children)[1] == (
        "reference", "   [d]: https://example.org/docs")
    assert [b.kind for b in quote.children] == ["table", "blockquote"]
    assert spans(NESTED, quote.children[1].children) == [
        ("fence", "> > ```py\n> > x = 1\n> > ```")]
    assert (tip.kind, tip.title, NESTED[tip.start : tip.end]) == (
        "container", "tip Note", "::: tip Note\nText.\n:::")
    assert (top.kind, NESTED[top.start : top.end]) == (
        "reference", '[top]: https://example.org "Top"')
    assert references_of(env) == {"D": "https://example.org/docs", "TOP": "https://example.org"}
    kinds = [a.kind for a in atomic_blocks(parse_blocks(NESTED))]
    assert kinds == ["fence", "table", "fence"]


@pytest.mark.parametrize("offset_of,inside", [
    ("npm i", True),          # in a fence nested in an item
    ("2. Then", False),       # between two items
    ("> | 1 |", True),        # in a quoted table
    ("::: tip", False),       # between top-level blocks
])
def test_inside_block_sees_nested_boundaries(offset_of, inside):
    offset = NESTED.index(offset_of) + (2 if inside else 0)
    assert inside_block(parse_blocks(NESTED), offset) is inside


def test_an_unclosed_container_runs_to_the_end():
    text = "::: warning\nStill open.\n"
    (block,) = parse_blocks(text)
    assert block.kind == "container" and text[block.start : block.end] == text.strip()


@pytest.mark.parametrize("text,kind", [
    ("---\n", "hr"), ("***\n", "hr"), (":::\n", "paragraph"), ("<!-- note -->\n", "html"),
    ("#\n", "empty_heading"), ("### ###\n", "empty_heading"), ("## ![](x.png)\n", "empty_heading"),
])
def test_wordless_blocks_are_marked(text, kind):
    (block,) = parse_blocks(text)
    assert block.kind == kind and not block.content and not block.is_body
    assert not block.is_heading


@pytest.mark.parametrize("source,plain", [
    ("## Install with [npm](https://npmjs.com)", "Install with npm"),
    ("## **Bold** and _em_ &amp; `code`", "Bold and em & code"),
    ("## ![Logo](logo.png) Title <Badge text=\"beta\"/>", "Logo Title"),
    ("Two line\nsetext\n---", "Two line setext"),
    ("## Escaped \\*stars\\*", "Escaped *stars*"),
    ("## Plain words only", "Plain words only"),
])
def test_heading_titles_are_plain_text(source, plain):
    (block,) = parse_blocks(source + "\n")
    assert block.is_heading and block.title == plain
    assert block.raw_title and block.raw_title in source  # the Markdown as written


def test_a_reference_link_in_a_heading_resolves():
    text = "## See [the guide][g]\n\n[g]: https://example.org/guide\n"
    assert parse_blocks(text)[0].title == "See the guide"


@pytest.mark.parametrize("window", [40, 300, 5000])
def test_a_document_parsed_window_by_window_has_the_same_blocks(window):
    from chunkproof.document.blocks import parse_blocks as parse
    from conftest import FIXTURES, SAMPLE

    paths = sorted([*FIXTURES.rglob("*.md*"), *SAMPLE.rglob("*.md")])
    assert len(paths) > 20
    for path in paths:
        text = path.read_bytes().decode("utf-8", errors="replace")
        for infer in (False, True):
            whole = parse(text, True, infer, window=10**9)
            assert parse(text, True, infer, window=window) == whole, path.name


def test_a_definition_after_the_window_still_titles_an_earlier_heading():
    from chunkproof.document.blocks import parse_blocks as parse

    text = "# See [the guide][g]\n\n" + "Some words here.\n\n" * 30 + "[g]: https://x.test/\n"
    assert parse(text, window=50) == parse(text, window=10**9)
    assert parse(text, window=50)[0].title == parse(text, window=10**9)[0].title


def test_retitling_keeps_every_block_it_does_not_change():
    """A long document is retitled once its last window is read; a tree whose headings need
    no new title is kept as it is, not copied block by block."""
    from chunkproof.document.blocks import _retitled
    from chunkproof.document.blocks import parse_blocks as parse

    text = ("# Guide\n\n- step one\n  - [the tool][t] runs\n\n## See [the tool][t]\n\n"
            "> quoted\n\n[t]: https://x.test/\n")
    blocks = parse(text, window=10**9)
    kept = _retitled(blocks, {"T": "https://x.test/"})
    assert all(new is old for new, old in zip(kept, blocks, strict=True))
    untitled = _retitled(blocks, {})  # the link no longer resolves: only that heading changes
    changed = [new for new, old in zip(untitled, blocks, strict=True) if new is not old]
    assert [b.title for b in changed] == ["See [the tool][t]"]


@pytest.mark.parametrize("text", ["", "a", "\n", "ab\ncd\n\nef", "x\n" * 20,
                                  "abcdefg\nhij\n\n\n\nlmnopqrstuvw\nxyz\n",
                                  "crlf\r\nand cr\rlines\n\r\n", "caf\u00e9\n\u00e9t\u00e9\n"])
def test_line_index_starts_every_line_where_markdown_it_splits(text, monkeypatch):
    """Line starts found a slab at a time (slabs of 7 chars here, lines across them) are the
    ones markdown-it's newline rule gives."""
    monkeypatch.setattr(lines_module, "LINE_SLAB", 7)
    expected = [0] + [m.end() for m in lines_module._NEWLINE.finditer(text)]
    assert list(LineIndex(text).starts) == expected


def test_text_between_blocks_becomes_a_text_block_in_place():
    text = "para one\n\n  stray words  \n\npara two\ntail"
    blocks = [Block("paragraph", 0, 8), Block("paragraph", 27, 35)]
    made = _with_gaps(blocks, text)
    assert [(b.kind, b.start, b.end) for b in made] == [
        ("paragraph", 0, 8), ("text", 12, 23), ("paragraph", 27, 35), ("text", 36, 40)]
    assert text[12:23] == "stray words" and made[1].content
    assert _with_gaps(blocks[:1], "para one\n") == blocks[:1]


def test_blocks_are_frozen_records_holding_their_children():
    doc = make_document("a.md", "# T\n\n- one\n- two\n\n  text\n\n---\n\n    code\n")
    blocks = {b.kind: b for b in doc.blocks}
    assert set(blocks) == {"heading", "list", "hr", "code"}
    listed = blocks["list"]
    assert [c.kind for c in listed.children] == ["item", "item"]
    assert listed.children[1].children[1].kind == "paragraph"
    assert (blocks["hr"].content, blocks["code"].content, listed.content) == (False, True, True)
    assert hash(listed) == hash(make_document("a.md", doc.text).blocks[1])
    with pytest.raises(AttributeError):
        listed.start = 0  # type: ignore[misc]
