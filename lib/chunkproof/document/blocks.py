"""Markdown (markdown-it-py, block level) and plain text turned into Blocks with exact offsets:
top-level blocks, each container holding the blocks nested in it."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from html.parser import HTMLParser
from operator import attrgetter

from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

from ..util.collector import collector_paused
from ..util.frozen import quick_init
from .dialects import (
    alert_label,
    container_meta,
    limit_depth,
    use_dialects,
    use_flat_dialects,
)
from .headings import EXPLICIT, MARKDOWN, infer_heading
from .inline import heading_title
from .lines import LineIndex
from .nesting import LIMIT_KEY, limit_nesting

_CONTAINERS = {
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "list_item_open": "item",
    "blockquote_open": "blockquote",
    "container_directive_open": "container",
    "admonition_open": "container",
    "content_tab_open": "container",
    "directive_open": "container",
    "jsx_open": "container",
    "slash_block_open": "container",
    "deep_open": "deep",
}
"""Openers of blocks that hold blocks: their children are recorded."""
_WHOLE = {"paragraph_open": "paragraph", "heading_open": "heading", "table_open": "table"}
"""Openers of blocks kept whole: the tokens up to their close are skipped."""
_LEAVES = {
    "fence": "fence",
    "code_block": "code",
    "hr": "hr",
    "html_block": "html",
    "front_matter": "front_matter",
    "definition": "reference",
    "flat_opener": "text",
    "esm": "metadata",
    "directive_options": "metadata",
    "jsx": "jsx",
    "target": "target",
}
ATOMIC = frozenset({"fence", "code", "table", "jsx"})
"""Blocks that no cut may fall inside, at any depth."""
_WORDLESS = frozenset({"hr", "empty_heading", "target"})
_WORD_CHAR = re.compile(r"[^\W_]")
"""A char ``str.isalnum`` holds true for (a word char less the underscore: the same set)."""
_ALWAYS_CONTENT = frozenset({"fence", "code", "table", "front_matter", "metadata"})
_MARKUP = frozenset({"html", "jsx"})
"""Kinds whose words are those their markup shows (``shows_words``)."""
NOT_BODY = frozenset({"heading", "front_matter", "metadata"})
LEADING = frozenset({"front_matter", "metadata"})
"""Kinds that lead the content after them, as a heading does: front matter, a page's
``import``/``export`` lines, a directive's options."""
"""Kinds that are never a chunk's content, though they hold words (``Block.is_body``)."""


@quick_init
@dataclass(frozen=True, slots=True)
class Block:
    """One block of a document: a top-level block, or (in ``children``) one nested in it."""

    kind: str
    """heading, paragraph, fence, code, table, list, item, blockquote, container, html, hr,
    reference (link reference definitions), front_matter, empty_heading (a heading with no
    text: never a heading of the stack), text (text markdown-it gave no block, or a directive's
    opening line read flat), deep (what lies past the nesting limit, parsed on its own, or
    read flat further down: ``nesting.py``), metadata (MDX ``import``/``export`` lines, a
    MyST directive's options, an HTML ``<script>`` or ``<style>`` block: a VitePress page's
    code), jsx (a JSX component closed on its own lines: never cut) or target (a MyST
    ``(label)=`` line). A ``container`` is any labelled container of a documentation dialect
    (``dialect`` and ``label`` say which: ``docs/dialects.md``), a fence of a VitePress code
    group among them (``code_group_tabs``)."""
    start: int
    """Char offset of the block's first character in ``Document.text``."""
    end: int
    """Char offset just past its last non-whitespace character (exclusive)."""
    level: int = 0
    """Heading depth 1-6 (0 for other blocks)."""
    title: str = ""
    """A heading's plain text (inline Markdown rendered to text, less an attribute block
    ending it: ``inline.heading_title``); a fence's info string; a
    container's opening as written after its marker (``tip Note`` of ``::: tip Note``,
    ``note "Title"`` of ``!!! note "Title"``, ``{note}`` of ``:::{note}``, ``TabItem``)."""
    provenance: str = ""
    """How a heading was found: markdown_atx, markdown_setext, html_heading or inferred_*."""
    raw_title: str = ""
    """A heading's inline Markdown as written (code spans, links and emphasis kept)."""
    content: bool = True
    """False when it holds no word: a thematic break, an empty heading, a lone HTML comment,
    a line of ``:::``, HTML or JSX markup that shows no word (``shows_words``)."""
    children: tuple[Block, ...] = ()
    """The blocks of a list (its items), an item, a blockquote or a container, in order."""
    dialect: str = ""
    """A container's dialect: colon (``:::``), mkdocs, myst, mdx, github (an alert) or
    vitepress (a fence of a code group, shown as a tab)."""
    label: str = ""
    """What a container is called where it is shown: an admonition's title (else its name as
    a title: ``Note``), a tab's or a TabItem's label; empty for an unlabelled container."""

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def is_heading(self) -> bool:
        return self.kind == "heading"

    @property
    def is_body(self) -> bool:
        """Content a chunk is about: not a heading, front matter or a wordless block."""
        return self.content and self.kind not in NOT_BODY


