"""Corpus text placed in Markdown output renders as text, in both renderers that read it:
markdown-it (CommonMark) and nbconvert's, which turns notebook Markdown into report HTML."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from chunkproof.util.markdown import markdown_block, markdown_code
from hostile import carriers

NAMES = [*carriers("x"), "a `tick` and ``two``", "`leading", "trailing`", "```fence```"]


def renderers():
    nbconvert = pytest.importorskip("nbconvert.filters.markdown_mistune")
    return [MarkdownIt("commonmark").render, nbconvert.markdown2html_mistune]


@pytest.mark.parametrize("name", NAMES)
def test_a_name_in_a_code_span_is_its_text(name):
    for render in renderers():
        rendered = render(f"documents ({markdown_code(name)}, b.md)")
        assert rendered.count("<code>") == 1, rendered
        assert "<img" not in rendered and "<svg" not in rendered and "<script" not in rendered
        assert 'href="javascript' not in rendered


def test_raw_names_would_be_html_so_the_case_is_real():
    for render in renderers():
        assert "<img" in render(f"documents ({carriers('x')[0]}.md)")


def test_a_snippet_holding_a_fence_stays_in_its_block():
    snippet = "- text: a fence holding ```\n  line: 3\n- text: <script>x</script>"
    for render in renderers():
        rendered = render(markdown_block(snippet, "yaml") + "\n\nafter")
        assert rendered.count("<pre>") == 1 and "<script" not in rendered, rendered
        assert "<p>after</p>" in rendered
