"""Per-config chunk statistics: the figures of chunk_stats.csv (sizes, intact blocks, labels
kept, lost characters, oversize and heading-only chunks, the encoder window)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ...chunking import sizes as chunk_sizes
from ...chunking.config import ChunkerConfig
from ...chunking.records import Chunk
from ...chunking.sizes import SIZE_FIELDS, TOKENIZER, encoder_window, token_counts
from ...errors import MetricError
from ..queries.queries import documents_by_id
from . import invariants
from .bundles import intact_flags, label_values
from .ragged import shares


def chunk_intact(chunk: Chunk, docs: dict) -> bool:
    """No boundary of the chunk falls inside a fenced code block of its document, at any depth
    (``bundles.intact_flags`` of one chunk). Without its document in ``docs``, the chunk's
    own fence lines must balance."""
    return bool(intact_flags([chunk], docs)[0])


def label_share(chunks: Sequence, docs: dict) -> float:
    """``label_kept``: the share of chunks lying inside a labelled container (a tab, an
    admonition, a directive) whose breadcrumb, prefix or text carries its label (NaN when no
    chunk lies inside one, or none's document is in ``docs``)."""
    return _share(label_values(list(chunks), docs))


def _share(flags) -> float:
    """The share of true ``flags`` (NaN ones left out; NaN when none is left)."""
    flags = np.asarray(flags, dtype=float).reshape(-1)
    return float(shares(np.zeros(len(flags), dtype=np.int64), flags, 1)[0])


def recorded_sizes(chunks: Sequence, unit: str) -> np.ndarray:
    """The sizes the chunk records carry (``n_chars``, ``n_words`` or ``n_tokens``)."""
    return np.asarray([getattr(c, SIZE_FIELDS[unit]) for c in chunks], dtype=float)


def lost_characters(chunks: Iterable, docs: dict) -> tuple[int, int]:
    """(non-whitespace chars of ``docs`` outside every chunk span, non-whitespace chars)."""
    by_doc: dict[str, list] = {doc_id: [] for doc_id in docs}
    for chunk in chunks:
        if chunk.doc_id not in by_doc:
            raise MetricError(f"chunk {chunk.id} belongs to {chunk.doc_id!r}, not in docs")
        by_doc[chunk.doc_id].append(chunk)
    counts = [invariants.lost_chars(docs[d], chunks_of) for d, chunks_of in by_doc.items()]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


def embed_token_counts(chunks: Sequence[Chunk]) -> tuple[list[float], str]:
    """Tokens of each chunk's embed text as the encoder sees it ([CLS]/[SEP] included), and
    how they were made. With the tokenizer: the chunk's ``n_tokens`` plus its prefix's, each
    distinct prefix counted once (a prefix that ends in whitespace shares no word with the
    text, so the counts add up; any other is counted with its text); without it, each embed
    text estimated whole (and counted whole by a tokenizer whose counts do not add up word by
    word)."""
    if not chunk_sizes.tokens_available() or not chunk_sizes.words_add_up():
        return token_counts([c.embed_text for c in chunks], special=True)
    special = chunk_sizes.tokenizer().num_special_tokens_to_add(False)
    prefixes = list({c.embed_prefix for c in chunks})
    of_prefix = dict(zip(prefixes, chunk_sizes.count_tokens(prefixes), strict=True))
    return [float(special + (of_prefix[c.embed_prefix] + c.n_tokens
                             if not c.embed_prefix or c.embed_prefix[-1].isspace()
                             else chunk_sizes.count_one(c.embed_text)))
            for c in chunks], TOKENIZER


def _spread(values: np.ndarray, name: str) -> dict[str, float]:
    if not len(values):
        return {f"{name}_p50": math.nan, f"{name}_p95": math.nan, f"{name}_max": math.nan}
    p50, p95 = np.percentile(values, [50, 95])
    return {
        f"{name}_p50": float(p50), f"{name}_p95": float(p95), f"{name}_max": float(values.max())
    }


@dataclass(frozen=True, slots=True)
class ChunkStats:
    """Structural figures of one config's chunks: a row of chunk_stats.csv but its options
    column (``tables.CHUNK_STATS`` says what each column means)."""

    config_id: str
    strategy: str
    size: int
    unit: str
    documents: int
    chunks: int
    size_p50: float
    size_p95: float
    size_max: float
    chars_p50: float
    chars_p95: float
    chars_max: float
    tokens_p50: float
    tokens_p95: float
    code_integrity: float
    label_kept: float
    heading_only: int
    heading_only_share: float
    oversize: int
    oversize_share: float
    lost_chars: int
    lost_share: float
    verbatim_share: float
    single_chunk_docs_share: float
    over_encoder_limit: float
    over_encoder_limit_method: str
    index_tokens: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def chunk_stats(chunks: Sequence[Chunk], config: ChunkerConfig, *, docs: Any) -> ChunkStats:
    """The structural figures of one config's chunks of ``docs``.

    Sizes are the records' own sizes of ``chunk.text``, in the config's unit (``size_*``), in
    chars (``chars_*``) and in tokens (``tokens_*``, the realised size);
    ``oversize`` counts chunks above ``config.size``; ``lost_chars`` counts non-whitespace
    document chars outside every chunk span; ``over_encoder_limit`` is the share of embed
    texts longer than the encoder window, with how it was counted in ``*_method``;
    ``index_tokens`` the tokens of every embed text: what the index costs to embed and
    store.
    """
    chunks = list(chunks)
    docs = documents_by_id(docs)
    sizes = recorded_sizes(chunks, config.unit)
    lost, solid = lost_characters(chunks, docs)
    counts, method = embed_token_counts(chunks) if chunks else ([], "none")
    over = float(np.mean(np.asarray(counts) > encoder_window())) if chunks else math.nan
    by_doc: dict[str, list] = {}
    for chunk in chunks:
        by_doc.setdefault(chunk.doc_id, []).append(chunk)
    heading_only = sum(invariants.heading_only(docs[d], cs) for d, cs in by_doc.items())
    oversize = int((sizes > config.size).sum())
    n = len(chunks)
    tokens = _spread(recorded_sizes(chunks, "tokens"), "tokens")
    return ChunkStats(
        config_id=config.config_id, strategy=config.strategy, size=config.size,
        unit=config.unit, documents=len(docs), chunks=n,
        **_spread(sizes, "size"), **_spread(recorded_sizes(chunks, "chars"), "chars"),
        tokens_p50=tokens["tokens_p50"], tokens_p95=tokens["tokens_p95"],
        code_integrity=_share(intact_flags(chunks, docs)),
        label_kept=label_share(chunks, docs),
        heading_only=heading_only, heading_only_share=heading_only / n if n else math.nan,
        oversize=oversize, oversize_share=oversize / n if n else math.nan,
        lost_chars=lost, lost_share=lost / solid if solid else 0.0,
        verbatim_share=_share([c.verbatim for c in chunks]),
        single_chunk_docs_share=_share([len(by_doc.get(d, ())) == 1 for d in docs]),
        over_encoder_limit=over, over_encoder_limit_method=method,
        index_tokens=int(round(sum(counts))),
    )
