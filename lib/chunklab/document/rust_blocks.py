"""The same Blocks from markdown-it-pyrs (markdown-it in Rust, extra ``fast``), folded from its
node tree exactly as ``blocks.py`` folds markdown-it-py's tokens.

The Rust parser reports byte offsets; Blocks hold char offsets of whole lines, so each node's
bytes become the lines they lie on and the line index gives the chars. A document this parser
cannot read the same way is handed back (``Fallback``, its reason counted in run.json) and
parsed by markdown-it-py; ``rust_differences.py`` says where and why.

A differential test holds both parsers to the same Blocks.
"""

from __future__ import annotations

import bisect
import re
import sys
from array import array
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from markdown_it.common.utils import normalizeReference

from .blocks import (
    _WORD_CHAR,
    Block,
    _has_words,
    _retitled,
    _with_gaps,
    html_heading,
    with_final_newline,
)
from .headings import infer_heading
from .inline import plain_text
from .lines import line_ends, offset_type
from .nesting import MAX_NESTING
from .rust_differences import (
    TAB_INDENT,
    UNQUOTED_TAB,
    closed_as_code,
    cut_for_a_table,
    front_matter_may_differ,
    heads_a_table,
    holds_a_lazy_item,
    may_differ,
    runs_on,
)

_RULES = ["blockquote", "code", "fence", "heading", "hr", "lheading", "list", "paragraph",
          "reference", "html_block", "table", "front_matter"]
"""Block rules only (no inline rule: a heading's text node holds its Markdown as written)."""
_CONTAINERS = {"bullet_list": "list", "ordered_list": "list", "list_item": "item",
               "blockquote": "blockquote"}
_LEAVES = {"paragraph": "paragraph", "heading": "heading", "lheading": "heading",
           "table": "table", "fence": "fence", "code_block": "code", "hr": "hr",
           "html_block": "html", "front_matter": "front_matter", "definition": "reference"}
_PLAIN = frozenset({"paragraph", "code", "hr", "front_matter"})
"""Leaves whose Block is their kind and span alone (a top-level paragraph may also be an
inferred heading)."""
_READ_OTHERWISE = frozenset({"table", "heading", "lheading", "fence", "html_block", "definition"})
"""Nodes markdown-it-py may read otherwise (``may_differ``)."""
_TIGHT_TEXT = "text"
"""A tight list item's paragraph: markdown-it-pyrs leaves its text node in the item."""
_CONTAINER_LINE = re.compile(r"(?m)^[ \t>*+\-.)\d]*:{3,}[ \t]*\S")
"""A line that may open a ``:::`` container (over-inclusive: a false match only costs speed)."""
_LINE_BREAK = re.compile(r"\r\n?")


WINDOW = 64_000
"""Characters handed to markdown-it-pyrs at once: its node tree holds about 80 bytes per
character until it is folded into Blocks."""


class Fallback(Exception):
    """This document is parsed by markdown-it-py instead; the message says why."""


@lru_cache(maxsize=2)
def _parser(front_matter: bool = True) -> Any:
    from markdown_it_pyrs import MarkdownIt

    rules = _RULES if front_matter else [r for r in _RULES if r != "front_matter"]
    return MarkdownIt("zero").enable_many(rules)  # type: ignore[arg-type]


def available() -> bool:
    try:
        _parser()
    except ImportError:
        return False
    return True


class _Window:
    """Where a window's nodes lie: the document line holding a node's byte offset is found in
    ``starts`` (the document's own line starts when the window is ASCII text as written, so
    bytes are chars; else its own byte line starts, one array per window)."""

    def __init__(self, lines: Any, first: int, source: str, as_written: bool):
        if as_written and source.isascii():
            self.starts, self.base, self.shift = lines.starts, lines.offset(first), 0
        else:
            data = source.encode("utf-8")
            self.starts = array(offset_type(len(data)), [0])
            self.starts.extend(line_ends(data, b"\n"))
            self.base, self.shift = 0, first
        self.span = lines.span

    def lines_of(self, srcmap: tuple[int, int]) -> tuple[int, int]:
        """Document lines [first, stop) a node's bytes lie on."""
        start, end = srcmap
        base = self.base
        first = bisect.bisect_right(self.starts, base + start) - 1
        last = bisect.bisect_right(self.starts, base + (end - 1 if end > start else start)) - 1
        return first + self.shift, last + 1 + self.shift

    def place(self, srcmap: tuple[int, int]) -> tuple[int, int, int, int]:
        """``(*lines_of(srcmap), *LineIndex.span(*lines_of(srcmap)))`` in one call: the
        document lines [first, stop) of a node and their chars, trailing whitespace left out."""
        start, end = srcmap
        base, starts, shift = self.base, self.starts, self.shift
        first = bisect.bisect_right(starts, base + start) - 1 + shift
        stop = bisect.bisect_right(starts, base + (end - 1 if end > start else start)) + shift
        return (first, stop, *self.span(first, stop))