_ROW_FIELDS = attrgetter("kind", "start", "end", "level", "title", "provenance", "raw_title",
                         "content", "dialect", "label")
_ROW_TAIL = (0, "", "", "", True, "", "")
"""The fields after ``kind, start, end`` of most blocks (no level, title, children or label):
their row is those three alone."""


def block_rows(blocks: Iterable[Block]) -> list:
    """``blocks`` as plain JSON rows: ``[kind, start, end]`` for a block whose other fields
    hold their defaults, else every field but ``children`` in order and then the children's
    rows; how the content cache stores a parse (``blocks_of_rows`` reads them back)."""
    rows = []
    for block in blocks:
        fields = _ROW_FIELDS(block)
        if fields[3:] == _ROW_TAIL and not block.children:
            rows.append(fields[:3])
        else:
            rows.append((*fields, block_rows(block.children)))
    return rows


def blocks_of_rows(rows: object, size: int,
                   outer: tuple[int, int] = (-1, -1)) -> tuple[Block, ...]:
    """The Blocks ``block_rows`` wrote, each row checked (field types, offsets within a text
    of ``size`` chars): TypeError or ValueError for anything that is not such a row. Made as
    a parse makes them, sharing what it shares (so they take no more memory than a parse's):
    their names one string each, a title written plainly the raw title too, and a block's
    offsets those of the block it is in (``outer``'s) where they are equal."""
    if type(rows) is not list:
        raise TypeError("expected a list of block rows")
    found = []
    for row in rows:
        if type(row) is not list or len(row) not in (3, 11):
            raise TypeError(f"not a block row: {str(row)[:80]}")
        if len(row) == 3:
            kind, start, end = row
            level, title, provenance, raw, content, dialect, label = _ROW_TAIL
            kids: object = []
        else:
            kind, start, end, level, title, provenance, raw, content, dialect, label, kids = row
        if not (type(start) is type(end) is type(level) is int and 0 <= start <= end <= size
                and type(content) is bool
                and str is type(kind) is type(title) is type(provenance) is type(raw)
                is type(dialect) is type(label)):
            raise TypeError(f"not a block row: {str(row)[:80]}")
        start = outer[0] if start == outer[0] else start
        end = outer[1] if end == outer[1] else end
        children = () if kids == [] else blocks_of_rows(kids, size, (start, end))
        found.append(Block(sys.intern(kind), start, end, level, title,
                           provenance and sys.intern(provenance), title if raw == title else raw,
                           content, children, dialect and sys.intern(dialect), label))
    return tuple(found)


def atomic_blocks(blocks: Iterable[Block]) -> list[Block]:
    """Every fence, indented code block and table, top-level or nested, in document order."""
    found: list[Block] = []
    for block in blocks:
        if block.kind in ATOMIC:
            found.append(block)
        elif block.children:
            found.extend(atomic_blocks(block.children))
    return found


def inside_block(blocks: Iterable[Block], offset: int) -> bool:
    """Whether ``offset`` falls strictly inside a block rather than between blocks at some
    depth (between two items of a list, two blocks of a quote, or two top-level blocks)."""
    for block in blocks:
        if block.start < offset < block.end:
            if not block.children:
                return True
            return inside_block(block.children, offset)
    return False


