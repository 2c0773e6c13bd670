"""The sections a person writes questions about: each heading-to-heading stretch of a
document with content, labelled by what most of it is (code, table, list or prose), the
corpus's share of each, and how many of a number of questions each kind should get."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

SECTION_KINDS = ("prose", "list", "code", "table")
"""What a section mostly holds, by the chars of its blocks (a container's or quote's by what
is inside it)."""
_KIND_OF_BLOCK = {"paragraph": "prose", "list": "list", "fence": "code", "code": "code",
                  "table": "table", "blockquote": "prose", "container": "prose"}
_WRAPPERS = frozenset({"blockquote", "container"})
"""Blocks that count by what they hold: a tab, an admonition or a ``::: code-group`` of fences
is code, one of paragraphs prose (an empty one is prose)."""
MIN_SECTION_CHARS = 80
"""A section with less text than this has nothing to ask about."""


@dataclass(frozen=True, slots=True)
class Section:
    """A heading-to-heading stretch of a document: [start, end) of its text, its heading
    ("" before the first one) and the kind most of its text is."""

    doc_id: str
    start: int
    end: int
    heading: str
    kind: str

    def text(self, doc) -> str:
        return doc.text[self.start : self.end]


def section_kind(blocks) -> str:
    """The kind holding most chars among ``blocks`` (prose when none counts), a quote or a
    container counted by the blocks inside it."""
    chars: Counter[str] = Counter()
    _count_kinds(blocks, chars)
    return max(SECTION_KINDS, key=lambda k: (chars[k], -SECTION_KINDS.index(k)))


def _count_kinds(blocks, chars: Counter[str]) -> None:
    for block in blocks:
        if block.kind in _WRAPPERS and block.children:
            _count_kinds(block.children, chars)
        elif kind := _KIND_OF_BLOCK.get(block.kind):
            chars[kind] += block.end - block.start


def document_sections(doc) -> list[Section]:
    """The leaf sections of ``doc`` holding at least ``MIN_SECTION_CHARS`` of body text."""
    found: list[Section] = []
    blocks: list = []
    heading, start = "", 0

    def close(end: int) -> None:
        body = sum(b.end - b.start for b in blocks)
        if blocks and body >= MIN_SECTION_CHARS:
            found.append(Section(doc.id, start, end, heading, section_kind(blocks)))

    for block in doc.blocks:
        if block.is_heading:
            close(blocks[-1].end if blocks else block.start)
            heading, blocks, start = block.title, [], block.start
        elif block.is_body:
            blocks.append(block)
    close(blocks[-1].end if blocks else len(doc.text))
    return found


def corpus_sections(corpus) -> list[Section]:
    """Every document's sections, in document order."""
    return [s for doc in corpus for s in document_sections(doc)]


def kind_shares(sections) -> dict[str, float]:
    """The share of sections of each kind (kinds with none left out)."""
    counts = Counter(s.kind for s in sections)
    total = sum(counts.values()) or 1
    return {k: counts[k] / total for k in SECTION_KINDS if counts[k]}


def planned_counts(shares: dict[str, float], total: int) -> dict[str, int]:
    """``total`` questions shared out by ``shares`` (largest remainders), each kind with a
    share getting at least one when ``total`` allows."""
    raw = {k: total * v for k, v in shares.items()}
    counts = {k: int(v) for k, v in raw.items()}
    for kind in sorted(raw, key=lambda k: (counts[k] > 0, -(raw[k] - counts[k]))):
        if sum(counts.values()) >= total:
            break
        counts[kind] += 1
    return counts
