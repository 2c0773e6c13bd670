"""Heading provenance, and detectors for text whose headings are only visual: bold, numbered
and CAPS lines."""

from __future__ import annotations

import re

from .inline import inline_parser

MARKDOWN = ("markdown_atx", "markdown_setext")
"""Heading provenances of Markdown's own heading syntax (ATX ``#`` and setext underlines)."""
EXPLICIT = (*MARKDOWN, "html_heading")
"""Heading provenances that are a mark a person put in the file, not a guess from looks."""
INFERRED = ("inferred_bold_line", "inferred_numbered", "inferred_caps")
"""Heading provenances of the detectors below."""

MAX_WORDS = 8
# Emphasised warnings look like headings; their first words say what they are.
WARNING_WORDS = ("warning", "caution", "danger", "note", "important", "do not", "never", "don't")
_NUMBER = re.compile(r"(\d+(?:\.\d+)*)\.?[ \t]+(\S.*)")


def _multiline(text: str) -> bool:
    """More than one line, whatever the newline convention (CRLF, LF or a lone CR)."""
    return len(text.strip().splitlines()) > 1


def _is_title(text: str) -> bool:
    """Short, no sentence punctuation at the end, not a warning."""
    words = text.split()
    if not words or len(words) > MAX_WORDS or text.rstrip()[-1] in ".!?:;,":
        return False
    return not text.lower().startswith(WARNING_WORDS)


def bold_line(text: str) -> str | None:
    """The title of a one-line paragraph that is only bold text (``**Access requests**``)."""
    if _multiline(text):
        return None
    tokens = inline_parser().parseInline(text.strip())[0].children or []
    # The inline parser leaves empty text tokens around emphasis: they carry nothing.
    children = [t for t in tokens if t.type != "text" or t.content]
    if [c.type for c in children] != ["strong_open", "text", "strong_close"]:
        return None
    title = children[1].content.strip()
    return title if _is_title(title) else None


def numbered_line(text: str) -> tuple[int, str] | None:
    """(level, title) of a line such as ``3.1 Deadlines`` (level = count of numbers)."""
    match = _NUMBER.fullmatch(text.strip())
    if not match:
        return None
    number, title = match.groups()
    if not _is_title(title) or not title[0].isupper():
        return None
    return number.count(".") + 1, " ".join(text.split())  # the number as written: "1. SCOPE"


def caps_line(text: str) -> str | None:
    """A short ALL CAPS line with at least three letters (``SAFETY NOTICES``)."""
    line = text.strip()
    if len(line.split(None, MAX_WORDS)) > MAX_WORDS:  # no title (_is_title): a long line is
        return None                                   # not read char by char
    letters = [c for c in line if c.isalpha()]
    if len(letters) < 3 or any(c.islower() for c in letters) or line.startswith(("*", "_")):
        return None
    return line if _is_title(line) else None


def infer_heading(text: str, markdown: bool) -> tuple[int, str, str] | None:
    """(level, title, provenance) when a paragraph or line looks like a heading, else None."""
    if markdown:
        title = bold_line(text)
        return (2, title, "inferred_bold_line") if title else None
    if _multiline(text):
        return None
    numbered = numbered_line(text)
    if numbered:
        return numbered[0], numbered[1], "inferred_numbered"
    title = caps_line(text)
    return (1, title, "inferred_caps") if title else None
