"""Routing by heading provenance: verified headings get ast_breadcrumb, the rest rct."""

from __future__ import annotations

from ..structure import route
from . import get_strategy, register

ROUTE_STRATEGIES = {"heading_aware": "ast_breadcrumb", "recursive": "rct"}
"""The strategy each route of ``chunklab.structure.route`` applies."""


def routed_strategy(doc) -> str:
    """The name of the strategy ``structure_routed`` applies to ``doc``."""
    return ROUTE_STRATEGIES[route(doc)]


@register(
    "structure_routed",
    "ast_breadcrumb (size as ceiling) where every heading is an explicit mark, else rct; "
    "each chunk's strategy says which",
    prefix=True,
    family="routed",
)
def structure_routed(doc, config) -> list:
    # The same config goes to both, so size, overlap and config_id are the routed config's;
    # rct adds no breadcrumb prefix unless the config forces one (then only the title).
    return get_strategy(routed_strategy(doc))(doc, config)
