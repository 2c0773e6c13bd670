"""LangChain splitters as baselines; their string outputs are aligned back to source spans."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence

import numpy as np

from ...document.corpus import Document
from ..build import ChunkBuilder, register
from ..config import ChunkerConfig
from ..records import Chunk, Piece
from ..sizes import length_function

logging.getLogger("langchain_text_splitters.base").setLevel(logging.ERROR)
MHS_HEADERS = [("#", "h1"), ("##", "h2"), ("###", "h3")]
_ANCHOR = 32
_HEAD_TRIES = 8
"""How many successive anchors of a rewritten text are tried before it counts as not found."""


_SOLID = re.compile(r"\S+")
_LETTERS = re.compile(r"[^\W_]+")
"""Runs of the chars ``str.isspace`` rejects, and of those ``str.isalnum`` accepts."""
_SLACK = 1024
"""How far past the cursor (beyond twice a text's own length) a text is first looked for: an
output lies near where the previous one ended, and a search to the end of the document for
every rewritten text would make the alignment quadratic."""


class _Compact:
    """The characters of a text inside the runs ``pattern`` matches (never empty ones), kept
    as the runs' spans (so a position maps to its offset per run, not per char)."""

    def __init__(self, text: str, pattern: re.Pattern[str]):
        dtype = np.int32 if len(text) < 2**31 else np.int64  # 4 bytes a run below 2 G chars
        texts, starts, lengths = [], [], []
        for lo, slab in _slabs(text):  # a slab at a time: a list of runs per slab, not per text
            runs = pattern.findall(slab)
            gaps = pattern.split(slab)  # the text between runs: one more than the runs
            texts.append("".join(runs))
            run_lengths = _lengths(runs, dtype)
            before = np.cumsum(_lengths(gaps, dtype), dtype=dtype)[:-1]  # chars before each run
            starts.append(lo + before + np.cumsum(run_lengths, dtype=dtype) - run_lengths)
            lengths.append(run_lengths)
        self.text = "".join(texts)
        self.starts = np.concatenate(starts)
        total = np.cumsum(np.concatenate(lengths), dtype=dtype)
        self.firsts = np.concatenate((np.zeros(1, dtype), total))
        """Compact position of each run's first char (then the compact length)."""

    def position(self, offset: int) -> int:
        """Compact position of the first kept char at or after ``offset``."""
        run = _run_at(self.starts, offset)
        if run >= 0 and offset - self.starts[run] < self.firsts[run + 1] - self.firsts[run]:
            return int(self.firsts[run] + offset - self.starts[run])
        return int(self.firsts[run + 1])

    def offset(self, position: int) -> int:
        run = _run_at(self.firsts, position)
        return int(self.starts[run] + position - self.firsts[run])

    def span(self, first: int, last: int) -> tuple[int, int]:
        """Source span from the first to the last (inclusive) compact position."""
        return self.offset(first), self.offset(last) + 1


_SLAB = 1 << 20
"""Chars of text a compact reads at a time (ending at whitespace, which no run holds)."""
_SPACE = re.compile(r"\s")


def _slabs(text: str) -> Iterator[tuple[int, str]]:
    """The text in consecutive pieces of about ``_SLAB`` chars, each with its offset, cut
    only at whitespace (so no run of non-space chars straddles two); at least one piece."""
    lo = 0
    while True:
        cut = _SPACE.search(text, lo + _SLAB) if len(text) - lo > _SLAB else None
        hi = cut.start() if cut else len(text)
        yield lo, text[lo:hi]
        if hi == len(text):
            return
        lo = hi


def _run_at(bounds: np.ndarray, value: int) -> int:
    """Index of the last bound at or before ``value`` (-1: none). The value is cast to the
    bounds' own type first: numpy would otherwise cast the whole array to the value's."""
    return int(bounds.searchsorted(bounds.dtype.type(value), side="right")) - 1


def _lengths(strings: list[str], dtype: type) -> np.ndarray:
    return np.fromiter(map(len, strings), dtype=dtype, count=len(strings))


class Aligner:
    """Finds where a (possibly rewritten) chunk text came from, searching forward only.

    In order: the exact text; the text with whitespace ignored; its letters and digits
    alone (markup a splitter rewrote: emphasis, backticks, fence markers, bullets); then
    anchors of those letters and digits, the first one found ahead and the last one found
    within the text's own length after it. Each is looked for near the cursor first, then
    to the end of the document, so alignment stays linear in the document's length.
    """

    def __init__(self, text: str):
        self.text = text
        self._compact: dict[re.Pattern[str], _Compact] = {}

    def compact(self, pattern: re.Pattern[str]) -> _Compact:
        """The text kept to ``pattern``'s runs, built only once a text is not found as it is."""
        if pattern not in self._compact:
            self._compact[pattern] = _Compact(self.text, pattern)
        return self._compact[pattern]

    @property
    def solid(self) -> _Compact:
        return self.compact(_SOLID)

    @property
    def letters(self) -> _Compact:
        return self.compact(_LETTERS)

    def locate(self, chunk: str, cursor: int) -> tuple[int, int] | None:
        near = self._locate(chunk, cursor, 2 * len(chunk) + _SLACK)
        return near if near is not None else self._locate(chunk, cursor, None)

    def _locate(self, chunk: str, cursor: int, reach: int | None) -> tuple[int, int] | None:
        """Where ``chunk`` starts within ``reach`` chars (compact ones for the compact
        searches; None: anywhere) from the cursor."""
        exact = _find(self.text, chunk, cursor, reach) if chunk else -1
        if exact >= 0:
            return exact, exact + len(chunk)
        solid = "".join(chunk.split())
        letters = "".join(_LETTERS.findall(chunk))
        for compact, needle in ((self.solid, solid), (self.letters, letters)):
            if not needle:
                return None
            found = _find(compact.text, needle, compact.position(cursor), reach)
            if found >= 0:
                return compact.span(found, found + len(needle) - 1)
        return self._anchored(letters, self.letters.position(cursor), reach)

    def _anchored(self, needle: str, lo: int, reach: int | None) -> tuple[int, int] | None:
        """Span from the first anchor of ``needle`` found at or after ``lo`` (within
        ``reach``) to the last anchor found after it within the needle's length
        (letters-and-digits positions)."""
        text = self.letters.text
        starts = range(0, max(len(needle) - _ANCHOR, 0) + 1, _ANCHOR)
        for tried, at in enumerate(starts):
            if tried == _HEAD_TRIES:
                return None
            head = _find(text, needle[at : at + _ANCHOR], lo, reach)
            if head >= 0:
                break
        else:
            return None
        last = head + min(len(needle), _ANCHOR) - 1
        limit = head + len(needle) + _ANCHOR
        for end in range(len(needle), at + _ANCHOR, -_ANCHOR):
            tail = text.find(needle[end - _ANCHOR : end], last + 1, limit)
            if tail >= 0:
                last = tail + _ANCHOR - 1
                break
        return self.letters.span(head, min(last, len(text) - 1))


def _find(haystack: str, needle: str, lo: int, reach: int | None) -> int:
    """``haystack.find(needle, lo)`` for a match starting within ``reach`` of ``lo``."""
    if reach is None:
        return haystack.find(needle, lo)
    return haystack.find(needle, lo, lo + reach + len(needle))


def aligned_pieces(
    doc: Document, texts: list[str], crumbs: Sequence[tuple[str, ...] | None],
    overlap: float = 0.0
) -> list[Piece]:
    """One Piece per output text, searched for from where the previous one could overlap.

    ``overlap`` is the most the next text can reach back into the previous one, as a share
    of the previous text (0 when the splitter does not overlap): the search never restarts
    from the top of the document, so repeated text keeps its own offset.
    """
    aligner = Aligner(doc.text)
    pieces: list[Piece] = []
    cursor = 0
    for text, crumb in zip(texts, crumbs, strict=True):
        span = aligner.locate(text, cursor)
        if span is None:  # nothing of it found ahead: an empty span, counted as not verbatim
            span = (cursor, cursor)
        pieces.append(Piece(span[0], span[1], text=text, breadcrumb=crumb))
        reach = int((span[1] - span[0]) * overlap)
        cursor = max(span[0] + 1, span[1] - reach) if span[1] > span[0] else cursor
    return pieces


def overlap_share(config) -> float:
    """How far back (as a share of a chunk) a splitter with this config can start again."""
    return min(1.0, 1.5 * config.overlap / config.size) if config.overlap else 0.0


def _rct(config):
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter.from_language(
        Language.MARKDOWN,
        chunk_size=config.size,
        chunk_overlap=config.overlap,
        length_function=length_function(config.unit),
    )


def _build(doc, config, pieces: list[Piece], name: str) -> list:
    return ChunkBuilder(doc, config, prefix=bool(config.prefix), strategy=name).build(pieces)


@register(
    "rct", "LangChain RecursiveCharacterTextSplitter with Markdown separators", family="baseline"
)
def rct(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    texts = _rct(config).split_text(doc.text)
    return _build(
        doc, config, aligned_pieces(doc, texts, [()] * len(texts), overlap_share(config)), "rct"
    )


def _header_path(metadata: dict, keys: list[str]) -> tuple[str, ...]:
    return tuple(str(metadata[k]).strip() for k in keys if metadata.get(k))


@register(
    "mhs_rct",
    "LangChain MarkdownHeaderTextSplitter (h1-h3, headers kept) then RCT; "
    "header metadata as breadcrumb",
    family="baseline",
)
def mhs_rct(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    from langchain_text_splitters import MarkdownHeaderTextSplitter

    sections = MarkdownHeaderTextSplitter(MHS_HEADERS, strip_headers=False).split_text(doc.text)
    pieces = _rct(config).split_documents(sections)
    texts = [p.page_content for p in pieces]
    crumbs = [_header_path(p.metadata, ["h1", "h2", "h3"]) for p in pieces]
    return _build(doc, config, aligned_pieces(doc, texts, crumbs, overlap_share(config)), "mhs_rct")


@register("mts", "LangChain MarkdownTextSplitter (Markdown-aware separators)", family="baseline")
def mts(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    from langchain_text_splitters import MarkdownTextSplitter

    splitter = MarkdownTextSplitter(
        chunk_size=config.size,
        chunk_overlap=config.overlap,
        length_function=length_function(config.unit),
    )
    texts = splitter.split_text(doc.text)
    return _build(
        doc, config, aligned_pieces(doc, texts, [()] * len(texts), overlap_share(config)), "mts"
    )


@register(
    "emsts",
    "LangChain ExperimentalMarkdownSyntaxTextSplitter, defaults: one atom per "
    "element, headers stripped (size is not used); fed in pieces cut before a heading",
    family="baseline",
)
def emsts(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    from langchain_text_splitters import ExperimentalMarkdownSyntaxTextSplitter

    splitter = ExperimentalMarkdownSyntaxTextSplitter()
    atoms = [a for piece in emsts_pieces(doc.text) for a in list(splitter.split_text(piece))]
    keys = [f"Header {n}" for n in range(1, 7)]
    texts = [a.page_content for a in atoms]
    crumbs = [_header_path(a.metadata, keys) for a in atoms]
    return _build(doc, config, aligned_pieces(doc, texts, crumbs), "emsts")


EMSTS_LINES = 2000
"""Lines ExperimentalMarkdownSyntaxTextSplitter is given at once: it takes each line from the
front of a list, so a whole file costs time quadratic in its lines (a 50 MB file: hours)."""
_EMSTS_HEADING = re.compile(r"(#{1,6}) ")
_EMSTS_FENCE = re.compile(r"```|~~~")
"""The line starts that splitter reads as a heading and as a fence."""


def emsts_pieces(text: str, lines: int = EMSTS_LINES) -> Iterator[str]:
    """``text`` cut before a heading line the splitter reads outside a fence, once a piece
    has ``lines`` lines; each piece after the first is led by the heading lines the splitter
    holds there (those only open sections), so each piece splits as it would in the whole."""
    raw = text.splitlines(keepends=True)
    held: list[tuple[int, str]] = []  # (depth, line) of the headings in force, by depth
    start, fenced = 0, False
    lead: list[str] = []
    for i, line in enumerate(raw):
        if fenced:
            fenced = not _EMSTS_FENCE.match(line)
            continue
        heading = _EMSTS_HEADING.match(line)
        if heading is None:
            fenced = bool(_EMSTS_FENCE.match(line))
            continue
        if i - start >= lines:
            yield "".join(lead + raw[start:i])
            start, lead = i, [held_line for _, held_line in held]
        depth = len(heading.group(1))
        held = [h for h in held if h[0] < depth] + [(depth, line)]
    yield "".join(lead + raw[start:])
