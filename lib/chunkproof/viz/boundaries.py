"""HTML views of one document's chunks: boundaries, breadcrumbs, overlap, gaps and flags."""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from ..chunking.sizes import measure
from ..document.corpus import Corpus, Document
from ..document.sections import Breadcrumbs
from ..evaluation.scoring.invariants import (
    breadcrumb_is_true,
    cut_blocks,
    intact_blocks,
    lost_chars,
)
from ..util.atomic import write_text_atomic

SEPARATOR = " > "
PALETTE = ("#dbeafe", "#dcfce7", "#fef3c7", "#fce7f3", "#e0e7ff", "#ccfbf1", "#ffedd5", "#ede9fe")

STYLE = """<style>
.chunkproof-view{font:13px/1.5 ui-monospace,Menlo,Consolas,monospace;color:#1b1b1b}
.chunkproof-view .head{font-family:system-ui,sans-serif;margin:4px 0}
.chunkproof-view .head h3{font-size:15px;margin:0 0 2px}
.chunkproof-view .meta,.chunkproof-view .legend{font:12px system-ui,sans-serif;color:#444;
  margin:2px 0}
.chunkproof-view .doc{white-space:pre-wrap;overflow-wrap:break-word;border:1px solid #bbb;
  padding:8px;margin:4px 0;background:#fff;font:inherit}
.chunkproof-view .chunk,.chunkproof-view .chunk-cont{box-decoration-break:clone;
  -webkit-box-decoration-break:clone;border-radius:2px}
""" + "".join(
    f".chunkproof-view .c{i}{{background-color:{colour}}}\n" for i, colour in enumerate(PALETTE)
) + """.chunkproof-view .label{font:11px/1.4 system-ui,sans-serif;background:#334155;color:#fff;
  border-radius:3px;padding:0 4px;margin-right:3px}
.chunkproof-view .num{font-weight:700;margin-right:4px}
.chunkproof-view .crumb:empty::after{content:"(no heading)";opacity:.7}
.chunkproof-view .rank{background:#15803d;border-radius:3px;padding:0 3px;margin-left:4px}
.chunkproof-view .flag,.chunkproof-view .key-flag{font:11px/1.4 system-ui,sans-serif;
  background:#b91c1c;color:#fff;border-radius:3px;padding:0 4px;margin-right:3px}
.chunkproof-view .hit{box-shadow:inset 0 -3px 0 #15803d}
.chunkproof-view .focus{outline:2px solid #b45309;outline-offset:1px}
.chunkproof-view .crumb.where{font-style:italic;opacity:.8}
.chunkproof-view .overlap,.chunkproof-view .key-overlap{
  background-image:repeating-linear-gradient(45deg,rgba(0,0,0,.25) 0 2px,transparent 2px 6px)}
.chunkproof-view .gap{background:#fff}
.chunkproof-view .gap.lost,.chunkproof-view .key-lost{background:#fee2e2;color:#991b1b;
  text-decoration:line-through}
.chunkproof-view mark.answer{background:#facc15;color:inherit;outline:1px solid #a16207}
.chunkproof-view .cut{border-left:3px solid #dc2626;margin:0 1px}
.chunkproof-view .cols{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.chunkproof-view .cols>div{min-width:0}
.chunkproof-view table.hits{font:12px system-ui,sans-serif;border-collapse:collapse}
.chunkproof-view table.hits td,.chunkproof-view table.hits th{border:1px solid #ccc;padding:1px 6px}
.chunkproof-view .error{color:#b91c1c;font-family:system-ui,sans-serif}
</style>"""

LEGEND = (
    '<p class="legend">Coloured regions are chunks (number, then breadcrumb); '
    '<span class="key-overlap">hatched</span> text lies in 2+ chunks; '
    '<span class="key-lost">struck red</span> text lies in none; '
    '<span class="key-flag">red tags</span> name a broken invariant; '
    'a green underline and rank mark a query hit; '
    "hover a region for its details.</p>"
)


def esc(value) -> str:
    """Text made safe for HTML content and attribute values alike."""
    return html.escape(str(value), quote=True)