DIRECTIVE = "directive"
"""The name the ``:::`` container rule is registered under (its tokens' type prefix)."""


def _names_a_container(params: str, *_markup: str) -> bool:
    """``::: tip``, ``:::details Title``: a ``:::`` line opens a container when it names one
    (VitePress, Docusaurus); a bare ``:::`` line is text, and so is mkdocstrings'
    ``::: package.module.Name`` (a dotted name alone: what a site generator replaces with
    generated reference pages, never closed)."""
    name = params.strip()
    return bool(name) and not (" " not in name and "." in name.strip("."))


@lru_cache(maxsize=2)
def _markdown(front_matter: bool = True) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"inline_definitions": True})  # definitions become tokens
    md.enable("table")
    if front_matter:  # only where the document starts
        md.use(front_matter_plugin)
    use_dialects(md)  # before ``:::``: a ``:::{name}`` line opens a MyST directive
    md.use(container_plugin, name=DIRECTIVE, validate=_names_a_container)
    limit_depth(md, f"container_{DIRECTIVE}")
    md.disable("inline")  # block structure is all chunking needs; inline parsing doubles cost
    return limit_nesting(md, lambda: _markdown(front_matter=False), _flat_markdown)


@lru_cache(maxsize=1)
def _flat_markdown() -> MarkdownIt:
    """The parser of lines read flat (``nesting.read_flat``): CommonMark's leaf blocks and
    tables, no list, quote, indented code or container, a MyST directive's opening line one
    line of text (``dialects.use_flat_dialects``)."""
    md = MarkdownIt("commonmark", {"inline_definitions": True})
    md.enable("table")
    md.disable(["list", "blockquote", "code", "inline"])
    return use_flat_dialects(md)


WINDOW = 64_000
"""Characters handed to markdown-it at once. It holds tens of bytes per character it parses
(a token per block, five numbers per line), so a long document is parsed window by window:
each window ends at a line end and the next restarts at the first line of its last top-level
block, the only block that lines beyond the window can still change. A
deep region (``nesting.py``) lies inside one top-level block, so inside one window."""


def with_final_newline(source: str) -> str:
    """``source`` ending at a line end: the same lines and blocks to markdown-it, but a rule
    that reads the char at a line's start (the ``:::`` container's, in a table's body inside
    a quote) would read past a last line left open and raise IndexError."""
    return source if not source or source[-1] in "\n\r" else source + "\n"


def _windows(text: str, lines: LineIndex, env: dict, window: int) -> Iterator[list[Token]]:
    """The block tokens of ``text``, window by window (maps in document lines); every window
    holds whole top-level blocks."""
    n_lines = len(lines.starts)
    limits: list[int] = env.pop(LIMIT_KEY, [])  # in document lines, of the blocks kept
    first = 0
    while first < n_lines:
        size = window
        while True:
            stop = lines.window_stop(first, size)
            env.pop(LIMIT_KEY, None)  # this window's own, in its lines
            tokens = _markdown(first == 0).parse(
                with_final_newline(text[lines.offset(first):lines.offset(stop)]), env)
            reached = env.pop(LIMIT_KEY, [])
            last = stop >= n_lines
            cut = len(tokens) if last else _last_top_level(tokens)
            unclosed = first == 0 and text.startswith("---") and not (
                tokens and tokens[0].type == "front_matter")  # its end may lie further on
            if last or (cut > 0 and not unclosed):
                break
            size *= 2  # one block longer than the window: widen it
        for tok in tokens:
            if tok.map is not None:
                tok.map = [tok.map[0] + first, tok.map[1] + first]
        restart = n_lines
        if not last:
            opener = tokens[cut].map
            assert opener is not None
            restart = opener[0]
        limits += [line + first for line in reached if line + first < restart]
        if limits:
            env[LIMIT_KEY] = limits
        yield tokens[:cut]
        first = restart


def _last_top_level(tokens: list[Token]) -> int:
    """Index of the token opening the last top-level block (0: there is only one)."""
    for i in range(len(tokens) - 1, -1, -1):
        if tokens[i].level == 0 and tokens[i].nesting >= 0 and tokens[i].map is not None:
            return i
    return 0


