"""What the corpus load did other than read a file as it is marked up: one (kind, message,
line) record per case, kept on the document (or made for a file the load skipped)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from .blocks import Block
from .headings import EXPLICIT
from .lines import LineIndex

NO_HEADINGS = "no_headings"
INFERRED_HEADINGS = "inferred_headings"
NESTING_LIMIT = "nesting_limit"
FRONT_MATTER = "front_matter"
PARSE_TIME_LIMIT = "parse_time_limit"
SIZE_LIMIT = "size_limit"
UNSUPPORTED_FORMAT = "unsupported_format"
NOT_LOADED = "not_loaded"
KINDS = {
    NO_HEADINGS: "a document with content and no heading: its chunks are labelled by lines",
    INFERRED_HEADINGS: "headings found by how a line looks (bold, numbered, CAPS), not marked",
    NESTING_LIMIT: "a region nested past the parser's limit, parsed on its own as one block",
    FRONT_MATTER: "front matter that is not a YAML mapping: read as none",
    PARSE_TIME_LIMIT: "a file skipped because reading and parsing it took too long",
    SIZE_LIMIT: "a file skipped unread because it is larger than the file size limit",
    UNSUPPORTED_FORMAT: "a documentation file of a format the loader does not read",
    NOT_LOADED: "a file skipped for another reason (not UTF-8, unreadable, not a file)",
}
"""Every kind of warning and what it means."""
NO_HEADINGS_MESSAGE = "no headings detected: using line anchors"
WHOLE_FILE = 0
"""The line of a warning about the whole file (lines count from 1)."""


@dataclass(frozen=True, slots=True)
class DocWarning:
    """One thing the load of a document did other than read it as marked up."""

    kind: str
    """One of ``KINDS``."""
    message: str
    """What happened and what was done instead, in one line."""
    line: int = WHOLE_FILE
    """1-based line it concerns; ``WHOLE_FILE`` (0) for the whole file."""

    def as_dict(self) -> dict:
        return asdict(self)


def parse_warnings(blocks: Sequence[Block], lines: LineIndex,
                   nesting_limit: Sequence[int]) -> tuple[DocWarning, ...]:
    """What a document's parse says of it: no headings, inferred headings, the nesting limit
    reached (``nesting_limit``: its 1-based lines)."""
    found = [DocWarning(NESTING_LIMIT, "nesting limit reached: the region nested deeper is "
                                       "parsed on its own, as a document held in one block",
                        line) for line in nesting_limit]
    headings = [b for b in blocks if b.kind == "heading"]  # Block.is_heading
    inferred = [b for b in headings if b.provenance not in EXPLICIT]
    if inferred:
        how = ", ".join(f"{name} x{n}" for name, n in
                        sorted(Counter(b.provenance for b in inferred).items()))
        found.append(DocWarning(
            INFERRED_HEADINGS, f"{len(inferred)} heading{'s' * (len(inferred) > 1)} inferred "
            f"from how the line looks ({how}), not marked as headings",
            lines.line_of(inferred[0].start)))
    if not headings and any(b.is_body for b in blocks):
        found.insert(0, DocWarning(NO_HEADINGS, NO_HEADINGS_MESSAGE))
    return tuple(found)


def front_matter_warning(problem: str, line: int) -> DocWarning:
    """Front matter that did not parse (``problem``), at ``line``."""
    return DocWarning(FRONT_MATTER, f"front matter {problem}: read as none", line)
