"""The rust block parser (markdown-it-pyrs, extra ``fast``) gives the Blocks markdown-it-py
gives: every fixture, the sample corpus and generated Markdown are parsed by both."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import HealthCheck, example, given, settings

from chunklab.cli import main
from chunklab.document.corpus import decode, load_corpus, make_document
from chunklab.document.parsers import PARSER_VARIABLE, parse_blocks, parser_choice
from chunklab.errors import ConfigError
from conftest import FIXTURES, SAMPLE
from generated import line_mixes, markdown_docs

pytestmark = pytest.mark.needs("fast")

MARKDOWN = sorted(p for root in (FIXTURES, SAMPLE) for p in root.rglob("*.md"))
HANDED_BACK = {"realworld/vitepress_page.md": "container", "deep_list.md": "nesting"}
"""Fixtures the rust parser hands to python, and why: ``:::`` containers (markdown-it-pyrs has
no container rule) and a list nested to the nesting limit (``nesting.py``)."""


FALLBACKS = ("container", "nesting", "html", "table", "lazy", "tab", "quote", "front_matter")
"""Every reason the rust parser gives for handing a document back (``rust_differences.py``)."""


def parsed(text: str, parser: str, window: int | None = None) -> dict:
    """Blocks and parse environment from one parser."""
    env: dict = {}
    blocks = parse_blocks(text, env=env, parser=parser, window=window)
    refs = {label: ref["href"] for label, ref in env.get("references", {}).items()}
    return {"blocks": blocks, "references": refs, "parser": env["parser"],
            "fallback": env.get("fallback", "")}


def both(text: str) -> tuple[dict, dict]:
    """Blocks and parse environment from each parser."""
    return parsed(text, "python"), parsed(text, "rust")


def readable(path) -> str | None:
    try:
        return decode(path.read_bytes())
    except ValueError:
        return None  # a fixture of an unreadable file


def fixture_text(path) -> str:
    """The fixture's text; the test is skipped for the loader's unreadable-file fixture."""
    text = readable(path)
    if text is None:
        pytest.skip(f"{path.name} is not UTF-8 text (a loader fixture)")
    return text


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.name)
def test_every_fixture_and_sample_document_parses_the_same(path):
    text = fixture_text(path)
    python, rust = both(text)
    name = path.relative_to(FIXTURES).as_posix() if path.is_relative_to(FIXTURES) else path.name
    if name in HANDED_BACK:
        assert rust["parser"] == "python" and rust["fallback"] == HANDED_BACK[name]
        assert rust["blocks"] == python["blocks"]
        return
    assert rust["parser"] == "rust", rust["fallback"]
    assert rust["blocks"] == python["blocks"]
    assert rust["references"] == python["references"]


def test_the_sample_corpus_and_the_fixtures_need_no_other_fallback():
    fallbacks = Counter()
    for path in MARKDOWN:
        text = readable(path)
        if text is not None:
            fallbacks[make_document(path.name, text, parser="rust").fallback or "none"] += 1
    assert fallbacks == Counter({"none": fallbacks["none"], **Counter(HANDED_BACK.values())})
    assert load_corpus(SAMPLE).parsers()["fallbacks"] == {}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_docs(nested=False))
@example(text="é ü\r\n# Títle 数据\r\n\r\n- a\r\n  > b\r\n  ```py\r\n  x\r\n  ```\r\n")
@example(text="[A  b]: <ü x> 'T'\n\n# [see][a b]\n")
@example(text="# alpha\n\n- <!--\n\n  alpha\n\n")
@example(text="# alpha\n\n- ::: :::\n\n")
@example(text="alpha\n| -\n\n")
@example(text="# alpha\n\nalpha |\n---\n\n")
@example(text="> - alpha\n| a | b |\n|---|---|\n")
@example(text="~~~ |\n---\n\n")
@example(text="# alpha\n\n<!-- |\n---\n\n")
@example(text="\n\n```py\n\n```\n\n# |\n---\n\n# alpha\n\n")
@example(text="# alpha\n\n| a | b |\n|---|---|\n| 0 | v0 |\n-\n\n")
@example(text="| a | b |\n|---|---|\n| 0 | 1 |\n> q\n")
@example(text="> | a | b |\n> |---|---|\n> | 0 | 1 |\n> > q\n")
@example(text="- x\n\n  | a | b |\n  |---|---|\n  | 0 | 1 |\n  - y\n")
@example(text="1. |\n---\n\n")
@example(text="# t\n\n> a | b\n-|-\n")
@example(text="1. # t\n\n1. |\n:-:\n\ntext\n")
@example(text="[a]: <b> 'c|d'\n--|--\n")
@example(text="> x\n10. a\n---\n")
@example(text="> - x\n-\n")
def test_generated_markdown_parses_the_same(text):
    python, rust = both(text)
    if rust["parser"] == "python":  # handed back: it must say why, and be right to
        assert rust["fallback"] in FALLBACKS
        return
    assert rust["blocks"] == python["blocks"]
    assert rust["references"] == python["references"]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=line_mixes())
@example(text="-\n\tx\n")  # a tab the item's indentation takes part of
@example(text="- # h\n\tx\n")
@example(text="> [a][r]\n  \tx\n> ---\n")
@example(text="- x---\n\ntext\n")  # front matter inside a list item, to markdown-it-py
@example(text="    ---\n  ---\n  <?x\n")  # an indented opener, to markdown-it-pyrs
@example(text="---\na: 1\n    ---\n\ntext\n")  # a closer indented as code
@example(text="> >\n>\n")  # an empty quote
@example(text="> - >\n>\n> b\n")
@example(text="a\n[r]: /x\n:-:\n")  # a paragraph cut for a header without a '|'
@example(text="a | b\n   </script>\n:-:\n")
@example(text="> q\n    x\n> - \n")  # an indented lazy line in a setext heading
@example(text="> q\n   10. x\n> - \n> - ---\n")
@example(text="> ```\n> x\n>")  # no last newline
@example(text="> |a|\n> |-|\n>")
def test_mixed_lines_parse_the_same(text):
    """Lines of every kind under every opening, in any order: what block generators do not
    reach (a tab inside a list item, an empty quote, a paragraph cut by a table header)."""
    python, rust = both(text)
    if rust["parser"] == "python":
        assert rust["fallback"] in FALLBACKS
        return
    assert rust["blocks"] == python["blocks"]
    assert rust["references"] == python["references"]


def test_a_last_line_without_a_newline_is_read_like_one_with_it():
    """markdown-it-py's ``:::`` rule read past a last line left open (IndexError: the whole
    document was skipped); the parsers read the text as if it ended with a newline."""
    for text in ("# T\n\n> |a|\n> |-|\n>", "> ```\n> x\n>", "a\nb"):
        for parser in ("python", "rust"):
            assert parsed(text, parser)["blocks"] == parsed(text + "\n", parser)["blocks"]


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: p.name)
def test_the_rust_parser_window_by_window_gives_the_same_blocks(path):
    text = fixture_text(path)
    python, whole = both(text)
    for window in (40, 300):
        rust = parsed(text, "rust", window)
        assert rust["parser"] == whole["parser"]
        if rust["parser"] == "rust":
            assert rust["blocks"] == python["blocks"]
            assert rust["references"] == python["references"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_docs(nested=False))
@example(text="---\ntitle: T\nmore: x\n---\n\n# [a][r]\n\ntext\n\n[r]: https://x.org\n")
@example(text="> quote\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> q\n| a | b |\n|---|---|\n")
def test_generated_markdown_window_by_window_parses_the_same(text):
    python, _ = both(text)
    rust = parsed(text, "rust", 30)
    if rust["parser"] == "rust":
        assert rust["blocks"] == python["blocks"]
        assert rust["references"] == python["references"]


def test_the_environment_variable_picks_the_parser(monkeypatch):
    monkeypatch.setenv(PARSER_VARIABLE, "python")
    assert parser_choice() == "python"
    assert make_document("a.md", "# A\n").parser == "python"
    monkeypatch.setenv(PARSER_VARIABLE, "rust")
    assert make_document("a.md", "# A\n").parser == "rust"
    monkeypatch.delenv(PARSER_VARIABLE)
    assert parser_choice() == "rust"  # installed: chosen by itself


def test_a_bad_parser_name_is_named(monkeypatch):
    monkeypatch.setenv(PARSER_VARIABLE, "c")
    with pytest.raises(ConfigError, match="CHUNKLAB_PARSER must be one of python, rust; got 'c'"):
        parser_choice()


def test_chunk_output_is_byte_identical_between_parsers(tmp_path, monkeypatch, capsys):
    outputs = {}
    for parser in ("python", "rust"):
        monkeypatch.setenv(PARSER_VARIABLE, parser)
        out = tmp_path / f"{parser}.jsonl"
        assert main(["chunk", "--corpus", str(SAMPLE), "--strategy", "ast_breadcrumb",
                     "--out", str(out)]) == 0
        outputs[parser] = out.read_bytes()
    assert outputs["python"] == outputs["rust"]
    assert len(outputs["rust"].splitlines()) > 50
    assert load_corpus(SAMPLE).documents[0].parser == "rust"
    first = json.loads(outputs["rust"].splitlines()[0])
    assert "parser" not in first  # which parser made the blocks is in the run, not the text
