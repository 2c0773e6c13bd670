"""What a mined query's text may be: a heading as query text, the API symbols a heading or a
defined term names, headings that label no topic, and texts that are no query at all (file
names, URLs, a few characters)."""

from __future__ import annotations

import re
import unicodedata

from ...document.inline import inline_parser

NAVIGATIONAL = frozenset(
    {
        "overview", "introduction", "intro", "notes", "note", "see also", "summary",
        "contents", "table of contents", "toc", "examples", "example", "changelog",
        "change log", "history", "references", "related", "related pages", "related topics",
        "further reading", "next steps", "going further", "foreword", "preface", "index",
        "appendix", "about", "faq", "more information", "resources",
        "概要", "関連情報",  # Japanese: overview, related information
    }
)
"""Heading texts (casefolded words, section numbers removed) that label no topic."""
MIN_QUERY_CHARS = 4
"""A mined text shorter than this is dropped: too short to ask. Its length counts non-space
characters, a wide one (CJK) as two: two Japanese characters can be a word."""

CODE_SPAN, SIGNATURE, IDENTIFIER = "heading code span", "heading signature", "heading identifier"
"""Where in a heading a symbol was found (``symbols``)."""

_NUMBERING = re.compile(r"^\s*(?:\d+(?:\.\d+)*\.?|[A-Z]\.|[IVXLC]+\.)\s+")
_SIGNATURE = re.compile(r"(?<![\w.-])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\([^()]{0,80}\)")
"""``setStyle(style)``, ``Client.upload()``: a name called with an argument list."""
_PLAIN_SYMBOL = re.compile(
    r"(?<![\w-])--?[A-Za-z][\w-]*"  # --flag, -f
    r"|\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"  # Client.upload, tern.auth.TokenSource
    r"|\b[a-z][a-z\d]*_[a-z\d_]+\b"  # snake_case
)
_FILE_NAME = re.compile(
    r"^(?:\.{0,2}/)?(?:[\w.~-]+/)*[\w.~-]*\w\.(?:md|markdown|mdx|txt|rst|adoc|asciidoc|html?|"
    r"ipynb|pdf)$|^\.{1,2}/\S*$", re.IGNORECASE)
_URL = re.compile(r"(?:\b[a-z][a-z\d+.-]*://|\bwww\.|\bmailto:)\S", re.IGNORECASE)


def key(text: str) -> str:
    """Casefolded words only, so "Runbook: x" and "Runbook - x" are one heading."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def symbol_key(symbol: str) -> str:
    return symbol.casefold().removesuffix("()")


def heading_text(title: str) -> str:
    """A heading as query text: leading section numbers and backticks removed."""
    return " ".join(_NUMBERING.sub("", title).replace("`", "").split())


def is_navigational(title: str) -> bool:
    return key(heading_text(title)) in NAVIGATIONAL


def junk_reason(text: str) -> str | None:
    """Why ``text`` is no query (``file name``, ``URL``, ``too short``), or None."""
    stripped = text.strip()
    if _FILE_NAME.match(stripped):
        return "file name"
    if _URL.search(stripped):
        return "URL"
    if _width(stripped) < MIN_QUERY_CHARS:
        return "too short"
    return None


def _width(text: str) -> int:
    """Non-space characters of ``text``, a wide or full-width one counted as two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text if not ch.isspace())


def _inline_parts(raw: str) -> tuple[list[str], str]:
    """(code spans, the rest as plain text) of inline Markdown: link targets are dropped,
    link and emphasis text kept, by markdown-it's inline parser."""
    codes: list[str] = []
    plain: list[str] = []

    def walk(tokens) -> None:
        for token in tokens:
            if token.type == "code_inline":
                codes.append(token.content.strip())
                plain.append(" ")
            elif token.type == "text":
                plain.append(token.content)
            elif token.type in ("softbreak", "hardbreak"):
                plain.append(" ")
            elif token.children:
                walk(token.children)

    for block in inline_parser().parseInline(_NUMBERING.sub("", raw)):
        walk(block.children or ())
    return codes, "".join(plain)


def symbols(raw: str) -> list[tuple[str, str, str]]:
    """(symbol, where found, text it was found in) of the API symbols in inline Markdown
    ``raw``: code spans first, then signatures (``setStyle(style)`` gives ``setStyle()``),
    then identifier-shaped words (``--flag``, ``Client.upload``, ``snake_case``)."""
    codes, plain = _inline_parts(raw)
    found = [(code, CODE_SPAN, code) for code in codes]
    for match in _SIGNATURE.finditer(plain):
        found.append((match.group(1) + "()", SIGNATURE, match.group()))
    rest = _SIGNATURE.sub(" ", plain)
    for match in _PLAIN_SYMBOL.finditer(rest):
        parts = match.group().lstrip("-").split(".")
        if max(map(len, parts)) >= 2:
            found.append((match.group(), IDENTIFIER, match.group()))
    seen: dict[str, tuple[str, str, str]] = {}
    for item in found:
        if 2 <= len(item[0]) <= 80 and "\n" not in item[0]:
            seen.setdefault(item[0], item)
    return list(seen.values())


def heading_symbols(title: str) -> list[str]:
    """The API symbols named in a heading (``symbols``), names only."""
    return [symbol for symbol, _where, _text in symbols(title)]


def only_symbols(raw: str, found: list[tuple[str, str, str]]) -> bool:
    """Whether inline Markdown ``raw`` is nothing but the symbols ``found`` in it (and
    punctuation): it then asks for no topic beyond them."""
    _codes, rest = _inline_parts(raw)
    for _symbol, _where, text in found:
        rest = rest.replace(text, " ")
    return not re.sub(r"[\W_]+", "", rest)
