"""The built-in strategies; importing this package registers each of them by name, and the
resolver of plug-in strategies (``plugins``: import paths and the ``chunkproof.strategies``
entry points)."""

from . import baselines, heading_aware, paragraph, peers, plugins, routed

__all__ = ["baselines", "heading_aware", "paragraph", "peers", "plugins", "routed"]
