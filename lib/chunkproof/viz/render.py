"""A chart drawn with no network: JupyterLab's own Vega-Lite for the interactive view, SVG
drawn in process by vl-convert (every URL refused) for the HTML export."""

from __future__ import annotations

from .altair_import import alt
from .tables import enable_table_format

RENDERER = "chunkproof_offline"
SVG = "image/svg+xml"
LAB_MIME = "application/vnd.vegalite.v5+json"
"""The newest Vega-Lite mimetype JupyterLab 4 renders itself (its bundled Vega-Lite 5)."""
LAB_SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
TEXT = "<chunkproof chart: rendered by JupyterLab (Vega-Lite) or as SVG>"


def _vl_version() -> str | None:
    """The Vega-Lite version altair writes, as vl-convert names it (None: its default)."""
    import vl_convert

    wanted = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return wanted if wanted in vl_convert.get_vegalite_versions() else None


def _lab_vl_version() -> str:
    """The newest Vega-Lite 5 that vl-convert ships (what JupyterLab will draw with)."""
    import vl_convert

    fives = [v for v in vl_convert.get_vegalite_versions() if v.startswith("5.")]
    return max(fives, key=lambda v: tuple(map(int, v.split("."))))


def to_svg(chart: alt.TopLevelMixin | dict, *, vl_version: str | None = None) -> str:
    """The chart as SVG text, drawn by vl-convert in process with every URL refused."""
    import vl_convert

    spec = chart if isinstance(chart, dict) else chart.to_dict()
    return vl_convert.vegalite_to_svg(spec, vl_version=vl_version or _vl_version(),
                                      allowed_base_urls=[])


def offline_bundle(spec: dict, **metadata) -> tuple[dict, dict]:
    """The spec under JupyterLab's Vega-Lite mimetype (interactive, drawn by JupyterLab's own
    bundled Vega, offline) plus the same chart as ``image/svg+xml`` (what nbconvert's HTML
    export shows), both drawn with Vega-Lite 5.

    altair 6 writes Vega-Lite 6 under ``application/vnd.vegalite.v6.json``, which JupyterLab
    4 does not render and nbformat refuses as a JSON output (papermill stops on it); these
    charts compile unchanged as Vega-Lite 5. A chart that needs Vega-Lite 6 gets the SVG only.
    """
    lab = {**spec, "$schema": LAB_SCHEMA}
    try:
        svg = to_svg(lab, vl_version=_lab_vl_version())
    except ValueError:
        return {SVG: to_svg(spec), "text/plain": TEXT}, {}
    return {LAB_MIME: lab, SVG: svg, "text/plain": TEXT}, ({LAB_MIME: metadata} if metadata
                                                           else {})


def enable_offline_renderer() -> None:
    """Register and enable the offline renderer (named RENDERER), which never loads JS from
    a CDN, and show every table a cell returns formatted (``tables.enable_table_format``)."""
    alt.renderers.register(RENDERER, offline_bundle)
    alt.renderers.enable(RENDERER)
    enable_table_format()
