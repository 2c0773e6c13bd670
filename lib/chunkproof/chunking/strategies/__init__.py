"""The built-in strategies; importing this package registers each of them by name."""

from . import baselines, heading_aware, paragraph, peers, routed

__all__ = ["baselines", "heading_aware", "paragraph", "peers", "routed"]
