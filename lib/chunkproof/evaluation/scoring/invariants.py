"""Measured checks of the chunking invariants: every figure is a count, never a verdict."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from ...chunking.build import dedup_title
from ...chunking.packing import introduces
from ...chunking.records import Chunk
from ...document.blocks import Block
from ...document.inline import plain_text
from ...document.sections import Breadcrumbs, container_labels

INTACT_KINDS = ("fence", "table")


@dataclass(frozen=True, slots=True)
class InvariantReport:
    """Violations of one strategy on one document (or summed over many)."""

    chunks: int = 0
    non_verbatim: int = 0
    """Chunks whose text is not the source span (allowed for rewriting baselines)."""
    false_verbatim: int = 0
    """Chunks that claim verbatim but whose text differs from the span: always a bug."""
    lost_chars: int = 0
    """Non-whitespace characters of the document inside no chunk span."""
    total_chars: int = 0
    """Non-whitespace characters of the document."""
    split_blocks: int = 0
    """Fenced code blocks and tables (nested in lists and quotes too) cut by a chunk boundary."""
    wrong_breadcrumbs: int = 0
    """Chunks whose breadcrumb differs from the heading path in force for their content."""
    heading_only: int = 0
    """Chunks holding only headings, other than a trailing heading with nothing after it."""
    cut_labels: int = 0
    """Labelled containers (a tab, an admonition, a directive) with a chunk boundary between
    their label line and their first nested block."""
    labels_lost: int = 0
    """Chunks inside labelled containers whose breadcrumb, prefix and text lack a label of
    one of them."""
    cut_lead_ins: int = 0
    """Lead-ins (a short paragraph ending in ``:``) that no chunk holds together with the
    start of what they introduce (``packing.introduces``)."""

    def as_dict(self) -> dict:
        return asdict(self)

    def __add__(self, other: InvariantReport) -> InvariantReport:
        return InvariantReport(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))


def astuple(report: InvariantReport) -> tuple[int, ...]:
    return tuple(getattr(report, name) for name in report.__dataclass_fields__)


def lost_chars(doc, chunks: list[Chunk]) -> tuple[int, int]:
    """(non-whitespace chars outside every span, non-whitespace chars in the document): the
    chars of the words ``str.split`` finds (it cuts at every char ``str.isspace`` holds) in
    the gaps the spans leave, and in the whole text."""
    text = doc.text
    lost, reached = 0, 0
    for start, end in sorted((c.start, c.end) for c in chunks if c.end > c.start):
        if start > reached:
            lost += solid_chars(text[reached:start])
        reached = max(reached, end)
    return lost + solid_chars(text[reached:]), solid_chars(text)


def solid_chars(text: str) -> int:
    """Chars of ``text`` that are not whitespace."""
    return sum(map(len, text.split()))


def intact_blocks(doc) -> list:
    """The fences and tables of ``doc`` at any depth: top-level, in list items, quotes and
    containers."""
    return [block for block in doc.atoms if block.kind in INTACT_KINDS]


def block_weight(doc) -> tuple:
    """Sort key of a page, smallest first: the most fences and tables (the blocks a cut
    destroys), then the most headings, then the longest, then the first id."""
    headings = sum(b.is_heading for b in doc.blocks)
    return (-len(intact_blocks(doc)), -headings, -len(doc.text), doc.id)


def cut_blocks(doc, chunks: list[Chunk], intact: Sequence | None = None) -> list:
    """The fences and tables (at any depth) that some chunk boundary falls strictly inside
    (``intact``: ``intact_blocks(doc)``, when already at hand)."""
    intact = intact_blocks(doc) if intact is None else intact
    starts = [block.start for block in intact]  # leaves, in order: they never overlap
    hit = set()
    for cut in {c.start for c in chunks} | {c.end for c in chunks}:
        i = bisect.bisect_right(starts, cut) - 1
        if i >= 0 and intact[i].start < cut < intact[i].end:
            hit.add(i)
    return [intact[i] for i in sorted(hit)]


def split_blocks(doc, chunks: list[Chunk]) -> int:
    """How many fences and tables (at any depth) some chunk boundary falls strictly inside."""
    return len(cut_blocks(doc, chunks))


def breadcrumb_is_true(doc, chunk: Chunk, crumbs: Breadcrumbs, config) -> bool:
    """The breadcrumb holds for all the chunk's content, and is the deepest path when it can.

    It must be a prefix of the heading path in force at every content offset of the chunk,
    and equal to the path at its first content offset when no heading follows inside it.
    Headings are compared as plain text, so a breadcrumb a splitter took from the heading's
    Markdown source (``Client.whoami()`` in backticks) is as true as the rendered one.
    """
    near = crumbs.overlapping(chunk.start, chunk.end)
    offsets = [max(b.start, chunk.start) for b in near if b.is_body] or [chunk.start]
    inner_heading = any(b.is_heading and offsets[0] < b.start < chunk.end for b in near)
    crumb = chunk.breadcrumb
    if chunk.part and config.number_parts:
        crumb = crumb[:-1]
    labels = crumbs.containers(chunk.start, chunk.end)
    if labels and crumb[-len(labels):] == labels:  # the tabs and notes it lies in
        crumb = crumb[: -len(labels)]
    if not crumbs.has_headings:
        return not config.position_anchors or crumb == (
            f"lines {chunk.start_line}-{chunk.end_line}",
        )
    paths = [dedup_title(crumbs.at(o), (), doc.title)[0] for o in offsets]
    written = (crumb, tuple(plain_text(entry) for entry in crumb))
    if any(path[: len(crumb)] not in written for path in paths):
        return False
    return inner_heading or paths[0] in written


def heading_only(doc, chunks: list[Chunk]) -> int:
    """Chunks holding only headings, a trailing heading with nothing after it excepted."""
    last_content = max((b.end for b in doc.blocks if b.is_body), default=0)
    return sum(c.kind == "heading" and c.start < last_content for c in chunks)


def labelled_containers(blocks) -> list[Block]:
    """Every container with a label, at any depth, in document order."""
    found: list[Block] = []
    for block in blocks:
        if block.kind == "container" and block.label:
            found.append(block)
        if block.children:
            found.extend(labelled_containers(block.children))
    return found


def cut_labels(doc, chunks: list[Chunk]) -> int:
    """Labelled containers that some chunk boundary parts from their first nested block (a
    boundary after the container's start, at or before that block's start)."""
    cuts = sorted({c.start for c in chunks} | {c.end for c in chunks})
    parted = 0
    for block in labelled_containers(doc.blocks):
        if block.children and block.children[0].start > block.start:
            at = bisect.bisect_right(cuts, block.start)
            parted += at < len(cuts) and cuts[at] <= block.children[0].start
    return parted


def lead_ins(blocks, text: str, most: int) -> list[tuple[Block, Block]]:
    """(lead-in, what it introduces) of every lead-in of at most ``most`` chars, at any depth:
    two blocks side by side in one list of blocks (``packing.introduces``)."""
    found: list[tuple[Block, Block]] = []
    for block, after in zip(blocks, blocks[1:], strict=False):
        if introduces(block, after, text, most):
            found.append((block, after))
    for block in blocks:
        if block.children:
            found += lead_ins(block.children, text, most)
    return found


def cut_lead_ins(doc, chunks: list[Chunk], most: int) -> int:
    """Lead-ins (of at most ``most`` chars) that no chunk holds with the start of what they
    introduce: none spans from inside the lead-in to past that start."""
    spans = sorted((c.start, c.end) for c in chunks)
    starts = [start for start, _ in spans]
    cut = 0
    for lead, after in lead_ins(doc.blocks, doc.text, most):
        holding = spans[: bisect.bisect_left(starts, lead.end)]
        cut += not any(end > after.start for _, end in holding)
    return cut


def carries_labels(chunk: Chunk, labels: tuple[str, ...]) -> bool:
    """Each of ``labels`` in the chunk's breadcrumb, its rendered prefix or its text (case
    folded)."""
    seen = "\n".join((*chunk.breadcrumb, chunk.context_text)).casefold()
    return all(label.casefold() in seen for label in labels)


def label_kept(doc, chunk: Chunk) -> bool | None:
    """Whether a chunk lying inside labelled containers carries their labels
    (``carries_labels``); None for a chunk inside none."""
    labels = container_labels(doc.blocks, chunk.start, chunk.end)
    return carries_labels(chunk, labels) if labels else None


def check(doc, chunks: list[Chunk], config) -> InvariantReport:
    """Count every invariant violation of ``chunks`` (one document's chunks under ``config``)."""
    crumbs = Breadcrumbs(doc.blocks)
    lost, total = lost_chars(doc, chunks)
    return InvariantReport(
        chunks=len(chunks),
        non_verbatim=sum(not c.verbatim for c in chunks),
        false_verbatim=sum(c.verbatim and c.text != doc.text[c.start : c.end] for c in chunks),
        lost_chars=lost,
        total_chars=total,
        split_blocks=split_blocks(doc, chunks),
        wrong_breadcrumbs=sum(not breadcrumb_is_true(doc, c, crumbs, config) for c in chunks),
        heading_only=heading_only(doc, chunks),
        cut_labels=cut_labels(doc, chunks),
        labels_lost=sum(label_kept(doc, c) is False for c in chunks),
        cut_lead_ins=cut_lead_ins(doc, chunks, config.caption_max_chars),
    )
