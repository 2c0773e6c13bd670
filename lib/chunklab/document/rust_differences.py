"""Where markdown-it-pyrs may read a document otherwise than markdown-it-py, so that
``rust_blocks.py`` hands it back (``Fallback``, its reason counted in run.json) to be parsed by
markdown-it-py. Each check is over-inclusive: a document handed back needlessly only costs
speed. The reasons:

- container: a ``:::`` line (markdown-it-pyrs has no container rule);
- nesting: blocks nested to ``MAX_NESTING`` (markdown-it-pyrs has no limit; the Python parse
  holds the deep region in one block);
- lazy: a quote with a lazy line (a quote mark short) that may open a list item that could not
  interrupt a paragraph (``-`` alone, ``10. a``): markdown-it-pyrs keeps it in the quote's
  paragraph, markdown-it-py ends the quote there; or an indented lazy line of a setext
  heading in a quote (the raw titles differ);
- front_matter: a first line opening with ``-`` that holds ``--`` and not only dashes
  (markdown-it-py's front matter rule may read one inside a list item: ``- x---``), or an
  indented first line opening with ``---`` (markdown-it-pyrs reads it as front matter), or
  front matter whose closing line is indented as code (markdown-it-pyrs closes it there);
- quote: an empty quote (``> >`` over ``>``: markdown-it-py carries it on over the empty
  quote line, markdown-it-pyrs does not);
- tab: a list item with a tab among a line's indentation and markers, or a quote with one
  on a line before any ``>`` (markdown-it-pyrs misplaces a block that starts past a tab the
  indentation takes only part of);
- html: a nested HTML comment (or ``<script>``, ``<?``, ...) without its end mark in its block
  (markdown-it-pyrs ends it at a blank line inside a list item);
- table: markdown-it-py tries its table rule first wherever a block may start, markdown-it-pyrs
  after its list, quote, heading, fence, HTML and definition rules: ``1. |``, ``> |``, ``# |``
  or ``~~~ |`` over ``---`` is a table to one and not to the other. So any block but a
  paragraph whose first line holds a ``|`` over a line that may be a delimiter row is handed
  back (``heads_a_table``), as is a setext heading holding a ``|``, a table whose header row
  has none, that may open another block (markdown-it-py may go on with a list item: its list
  rule does not stop for a table) or that follows a quote line (markdown-it-py reads a
  paragraph, or a lazy line of the quote), a table whose body has a row that may open
  another block (``-``, ``>``, ``#``: markdown-it-py ends the table there), and a paragraph
  cut short by a line over a delimiter-like row (markdown-it-pyrs lets a header without a
  ``|`` interrupt a paragraph).

A differential test holds both parsers to the same Blocks (``tests/test_parsers.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from markdown_it.rules_block.html_block import HTML_SEQUENCES

_LINE_PREFIX = re.compile(r"[ \t>]*")
"""Indentation and quote marks: what a table nested in a list item or quote has before a row."""
TAB_INDENT = re.compile(r"(?m)^[ >*+\-.)\d]*\t")
"""A list item's line with a tab among its indentation, quote marks and list markers:
markdown-it-pyrs misplaces a block that starts past a tab only partly taken by the item's
indentation (``-`` over a line of a tab and ``x``)."""
_CONTAINER_PREFIX = re.compile(r"(?:[ \t>]|[-*+](?=[ \t])|\d{1,9}[.)](?=[ \t]))*")
"""What opens a line before its text: indentation, quote marks and list markers."""
UNQUOTED_TAB = re.compile(r"(?m)^[ *+\-.)\d]*\t")
"""A quote's line with a tab before any quote mark (a lazy line): a tab after ``>`` is read
alike."""
_LIST_MARKER = re.compile(r"(?:[-*+]|\d{1,9}[.)])(?:[ \t\r]|$)")
"""What may open a list item after a line's prefix: a marker, then a blank or the line end."""
_DELIMITER_ROW = re.compile(r"[ \t>]*(?!-[ \t])[|:-][|:\- \t]+")
"""A line that may be a table's delimiter row past its indentation and quote marks (as
markdown-it-py's table rule reads the line after a header: ``-``, ``:`` or ``|``, then only
those and blanks, not a list item's ``- ``; over-inclusive, its columns are not counted)."""
_BLOCK_OPENER = re.compile(_LIST_MARKER.pattern +
                           r"|#{1,6}(?:[ \t\r]|$)|`{3}|~{3}|<[A-Za-z/!?]|([-*_])[ \t]*\1[ \t]*\1")
"""What may open another block after a line's prefix: a list item, heading, fence, HTML block
or rule (over-inclusive: a false match only costs speed; a cell opening with inline code,
`` `x` ``, is not one)."""
_RUN_ON_HTML = [(re.compile(opener.pattern.lstrip("^"), opener.flags), end)
                for opener, end, _ in HTML_SEQUENCES[:5]]
"""HTML blocks that run on to their end mark (a comment to ``-->``, ...): markdown-it-pyrs ends
them at a blank line inside a list item, markdown-it-py does not."""


def closed_as_code(text: str, front_matter: Any) -> bool:
    """Whether front matter's closing line is indented as code (four columns or more):
    markdown-it-pyrs closes it there, markdown-it-py reads on (a rule and a paragraph)."""
    line = text[text.rfind("\n", 0, front_matter.end) + 1 : front_matter.end].expandtabs(4)
    return len(line) - len(line.lstrip(" ")) >= 4


