"""Where each splitter cuts, at a glance: one horizontal bar per config across a document,
a tick at each of its cuts, the document's fences and tables shaded (a tick inside a shaded
stretch cuts a block that should stay whole, and is drawn red), the headings marked above."""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from .boundaries import _View, esc
from .side_by_side import cut_points

STRIP_STYLE = """<style>
.chunkproof-strip{font:12px/1.4 system-ui,sans-serif;color:#1b1b1b;margin:6px 0;max-width:100%}
.chunkproof-strip .meta{color:#475569;margin:2px 0 6px}
.chunkproof-strip .row{display:flex;align-items:center;gap:8px;margin:3px 0}
.chunkproof-strip .name{flex:0 0 13em;text-align:right;white-space:nowrap;overflow:hidden;
  text-overflow:ellipsis}
.chunkproof-strip .name.current{font-weight:700}
.chunkproof-strip .count{flex:0 0 6.5em;color:#475569;white-space:nowrap}
.chunkproof-strip .bar{position:relative;flex:1 1 auto;height:18px;background:#f1f5f9;
  border:1px solid #cbd5e1;border-radius:2px;min-width:200px}
.chunkproof-strip .heads{height:10px;background:none;border:none}
.chunkproof-strip .atom{position:absolute;top:0;bottom:0;background:#cbd5e1}
.chunkproof-strip .atom.table{background:#d9f99d}
.chunkproof-strip .head{position:absolute;top:0;bottom:0;width:1px;background:#64748b}
.chunkproof-strip .head.h1,.chunkproof-strip .head.h2{width:2px;background:#0f172a}
.chunkproof-strip .tick{position:absolute;top:-2px;bottom:-2px;width:2px;margin-left:-1px;
  background:#1d4ed8}
.chunkproof-strip .tick.inside{background:#dc2626;width:3px}
.chunkproof-strip .key{display:inline-block;width:14px;height:10px;vertical-align:middle;
  margin:0 3px 0 8px;border:1px solid #cbd5e1}
</style>"""
ATOM_CLASS = {"table": "table"}
"""Shading class per atom kind (fences and code blocks share the default)."""


RESOLUTION = 2_000
"""Marks closer than 1/RESOLUTION of the document (fences and tables, headings, one row's
cuts) are drawn as one, their title saying how many: no bar is drawn finer, and a huge
document's strip stays small."""


def groups(items: list[tuple[int, int, Any]], length: int) -> list[tuple[int, int, list]]:
    """``items`` (start, end, value), sorted by start, as runs whose gaps are under
    1/``RESOLUTION`` of ``length``: (first start, last end, their values)."""
    near = length / RESOLUTION
    found: list[tuple[int, int, list]] = []
    for start, end, value in items:
        if found and start - found[-1][1] < near:
            found[-1][2].append(value)
            found[-1] = (found[-1][0], max(found[-1][1], end), found[-1][2])
        else:
            found.append((start, end, [value]))
    return found


def a_kind(kind: str) -> str:
    return kind.replace("_", " ")


def _at(offset: int, length: int) -> str:
    return f"{100 * offset / max(length, 1):.3f}%"


