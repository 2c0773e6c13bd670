"""Views of chunk boundaries and breadcrumbs: static HTML pages and an ipywidgets explorer."""

from .boundaries import BoundaryView
from .pages import render_view
from .side_by_side import SideBySide

__all__ = ["BoundaryView", "Explorer", "SideBySide", "render_view"]


def __getattr__(name: str):
    if name == "Explorer":  # ipywidgets is imported only when the explorer is wanted
        from .explorer import Explorer

        return Explorer
    raise AttributeError(f"module 'chunkproof.viz' has no attribute {name!r}")