def crumb_text(breadcrumb) -> str:
    return SEPARATOR.join(breadcrumb)


def config_label(config) -> str:
    return f"{config.strategy} · {config.size} {config.unit} · config {config.config_id}"


def boundaries(chunks) -> set[int]:
    """Every chunk start and end offset."""
    return {offset for c in chunks for offset in (c.start, c.end)}


@dataclass(frozen=True, slots=True)
class Flag:
    """One broken invariant of one chunk."""

    code: str
    """split, heading-only, oversize, non-verbatim or breadcrumb."""
    reason: str


def chunk_flags(doc, chunks, config) -> list[tuple[Flag, ...]]:
    """The invariants each chunk breaks, in the order of ``chunks``."""
    crumbs = Breadcrumbs(doc.blocks)
    last_content = max((b.end for b in doc.blocks if b.is_body), default=0)
    intact = intact_blocks(doc)
    found = []
    for chunk in chunks:
        flags = []
        cut = cut_blocks(doc, [chunk], intact)
        if cut:
            kinds = sorted({b.kind for b in cut})
            flags.append(Flag("split", "splits " + "/".join(kinds)))
        if chunk.kind == "heading" and chunk.start < last_content:
            flags.append(Flag("heading-only", "heading only"))
        size = measure(chunk.text, config.unit)
        if size > config.size:
            flags.append(Flag("oversize", f"oversize ({size} > {config.size} {config.unit})"))
        if not chunk.verbatim:
            flags.append(Flag("non-verbatim", "not verbatim"))
        if chunk.breadcrumb and not breadcrumb_is_true(doc, chunk, crumbs, config):
            flags.append(Flag("breadcrumb", "breadcrumb not true here"))
        found.append(tuple(flags))
    return found


@dataclass(frozen=True, slots=True)
class Stretch:
    """A stretch of text covered by one unchanging set of chunks."""

    start: int
    end: int
    cover: tuple[int, ...]
    """Indices of the chunks holding the whole stretch, earliest start first."""
    marked: bool = False
    """Inside a highlighted span (a query's answer)."""

    @property
    def owner(self) -> int | None:
        """The chunk drawn around the stretch: the one that started last."""
        return self.cover[-1] if self.cover else None


def stretches(length: int, chunks, *, spans=(), cuts=()) -> list[Stretch]:
    """Split [0, length) wherever a chunk, a span or an extra cut begins or ends."""
    found_points = {0, length, *cuts}
    for start, end in [(c.start, c.end) for c in chunks] + list(spans):
        found_points.update((min(max(start, 0), length), min(max(end, 0), length)))
    points = sorted(p for p in found_points if 0 <= p <= length)
    order = sorted(range(len(chunks)), key=lambda i: (chunks[i].start, chunks[i].ordinal))
    active: list[int] = []
    nxt = 0
    found = []
    for a, b in zip(points, points[1:], strict=False):
        while nxt < len(order) and chunks[order[nxt]].start <= a:
            active.append(order[nxt])
            nxt += 1
        active = [i for i in active if chunks[i].end > a]
        marked = any(s <= a and b <= e for s, e in spans)
        found.append(Stretch(a, b, tuple(active), marked))
    return found


class _View:
    """What every view shares: ``html()`` shown inline in a notebook and saved as a page."""

    title: str

    def html(self) -> str:
        raise NotImplementedError

    def _repr_html_(self) -> str:
        return self.html()

    def save(self, path: str | os.PathLike) -> Path:
        """Write a standalone HTML page (no external resources, no script)."""
        return write_text_atomic(path, page(self.html(), self.title))