class _HeadingText(HTMLParser):
    def __init__(self):
        super().__init__()
        self.level = 0
        self.parts: list[str] = []
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        if self.depth == 0 and len(tag) == 2 and tag[0] == "h" and tag[1] in "123456":
            self.level = int(tag[1])
        self.depth += 1

    def handle_data(self, data):
        self.parts.append(data)


_HEADING_ENDS = frozenset(f"h{level}>" for level in range(1, 7))


def html_heading(html: str) -> tuple[int, str] | None:
    """(level, text) when an html block is a single <h1>-<h6> element (one that does not
    open with ``<h`` and close with ``h1>``-``h6>`` is not read at all)."""
    stripped = html.strip()
    folded = stripped.lower()
    if not folded.startswith("<h") or folded[-3:] not in _HEADING_ENDS:
        return None
    parser = _HeadingText()
    parser.feed(stripped)
    parser.close()
    text = " ".join("".join(parser.parts).split())
    if parser.level and text and folded.endswith(f"h{parser.level}>"):
        return parser.level, text
    return None


class _TextOfMarkup(HTMLParser):
    """The text an HTML or JSX block shows between its tags (attributes are no text)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data):
        self.parts.append(data)


_INTERPOLATION = re.compile(r"\{\{.*?\}\}|\{[^{}]*\}", re.DOTALL)
"""A template's ``{{ expression }}`` (Vue) or ``{expression}`` (JSX): code, not text."""
_PAGE_CODE = re.compile(r"<(script|style)(?=[\s>]|$)", re.IGNORECASE)
"""An HTML block opening with ``<script>`` or ``<style>`` (a VitePress page's ``<script
setup>`` and ``<style module>``): the page's code, read as metadata."""


def shows_words(markup: str) -> bool:
    """Whether HTML or JSX markup shows a word: its text between tags, less template
    interpolations (``{{ count }}``), holds a word char. ``<div class="tip">``,
    ``<VPTeamMembers :members />`` and ``<pre>{{ data }}</pre>`` show none."""
    parser = _TextOfMarkup()
    try:
        parser.feed(markup)
        parser.close()
    except (AssertionError, ValueError):  # markup HTMLParser cannot read: as text
        return _WORD_CHAR.search(markup) is not None
    shown = _INTERPOLATION.sub(" ", "".join(parser.parts))
    return _WORD_CHAR.search(shown) is not None


def _has_words(kind: str, text: str, start: int, end: int) -> bool:
    if kind in _WORDLESS:
        return False
    if kind in _ALWAYS_CONTENT:
        return True
    if kind in _MARKUP:
        body = text[start:end].strip()
        if body.startswith("<!--") and body.endswith("-->"):
            return False
        return shows_words(body)
    return _WORD_CHAR.search(text, start, end) is not None


def _leaf(tokens: list[Token], i: int, kind: str, span: tuple[int, int], text: str,
          top: bool, infer: bool, references: dict[str, str]) -> Block:
    tok = tokens[i]
    start, end = span
    if kind == "heading":
        raw = tokens[i + 1].content.strip()
        title = heading_title(raw, references)
        provenance = "markdown_setext" if tok.markup in ("=", "-") else "markdown_atx"
        return Block("heading" if title else "empty_heading", start, end, int(tok.tag[1]),
                     title, provenance, raw, content=bool(title))
    if kind == "html" and top and (html := html_heading(tok.content)):
        return Block("heading", start, end, html[0], html[1], "html_heading", html[1])
    if kind == "html" and (code := _PAGE_CODE.match(text, start)):
        return Block("metadata", start, end, title=code[1].lower())
    if kind == "paragraph" and top and infer and (seen := infer_heading(text[start:end], True)):
        return Block("heading", start, end, seen[0], seen[1], seen[2], seen[1])
    title = sys.intern(tok.info.strip()) if kind == "fence" else ""  # a few, repeated
    return Block(kind, start, end, title=title, content=_has_words(kind, text, start, end))


