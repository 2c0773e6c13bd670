"""What every adapter shares: a config from any of its spellings, and a chunk's metadata."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Literal

from ..chunking.build import chunk_text
from ..chunking.config import ChunkerConfig, load_config, make_config, read_yaml
from ..chunking.embedder import use_embedder, use_recorded
from ..chunking.records import Chunk
from ..errors import ConfigError, ParseTimeLimitError, SkippedDocumentWarning
from ..evaluation.retrieval.modes import MODES, PLAIN, ModeReader

ConfigLike = ChunkerConfig | str | os.PathLike | dict | None
"""A ChunkerConfig, a path to a config YAML (``chosen_config.yaml``), a mapping of fields, or
None (the defaults, overridden by keyword options)."""


Content = Literal["embed_text", "text", "context_text"]
CONTENTS = ("embed_text", "text", "context_text")
"""What a framework's piece holds: ``embed_text`` (default: what chunkproof's index scored, the
breadcrumb prefix included for the strategies that add one), the bare ``text``, or the
``context_text`` a reader is handed."""


def content_of(chunk: Chunk, content: str) -> str:
    if content not in CONTENTS:
        raise ConfigError(f"content must be one of {', '.join(CONTENTS)}; got {content!r}")
    return str(getattr(chunk, content))


def as_config(config: ConfigLike = None, *, embedder: str | os.PathLike | None = None,
              **options: Any) -> ChunkerConfig:
    """The ChunkerConfig ``config`` stands for, with ``options`` applied on top. Sizes are
    counted in the tokens of ``embedder`` (a local sentence-transformers model folder: its
    tokenizer and window, ``embedder.use_embedder``) when given, else in the tokenizer a
    chosen_config.yaml records, so its chunks are the ones its run scored (for this process,
    as ``chunkproof chunk --config`` does)."""
    if embedder is not None:
        use_embedder(embedder)
    if isinstance(config, ChunkerConfig):
        return config.replace(**options) if options else config
    if isinstance(config, str | os.PathLike):
        loaded = load_config(Path(config))
        if embedder is None:
            use_recorded(config)
        return loaded.replace(**options) if options else loaded
    return make_config(config or {}, **options)


def document_chunks(text: str, config: ChunkerConfig, doc_id: str) -> list[Chunk]:
    """The chunks of ``text`` read as document ``doc_id`` (``chunk_text``), none when its
    parse passes the per-document time limit (as the loader skips such a file): a
    SkippedDocumentWarning names it, and the caller goes on with the other documents."""
    try:
        return chunk_text(text, config, doc_id=doc_id)
    except ParseTimeLimitError as err:
        warnings.warn(f"{doc_id}: {err}: left out", SkippedDocumentWarning, stacklevel=3)
        return []


def chunk_metadata(chunk: Chunk) -> dict[str, Any]:
    """What a chunk tells a downstream store besides its text: where it came from (document,
    span, lines), the heading path, the ids of its section and that section's parent, its
    link into the page (anchor, href), and the texts to embed and to hand a reader."""
    return {
        "source": chunk.doc_id, "chunk_id": chunk.id, "config_id": chunk.config_id,
        "start": chunk.start, "end": chunk.end, "start_line": chunk.start_line,
        "end_line": chunk.end_line, "breadcrumb": list(chunk.breadcrumb),
        "part": chunk.part, "kind": chunk.kind, "strategy": chunk.strategy,
        "verbatim": chunk.verbatim, "embed_text": chunk.embed_text,
        "context_text": chunk.context_text, "title": chunk.title,
        "section_id": chunk.section_id, "parent_section_id": chunk.parent_section_id,
        "anchor": chunk.anchor, "href": chunk.href,
    }


def retrieval_mode(config: ConfigLike | str) -> str:
    """The retrieval mode ``config`` names: a mode name itself, or the ``retrieval_mode`` a
    chosen_config.yaml records (plain when it records none)."""
    if isinstance(config, str) and config in MODES:
        return config
    if isinstance(config, str | os.PathLike):
        data = read_yaml(Path(config))
        mode = data.get("retrieval_mode", PLAIN) if isinstance(data, dict) else PLAIN
        return str(mode)
    return PLAIN


def mode_reader(chunks: list[Chunk], mode: ConfigLike | str, budget: int | None) -> ModeReader:
    """The ``ModeReader`` of ``mode`` (a name, or a chosen_config.yaml) over ``chunks``."""
    return ModeReader(chunks, retrieval_mode(mode), budget=budget)


def held_chunk(reader: ModeReader, chunk_id: Any) -> str:
    """``chunk_id`` when the reader holds that chunk, else ConfigError: a mode needs the
    chunks the index was built from."""
    if chunk_id not in reader.by_id:
        raise ConfigError(f"retrieved a piece whose chunk_id {chunk_id!r} is not among the "
                          f"{len(reader.by_id)} chunks given: pass the chunks the index holds")
    return str(chunk_id)
