"""Markdown (markdown-it-py, block level) and plain text turned into Blocks with exact offsets."""

from __future__ import annotations

import bisect
import re
from dataclasses import asdict, dataclass
from functools import lru_cache
from html.parser import HTMLParser

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from .headings import EXPLICIT, infer_heading

# markdown-it splits lines exactly where this pattern matches (its normalize rule).
_NEWLINE = re.compile(r"\r\n?|\n")

_OPENERS = {
    "paragraph_open": "paragraph",
    "table_open": "table",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "blockquote_open": "blockquote",
    "heading_open": "heading",
}
_LEAVES = {
    "fence": "fence",
    "code_block": "code",
    "hr": "hr",
    "html_block": "html",
    "front_matter": "front_matter",
}


@dataclass(frozen=True, slots=True)
class Block:
    """One top-level block of a document."""

    kind: str
    """heading, paragraph, fence, code, table, list, blockquote, html, hr or front_matter."""
    start: int
    """Char offset of the block's first character in ``Document.text``."""
    end: int
    """Char offset just past its last non-whitespace character (exclusive)."""
    level: int = 0
    """Heading depth 1-6 (0 for other blocks)."""
    title: str = ""
    """Heading text without its marks; a fence's info string."""
    provenance: str = ""
    """How a heading was found: markdown_atx, markdown_setext, html_heading or inferred_*."""

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def is_heading(self) -> bool:
        return self.kind == "heading"


class LineIndex:
    """Char offsets of line starts, so line numbers and offsets convert both ways."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def offset(self, line: int) -> int:
        """Offset of 0-based ``line``'s first char (len(text) past the last line)."""
        return self.starts[line] if line < len(self.starts) else len(self.text)

    def line_of(self, offset: int) -> int:
        """1-based line number holding ``offset``."""
        return bisect.bisect_right(self.starts, offset)

    def span(self, first: int, stop: int) -> tuple[int, int]:
        """Offsets of 0-based lines [first, stop), trailing whitespace excluded."""
        start = self.offset(first)
        end = self.offset(stop)
        while end > start and self.text[end - 1].isspace():
            end -= 1
        return start, end


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable("table").use(front_matter_plugin)
    md.disable("inline")  # block structure is all chunking needs; inline parsing doubles cost
    return md


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


def html_heading(html: str) -> tuple[int, str] | None:
    """(level, text) when an html block is a single <h1>-<h6> element."""
    parser = _HeadingText()
    parser.feed(html.strip())
    parser.close()
    text = " ".join("".join(parser.parts).split())
    stripped = html.strip().lower()
    if (
        parser.level
        and text
        and stripped.startswith("<h")
        and stripped.endswith(f"h{parser.level}>")
    ):
        return parser.level, text
    return None


def _markdown_blocks(text: str, lines: LineIndex, infer: bool) -> list[Block]:
    tokens = _markdown().parse(text)
    blocks: list[Block] = []
    for i, tok in enumerate(tokens):
        if tok.level != 0 or tok.nesting == -1 or tok.map is None:
            continue
        kind = _OPENERS.get(tok.type) or _LEAVES.get(tok.type)
        if kind is None:
            continue
        start, end = lines.span(*tok.map)
        if kind == "heading":
            provenance = "markdown_setext" if tok.markup in ("=", "-") else "markdown_atx"
            title = tokens[i + 1].content.strip()
            blocks.append(Block(kind, start, end, int(tok.tag[1]), title, provenance))
        elif kind == "html" and (html := html_heading(tok.content)):
            blocks.append(Block("heading", start, end, html[0], html[1], "html_heading"))
        elif kind == "paragraph" and infer and (seen := infer_heading(text[start:end], True)):
            blocks.append(Block("heading", start, end, seen[0], seen[1], seen[2]))
        else:
            blocks.append(
                Block(kind, start, end, title=tok.info.strip() if kind == "fence" else "")
            )
    return blocks


def _plain_text_blocks(text: str, lines: LineIndex) -> list[Block]:
    """Paragraphs separated by blank lines; a heading-like first line becomes its own block."""
    blocks: list[Block] = []
    n_lines = len(lines.starts)
    line = 0
    while line < n_lines:
        if not _line(text, lines, line).strip():
            line += 1
            continue
        first = line
        while line < n_lines and _line(text, lines, line).strip():
            line += 1
        head = infer_heading(_line(text, lines, first), False)
        next_numbered = first + 1 < line and infer_heading(_line(text, lines, first + 1), False)
        if head and not (head[2] == "inferred_numbered" and next_numbered):
            start, end = lines.span(first, first + 1)
            blocks.append(Block("heading", start, end, head[0], head[1], head[2]))
            first += 1
        if first < line:
            blocks.append(Block("paragraph", *lines.span(first, line)))
    return blocks


def _line(text: str, lines: LineIndex, line: int) -> str:
    return text[lines.offset(line) : lines.offset(line + 1)]


def parse_blocks(
    text: str, is_markdown: bool = True, infer: bool = False, *, lines: LineIndex | None = None
) -> tuple[Block, ...]:
    """The top-level blocks of ``text`` in order (a Document parses its text once and keeps
    them; pass its ``lines`` to reuse its line index)."""
    lines = lines or LineIndex(text)
    if is_markdown:
        return tuple(_markdown_blocks(text, lines, infer))
    return tuple(_plain_text_blocks(text, lines))


def structure_source_of(blocks: tuple[Block, ...]) -> str:
    """``explicit``, ``inferred``, ``mixed`` or ``none``, from the provenance of the headings."""
    kinds = {b.provenance in EXPLICIT for b in blocks if b.is_heading}
    if not kinds:
        return "none"
    if kinds == {True}:
        return "explicit"
    return "inferred" if kinds == {False} else "mixed"