def _container(opener: Token, kind: str, children: list[Block], text: str, lines: LineIndex,
               parent_stop: int) -> Block:
    assert opener.map is not None
    first, stop = opener.map
    if opener.type == "container_directive_open" and stop < parent_stop:
        stop += 1  # the map stops before the closing ``:::`` line
    start, end = lines.span(first, stop)
    content = _has_words(kind, text, start, end)
    if kind == "container":
        found = container_meta(opener)
        if found["name"] == CODE_GROUP:
            children = code_group_tabs(children, start, end)
        return Block(kind, start, end, title=opener.info.strip(), content=content,
                     children=tuple(children), dialect=found["dialect"], label=found["label"])
    if kind == "blockquote" and children and children[0].kind == "paragraph" and (
            label := alert_label(text[children[0].start : children[0].end])):
        return Block("container", start, end, title=f"[!{label.upper()}]", content=content,
                     children=tuple(children), dialect="github", label=label)
    return Block(kind, start, end, content=content, children=tuple(children))


CODE_GROUP = "code-group"
"""VitePress' ``::: code-group``: each fence in it a tab, labelled by the ``[label]`` ending
its info string (```` ```sh [npm] ````: ``code_group_tabs``)."""
_FENCE_LABEL = re.compile(r"\[([^\[\]]+)\]\s*$")


def code_group_tabs(children: list[Block], start: int, end: int) -> list[Block]:
    """The blocks of a code group spanning [start, end), each fence with a ``[label]`` as the
    tab it is shown as: a labelled container holding it, so a chunk of that tab carries the
    label. The first tab reaches back to the group's opening line and the last on to its
    closing ``:::``, as a container's marks go with its first and last block."""
    tabs = []
    for n, block in enumerate(children):
        found = _FENCE_LABEL.search(block.title) if block.kind == "fence" else None
        if found is None:
            tabs.append(block)
            continue
        tabs.append(Block("container", start if n == 0 else block.start,
                          end if n == len(children) - 1 else block.end, title=block.title,
                          children=(block,), dialect="vitepress", label=found[1].strip()))
    return tabs


def _markdown_blocks(text: str, lines: LineIndex, infer: bool, env: dict,
                     window: int = WINDOW) -> list[Block]:
    """The token stream folded into top-level Blocks, each container holding its children,
    window by window; headings are titled with every link definition of the document."""
    top: list[Block] = []
    windows = 0
    for tokens in _windows(text, lines, env, window):
        windows += 1
        top += _fold(tokens, text, lines, infer, references_of(env))
    if windows > 1 and references_of(env):  # a later definition may name a link above
        top = _retitled(top, references_of(env))
    return _with_gaps(top, text)


def _retitled(blocks: Iterable[Block], references: dict[str, str]) -> list[Block]:
    """Markdown headings (at any depth) whose raw title holds a link, titled again; every
    other block is kept as it is (the same object), so a tree with no such heading is not
    copied."""
    out = []
    for block in blocks:
        if block.children:
            children = _retitled(block.children, references)
            if any(new is not old for new, old in zip(children, block.children, strict=True)):
                block = replace(block, children=tuple(children))
        if block.kind == "heading" and block.provenance in MARKDOWN \
                and "[" in block.raw_title:
            title = heading_title(block.raw_title, references)
            if title != block.title:
                block = replace(block, title=title)
        out.append(block)
    return out


def _fold(tokens: list[Token], text: str, lines: LineIndex, infer: bool,
          references: dict[str, str]) -> list[Block]:
    """Block tokens of whole top-level blocks folded into Blocks."""
    top: list[Block] = []
    opened: list[tuple[Token, str, list[Block]]] = []  # containers not closed yet
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.nesting == -1:
            opener, kind, children = opened.pop()
            parent = opened[-1][0].map if opened else None
            stop = parent[1] if parent else len(lines.starts)
            block = _container(opener, kind, children, text, lines, stop)
            (opened[-1][2] if opened else top).append(block)
            i += 1
            continue
        leaf_kind = _WHOLE.get(tok.type) or _LEAVES.get(tok.type)
        if leaf_kind is None and tok.nesting == 1:
            opened.append((tok, _CONTAINERS.get(tok.type, tok.type.removesuffix("_open")), []))
        elif leaf_kind is not None and tok.map is not None:
            leaf = _leaf(tokens, i, leaf_kind, lines.span(*tok.map), text, not opened, infer,
                         references)
            (opened[-1][2] if opened else top).append(leaf)
        i += 1
        if tok.nesting == 1 and leaf_kind is not None:  # a whole block: skip to its close
            close = tok.type.removesuffix("_open") + "_close"
            while tokens[i].type != close or tokens[i].level != tok.level:
                i += 1
            i += 1
    return top