def front_matter_may_differ(text: str) -> bool:
    """Whether the parsers may read front matter differently on the first line: markdown-it-py's
    rule checks the document's first char for ``-``, then counts dashes from the second char
    of a block's text (``- x---`` is front matter in a list item, where markdown-it-pyrs reads
    text), and markdown-it-pyrs takes an indented ``---`` for an opener (markdown-it-py reads
    code or a rule). Over-inclusive: a first line opening with ``-``, not only dashes, with
    ``--`` one char after the start of its text or of a container's, or an indented first
    line opening with ``---``."""
    line = text.partition("\n")[0]
    if line[:1] != "-":
        return line.lstrip(" \t").startswith("---")
    if not line.strip(" \t\r-"):
        return False  # front matter's own opener, or a rule
    prefix = _CONTAINER_PREFIX.match(line).end()  # type: ignore[union-attr]
    return any(line.startswith("--", start + 1) for start in range(prefix + 1))


def runs_on(html: str) -> bool:
    """Whether an HTML block may open one that runs on to an end mark it does not hold."""
    return any(opener.search(html) and not end.search(html) for opener, end in _RUN_ON_HTML)


def _opens_a_block(header: str, body: str) -> bool:
    """Whether a line of a table's ``body`` (from the newline before its first row) may open
    another block where markdown-it-py ends the table and markdown-it-pyrs reads a row: an
    opener after the prefix its ``header`` row has, or a quote mark more or fewer."""
    marks = _LINE_PREFIX.match(header).group().count(">")  # type: ignore[union-attr]
    for line in body.split("\n")[1:]:
        prefix = _LINE_PREFIX.match(line).group()  # type: ignore[union-attr]
        if prefix.count(">") != marks or _BLOCK_OPENER.match(line, len(prefix)):
            return True
    return False


def holds_a_lazy_item(text: str, marks: int, children: list | tuple) -> bool:
    """Whether a quote (``marks`` quote marks deep, its Blocks ``children``) holds a paragraph
    line, in it or in its lists, with fewer marks that may open a list item: markdown-it-pyrs
    keeps such a lazy line in the paragraph when the item could not interrupt one (``-``
    alone, ``10. a``), markdown-it-py ends the quote there; or a setext heading's indented
    lazy line (markdown-it-py keeps its indentation in the raw title, markdown-it-pyrs does
    not)."""
    for paragraph in _paragraphs(children):  # a setext heading's text lines too
        heading = paragraph.kind != "paragraph"
        for line in text[paragraph.start : paragraph.end].splitlines()[1:]:
            prefix = _LINE_PREFIX.match(line).group()  # type: ignore[union-attr]
            if prefix.count(">") < marks and (_LIST_MARKER.match(line, len(prefix))
                                              or heading and line[:1] in (" ", "\t")):
                return True  # an indented lazy line: its heading's raw titles differ
    return False


def _paragraphs(blocks: list | tuple) -> Iterator[Any]:
    """The paragraphs and headings among ``blocks`` and in their lists, not in a nested quote
    (which is checked on its own)."""
    for block in blocks:
        if block.kind in ("paragraph", "heading", "empty_heading"):
            yield block
        elif block.kind in ("list", "item"):
            yield from _paragraphs(block.children)


def cut_for_a_table(text: str, lines: Any, stop: int) -> bool:
    """Whether a paragraph ending before document line ``stop`` was cut short by a line over
    one that may be a delimiter row: markdown-it-pyrs lets such a line interrupt a paragraph
    as a table's header even without a ``|`` (``a`` over ``[r]: /x`` over ``:-:``),
    markdown-it-py does not."""
    line = text[lines.offset(stop) : lines.offset(stop + 1)]
    if not line[_LINE_PREFIX.match(line).end() :].strip():  # type: ignore[union-attr]
        return False  # a blank line ends the paragraph in both
    return _delimiter_row_at(text, lines, stop + 1)


def _delimiter_row_at(text: str, lines: Any, line: int) -> bool:
    """Whether document ``line`` may be a table's delimiter row (``_DELIMITER_ROW``)."""
    start = lines.offset(line)
    if start >= len(text):
        return False
    return _DELIMITER_ROW.fullmatch(text[start : lines.offset(line + 1)].rstrip("\r\n")) is not None


def heads_a_table(text: str, lines: Any, first: int) -> bool:
    """Whether document line ``first`` holds a ``|`` over a line that may be a table's
    delimiter row (``_DELIMITER_ROW``): where markdown-it-py may read a table and
    markdown-it-pyrs a block its rules try before tables."""
    has_pipe = text.find("|", lines.offset(first), lines.offset(first + 1)) >= 0
    return has_pipe and _delimiter_row_at(text, lines, first + 1)


def may_differ(text: str, lines: Any, block: Any, name: str, first: int,
                before: list) -> bool:
    """Whether markdown-it-py may read this table, heading, fence, HTML block or definition
    otherwise: a table whose header row has no ``|`` or may open another block, whose body
    has a row that may open another block, or that follows a quote with no blank line, a
    setext heading holding a ``|``, or another block whose first line (document line
    ``first``) heads a table (``heads_a_table``)."""
    if name == "lheading":
        return "|" in text[block.start : block.end]
    if name != "table":
        return heads_a_table(text, lines, first)
    stop = text.find("\n", block.start, block.end)
    header = text[block.start : block.end if stop < 0 else stop]
    if "|" not in header:
        return True
    if _BLOCK_OPENER.match(header, _LINE_PREFIX.match(header).end()):  # type: ignore[union-attr]
        return True  # markdown-it-py may go on with a list item (``1. |`` after one)
    delimiter = text.find("\n", stop + 1, block.end) if stop >= 0 else -1
    if delimiter >= 0 and _opens_a_block(text[block.start : stop], text[delimiter : block.end]):
        return True  # markdown-it-py ends a table at a row that may open another block
    return bool(before) and before[-1].kind == "blockquote" and block.start - before[-1].end <= 2