def rust_blocks(text: str, lines: Any, infer: bool, env: dict, window: int = WINDOW) -> list:
    """Top-level Blocks of Markdown ``text`` (``lines``: its LineIndex) from markdown-it-pyrs,
    ``window`` chars at a time as ``blocks.parse_blocks`` does; ``env["references"]`` gets the
    link reference definitions. Raises Fallback."""
    if ":::" in text and _CONTAINER_LINE.search(text):
        raise Fallback("container")
    if front_matter_may_differ(text):
        raise Fallback("front_matter")
    folder = _Folder(text, lines, infer, env)
    top: list = []
    windows = 0
    may_define = "]:" in text  # once: a scan of the whole text per window is quadratic
    for nodes, where in _windows(text, lines, window):
        windows += 1
        folder.where = where
        if may_define:
            folder.collect_references(nodes)
            folder.ref_map = {label: ref["href"] for label, ref in folder.references.items()}
        top += folder.fold(nodes, 0, top[-1:])
        if windows == 1 and top and top[0].kind == "front_matter" and closed_as_code(text, top[0]):
            raise Fallback("front_matter")
    if windows > 1 and folder.ref_map:  # a definition further down may name a link above
        top = _retitled(top, folder.ref_map)
    return _with_gaps(top, text)


def _windows(text: str, lines: Any, window: int) -> Iterator[tuple[list, _Window]]:
    """(top-level nodes, where they lie) window by window; every
    window holds whole top-level blocks, the next restarting at the first line of the last
    one (its end may lie further on)."""
    n_lines = len(lines.starts)
    first = 0
    while first < n_lines:
        size = window
        while True:
            stop = lines.window_stop(first, size)
            source = text[lines.offset(first) : lines.offset(stop)]
            as_written = "\r" not in source and "\0" not in source
            if not as_written:  # markdown-it's normalisation: same lines
                source = _LINE_BREAK.sub("\n", source).replace("\0", "\ufffd")
            nodes = _parser(first == 0).tree(with_final_newline(source)).children
            last = stop >= n_lines
            unclosed = first == 0 and text.startswith("---") and not (
                nodes and nodes[0].name == "front_matter")  # its end may lie further on
            if last or (len(nodes) > 1 and not unclosed):
                break
            size *= 2  # one block longer than the window: widen it
        where = _Window(lines, first, source, as_written)
        if last:
            yield nodes, where
            return
        yield nodes[:-1], where
        first = where.lines_of(nodes[-1].srcmap)[0]