def _with_gaps(blocks: list[Block], text: str) -> list[Block]:
    """Blocks plus a ``text`` block for any non-whitespace text between them, so every
    character of the document lies in some block."""
    found = _gaps(blocks, text)
    if not found:
        return blocks
    result: list[Block] = []
    taken = 0
    for i, start, end in found:
        result += blocks[taken:i]
        result.append(Block("text", start, end, content=_has_words("text", text, start, end)))
        taken = i
    return result + blocks[taken:]


def _gaps(blocks: list[Block], text: str) -> list[tuple[int, int, int]]:
    """(i, start, end) of each run of text that is not whitespace between ``blocks`` (before
    ``blocks[i]``; i = len(blocks): after the last), trimmed of the whitespace around it."""
    found = []
    pos = 0
    for i, block in enumerate([*blocks, Block("end", len(text), len(text))]):
        gap = text[pos : block.start]
        if gap and not gap.isspace():
            found.append((i, pos + len(gap) - len(gap.lstrip()), pos + len(gap.rstrip())))
        pos = max(pos, block.end)
    return found


def _plain_text_blocks(text: str, lines: LineIndex) -> list[Block]:
    """Paragraphs separated by blank lines; a heading-like first line becomes its own block."""
    blocks: list[Block] = []
    starts = lines.starts
    texts = list(map(text.__getitem__, map(slice, starts, [*starts[1:], len(text)])))
    filled = [not line.isspace() and line != "" for line in texts]  # line.strip() != ""
    n_lines = len(texts)
    line = 0
    while line < n_lines:
        if not filled[line]:
            line += 1
            continue
        first = line
        while line < n_lines and filled[line]:
            line += 1
        head = infer_heading(texts[first], False)
        next_numbered = first + 1 < line and infer_heading(texts[first + 1], False)
        if head and not (head[2] == "inferred_numbered" and next_numbered):
            start, end = lines.span(first, first + 1)
            blocks.append(Block("heading", start, end, head[0], head[1], head[2]))
            first += 1
        if first < line:
            start, end = lines.span(first, line)
            blocks.append(Block("paragraph", start, end,
                                content=_has_words("paragraph", text, start, end)))
    return blocks


@collector_paused()
def parse_blocks(
    text: str,
    is_markdown: bool = True,
    infer: bool = False,
    *,
    lines: LineIndex | None = None,
    env: dict | None = None,
    window: int = WINDOW,
) -> tuple[Block, ...]:
    """The top-level blocks of ``text`` in order, read by markdown-it-py (a Document parses its
    text once and keeps them; pass its ``lines`` to reuse its line index). ``env`` receives
    markdown-it's parse environment: ``env["references"]`` holds the link reference
    definitions, ``env[nesting.LIMIT_KEY]`` the lines where the nesting limit was reached.
    Markdown is parsed ``window`` characters at a time (the blocks are the same for any
    window)."""
    lines = lines or LineIndex(text)
    if is_markdown:
        return tuple(_markdown_blocks(text, lines, infer, {} if env is None else env, window))
    return tuple(_plain_text_blocks(text, lines))


def references_of(env: dict) -> dict[str, str]:
    """``{label: url}`` of the link reference definitions a parse put in ``env``."""
    return {label: ref["href"] for label, ref in env.get("references", {}).items()}


def structure_source_of(blocks: tuple[Block, ...]) -> str:
    """``explicit``, ``inferred``, ``mixed`` or ``none``, from the provenance of the headings."""
    kinds = {b.provenance in EXPLICIT for b in blocks if b.kind == "heading"}  # is_heading
    if not kinds:
        return "none"
    if kinds == {True}:
        return "explicit"
    return "inferred" if kinds == {False} else "mixed"
