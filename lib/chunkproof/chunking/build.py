"""Chunks from a strategy's pieces: labels, renderings and stable ids; one way to chunk."""

from __future__ import annotations

import hashlib
import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from operator import attrgetter

from ..document.anchors import heading_anchors
from ..document.blocks import ATOMIC, LEADING, Block
from ..document.corpus import Document, make_document
from ..document.links import page_fields, render_href
from ..document.sections import Breadcrumbs, section_id
from ..util.collector import collector_paused
from .config import ChunkerConfig
from .records import Chunk, Piece, StrategyFunc
from .registry import Requirement, Strategy, add, get_strategy
from .sizes import COUNT_BATCH, all_sizes


def register(
    name: str, description: str, *, prefix: bool = False, family: str = "ast",
    requires: tuple[Requirement, ...] = (),
) -> Callable[[StrategyFunc], StrategyFunc]:
    """Decorator registering a strategy function under ``name`` (``requires``: the optional
    packages it needs; without them it is listed as unavailable)."""

    def decorate(func: StrategyFunc) -> StrategyFunc:
        add(Strategy(name, func, description, prefix, family, requires))
        return func

    return decorate


@collector_paused()
def chunk_document(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    """The chunks of one document under ``config``: the one way to chunk."""
    return get_strategy(config.strategy)(doc, config)


def chunk_text(text: str, config: ChunkerConfig, *, doc_id: str = "text.md") -> list[Chunk]:
    """The chunks of one string, read as document ``doc_id`` (``.md``: Markdown, ``.txt``:
    plain text)."""
    return chunk_document(make_document(doc_id, text), config)


def chunk_corpus(corpus: Iterable[Document], config: ChunkerConfig) -> list[Chunk]:
    """Every chunk of every document of ``corpus`` under ``config``, in document order."""
    return [chunk for doc in corpus for chunk in chunk_document(doc, config)]


@lru_cache(maxsize=4096)
def normalise(text: str) -> str:
    """Casefolded words without backticks: how a heading is compared with the title (the
    sections of a document share its first heading: each is read once)."""
    return " ".join(text.casefold().replace("`", "").split())


def dedup_title(
    path: tuple[str, ...], provenance: tuple[str, ...], title: str, *, folded: str | None = None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Drop a first heading that only repeats the document title (``folded``: the title
    already normalised)."""
    if path and normalise(path[0]) == (normalise(title) if folded is None else folded):
        return path[1:], provenance[1:]
    return path, provenance


def body_of(blocks: Sequence[Block]) -> list[Block]:
    """The content blocks among ``blocks`` (``Block.is_body``)."""
    return [b for b in blocks if b.is_body]


TABLE, CODE, OTHER = 1, 2, 4
"""What a content block adds to a chunk's kind: a table, code (a fence or indented code), or
anything else."""


@lru_cache(maxsize=64)
def template_parts(template: str) -> tuple[str, str] | str:
    """A prefix template as the text before and after its ``{path}`` when it holds no other
    brace (rendered by concatenation), else as it is (rendered by ``str.format``)."""
    if template.count("{") == 1 and template.count("}") == 1:
        head, tail = template.split("{path}")
        return head, tail
    return template


_KIND_BITS = {"table": TABLE, "fence": CODE, "code": CODE}


def kind_bits(block: Block, lo: float = 0, hi: float = float("inf")) -> int:
    """What content ``block`` adds to a chunk's kind, with the fences and tables nested in it
    (``atomic_blocks``) that lie inside [lo, hi). A container adds what its content blocks
    inside [lo, hi) add (a tab holding a fence alone is code, a note's prose is prose)."""
    if block.kind == "container":
        return _container_bits(block.children, lo, hi) or OTHER
    bits = _KIND_BITS.get(block.kind, OTHER)
    if block.children and block.kind not in ATOMIC:
        bits |= _nested_bits(block.children, lo, hi)
    return bits


def _nested_bits(children: Sequence[Block], lo: float, hi: float) -> int:
    """The kind bits of the atomic blocks among ``children`` and their descendants that lie
    inside [lo, hi). Siblings are in order and do not overlap, so the walk starts at the first
    child ending at or past ``lo`` and stops at one starting past ``hi``: a chunk cut from a
    list of thousands of items reads its own items, not the whole list."""
    bits = 0
    for at in range(bisect_left(children, lo, key=_END), len(children)):
        child = children[at]
        if child.start > hi:
            break
        if child.kind in ATOMIC:
            if lo <= child.start and child.end <= hi:
                bits |= _KIND_BITS.get(child.kind, OTHER)
        elif child.children:
            bits |= _nested_bits(child.children, lo, hi)
    return bits


_END = attrgetter("end")


def _container_bits(children: Sequence[Block], lo: float, hi: float) -> int:
    """The kind bits of a container's blocks that overlap [lo, hi): a fence or table when it
    lies inside, a content block with what it holds, a wordless one with the fences and
    tables nested in it."""
    bits = 0
    for child in children:
        if child.end <= lo or child.start >= hi:
            continue
        if child.kind in ATOMIC:
            if lo <= child.start and child.end <= hi:
                bits |= _KIND_BITS.get(child.kind, OTHER)
        elif child.is_body:
            bits |= kind_bits(child, lo, hi)
        elif child.children:
            bits |= _nested_bits(child.children, lo, hi)
    return bits


def kind_named(bits: int, blocks: Sequence[Block]) -> str:
    """The kind of a chunk holding ``blocks`` whose content adds up to ``bits``."""
    if not bits:
        if any(b.is_heading for b in blocks):
            return "heading"
        return "front_matter" if any(b.kind in LEADING for b in blocks) else "prose"
    if bits & TABLE:
        return "table"
    if bits & CODE:
        return "code" if bits == CODE else "mixed"
    return "prose"


def block_kind(blocks: Sequence[Block], span: tuple[int, int] | None = None,
               content: Sequence[Block] | None = None) -> str:
    """What a chunk holding ``blocks`` (of ``span``) is: prose, code, table, mixed, heading or
    front_matter. Headings, front matter and wordless blocks lead or trail content without
    changing what it is; fences and tables nested in a list or quote (inside ``span``) count
    as the chunk's own (``content``: ``body_of(blocks)``, when already found)."""
    lo, hi = span or (0, float("inf"))
    bits = 0
    for block in body_of(blocks) if content is None else content:
        bits |= kind_bits(block, lo, hi)
    return kind_named(bits, blocks)


class ChunkBuilder:
    """Turns a document's pieces into Chunk records for one config."""

    def __init__(self, doc: Document, config: ChunkerConfig, *, prefix: bool, strategy: str):
        self.doc = doc
        self.config = config
        self.prefix = prefix
        self.strategy = strategy
        self.blocks = doc.blocks
        self.crumbs = Breadcrumbs(self.blocks)
        self.config_id = config.config_id
        self.lines = doc.lines
        self.folded_title = normalise(doc.title)
        self._template = template_parts(config.prefix_template)
        self._label: tuple[tuple, tuple[tuple[str, ...], tuple[str, ...]]] | None = None
        """The last label made, by its (path, provenance): the chunks of one section, which
        come one after another, share its tuples."""
        self._prefix: tuple[tuple[str, ...], tuple[str, str]] | None = None
        """The last path's prefixes, shared the same way."""
        self._parts: dict[tuple[int, int], str] = {}
        self._sections: list[tuple[str, str, str, str]] | None = None
        """``section_fields`` of each heading entry, made at the first chunk."""

    def blocks_in(self, start: int, end: int) -> tuple[Block, ...]:
        """The top-level blocks overlapping [start, end)."""
        return self.crumbs.overlapping(start, end)

    def content_offsets(self, start: int, end: int,
                        content: Sequence[Block] | None = None) -> tuple[int, ...]:
        """Where the content blocks inside [start, end) begin (headings, front matter and
        wordless blocks are not content: they do not label a chunk); ``content``: those
        overlapping the span, when already found."""
        inside = body_of(self.blocks_in(start, end)) if content is None else content
        found = tuple(max(b.start, start) for b in inside)
        return found or (start,)

    def section(self, piece: Piece, content: Sequence[Block] | None = None) -> int:
        """The heading entry (``Breadcrumbs.section``) of the deepest section holding the
        content of ``piece`` (``content``: the content blocks overlapping it, when found)."""
        anchors = piece.anchors or self.content_offsets(piece.start, piece.end, content)
        return self.crumbs.section(anchors)

    def section_fields(self, entry: int) -> tuple[str, str, str, str]:
        """The section id, parent section id, anchor and href of heading ``entry``'s section
        (made for every entry at the first chunk)."""
        if self._sections is None:
            self._sections = self._all_sections()
        return self._sections[entry]

    def _all_sections(self) -> list[tuple[str, str, str, str]]:
        crumbs, doc_id, config = self.crumbs, self.doc.id, self.config
        ids = [section_id(doc_id, path, start)
               for path, start in zip(crumbs.paths, crumbs.starts, strict=True)]
        linked = heading_anchors(self.blocks, config.slug_rule)
        fields = page_fields(doc_id) if config.url_template else {}
        found: list[tuple[str, str, str, str]] = []
        for entry, parent in enumerate(crumbs.parents):
            inherited = found[parent][2] if parent >= 0 else ""
            anchor = linked.get(crumbs.starts[entry], inherited) if entry else ""
            href = render_href(config.url_template, fields, anchor) if fields else ""
            found.append((ids[entry], ids[parent] if parent >= 0 else "", anchor, href))
        return found

    def label(self, piece: Piece, content: Sequence[Block] | None = None,
              entry: int | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The breadcrumb and its provenance of ``piece`` (``content``: the content blocks
        overlapping it, when already found; ``entry``: its ``section``, when found)."""
        if piece.breadcrumb is not None:
            return dedup_title(piece.breadcrumb, (), self.doc.title, folded=self.folded_title)
        if entry is None:
            entry = self.section(piece, content)
        crumbs = self.crumbs
        path, provenance = crumbs.paths[entry], crumbs.provenances[entry]
        key = (path, provenance)
        if self._label is None or self._label[0] != key:
            self._label = key, dedup_title(path, provenance, self.doc.title,
                                           folded=self.folded_title)
        path, provenance = self._label[1]
        if not crumbs.has_headings and self.config.position_anchors:
            first, last = self.lines.line_of(piece.start), self.lines.line_of(max(piece.end - 1, 0))
            path = (f"lines {first}-{last}",)
        path = (*path, *crumbs.containers(piece.start, piece.end))
        if piece.part and self.config.number_parts:
            path = (*path, f"part {piece.part[0]} of {piece.part[1]}")
        return path, provenance

    def prefixes(self, path: tuple[str, ...]) -> tuple[str, str]:
        """What precedes a chunk's text in its embed and context renderings under ``path``
        (one pair of strings for every chunk with that path)."""
        if not self.prefix:
            return "", ""
        if self._prefix is None or self._prefix[0] != path:
            self._prefix = path, self._rendered(path)
        return self._prefix[1]

    def _rendered(self, path: tuple[str, ...]) -> tuple[str, str]:
        """The embed and context prefixes of ``path`` (``prefixes``, not kept)."""
        title = self.doc.title
        joined = " > ".join(path)
        full, source = (f"{title} > {joined}", f"{title} — {joined}") if path else (title, title)
        template = self._template
        embed = (f"{template[0]}{full}{template[1]}" if isinstance(template, tuple)
                 else template.format(path=full))
        return embed + "\n\n", source + "\n\n"

    def _batches(self, pieces: Iterable[Piece]
                 ) -> Iterator[tuple[list[Piece], list[str], list[tuple[int, int, int]]]]:
        """The pieces a batch at a time, with their texts and (chars, words, tokens) measured
        together (the pieces are read a batch at a time too)."""
        text = self.doc.text
        remaining = iter(pieces)
        while batch := list(itertools.islice(remaining, COUNT_BATCH)):
            texts = [text[p.start : p.end] if p.text is None else p.text for p in batch]
            yield batch, texts, all_sizes(texts)

    def _part(self, part: tuple[int, int] | None) -> str:
        if not part:
            return ""
        if part not in self._parts:
            self._parts[part] = f"{part[0]} of {part[1]}"
        return self._parts[part]

    def chunk(self, piece: Piece, text: str, size: tuple[int, int, int], ordinal: int) -> Chunk:
        """The Chunk of ``piece`` (its ``text`` and ``size`` measured), labelled by ``label``,
        its kind by ``block_kind``."""
        start, end = piece.start, piece.end
        crumbs = self.crumbs
        first = bisect_right(crumbs.block_ends, start)
        found = self.blocks[first : bisect_left(crumbs.block_starts, end, first)]
        content = [b for n, b in enumerate(found, first) if crumbs.body[n]]
        entry = self.section(piece, content)
        path, provenance = self.label(piece, content, entry)
        embed, context = self.prefixes(path)
        config_id, doc_id, starts = self.config_id, self.doc.id, self.lines.starts
        digest = hashlib.sha256(
            f"{config_id}\0{doc_id}\0{start}\0{end}\0{text}".encode()
        ).hexdigest()[:16]
        return Chunk(  # positional, in the order of the fields: called for every chunk
            digest, doc_id, ordinal, start, end, text, path, self._part(piece.part),
            block_kind(found, (start, end), content), self.config.strategy, config_id,
            self.doc.structure_source,
            piece.text is None or text == self.doc.text[start:end],
            bisect_right(starts, start), bisect_right(starts, max(end - 1, start)),
            embed, context, piece.strategy or self.strategy, *size, provenance, self.doc.title,
            *self.section_fields(entry),
        )

    def build(self, pieces: Iterable[Piece]) -> list[Chunk]:
        """The Chunk of each piece (``chunk``). ``tests/test_chunk_records.py`` holds every
        chunk to ``label`` and ``block_kind``."""
        chunks: list[Chunk] = []
        for batch, texts, sizes in self._batches(pieces):
            chunks += map(self.chunk, batch, texts, sizes, itertools.count(len(chunks)))
        return chunks