class _Folder:
    def __init__(self, text: str, lines: Any, infer: bool, env: dict):
        self.text = text
        self.lines = lines
        self.where: _Window
        """The window being folded."""
        self.infer = infer
        self.references: dict[str, dict[str, str]] = env.setdefault("references", {})
        self.ref_map: dict[str, str] = {}

    def collect_references(self, nodes: Any) -> None:
        """Every link reference definition, nested ones included (the first of a label wins),
        before any heading title is read."""
        for node in nodes:
            name = node.name
            if name == "definition":
                meta = node.meta
                label = normalizeReference(meta["label"])
                self.references.setdefault(
                    label, {"title": meta.get("title") or "", "href": meta["destination"]})
            elif name in _CONTAINERS:
                self.collect_references(node.children)

    def fold(self, nodes: Any, depth: int, before: list | None = None) -> list:
        """Blocks of ``nodes`` (``before``: the block preceding them, from an earlier window)."""
        found = list(before or ())
        kept = len(found)
        self.fold_into(nodes, depth, found)
        return found[kept:]

    def fold_into(self, nodes: Any, depth: int, found: list) -> None:
        """Append the Blocks of ``nodes`` to ``found``: the fold in Python."""
        text, place = self.text, self.where.place
        infer_here = self.infer and not depth
        for node in nodes:
            name = node.name
            container = _CONTAINERS.get(name)
            if container is not None:
                if depth + 1 >= MAX_NESTING and container != "list":
                    raise Fallback("nesting")
                children: list = []
                self.fold_into(node.children, depth + 1, children)
                first, stop, start, end = place(node.srcmap)
                self.check_node(node, container, first, stop, children)
                found.append(Block(container, start, end,
                                   content=_WORD_CHAR.search(text, start, end) is not None,
                                   children=tuple(children)))
                continue
            kind = _LEAVES.get(name) or ("paragraph" if name == _TIGHT_TEXT and depth else None)
            if kind is None:
                raise Fallback(f"node {name}")
            first, stop, start, end = place(node.srcmap)
            if kind == "paragraph":
                self.check_node(node, kind, first, stop, ())
            if kind in _PLAIN and not (infer_here and kind == "paragraph"):
                found.append(Block(kind, start, end, content=_has_words(kind, text, start, end)))
                continue
            found.append(self.special(node, kind, name, depth, first, stop, start, end, found))

    def check_node(self, node: Any, kind: str, first: int, stop: int,
                   children: list | tuple) -> None:
        """Fallback when markdown-it-py may read a container or paragraph ``node`` (``kind``,
        document lines [first, stop), its Blocks ``children``) otherwise: a paragraph cut
        short where a table might start (``cut_for_a_table``), a container whose first line
        heads a table (``heads_a_table``), a list item with a tab in a line's indentation
        (``TAB_INDENT``) or a quote with one before its marks, an empty quote, or a quote
        holding a lazy line that may open a list item (``holds_a_lazy_item``). The C fold
        calls it for a quote, an item with such a tab, a first line holding a ``|``, or a
        paragraph whose line after next may be a delimiter row."""
        text, lines = self.text, self.lines
        if kind == "paragraph":
            if cut_for_a_table(text, lines, stop):
                raise Fallback("table")
            return
        if heads_a_table(text, lines, first):
            raise Fallback("table")
        tabs = TAB_INDENT if kind == "item" else UNQUOTED_TAB if kind == "blockquote" else None
        if tabs is not None and tabs.search(text, lines.offset(first), lines.offset(stop)):
            raise Fallback("tab")
        if kind == "blockquote":
            if not children:
                raise Fallback("quote")  # an empty quote: the parsers end it on other lines
            # the quote's own mark: its node starts there, after ASCII marks (bytes are chars)
            where = self.where
            column = where.base + node.srcmap[0] - where.starts[first - where.shift]
            marks = text.count(">", lines.offset(first), lines.offset(first) + column + 1)
            if holds_a_lazy_item(text, marks, children):
                raise Fallback("lazy")

    def special(self, node: Any, kind: str, name: str, depth: int, first: int, stop: int,
                start: int, end: int, found: list) -> Any:
        """The Block of a leaf that is not plain (a heading, fence, table, HTML block, or a
        top-level paragraph read for an inferred heading) on document lines [first, stop),
        chars [start, end), ``found`` the blocks before it; Fallback when markdown-it-py may
        read it otherwise."""
        block = self.leaf(node, kind, not depth, (first, stop), (start, end))
        if kind == "html" and depth and runs_on(self.text[block.start : block.end]):
            raise Fallback("html")
        if name in _READ_OTHERWISE and may_differ(self.text, self.lines, block, name, first,
                                                   found):
            raise Fallback("table")
        return block

    def leaf(self, node: Any, kind: str, top: bool, lines: tuple[int, int],
             span: tuple[int, int]) -> Any:
        """The Block of a leaf node on document ``lines`` [first, stop) (chars ``span``)."""
        start, end = span
        text = self.text
        if kind == "heading":
            kids = node.children  # inline rules are off: one text node (none when empty)
            raw = (kids[0].meta.get("content", "") if len(kids) == 1 else
                   "".join(child.meta.get("content", "") for child in kids)).strip()
            title = plain_text(raw, self.ref_map)
            provenance = "markdown_setext" if node.name == "lheading" else "markdown_atx"
            return Block("heading" if title else "empty_heading", start, end,
                         int(node.meta["level"]), title, provenance, raw, content=bool(title))
        if kind == "html" and top:
            source = text[self.lines.offset(lines[0]) : self.lines.offset(lines[1])]
            if html := html_heading(_LINE_BREAK.sub("\n", source)):
                return Block("heading", start, end, html[0], html[1], "html_heading", html[1])
        if kind == "paragraph" and top and self.infer:
            if seen := infer_heading(text[start:end], True):
                return Block("heading", start, end, seen[0], seen[1], seen[2], seen[1])
        title = sys.intern(str(node.meta.get("info", "")).strip()) if kind == "fence" else ""
        return Block(kind, start, end, title=title, content=_has_words(kind, text, start, end))
