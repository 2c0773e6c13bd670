"""Chunks from a strategy's pieces: labels, renderings and stable ids; one way to chunk."""

from __future__ import annotations

import hashlib
import itertools
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cached_property, lru_cache, reduce
from operator import attrgetter, or_

from ..document.blocks import ATOMIC, LEADING, Block
from ..document.corpus import Document, make_document
from ..document.lines import native_choice, offset_type
from ..document.sections import Breadcrumbs
from ..util.collector import collector_paused
from .config import ChunkerConfig
from .packing import TAIL_SHARE
from .records import Chunk, Piece, StrategyFunc
from .registry import Requirement, Strategy, add, get_strategy
from .sizes import COUNT_BATCH, all_sizes

try:
    from ._chunks import block_flags
    from ._chunks import build as native_build
    from ._chunks import labels as native_labels
    from ._chunks import pack as native_pack
    from ._chunks import sections as native_sections
except ImportError:  # built by the install only where a C compiler was found
    native_build = block_flags = native_labels = native_pack = native_sections = None


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
BODY, CHILDREN, HEADING, FRONT_MATTER, PARAGRAPH = 8, 16, 32, 64, 128
"""What else a block's flags say, for ``_chunks.h``: content, holding blocks, a heading,
front matter, a paragraph."""
KINDS = ("prose", "code", "table", "mixed", "heading", "front_matter")
"""The kinds of a chunk, in the order ``_build.c`` names them."""


@lru_cache(maxsize=64)
def template_parts(template: str) -> tuple[str, str] | str:
    """A prefix template as the text before and after its ``{path}`` when it holds no other
    brace (rendered by concatenation), else as it is (rendered by ``str.format``)."""
    if template.count("{") == 1 and template.count("}") == 1:
        head, tail = template.split("{path}")
        return head, tail
    return template


