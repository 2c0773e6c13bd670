"""Heading anchors as each site generator makes them: its slug of a heading's text, its suffix
for a repeated heading, and the explicit ``{#id}`` it honours."""

from __future__ import annotations

import pytest

from chunkproof import chunk_document, make_config, make_document
from chunkproof.document.anchors import (
    SLUG_RULES,
    explicit_id,
    github_slug,
    heading_anchors,
    mkdocs_slug,
    vitepress_slug,
)
from chunkproof.document.blocks import parse_blocks


@pytest.mark.parametrize("text,slug", [
    ("Hello World", "hello-world"),
    ("Install with pip", "install-with-pip"),
    ("A heading - with a dash", "a-heading---with-a-dash"),  # each space becomes a hyphen
    ("snake_case options", "snake_case-options"),  # the underscore is kept
    ("Client.whoami(token)", "clientwhoamitoken"),  # punctuation dropped, not replaced
    ("It’s done", "its-done"),
    ("We ♥ docs", "we--docs"),  # a symbol is dropped, the spaces around it stay
    ("Grüße und 你好", "grüße-und-你好"),  # letters of any script are kept
    ("v2.0 (beta)", "v20-beta"),
])
def test_github_slugs(text, slug):
    assert github_slug(text) == slug


@pytest.mark.parametrize("text,slug", [
    ("Hello World", "hello-world"),
    ("Über uns", "uber-uns"),  # decomposed, then reduced to ASCII
    ("A -- B", "a-b"),  # runs of hyphens and spaces become one separator
    ("snake_case options", "snake_case-options"),
    ("Client.whoami(token)", "clientwhoamitoken"),
    ("  Padded title  ", "padded-title"),
    ("你好", ""),  # nothing ASCII is left: the unique step names it
])
def test_mkdocs_slugs(text, slug):
    assert mkdocs_slug(text) == slug


@pytest.mark.parametrize("text,slug", [
    ("Hello World", "hello-world"),
    ("Лед üäöß", "лед-uaoß"),  # accents removed, other letters kept
    ("hambúrguer", "hamburguer"),
    ("Client.whoami(token)", "client-whoami-token"),  # punctuation runs become one hyphen
    ("snake_case options", "snake-case-options"),  # the underscore is a separator too
    ("2.0 release", "_2-0-release"),  # an id never starts with a digit
    ("¼", "_1⁄4"),
    ("--Edges--", "edges"),
])
def test_vitepress_slugs(text, slug):
    assert vitepress_slug(text) == slug


def anchors(text: str, rule: str) -> list[str]:
    """The anchor of each heading of ``text`` under ``rule``, in document order."""
    found = heading_anchors(parse_blocks(text), rule)
    return [found[start] for start in sorted(found)]


REPEATED = "# Setup\n\n## Setup\n\ntext\n\n## Setup\n\nmore\n"


@pytest.mark.parametrize("rule,expected", [
    ("github", ["setup", "setup-1", "setup-2"]),
    ("docusaurus", ["setup", "setup-1", "setup-2"]),
    ("vitepress", ["setup", "setup-1", "setup-2"]),
    ("mkdocs", ["setup", "setup_1", "setup_2"]),  # Python-Markdown's toc appends _1, _2
])
def test_a_repeated_heading_gets_the_generators_suffix(rule, expected):
    assert anchors(REPEATED, rule) == expected


def test_github_counts_a_slug_taken_by_a_suffix():
    # github-slugger counts occurrences per slug: a heading whose own slug is an earlier
    # heading's suffixed one is suffixed again.
    text = "## alpha\n\n## alpha\n\n## alpha 1\n\n## alpha-1\n\n## alpha\n"
    assert anchors(text, "github") == ["alpha", "alpha-1", "alpha-1-1", "alpha-1-2", "alpha-2"]


def test_mkdocs_counts_up_a_numbered_slug():
    text = "## alpha\n\n## alpha\n\n## alpha_1\n"
    assert anchors(text, "mkdocs") == ["alpha", "alpha_1", "alpha_2"]