class BoundaryView(_View):
    """One document with its chunks drawn as numbered, labelled regions over the source."""

    def __init__(self, doc, chunks, config, *, title=None, ranks=None, spans=(), marks=(),
                 focus=None, where=False):
        self.doc = doc
        self.chunks = [c for c in chunks if c.doc_id == doc.id]
        self.config = config
        self.title = title or f"{doc.id} — {config_label(config)}"
        self.ranks = {cid: r for cid, r in (ranks or {}).items()}
        self.spans = tuple(spans)
        """Char spans to highlight (a query's answer)."""
        self.marks = frozenset(marks)
        """Offsets drawn as a red cut (boundaries the other side of a comparison lacks)."""
        self.focus = focus
        """The id of a chunk to outline (one a query hit jumped to), or None."""
        self.where = Breadcrumbs(doc.blocks) if where else None
        """With ``where``, a chunk without a breadcrumb is labelled with the heading path
        of the document where it starts, so both sides of a comparison say where they are."""
        self.flags = chunk_flags(doc, self.chunks, config)

    @cached_property
    def stretches(self) -> list[Stretch]:
        return stretches(len(self.doc.text), self.chunks, spans=self.spans, cuts=self.marks)

    def stats(self) -> dict:
        """Chunk count, overlap and gap chars, lost non-whitespace chars, flagged chunks."""
        overlap = sum(s.end - s.start for s in self.stretches if len(s.cover) > 1)
        gap = sum(s.end - s.start for s in self.stretches if not s.cover)
        lost, _total = lost_chars(self.doc, self.chunks)
        flagged = sum(bool(f) for f in self.flags)
        return {"chunks": len(self.chunks), "overlap_chars": overlap, "gap_chars": gap,
                "lost_chars": lost, "flagged": flagged, "differing_boundaries": len(self.marks)}

    def tooltip(self, i: int) -> str:
        c = self.chunks[i]
        size = measure(c.text, self.config.unit)
        prefix = c.embed_text.split("\n", 1)[0] if c.embed_text != c.text else "text only"
        lines = [
            f"chunk {c.ordinal} · id {c.id}",
            f"lines {c.start_line}-{c.end_line} · chars {c.start}-{c.end}",
            f"size {len(c.text)} chars · {size} {self.config.unit} (limit {self.config.size})",
            f"kind {c.kind} · " + (f"part {c.part}" if c.part else "part: whole"),
            f"breadcrumb: {crumb_text(c.breadcrumb) or '(none)'}",
            f"embedded as: {prefix}",
        ]
        if self.flags[i]:
            lines.append("flags: " + "; ".join(f.reason for f in self.flags[i]))
        if c.id in self.ranks:
            lines.append(f"query rank {self.ranks[c.id]}")
        return "\n".join(lines)

    def open_tag(self, i: int, first: bool) -> str:
        c = self.chunks[i]
        classes = ["chunk" if first else "chunk-cont", f"c{c.ordinal % len(PALETTE)}"]
        classes += ["flagged"] * bool(self.flags[i]) + ["hit"] * (c.id in self.ranks)
        classes += ["focus"] * (c.id == self.focus)
        attrs = (
            f'class="{" ".join(classes)}" data-chunk="{c.ordinal}" data-id="{esc(c.id)}" '
            f'title="{esc(self.tooltip(i))}"'
        )
        if not first:
            return f"<span {attrs}>"
        attrs = f'id="chunk-{esc(c.id)}" {attrs}'
        codes = " ".join(f.code for f in self.flags[i])
        rank = f'<span class="rank">rank {self.ranks[c.id]}</span>' if c.id in self.ranks else ""
        label = (
            f'<span class="label"><span class="num">{c.ordinal}</span>'
            f'{self.crumb_html(c)}{rank}</span>'
        )
        flags = "".join(f'<span class="flag">⚠ {esc(f.reason)}</span>' for f in self.flags[i])
        return (
            f'<span {attrs} data-breadcrumb="{esc(crumb_text(c.breadcrumb))}" '
            f'data-flags="{codes}">{label}{flags}'
        )

    def crumb_html(self, chunk) -> str:
        """The chunk's breadcrumb; without one (and with ``where``) the heading path where it
        starts, marked as the document's, not the chunk's."""
        if chunk.breadcrumb or self.where is None or not self.where.at(chunk.start):
            return f'<span class="crumb">{esc(crumb_text(chunk.breadcrumb))}</span>'
        path = crumb_text(self.where.at(chunk.start))
        return (f'<span class="crumb where" title="no breadcrumb; the document\'s headings '
                f'here">in {esc(path)}</span>')

    def stretch_html(self, seg: Stretch) -> str:
        text = esc(self.doc.text[seg.start : seg.end])
        if seg.marked:
            text = f'<mark class="answer">{text}</mark>'
        if not seg.cover:
            lost = " lost" if text.strip() else ""
            return f'<span class="gap{lost}" title="in no chunk">{text}</span>'
        if len(seg.cover) > 1:
            held = ", ".join(str(self.chunks[i].ordinal) for i in seg.cover)
            return f'<span class="overlap" title="in chunks {held}">{text}</span>'
        return text

    def shown(self, until: int | None) -> list[Stretch]:
        """The stretches of the text before ``until`` (None: all), the last one cut there."""
        if until is None:
            return self.stretches
        kept = [s for s in self.stretches if s.start < until]
        return [replace(s, end=min(s.end, until)) for s in kept]

    def regions(self, until: int | None = None) -> str:
        """The document text (up to ``until``), each stretch wrapped in the region of the
        chunk that holds it."""
        end = len(self.doc.text) if until is None else until
        owned = {s.owner for s in self.stretches}
        pending = sorted((i for i in range(len(self.chunks))
                          if i not in owned and self.chunks[i].start <= end),
                         key=lambda i: self.chunks[i].start)
        out: list[str] = []
        current, seen = None, set()
        for seg in self.shown(until):
            while pending and self.chunks[pending[0]].start <= seg.start:
                out.append(("</span>" if current is not None else "")
                           + self.open_tag(pending.pop(0), True) + "</span>")
                current = None
            cut = self._cut(seg.start) if seg.start in self.marks else ""
            if seg.owner != current:
                out.append(("</span>" if current is not None else "") + cut)
                if seg.owner is not None:
                    out.append(self.open_tag(seg.owner, seg.owner not in seen))
                    seen.add(seg.owner)
                current, cut = seg.owner, ""
            out.append(cut + self.stretch_html(seg))
        out.append("</span>" if current is not None else "")
        out += [self.open_tag(i, True) + "</span>" for i in pending]
        if until is None and len(self.doc.text) in self.marks:
            out.append(self._cut(len(self.doc.text)))
        return "".join(out)

    @staticmethod
    def _cut(offset: int) -> str:
        return (f'<span class="cut" data-offset="{offset}" '
                f'title="boundary at char {offset} only on this side"></span>')

    def header(self) -> str:
        s = self.stats()
        meta = (
            f"{s['chunks']} chunks · overlap {s['overlap_chars']} chars · "
            f"gaps {s['gap_chars']} chars ({s['lost_chars']} non-whitespace lost) · "
            f"{s['flagged']} flagged"
        )
        if self.marks:
            meta += f" · {len(self.marks)} boundaries only on this side"
        return (f'<div class="head"><h3>{esc(self.title)}</h3>'
                f'<p class="meta">{esc(meta)}</p></div>')

    def body(self, until: int | None = None) -> str:
        """The view without its stylesheet (for embedding in a larger page); with ``until``,
        the text before that offset only (the header still counts the whole document)."""
        return (f'<div class="boundary-view">{self.header()}'
                f'<pre class="doc">{self.regions(until)}</pre></div>')

    def html(self, until: int | None = None) -> str:
        """A fragment: stylesheet plus view, for a notebook or a widget."""
        return f'{STYLE}<div class="chunkproof-view">{LEGEND}{self.body(until)}</div>'


CSP = "default-src 'none'; style-src 'unsafe-inline'"


def page(fragment: str, title: str, *, csp: bool = True) -> str:
    """A standalone page around a fragment; the CSP forbids every script and fetch."""
    policy = f'<meta http-equiv="Content-Security-Policy" content="{CSP}">' if csp else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"{policy}<title>chunkproof · {esc(title)}</title></head>\n"
        f"<body>{fragment}</body></html>\n"
    )


def find_document(corpus: Corpus, doc_id: str) -> Document:
    """The corpus document ``doc_id``; DocumentNotFoundError suggests the nearest ids."""
    return corpus.get(doc_id)