def use_native() -> bool:
    """Whether chunks are made in C: built by the install and not turned off by
    ``CHUNKLAB_NATIVE=python``."""
    return native_build is not None and native_choice() == "c"
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
        self.in_c = use_native()
        """Whether chunks (and sections, in chars) are made in C: read once per document."""
        self.crumbs = Breadcrumbs(self.blocks, in_c=self.in_c)
        self.config_id = config.config_id
        self.lines = doc.lines
        self.folded_title = normalise(doc.title)
        self._template = template_parts(config.prefix_template)
        self._flags: bytes | None = None
        self._labels: list[tuple[tuple[str, ...], tuple[str, ...], str, str]] | None = None
        self._label: tuple[tuple, tuple[tuple[str, ...], tuple[str, ...]]] | None = None
        """The last label made, by its (path, provenance): the chunks of one section, which
        come one after another, share its tuples."""
        self._prefix: tuple[tuple[str, ...], tuple[str, str]] | None = None
        """The last path's prefixes, shared the same way."""
        self._parts: dict[tuple[int, int], str] = {}
        self._plain_paths = self.crumbs.has_headings or not config.position_anchors
        """Whether a path is made of headings alone (not ``lines a-b``, without headings)."""

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

    def label(self, piece: Piece, content: Sequence[Block] | None = None
              ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The breadcrumb and its provenance of ``piece`` (``content``: the content blocks
        overlapping it, when already found)."""
        if piece.breadcrumb is not None:
            return dedup_title(piece.breadcrumb, (), self.doc.title, folded=self.folded_title)
        anchors = piece.anchors or self.content_offsets(piece.start, piece.end, content)
        path, provenance = self.crumbs.label(anchors)
        key = (path, provenance)
        if self._label is None or self._label[0] != key:
            self._label = key, dedup_title(path, provenance, self.doc.title,
                                           folded=self.folded_title)
        path, provenance = self._label[1]
        if not self.crumbs.has_headings and self.config.position_anchors:
            first, last = self.lines.line_of(piece.start), self.lines.line_of(max(piece.end - 1, 0))
            path = (f"lines {first}-{last}",)
        path = (*path, *self.crumbs.containers(piece.start, piece.end))
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

    def _plain(self, piece: Piece) -> bool:
        """Whether ``piece`` is labelled by the content blocks it holds and nothing else (no
        breadcrumb or anchors of its own, no line range or part number in its path): the
        chunks of the heading-aware strategies, which ``build`` labels without ``label``."""
        return (piece.breadcrumb is None and not piece.anchors and self._plain_paths
                and not (piece.part and self.config.number_parts))

    def _heading_of(self, piece: Piece, content: Sequence[Block]) -> int:
        """The heading (its number in ``crumbs``) whose path labels a plain piece holding
        ``content``: that of its first anchor (where its first content block starts, clipped
        to the piece) when its last anchor lies under the same one, else -1."""
        start, starts = piece.start, self.crumbs.starts
        head = content[0].start if content else start
        tail = content[-1].start if content else start
        at = bisect_right(starts, head if head > start else start) - 1
        return at if at == bisect_right(starts, tail if tail > start else start) - 1 else -1

    @cached_property
    def block_bits(self) -> list[int]:
        """Each block's ``kind_bits`` when it is content, else 0."""
        return [(_KIND_BITS.get(b.kind, OTHER) if not b.children else kind_bits(b))
                if is_body else 0 for b, is_body in zip(self.blocks, self.crumbs.body,
                                                        strict=True)]

    def label_at(self, at: int) -> tuple[tuple[str, ...], tuple[str, ...], str, str]:
        """Path, provenance and prefixes of a plain piece under heading ``at`` (its number in
        ``crumbs``): the path in force there, the document title deduplicated."""
        return self.labels[at]

    @property
    def labels(self) -> list[tuple[tuple[str, ...], tuple[str, ...], str, str]]:
        """``label_at`` of every heading, made once (``_made_labels``)."""
        if self._labels is None:
            self._labels = self._made_labels()
        return self._labels

    def _made_labels(self) -> list[tuple[tuple[str, ...], tuple[str, ...], str, str]]:
        """``label_at`` of every heading in one pass (``dedup_title`` inlined: a first heading
        that repeats the title, compared through ``normalise``'s cache), in C
        (``_chunks.labels``) for a template with one ``{path}`` and no other brace."""
        paths, provenances, folded = self.crumbs.paths, self.crumbs.provenances, self.folded_title
        repeated = {path[0] for path in paths if path and normalise(path[0]) == folded}
        template = self._template
        if self.in_c and (not self.prefix or isinstance(template, tuple)):
            head, tail = template if isinstance(template, tuple) else ("", "")
            return native_labels(paths, provenances, repeated, self.doc.title, head, tail,
                                 self.prefix)
        made = []
        rendered = self._rendered if self.prefix else lambda _path: ("", "")
        for path, provenance in zip(paths, provenances, strict=True):
            if path and path[0] in repeated:
                path, provenance = path[1:], provenance[1:]
            made.append((path, provenance, *rendered(path)))
        return made

    def chunk(self, piece: Piece, text: str, size: tuple[int, int, int], ordinal: int) -> Chunk:
        """The Chunk of ``piece`` (its ``text`` and ``size`` measured). A plain piece
        (``_plain``) is labelled as ``label`` would: its content blocks lie under one heading
        path unless its first and last anchors do not. Its kind adds up each content block's
        ``block_bits`` (a container the span cuts is weighed again, within the span)."""
        start, end = piece.start, piece.end
        crumbs = self.crumbs
        first = bisect_right(crumbs.block_ends, start)
        found = self.blocks[first : bisect_left(crumbs.block_starts, end, first)]
        content = [b for n, b in enumerate(found, first) if crumbs.body[n]]
        at = self._heading_of(piece, content) if self._plain(piece) else -1
        if at < 0:  # labelled by ``label``
            path, provenance = self.label(piece, content)
            embed, context = self.prefixes(path)
        else:
            path, provenance, embed, context = self.label_at(at)
            if labels := crumbs.containers(start, end):  # a piece inside a tab, a note
                path = (*path, *labels)
                embed, context = self.prefixes(path)
        bits = reduce(or_, self.block_bits[first : first + len(found)], 0)
        if found and ((found[0].start < start and found[0].children)
                      or (found[-1].end > end and found[-1].children)):
            bits = 0  # a container cut by the span: only its fences and tables inside count
            for block in content:
                bits |= kind_bits(block, start, end)
        config_id, doc_id, starts = self.config_id, self.doc.id, self.lines.starts
        digest = hashlib.sha256(
            f"{config_id}\0{doc_id}\0{start}\0{end}\0{text}".encode()
        ).hexdigest()[:16]
        return Chunk(  # positional, in the order of the fields: called for every chunk
            digest, doc_id, ordinal, start, end, text, path, self._part(piece.part),
            kind_named(bits, found), self.config.strategy, config_id,
            self.doc.structure_source,
            piece.text is None or text == self.doc.text[start:end],
            bisect_right(starts, start), bisect_right(starts, max(end - 1, start)),
            embed, context, piece.strategy or self.strategy, *size, provenance, self.doc.title,
        )

    @property
    def flags(self) -> bytes:
        """Each block's flags for the C code (``block_flags`` in ``_labels.c``: kind bits, BODY,
        CHILDREN, HEADING, FRONT_MATTER, PARAGRAPH), made once."""
        if self._flags is None:
            self._flags = block_flags(self.blocks)
        return self._flags

    def fitted_sections(self) -> Iterator[Piece | tuple[int, int]]:
        """``packing.sections`` in C, sized in chars (``_chunks.sections``, ``COUNT_BATCH``
        sections at a time): the Piece of each section within the size, the (first, stop)
        numbers of the blocks of any other."""
        crumbs, start = self.crumbs, 0
        while start < len(self.blocks):
            found, start = native_sections(Piece, self.flags, crumbs.block_starts,
                                           crumbs.block_ends, self.config.size, start,
                                           COUNT_BATCH)
            yield from found

    def packed(self, first: int, stop: int) -> list[Piece] | None:
        """``packed_pieces`` of the section of blocks [first, stop) in C (``_chunks.pack``),
        sized in chars without overlap, when every glued group fits; else None."""
        config, crumbs = self.config, self.crumbs
        if config.overlap:
            return None
        return native_pack(Piece, self.flags, crumbs.block_starts, crumbs.block_ends, first,
                           stop, config.size, config.table_caption, config.caption_max_chars,
                           TAIL_SHARE)

    def native_table(self) -> tuple:
        """What ``_chunks.build`` reads of this document and config (its argument order)."""
        flags = self.flags
        crumbs, doc, config = self.crumbs, self.doc, self.config
        heading_starts = array(offset_type(len(doc.text)), crumbs.starts)
        seed = hashlib.sha256(f"{self.config_id}\0{doc.id}\0".encode())
        return (Chunk, Piece, seed, crumbs.block_starts,
                crumbs.block_ends, heading_starts, self.lines.starts, flags, self._plain_paths,
                config.number_parts, KINDS, doc.id, config.strategy, self.config_id,
                doc.structure_source, self.strategy, doc.title, self.labels,
                self._part, self.chunk)

    def build(self, pieces: Iterable[Piece]) -> list[Chunk]:
        """The Chunk of each piece (``chunk``), made in C (``_build.c``) unless
        ``native_choice()`` says python: C makes those of plain pieces and hands the others
        to ``chunk``. ``tests/test_chunk_records.py`` holds every chunk to ``label`` and
        ``block_kind``, and the chunks made in C to those made in Python."""
        chunks: list[Chunk] = []
        table = self.native_table() if self.in_c and not self.crumbs.labelled else None
        for batch, texts, sizes in self._batches(pieces):
            if table is not None:
                native_build(table, batch, texts, sizes, chunks, len(chunks))
            else:
                chunks += map(self.chunk, batch, texts, sizes, itertools.count(len(chunks)))
        return chunks
