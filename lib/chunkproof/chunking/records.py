"""The records chunking produces: a Chunk (one piece with exact provenance) and a Piece (a span
a strategy chose, before it becomes a Chunk)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeAlias

from ..util.frozen import quick_init

if TYPE_CHECKING:
    from ..document.corpus import Document
    from .config import ChunkerConfig


@quick_init
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
    """The config's strategy (for ``structure_routed``, that name, whatever it applied)."""
    config_id: str
    structure_source: str
    """The document's heading provenance summary (explicit, inferred, mixed, none)."""
    verbatim: bool
    """True when ``text == Document.text[start:end]``."""
    start_line: int
    """1-based, inclusive."""
    end_line: int
    """1-based, inclusive."""
    embed_prefix: str
    """What precedes ``text`` in ``embed_text``: the breadcrumb prefix, when the config uses
    one (shared by the chunks of one section), else empty."""
    context_prefix: str
    """What precedes ``text`` in ``context_text``: the source label, when used, else empty."""
    applied_strategy: str
    """The strategy that actually produced the chunk (``structure_routed`` applies another)."""
    n_chars: int
    """Size of ``text`` in chars."""
    n_words: int
    """Size of ``text`` in whitespace-separated words."""
    n_tokens: int
    """Size of ``text`` in tokens of the encoder's tokenizer (no [CLS]/[SEP]; words x 1.3,
    rounded, when the tokenizer is not installed)."""
    heading_provenance: tuple[str, ...] = ()
    """How each heading of the breadcrumb was found, in the same order."""
    title: str = ""
    section_id: str = ""
    """The deepest section holding all the chunk's content (the one its breadcrumb names, for
    the strategies that label by the document's headings): sha256 of the document id, the
    heading path and the heading's offset (``document.sections.section_id``); the document's
    root section before any heading."""
    parent_section_id: str = ""
    """The id of that section's parent (the root section for a top heading; empty for the
    root)."""
    anchor: str = ""
    """The anchor of that section's heading as the config's ``slug_rule`` makes it (of the
    nearest heading above with one when a generator gives it none; empty for the root)."""
    href: str = ""
    """The config's ``url_template`` rendered for the chunk's page and anchor; empty when the
    config has none."""

    @property
    def embed_text(self) -> str:
        """What an index sees: the breadcrumb prefix (when the config uses one) then the text.
        Made when read, so a chunk holds its text once."""
        return self.embed_prefix + self.text if self.embed_prefix else self.text

    @property
    def context_text(self) -> str:
        """What a reader or model is handed: a source label (when used) then the text."""
        return self.context_prefix + self.text if self.context_prefix else self.text

    def __reduce__(self) -> tuple[type[Chunk], tuple]:
        """Pickled as its field values, unpickled by one constructor call (what a worker
        hands back: a frozen dataclass's own state sets each field through a loop)."""
        return Chunk, _FIELD_VALUES(self)

    def as_dict(self) -> dict[str, Any]:
        """The record as written to tables: the two renderings whole, in place of their
        prefixes."""
        data: dict[str, Any] = {}
        for name in _COLUMN_NAMES:
            value = getattr(self, name)
            data[name] = list(value) if isinstance(value, tuple) else value
        return data

    @classmethod
    def column_names(cls) -> list[str]:
        """The keys of ``as_dict``, in order: the fields, each prefix named by its rendering."""
        return list(_COLUMN_NAMES)

    @staticmethod
    def to_columns(chunks: Sequence[Chunk]) -> dict[str, list]:
        """``as_dict``'s columns of ``chunks`` (name -> one value a record), each field read
        once a chunk: what ``from_columns`` reads back."""
        rows = list(map(_COLUMN_VALUES, chunks))
        by_column = zip(*rows, strict=True) if rows else [()] * len(_COLUMN_NAMES)
        return {name: [list(v) for v in values] if name in LIST_COLUMNS else list(values)
                for name, values in zip(_COLUMN_NAMES, by_column, strict=True)}

    @classmethod
    def from_columns(cls, columns: dict[str, list]) -> list[Chunk]:
        """Records from ``as_dict``'s columns (name -> one value a record, the renderings
        whole), made a column at a time: what ``from_dict`` makes of each row."""
        columns = dict(columns)
        for name in LIST_COLUMNS:
            columns[name] = [() if v is None else tuple(v) for v in columns[name]]
        for prefix, rendering in _RENDERINGS.items():
            columns[prefix] = list(map(rendering_prefix, columns[rendering], columns["text"],
                                       itertools.repeat(rendering)))
        return list(map(cls, *(columns[name] for name in cls.__dataclass_fields__)))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Chunk:
        """A record from ``as_dict``'s form (renderings whole) or with the prefixes."""
        values = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        for name in LIST_COLUMNS:  # lists, or arrays from Parquet
            value = values.get(name)
            values[name] = tuple(value) if value is not None else ()
        for prefix, rendering in _RENDERINGS.items():
            if prefix not in values:
                values[prefix] = rendering_prefix(data[rendering], data["text"], rendering)
        return cls(**values)


_RENDERINGS = {"embed_prefix": "embed_text", "context_prefix": "context_text"}
"""Each stored prefix and the rendering it makes with the text."""
_FIELD_VALUES = attrgetter(*Chunk.__dataclass_fields__)
"""A chunk's field values, in the constructor's order."""
LIST_COLUMNS = ("breadcrumb", "heading_provenance")
"""The fields holding tuples, written to tables as lists."""
_COLUMN_NAMES = tuple(_RENDERINGS.get(name, name) for name in Chunk.__dataclass_fields__)
"""``Chunk.column_names()``, made once."""
_COLUMN_VALUES = attrgetter(*_COLUMN_NAMES)
"""A chunk's values under ``_COLUMN_NAMES`` (its renderings whole)."""


def rendering_prefix(rendering: str, text: str, name: str = "rendering") -> str:
    """What precedes ``text`` in ``rendering``, which must end with it."""
    if not rendering.endswith(text):
        raise ValueError(f"{name} does not end with the chunk's text: {rendering[:60]!r}")
    return rendering[: len(rendering) - len(text)]


@dataclass(slots=True)
class Piece:
    """A span a strategy chose, before it becomes a Chunk."""

    start: int
    end: int
    anchors: tuple[int, ...] = ()
    """Offsets, in order, whose common heading path labels the piece (default: where each
    content block it holds starts, clipped to the piece)."""
    text: str | None = None
    """Text when it differs from the source span (rewriting baselines)."""
    breadcrumb: tuple[str, ...] | None = None
    """A breadcrumb the strategy supplies itself (baselines with header metadata)."""
    part: tuple[int, int] | None = None
    strategy: str = ""
    size: int | None = None
    """Its size in the config's unit, when the strategy measured this very span."""


StrategyFunc: TypeAlias = "Callable[[Document, ChunkerConfig], list[Chunk]]"
"""The strategy contract: a document and a config in, the document's chunks out."""