class BoundaryStrip(_View):
    """One document under several configs: ``chunks`` maps a label (``rct/800``) to that
    config's chunks of the document."""

    def __init__(self, doc, chunks: Mapping[str, Sequence], *, title: str | None = None,
                 current: str | None = None, titles: bool = True):
        self.doc = doc
        self.chunks = {label: [c for c in found if c.doc_id == doc.id]
                       for label, found in chunks.items()}
        self.title = title or f"{doc.id}: where each config cuts"
        self.current = current
        """The label drawn in bold (the config the view below shows)."""
        self.titles = titles
        """Whether heading marks name their heading (False: level and line only, so the
        strip carries no text of the document)."""
        self._atoms = sorted(doc.atoms, key=lambda a: a.start)
        self._atom_starts = [a.start for a in self._atoms]

    def cuts(self, label: str) -> list[int]:
        """Where ``label`` cuts the text (chunk bounds moved past whitespace), the text's
        own start and end left out."""
        length = len(self.doc.text.rstrip())
        start = len(self.doc.text) - len(self.doc.text.lstrip())
        return sorted(p for p in cut_points(self.chunks[label], self.doc.text)
                      if start < p < length)

    def inside_atom(self, offset: int) -> str:
        """The kind of the fence or table a cut at ``offset`` falls inside ("" for none)."""
        i = bisect.bisect_left(self._atom_starts, offset) - 1
        atom = self._atoms[i] if i >= 0 else None
        return atom.kind if atom is not None and atom.start < offset < atom.end else ""

    @cached_property
    def _atoms_html(self) -> str:
        length, line = len(self.doc.text), self.doc.lines.line_of
        spans = []
        for start, end, atoms in groups([(a.start, a.end, a) for a in self._atoms], length):
            kinds = {ATOM_CLASS.get(a.kind, "fence") for a in atoms}
            kind = kinds.pop() if len(kinds) == 1 else "fence"
            what = (a_kind(atoms[0].kind) if len(atoms) == 1
                    else f"{len(atoms)} fences and tables")
            spans.append(f'<span class="atom {kind}" style="left:{_at(start, length)};width:'
                         f'{_at(end - start, length)}" title="{esc(what)}, lines '
                         f'{line(start)}-{line(max(end - 1, start))}"></span>')
        return "".join(spans)

    def atoms_html(self) -> str:
        return self._atoms_html

    def heads_html(self) -> str:
        length, line = len(self.doc.text), self.doc.lines.line_of
        heads = [(b.start, b.start, b) for b in self.doc.blocks if b.kind == "heading"]
        marks = []
        for start, _end, found in groups(heads, length):
            level = min(b.level or 1 for b in found)
            title = (self.heading_title(found[0]) if len(found) == 1 else
                     f"{len(found)} headings, lines {line(start)}-{line(found[-1].start)}")
            marks.append(f'<span class="head h{level}" style="left:{_at(start, length)}" '
                         f'title="{esc(title)}"></span>')
        return "".join(marks)

    def heading_title(self, block) -> str:
        if self.titles:
            return f"{'#' * (block.level or 1)} {block.title or ''}"
        return f"heading level {block.level or 1}, line {self.doc.lines.line_of(block.start)}"

    def row_html(self, label: str) -> str:
        length = len(self.doc.text)
        ticks, cuts, line = [], self.cuts(label), self.doc.lines.line_of
        for offset, last, together in groups([(o, o, o) for o in cuts], length):
            kinds = [k for k in map(self.inside_atom, together) if k]
            if len(together) == 1:
                hint = f"cut at line {line(offset)}" + (f", inside a {kinds[0]}" if kinds else "")
            else:
                hint = (f"{len(together)} cuts, lines {line(offset)}-{line(last)}"
                        + (f", {len(kinds)} inside a fence or table" if kinds else ""))
            ticks.append(f'<span class="tick{" inside" if kinds else ""}" data-offset="{offset}" '
                         f'style="left:{_at(offset, length)}" title="{esc(hint)}"></span>')
        broken = sum(bool(self.inside_atom(o)) for o in cuts)
        count = f"{len(self.chunks[label])} chunks" + (f", {broken} ✂" if broken else "")
        name = "name current" if label == self.current else "name"
        return (f'<div class="row" data-config="{esc(label)}"><span class="{name}" '
                f'title="{esc(label)}">{esc(label)}</span><div class="bar">'
                f'{self.atoms_html()}{"".join(ticks)}</div>'
                f'<span class="count">{esc(count)}</span></div>')

    def html(self) -> str:
        lines = len(self.doc.lines.starts)
        legend = ('<span class="key" style="background:#cbd5e1"></span>fence or code'
                  '<span class="key" style="background:#d9f99d"></span>table'
                  '<span class="key" style="background:#1d4ed8"></span>a cut'
                  '<span class="key" style="background:#dc2626"></span>a cut inside a fence '
                  'or table (✂)')
        heads = (f'<div class="row"><span class="name">headings</span><div class="bar heads">'
                 f'{self.heads_html()}</div><span class="count"></span></div>')
        rows = "".join(self.row_html(label) for label in self.chunks)
        return (f'{STRIP_STYLE}<div class="chunkproof-strip"><p class="meta"><b>{esc(self.title)}'
                f'</b> · {len(self.doc.text)} chars, {lines} lines, left to right · {legend}</p>'
                f'{heads}{rows}</div>')