def test_mkdocs_names_an_empty_slug():
    assert anchors("## 你好\n\n## 再见\n", "mkdocs") == ["_1", "_2"]


def test_headings_nested_in_lists_and_quotes_count_for_the_suffix():
    text = "## Notes\n\n- item\n\n  ## Notes\n\n> ## Notes\n"
    assert anchors(text, "github") == ["notes", "notes-1", "notes-2"]


def test_a_heading_in_a_fence_is_no_heading():
    assert anchors("## Run\n\n```\n## Run\n```\n\n## Run\n", "github") == ["run", "run-1"]


@pytest.mark.parametrize("raw,found", [
    ("Hello World {#my-explicit-id}", "my-explicit-id"),
    ("Custom anchors {#custom .wide}", "custom"),
    ("Options {: #opts }", "opts"),  # Python-Markdown's attr_list spelling
    ("Braces in `code {#x}`", None),
    ("No id {.only-a-class}", None),
    ("Plain title", None),
])
def test_explicit_ids_are_read_from_the_attribute_block(raw, found):
    assert explicit_id(raw) == found


EXPLICIT = "## Hello World {#greeting}\n\n## Greeting\n\n## Hello World\n"


@pytest.mark.parametrize("rule,expected", [
    ("docusaurus", ["greeting", "greeting", "hello-world"]),  # an explicit id is not counted
    ("vitepress", ["greeting", "greeting-1", "hello-world"]),
    ("mkdocs", ["greeting", "greeting_1", "hello-world"]),
    ("github", ["hello-world-greeting", "greeting", "hello-world"]),  # GitHub has no {#id}
])
def test_explicit_ids_are_honoured_where_the_generator_reads_them(rule, expected):
    assert anchors(EXPLICIT, rule) == expected


@pytest.mark.parametrize("rule,anchor", [
    ("github", "custom-anchor-my-anchor"), ("mkdocs", "my-anchor"), ("vitepress", "my-anchor"),
    ("docusaurus", "my-anchor")])
def test_an_attribute_block_sets_the_anchor_and_stays_out_of_the_breadcrumb(rule, anchor):
    text = "# Guide\n\n## Custom Anchor {#my-anchor}\n\nWords under it.\n"
    doc = make_document("g.md", text)
    config = make_config(strategy="ast_breadcrumb", size=40, slug_rule=rule)
    chunk = next(c for c in chunk_document(doc, config) if "Words under it" in c.text)
    assert chunk.anchor == anchor
    assert chunk.breadcrumb[-1] == "Custom Anchor"
    assert "{#" not in chunk.embed_prefix + chunk.context_prefix


def test_mkdocs_reserves_explicit_ids_before_generating():
    # Python-Markdown collects every id already set before it makes one from a title.
    text = "## Greeting\n\n## Hello {#greeting}\n"
    assert anchors(text, "mkdocs") == ["greeting_1", "greeting"]


def test_the_anchor_is_made_from_the_text_a_reader_sees():
    text = "## Install **fast** with [pip](https://pip.pypa.io) and `uv`\n"
    for rule, slug in [("github", "install-fast-with-pip-and-uv"),
                       ("mkdocs", "install-fast-with-pip-and-uv"),
                       ("vitepress", "install-fast-with-pip-and-uv")]:
        assert anchors(text, rule) == [slug]


def test_headings_no_generator_gives_an_id_have_no_anchor():
    # An HTML <h2> block is passed through as it is; a bold line is a paragraph.
    blocks = parse_blocks("<h2>Raw</h2>\n\n**Bold line**\n\n## Real\n", infer=True)
    found = heading_anchors(blocks, "github")
    assert list(found.values()) == ["real"]
    assert sum(b.is_heading for b in blocks) == 3


def test_every_rule_is_listed():
    assert set(SLUG_RULES) == {"github", "mkdocs", "vitepress", "docusaurus"}
