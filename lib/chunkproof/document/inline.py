"""markdown-it-py's inline parser, run only where text is read as text: heading titles, links."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference
from markdown_it.token import Token
from mdit_py_plugins.attrs.parse import ParseError, parse

_INLINE_MARKS = frozenset("*_`[]!<>&\\\n\r")
"""Characters that can start inline syntax (emphasis, code, links, html, entities, escapes) or
a line break: text holding none of them, its words single-spaced, is its own plain text."""
_BREAKS = ("softbreak", "hardbreak")
_SKIPPED = ("html_inline",)


@lru_cache(maxsize=1)
def inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


def _env(references: Mapping[str, str] | None) -> dict:
    """A parse environment resolving ``[text][label]`` against ``references`` (label -> url)."""
    if not references:
        return {}
    return {"references": {label: {"href": href, "title": ""}
                           for label, href in references.items()}}


def _text_of(tokens: Iterable[Token], parts: list[str]) -> None:
    for token in tokens:
        if token.type in ("text", "code_inline"):
            parts.append(token.content)
        elif token.type in _BREAKS:
            parts.append(" ")
        elif token.children and token.type not in _SKIPPED:
            _text_of(token.children, parts)  # an image: its alt text


def plain_text(source: str, references: Mapping[str, str] | None = None) -> str:
    """Inline Markdown as the text a reader sees: ``[npm](url)`` -> ``npm``, ``**x**`` -> ``x``,
    ``&amp;`` -> ``&``, line breaks -> one space; whitespace runs collapsed."""
    if _INLINE_MARKS.isdisjoint(source):
        joined = " ".join(source.split())
        return source if joined == source else joined  # one string where the two are equal
    parts: list[str] = []
    if _CODE_ONLY_MARKS.isdisjoint(source):  # backticks are its only marks: code spans
        _code_spans(source, parts)
    else:
        _text_of(inline_parser().parseInline(source, _env(references)), parts)
    return " ".join("".join(parts).split())


_CODE_ONLY_MARKS = (_INLINE_MARKS - {"`"}) | frozenset("\u2028\u2029")
"""What sends a text with backticks to the inline parser: any other mark, or a line separator
(which markdown-it's code span rule treats as a line end)."""
_PADDED = re.compile(r"^ (.+) $")


def _code_spans(source: str, parts: list[str]) -> None:
    """The text of ``source`` whose only inline marks are backticks, as markdown-it's code span
    rule reads it: a run of backticks opens a span closed by the next run of the same length
    (its content, one space trimmed from each end when both have one, kept as it is), and a run
    with no such closer is text (``tests/test_inline.py`` holds it to the parser)."""
    pos = 0
    while (opener := source.find("`", pos)) >= 0:
        after = opener
        while after < len(source) and source[after] == "`":
            after += 1
        closer = _closing_run(source, after, after - opener)
        if closer < 0:
            parts.append(source[pos:after])  # no closer: the backticks are text
        else:
            parts += [source[pos:opener], _PADDED.sub(r"\1", source[after:closer])]
            after = closer + (after - opener)
        pos = after
    parts.append(source[pos:])


def _closing_run(source: str, start: int, length: int) -> int:
    """Where the first run of exactly ``length`` backticks at or after ``start`` begins, or -1."""
    pos = start
    while (found := source.find("`", pos)) >= 0:
        end = found
        while end < len(source) and source[end] == "`":
            end += 1
        if end - found == length:
            return found
        pos = end
    return -1


def links(source: str, references: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """``(text, url)`` of every link in ``source``, reference-style ``[text][label]`` links
    resolved against ``references`` (a document's table of link reference definitions)."""
    found: list[tuple[str, str]] = []
    stack: list[tuple[str, list[str]]] = []
    for block in inline_parser().parse(source, _env(references)):
        for token in block.children or ():
            if token.type == "link_open":
                stack.append((str(token.attrGet("href") or ""), []))
            elif token.type == "link_close" and stack:
                href, parts = stack.pop()
                found.append((" ".join("".join(parts).split()), href))
            elif stack:
                _text_of([token], stack[-1][1])
    return found


def reference_label(label: str) -> str:
    """A link label as markdown-it keys it (case-folded, whitespace collapsed)."""
    return normalizeReference(label)


def attribute_block(raw: str) -> tuple[int, dict[str, str]] | None:
    """(where it starts, its attributes) of the ``{...}`` attribute block ending a heading's
    Markdown, read by mdit-py-plugins' attribute parser; ``{: ...}`` is read as ``{...}``."""
    if not raw.endswith("}"):
        return None
    at = raw.rfind("{")
    while at >= 0:
        body = raw[at:]
        text = "{" + body[2:] if body.startswith("{:") else body
        try:
            length, attributes = parse(text)
        except ParseError:
            length = -1
        if length == len(text) - 1:
            return at, attributes
        at = raw.rfind("{", 0, at)
    return None


def heading_title(raw: str, references: Mapping[str, str] | None = None) -> str:
    """A heading's title: its inline Markdown ``raw`` as plain text (``plain_text``), less the
    attribute block ending it (``## Custom Anchor {#my-anchor}`` -> ``Custom Anchor``): an id
    or class a site generator reads, or GitHub shows, and no word of the heading."""
    found = attribute_block(raw) if raw.endswith("}") else None
    return plain_text(raw[:found[0]] if found else raw, references)
