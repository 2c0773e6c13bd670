"""Blocks: exact offsets, kinds and heading provenance from markdown-it-py."""

from __future__ import annotations

import pytest

from chunklab.document.blocks import parse_blocks, structure_source_of

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
