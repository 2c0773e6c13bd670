"""A heading's plain text made without the inline parser, where its only marks are backticks,
is the text the parser gives."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from chunkproof.document import inline
from chunkproof.document.inline import plain_text


def parsed(source: str) -> str:
    """``plain_text`` the long way: markdown-it's inline parser."""
    parts: list[str] = []
    inline._text_of(inline.inline_parser().parseInline(source, {}), parts)
    return " ".join("".join(parts).split())


@settings(max_examples=600, deadline=None)
@given(source=st.lists(st.sampled_from(["`", "``", " ", "a", "b", "\t", "\u00e9", "\u6570",
                                         "\u2028", "\n", "*", "x y"]), max_size=20).map("".join))
@example(source="Run `tern sync` now")
@example(source="a` b `c")
@example(source="``a ` b``")
@example(source="`unclosed and ``two``")
@example(source="`   `")
@example(source="` a`")
@example(source="``")
def test_backticks_alone_read_as_the_parser_reads_them(source):
    assert plain_text(source) == parsed(source)


def test_a_title_with_code_is_read_without_the_parser(monkeypatch):
    monkeypatch.setattr(inline, "inline_parser", None)  # a call would fail
    assert plain_text("The `tern sync` command") == "The tern sync command"
    assert plain_text("`a`` b") == "`a`` b"
