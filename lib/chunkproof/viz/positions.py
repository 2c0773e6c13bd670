"""Where each config cuts one document, without a word of the document: the boundary strip
(headings marked by level and line only), each config's counts, and every chunk's lines,
offsets, size, kind and broken invariants. What a shared report shows when it must carry no
document text."""

from __future__ import annotations

from .boundaries import STYLE, BoundaryView, _View, config_label, esc
from .strip import BoundaryStrip

MAX_ROWS = 2_000
"""Chunks listed per config; the rest are counted in a line under the table."""
COLUMNS = ("chunk", "lines", "chars", "size", "kind", "part", "flags")


class Positions(_View):
    """``configs``: (config, its chunks of ``doc``) pairs, the first drawn in bold."""

    def __init__(self, doc, configs, *, title: str | None = None):
        self.doc = doc
        self.views = [BoundaryView(doc, chunks, config) for config, chunks in configs]
        self.title = title or f"{doc.id}: chunk boundaries (document text left out)"

    def strip(self) -> BoundaryStrip:
        found = {f"{v.config.strategy}/{v.config.size}": v.chunks for v in self.views}
        return BoundaryStrip(self.doc, found, current=next(iter(found), None), titles=False,
                             title=self.title)

    def table(self, view: BoundaryView) -> str:
        rows = []
        for chunk, flags in list(zip(view.chunks, view.flags, strict=True))[:MAX_ROWS]:
            cells = (chunk.ordinal, f"{chunk.start_line}-{chunk.end_line}",
                     f"{chunk.start}-{chunk.end}", f"{chunk.n_chars} chars", chunk.kind,
                     chunk.part or "whole", " ".join(f.code for f in flags))
            rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
        left = len(view.chunks) - len(rows)
        more = (f'<p class="meta">{left} more chunks not listed (the first {MAX_ROWS} are)</p>'
                if left > 0 else "")
        head = "".join(f"<th>{c}</th>" for c in COLUMNS)
        stats = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in view.stats().items()
                          if k != "differing_boundaries")  # no comparison drawn here
        return (f'<details><summary><b>{esc(config_label(view.config))}</b>: {esc(stats)}'
                f'</summary><table class="hits"><tr>{head}</tr>{"".join(rows)}</table>{more}'
                "</details>")

    def html(self) -> str:
        tables = "".join(self.table(view) for view in self.views)
        return (f'{self.strip().html()}{STYLE}<div class="chunkproof-view">'
                f'<p class="meta">The document text is left out of this report; its '
                f'boundaries are given by line and char offset.</p>{tables}</div>')
