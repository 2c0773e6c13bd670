"""Chunks from a strategy's pieces: labels, renderings and stable ids; one way to chunk."""

from __future__ import annotations

import hashlib
import itertools
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache, reduce
from operator import or_

from ..document.blocks import Block, atomic_blocks
from ..document.corpus import Document, make_document
from ..document.sections import Breadcrumbs
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
_KIND_BITS = {"table": TABLE, "fence": CODE, "code": CODE}


def kind_bits(block: Block, lo: float = 0, hi: float = float("inf")) -> int:
    """What content ``block`` adds to a chunk's kind, with the fences and tables nested in it
    that lie inside [lo, hi)."""
    bits = _KIND_BITS.get(block.kind, OTHER)
    if block.children:
        for atom in atomic_blocks([block]):
            if lo <= atom.start and atom.end <= hi:
                bits |= _KIND_BITS.get(atom.kind, OTHER)
    return bits


def kind_named(bits: int, blocks: Sequence[Block]) -> str:
    """The kind of a chunk holding ``blocks`` whose content adds up to ``bits``."""
    if not bits:
        if any(b.is_heading for b in blocks):
            return "heading"
        return "front_matter" if any(b.kind == "front_matter" for b in blocks) else "prose"
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
        self.lines = doc.lines
        self.folded_title = normalise(doc.title)
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
        if piece.part and self.config.number_parts:
            path = (*path, f"part {piece.part[0]} of {piece.part[1]}")
        return path, provenance

    def prefixes(self, path: tuple[str, ...]) -> tuple[str, str]:
        """What precedes a chunk's text in its embed and context renderings under ``path``
        (one pair of strings for every chunk with that path)."""
        if not self.prefix:
            return "", ""
        if self._prefix is None or self._prefix[0] != path:
            full = " > ".join((self.doc.title, *path))
            source = f"{self.doc.title} — {' > '.join(path)}" if path else self.doc.title
            self._prefix = path, (f"{self.config.prefix_template.format(path=full)}\n\n",
                                  f"{source}\n\n")
        return self._prefix[1]

    def _sized(self, pieces: Iterable[Piece]
               ) -> Iterator[tuple[Piece, str, tuple[int, int, int]]]:
        """Each piece, its text and (chars, words, tokens), measured a batch at a time (the
        pieces are read a batch at a time too)."""
        text = self.doc.text
        remaining = iter(pieces)
        while batch := list(itertools.islice(remaining, COUNT_BATCH)):
            texts = [text[p.start : p.end] if p.text is None else p.text for p in batch]
            yield from zip(batch, texts, all_sizes(texts), strict=True)

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

    def build(self, pieces: Iterable[Piece]) -> list[Chunk]:
        """The Chunk of each piece. A plain piece (``_plain``) is labelled here as ``label``
        would: its content blocks lie under one heading path unless its first and last
        anchors do not, and a section's chunks, one after another, share that path's label
        and prefixes. Its kind adds up each content block's ``kind_bits``, made once per
        document (a container the span cuts is weighed again, within the span).
        ``tests/test_chunk_records.py`` holds every chunk to ``label`` and ``block_kind``."""
        chunks: list[Chunk] = []
        config_id = self.config.config_id
        doc_text, doc_id, title = self.doc.text, self.doc.id, self.doc.title
        strategy, structure_source = self.config.strategy, self.doc.structure_source
        crumbs = self.crumbs
        blocks, body = crumbs.blocks, crumbs.body
        block_bits = [(_KIND_BITS.get(b.kind, OTHER) if not b.children else kind_bits(b))
                      if is_body else 0 for b, is_body in zip(blocks, body, strict=True)]
        block_starts, block_ends = crumbs.block_starts, crumbs.block_ends
        line_starts = self.lines.starts
        shown: tuple[int, tuple, tuple, str, str] = (-1, (), (), "", "")  # the last label
        for ordinal, (piece, text, size) in enumerate(self._sized(pieces)):
            start, end = piece.start, piece.end
            first = bisect_right(block_ends, start)
            found = blocks[first : bisect_left(block_starts, end, first)]
            content = [b for n, b in enumerate(found, first) if body[n]]
            at = self._heading_of(piece, content) if self._plain(piece) else -1
            if at < 0:  # labelled by ``label``
                path, provenance = self.label(piece, content)
                embed, context = self.prefixes(path)
            else:
                if at != shown[0]:
                    path, provenance = dedup_title(crumbs.paths[at], crumbs.provenances[at],
                                                   title, folded=self.folded_title)
                    shown = (at, path, provenance, *self.prefixes(path))
                _, path, provenance, embed, context = shown
            bits = reduce(or_, block_bits[first : first + len(found)], 0)
            if found and ((found[0].start < start and found[0].children)
                          or (found[-1].end > end and found[-1].children)):
                bits = 0  # a container cut by the span: only its fences and tables inside count
                for block in content:
                    bits |= kind_bits(block, start, end)
            digest = hashlib.sha256(
                f"{config_id}\0{doc_id}\0{start}\0{end}\0{text}".encode()
            ).hexdigest()[:16]
            chunks.append(Chunk(  # positional, in the order of the fields: a hot loop
                digest, doc_id, ordinal, start, end, text, path, self._part(piece.part),
                kind_named(bits, found), strategy, config_id,
                structure_source, piece.text is None or text == doc_text[start:end],
                bisect_right(line_starts, start), bisect_right(line_starts, max(end - 1, start)),
                embed, context, piece.strategy or self.strategy, *size, provenance, title,
            ))
        return chunks
