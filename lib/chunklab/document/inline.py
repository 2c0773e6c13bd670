"""markdown-it-py's inline parser, run only where text is read as text: heading titles, links."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.common.utils import normalizeReference
from markdown_it.token import Token

# Characters that can start inline syntax (emphasis, code, links, html, entities, escapes) or
# a line break: text holding none of them is its own plain text.
_INLINE_MARKS = frozenset("*_`[]!<>&\\\n\r")
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
    _text_of(inline_parser().parseInline(source, _env(references)), parts)
    return " ".join("".join(parts).split())


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
