"""Routing by heading provenance: verified headings get ast_breadcrumb, the rest rct."""

from __future__ import annotations

from ...document.corpus import Document
from ...document.headings import EXPLICIT
from ..build import register
from ..config import ChunkerConfig
from ..records import Chunk
from ..registry import get_strategy

VERIFIED_PROVENANCE = frozenset(EXPLICIT)
"""Heading provenances that are a mark a person put in the file, not a guess from looks."""
ROUTE_STRATEGIES = {"heading_aware": "ast_breadcrumb", "recursive": "rct"}
"""The strategy each route of ``route`` applies."""


def has_verified_structure(doc: Document) -> bool:
    """True when the document has headings and every one of them carries a verified mark."""
    provenances = {b.provenance for b in doc.blocks if b.is_heading}
    return bool(provenances) and provenances <= VERIFIED_PROVENANCE


def route(doc: Document) -> str:
    """``heading_aware`` for verified (explicit) structure, else ``recursive``."""
    return "heading_aware" if has_verified_structure(doc) else "recursive"


def routed_strategy(doc: Document) -> str:
    """The name of the strategy ``structure_routed`` applies to ``doc``."""
    return ROUTE_STRATEGIES[route(doc)]


@register(
    "structure_routed",
    "ast_breadcrumb (size as ceiling) where every heading is an explicit mark, else rct; "
    "each chunk's strategy says which",
    prefix=True,
    family="routed",
)
def structure_routed(doc: Document, config: ChunkerConfig) -> list[Chunk]:
    # The same config goes to both, so size, overlap and config_id are the routed config's;
    # rct adds no breadcrumb prefix unless the config forces one (then only the title).
    return get_strategy(routed_strategy(doc))(doc, config)
