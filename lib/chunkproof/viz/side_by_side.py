"""Two configs over one document, aligned by source line: each row is one line of the
source, drawn with the chunks of the left config beside the chunks of the right one, and a
gutter between them marks the lines where only one side cuts."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from .boundaries import (
    LEGEND,
    STYLE,
    BoundaryView,
    Stretch,
    _View,
    boundaries,
    config_label,
    esc,
    stretches,
)

GUTTER = {"left": "◀", "right": "▶", "both": "◀▶"}
"""The gutter's mark for a line where only the left, only the right, or each side has a
boundary the other lacks."""
ALIGNED_STYLE = """<style>
.chunkproof-view table.aligned{border-collapse:collapse;table-layout:fixed;width:100%;
  font:inherit}
.chunkproof-view table.aligned col.ln{width:3.2em}
.chunkproof-view table.aligned col.gut{width:2.2em}
.chunkproof-view table.aligned th{font:600 12px system-ui,sans-serif;text-align:left;
  padding:2px 6px;border-bottom:1px solid #bbb;vertical-align:bottom}
.chunkproof-view table.aligned td{padding:0 6px;vertical-align:top;white-space:pre-wrap;
  overflow-wrap:break-word;word-break:normal}
.chunkproof-view table.aligned td.ln{color:#94a3b8;text-align:right;font-size:11px;
  user-select:none}
.chunkproof-view table.aligned td.gutter{text-align:center;font:700 12px system-ui,sans-serif;
  color:#fff;padding:0}
.chunkproof-view table.aligned tr.differs td.gutter{background:#dc2626}
.chunkproof-view table.aligned tr.differs td.ln{color:#b91c1c;font-weight:700}
.chunkproof-view table.aligned td.src{border-left:1px solid #e2e8f0}
</style>"""


@dataclass(frozen=True, slots=True)
class Row:
    """One source line of the aligned view."""

    number: int
    """1-based line number."""
    left: str
    right: str
    only: str
    """``left``, ``right`` or ``both`` when a boundary on this line is on one side only, else
    ""."""


def line_spans(text: str, starts: list[int]) -> list[tuple[int, int]]:
    """(start, end) of every line's text, its line break excluded (``starts``: where each
    line starts); the empty line after a trailing line break is left out."""
    spans = []
    for i, start in enumerate(starts):
        if i and start == len(text):
            break
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        while end > start and text[end - 1] in "\r\n":
            end -= 1
        spans.append((start, end))
    return spans or [(0, 0)]


def cut_points(chunks, text: str) -> set[int]:
    """Where a config cuts the text: every chunk start and end moved past whitespace to the
    next text, so two chunks that end before or after the same blank line cut at the same
    place."""
    points = set()
    for offset in boundaries(chunks):
        while offset < len(text) and text[offset].isspace():
            offset += 1
        points.add(offset)
    return points


def line_cells(view: BoundaryView, lines: list[tuple[int, int]], *,
               clipped: bool = False) -> list[str]:
    """The HTML of each line of ``view``: the stretches of the line, each in the region of
    the chunk holding it (a region reopened on every line, its label on the chunk's first
    line), and a cut where this side has a boundary the other lacks. ``clipped``:
    ``lines`` stop before the text does, and nothing past the last one is drawn."""
    cuts = {offset for span in lines for offset in span}
    segments = stretches(len(view.doc.text), view.chunks, spans=view.spans,
                         cuts=cuts | set(view.marks))
    owned = {s.owner for s in segments}
    pending = sorted((i for i in range(len(view.chunks)) if i not in owned),
                     key=lambda i: view.chunks[i].start)
    marks = sorted(view.marks)
    seen: set[int] = set()
    cells, j = [], 0
    for start, end in lines:
        while j < len(segments) and segments[j].start < start:  # the line break before
            j += 1
        inside: list[Stretch] = []
        while j < len(segments) and segments[j].start < end:
            inside.append(segments[j])
            j += 1
        cells.append(_line(view, inside, (start, end), marks, pending, seen))
    if clipped:  # the text stops at the last line: nothing past it is drawn
        limit = lines[-1][1]
        marks = [m for m in marks if m <= limit]
        pending = [i for i in pending if view.chunks[i].start <= limit]
    if marks or pending:  # past the last line: a boundary at the very end of the text
        cells[-1] += "".join(view._cut(m) for m in marks) + "".join(
            view.open_tag(i, True) + "</span>" for i in pending)
    return cells


def _line(view: BoundaryView, inside: list[Stretch], span: tuple[int, int], marks: list[int],
          pending: list[int], seen: set[int]) -> str:
    out: list[str] = []
    current = None
    for seg in inside:
        while pending and view.chunks[pending[0]].start <= seg.start:
            out.append(_close(current) + view.open_tag(pending.pop(0), True) + "</span>")
            current = None
        cut = ""
        while marks and marks[0] <= seg.start:
            cut += view._cut(marks.pop(0))
        if seg.owner != current or cut:
            out.append(_close(current) + cut)
            if seg.owner is not None:
                out.append(view.open_tag(seg.owner, seg.owner not in seen))
                seen.add(seg.owner)
            current = seg.owner
        out.append(view.stretch_html(seg))
    out.append(_close(current))
    while marks and marks[0] <= span[1]:
        out.append(view._cut(marks.pop(0)))
    return "".join(out)


def _close(current: int | None) -> str:
    return "</span>" if current is not None else ""


class SideBySide(_View):
    """Two configs over one document, one row per source line, the gutter marking the lines
    where only one side cuts; chunks without a breadcrumb are labelled with the document's
    heading path where they start, on both sides."""

    def __init__(self, doc, left_chunks, left_config, right_chunks, right_config, *, title=None):
        left = cut_points([c for c in left_chunks if c.doc_id == doc.id], doc.text)
        right = cut_points([c for c in right_chunks if c.doc_id == doc.id], doc.text)
        self.doc = doc
        self.title = title or f"{doc.id} — {left_config.strategy} vs {right_config.strategy}"
        self.only_left = left - right
        self.only_right = right - left
        self.left = BoundaryView(doc, left_chunks, left_config, title=config_label(left_config),
                                 marks=self.only_left, where=True)
        self.right = BoundaryView(doc, right_chunks, right_config,
                                  title=config_label(right_config), marks=self.only_right,
                                  where=True)

    def differing(self, lines: list[tuple[int, int]]) -> dict[int, str]:
        """Line index -> ``left``, ``right`` or ``both``, for the lines where only one side
        cuts."""
        line_starts = [s for s, _ in lines]
        sides: dict[int, set[str]] = {}
        for side, offsets in (("left", self.only_left), ("right", self.only_right)):
            for offset in offsets:
                line = max(bisect.bisect_right(line_starts, offset) - 1, 0)
                sides.setdefault(line, set()).add(side)
        return {line: _only(found) for line, found in sides.items()}

    def rows(self, until: int | None = None) -> list[Row]:
        """Every source line (those before ``until``, the last one cut there) with both
        sides' HTML and whether only one side cuts on it."""
        lines = line_spans(self.doc.text, list(self.doc.lines.starts))
        only = self.differing(lines)
        if until is not None:
            lines = [(s, min(e, until)) for s, e in lines if s < until] or [(0, 0)]
        clipped = until is not None
        left = line_cells(self.left, lines, clipped=clipped)
        right = line_cells(self.right, lines, clipped=clipped)
        return [Row(i + 1, left[i], right[i], only.get(i, "")) for i in range(len(lines))]

    def table(self, rows: list[Row]) -> str:
        """The aligned table: line number, left, gutter, right."""
        body = []
        for row in rows:
            mark = GUTTER.get(row.only, "")
            hint = {"left": "a boundary only on the left", "right": "a boundary only on the "
                    "right", "both": "boundaries the other side lacks, on each side"}.get(
                        row.only, "")
            body.append(
                f'<tr class="line{" differs" if row.only else ""}" data-line="{row.number}"'
                f'{f" data-only={chr(34)}{row.only}{chr(34)}" if row.only else ""}>'
                f'<td class="ln">{row.number}</td>'
                f'<td class="src doc-line" data-side="left">{row.left}</td>'
                f'<td class="gutter" title="{esc(hint)}">{mark}</td>'
                f'<td class="src doc-line" data-side="right">{row.right}</td></tr>')
        head = (f'<tr><th></th><th>{self.left.header()}</th><th></th>'
                f'<th>{self.right.header()}</th></tr>')
        return (f'<table class="aligned"><colgroup><col class="ln"><col><col class="gut">'
                f'<col></colgroup><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>')

    def html(self, until: int | None = None) -> str:
        """The aligned view; with ``until``, the lines before that offset only (the counts
        still cover the whole document)."""
        rows = self.rows(until)
        lines = line_spans(self.doc.text, list(self.doc.lines.starts))
        summary = (f"{len(self.only_left)} boundaries only on the left, "
                   f"{len(self.only_right)} only on the right, on "
                   f"{len(self.differing(lines))} of {len(lines)} "
                   "lines (red in the gutter: ◀ left only, ▶ right only)")
        return (f'{STYLE}{ALIGNED_STYLE}<div class="chunkproof-view side-by-side">'
                f'<div class="head"><h3>{esc(self.title)}</h3><p class="meta">{esc(summary)}'
                f'</p></div>{LEGEND}{self.table(rows)}</div>')


def _only(sides: set[str]) -> str:
    return "both" if len(sides) == 2 else next(iter(sides), "")
