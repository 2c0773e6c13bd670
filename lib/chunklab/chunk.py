"""The Chunk record, its stable id, and its three renderings (embed, context, breadcrumb)."""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import asdict, dataclass, field

from .blocks import Block, line_index
from .config import ChunkerConfig
from .sections import Breadcrumbs


@dataclass(frozen=True, slots=True)
class Chunk:
    """One piece of one document, with exact provenance and the heading path above it."""

    id: str
    """Stable: sha256 of config id, document id, span and text."""
    doc_id: str
    ordinal: int
    """Position among the document's chunks for this config (0-based)."""
    start: int
    """Char offset into ``Document.text`` (inclusive)."""
    end: int
    """Char offset into ``Document.text`` (exclusive)."""
    text: str
    breadcrumb: tuple[str, ...]
    """Heading path in force for the chunk's content, document title deduplicated."""
    part: str
    """``i of n`` when a section was split into n pieces, else empty."""
    kind: str
    """prose, code, table, mixed, heading or front_matter."""
    strategy: str
    """The strategy that actually produced the chunk."""
    config_id: str
    structure_source: str
    """The document's heading provenance summary (explicit, inferred, mixed, none)."""
    verbatim: bool
    """True when ``text == Document.text[start:end]``."""
    start_line: int
    """1-based, inclusive."""
    end_line: int
    """1-based, inclusive."""
    embed_text: str
    """What an index sees: breadcrumb prefix (when the config uses one) then the text."""
    context_text: str
    """What a reader or model is handed: a source label (when used) then the text."""
    heading_provenance: tuple[str, ...] = ()
    """How each heading of the breadcrumb was found, in the same order."""
    title: str = ""

    def as_dict(self) -> dict:
        data = asdict(self)
        data["breadcrumb"] = list(self.breadcrumb)
        data["heading_provenance"] = list(self.heading_provenance)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> Chunk:
        values = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        for name in ("breadcrumb", "heading_provenance"):  # lists, or arrays from Parquet
            value = values.get(name)
            values[name] = tuple(value) if value is not None else ()
        return cls(**values)


@dataclass(slots=True)
class Piece:
    """A span a strategy chose, before it becomes a Chunk."""

    start: int
    end: int
    anchors: tuple[int, ...] = ()
    """Offsets whose common heading path labels the piece (default: where each content
    block it holds starts, clipped to the piece)."""
    text: str | None = None
    """Text when it differs from the source span (rewriting baselines)."""
    breadcrumb: tuple[str, ...] | None = None
    """A breadcrumb the strategy supplies itself (baselines with header metadata)."""
    part: tuple[int, int] | None = None
    strategy: str = ""
    extra: dict = field(default_factory=dict)


def normalise(text: str) -> str:
    return " ".join(text.casefold().replace("`", "").split())


def dedup_title(
    path: tuple[str, ...], provenance: tuple[str, ...], title: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Drop a first heading that only repeats the document title."""
    if path and normalise(path[0]) == normalise(title):
        return path[1:], provenance[1:]
    return path, provenance


def block_kind(blocks: list[Block]) -> str:
    kinds = {b.kind for b in blocks}
    body = kinds - {"heading"}
    if not body:
        return "heading" if kinds else "prose"
    if body == {"front_matter"}:
        return "front_matter"
    if "table" in body:
        return "table"
    code = body & {"fence", "code"}
    if code:
        return "code" if body == code else "mixed"
    return "prose"


class ChunkBuilder:
    """Turns a document's pieces into Chunk records for one config."""

    def __init__(self, doc, config: ChunkerConfig, *, prefix: bool, strategy: str):
        self.doc = doc
        self.config = config
        self.prefix = prefix
        self.strategy = strategy
        self.blocks = doc.blocks
        self.block_starts = [b.start for b in self.blocks]
        self.crumbs = Breadcrumbs(self.blocks)
        self.lines = line_index(doc.text)

    def blocks_in(self, start: int, end: int) -> list[Block]:
        lo = bisect.bisect_right(self.block_starts, start) - 1
        hi = bisect.bisect_left(self.block_starts, end)
        return [b for b in self.blocks[max(lo, 0) : hi] if b.end > start and b.start < end]

    def content_offsets(self, start: int, end: int) -> tuple[int, ...]:
        """Where the content (non-heading) blocks inside [start, end) begin."""
        found = tuple(max(b.start, start) for b in self.blocks_in(start, end) if not b.is_heading)
        return found or (start,)

    def label(self, piece: Piece) -> tuple[tuple[str, ...], tuple[str, ...]]:
        if piece.breadcrumb is not None:
            return dedup_title(piece.breadcrumb, (), self.doc.title)
        anchors = piece.anchors or self.content_offsets(piece.start, piece.end)
        path = self.crumbs.common(anchors)
        provenance = self.crumbs.provenance_at(anchors[0])[: len(path)]
        path, provenance = dedup_title(path, provenance, self.doc.title)
        if not self.crumbs.has_headings and self.config.position_anchors:
            first, last = self.lines.line_of(piece.start), self.lines.line_of(max(piece.end - 1, 0))
            path = (f"lines {first}-{last}",)
        if piece.part and self.config.number_parts:
            path = (*path, f"part {piece.part[0]} of {piece.part[1]}")
        return path, provenance

    def render(self, text: str, path: tuple[str, ...]) -> tuple[str, str]:
        if not self.prefix:
            return text, text
        full = " > ".join((self.doc.title, *path))
        embed = f"{self.config.prefix_template.format(path=full)}\n\n{text}"
        source = f"{self.doc.title} — {' > '.join(path)}" if path else self.doc.title
        return embed, f"{source}\n\n{text}"

    def build(self, pieces: list[Piece]) -> list:
        chunks = []
        config_id = self.config.config_id
        for ordinal, piece in enumerate(pieces):
            source = self.doc.text[piece.start : piece.end]
            text = source if piece.text is None else piece.text
            path, provenance = self.label(piece)
            embed, context = self.render(text, path)
            digest = hashlib.sha256(
                f"{config_id}\0{self.doc.id}\0{piece.start}\0{piece.end}\0{text}".encode()
            ).hexdigest()[:16]
            chunks.append(
                Chunk(
                    id=digest,
                    doc_id=self.doc.id,
                    ordinal=ordinal,
                    start=piece.start,
                    end=piece.end,
                    text=text,
                    breadcrumb=path,
                    part=f"{piece.part[0]} of {piece.part[1]}" if piece.part else "",
                    kind=block_kind(self.blocks_in(piece.start, piece.end)),
                    strategy=piece.strategy or self.strategy,
                    config_id=config_id,
                    structure_source=self.doc.structure_source,
                    verbatim=text == source,
                    start_line=self.lines.line_of(piece.start),
                    end_line=self.lines.line_of(max(piece.end - 1, piece.start)),
                    embed_text=embed,
                    context_text=context,
                    heading_provenance=provenance,
                    title=self.doc.title,
                )
            )
        return chunks
