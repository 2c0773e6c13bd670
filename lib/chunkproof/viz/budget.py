"""A size budget for shared pages: a view whose HTML would pass its share of the budget draws
only the start of its document, or nothing, and says so in a visible note (what was left
out, and how to see it whole); and a height budget: a view shown on a notebook page scrolls
inside a box of its own, so the page's height does not grow with the documents'."""

from __future__ import annotations

from collections.abc import Callable

from .boundaries import _View, esc

PAGE_BUDGET = 4_000_000
"""Bytes of HTML an exported page may weigh: notebook 04's page (its .ipynb and its .html)
and each standalone view it saves."""
PAGE_OVERHEAD = 600_000
"""Bytes of a notebook page that are not views (nbconvert's stylesheet, cells, tables)."""
ESCAPED = 1.2
"""Bytes an .ipynb spends per byte of HTML it stores (JSON escapes quotes and line breaks)."""
SAMPLE_CHARS = 20_000
"""Characters drawn first to learn how many bytes a view spends per character of text."""
ATTEMPTS = 4
"""Renders tried before settling on the longest start that fitted."""
SLACK = 0.95
"""Aim this far below the allowance: the bytes per character vary along a document."""
NOTE_ROOM = 2_000
"""Bytes kept free for the note that says what was left out."""

VIEW_HEIGHT = 720
"""Pixels a view shown on a notebook page may take; a longer one scrolls inside its box (its
standalone page is drawn at full height)."""
PAGE_HEIGHT = 8_000
"""Pixels notebook 04's exported page may take at 1280 px wide: its text, the explorer and
the shown views, each at most ``VIEW_HEIGHT`` (a browser test measures it)."""

Render = Callable[[int | None], str]
"""Draws a view's text up to a char offset (None: the whole text)."""


def weight(html: str) -> int:
    """Bytes of ``html`` in UTF-8."""
    return len(html.encode("utf-8"))


def share(views: int, budget: int = PAGE_BUDGET) -> int:
    """The bytes of HTML each of ``views`` views of one notebook page may take, stored
    JSON-escaped in its .ipynb."""
    return max(int((budget - PAGE_OVERHEAD) / ESCAPED) // max(views, 1), NOTE_ROOM * 2)


def fit(render: Render, doc, allowance: int, how: str) -> str:
    """``render``'s HTML when it fits ``allowance`` bytes; else the longest start of the
    document that does (within ``ATTEMPTS`` renders), followed by a note naming the lines
    left out and ``how`` to see them; a note alone when not one line fits."""
    length = len(doc.text)
    room = allowance - NOTE_ROOM
    until = min(length, SAMPLE_CHARS)
    best: tuple[str, int] | None = None
    for _ in range(ATTEMPTS):
        html = render(None if until >= length else until)
        size = weight(html)
        if size <= allowance and until >= length:
            return html
        if size <= room:
            best = (html, until)
        goal = int(until * room * SLACK / max(size, 1))
        if until * allowance >= length * size * SLACK:  # the whole view may fit
            goal = length
        goal = min(goal, length)
        if goal <= 0 or goal == until or (best and goal < best[1] * 1.05):
            break
        until = goal
    if best is None or doc.lines.line_of(best[1]) <= 1:
        return note(doc, 0, allowance, how)
    return best[0] + note(doc, best[1], allowance, how)


def note(doc, until: int, allowance: int, how: str) -> str:
    """What a view over its allowance left out, and how to see it whole."""
    lines = len(doc.lines.starts)
    shown = doc.lines.line_of(until) if until else 0
    what = (f"lines 1-{shown} of {lines} shown ({until:,} of {len(doc.text):,} chars)"
            if shown else f"view left out ({len(doc.text):,} chars, {lines} lines)")
    text = (f"{doc.id}: {what}: the whole view would pass this page's share of its size "
            f"budget ({allowance / 1e6:.1f} MB of {PAGE_BUDGET / 1e6:.0f} MB, "
            f"chunkproof.viz.budget.PAGE_BUDGET). See it whole with: {how}")
    return (f'<p class="chunkproof-budget" style="font:13px system-ui,sans-serif;'
            f'background:#fef3c7;border:1px solid #b45309;padding:4px 8px">{esc(text)}</p>')


def boxed(html: str, height: int = VIEW_HEIGHT) -> str:
    """``html`` in a box at most ``height`` pixels high that scrolls what does not fit."""
    return (f'<div class="chunkproof-box" style="max-height:{height}px;overflow:auto;'
            f'border:1px solid #cbd5e1">{html}</div>')


class Boxed(_View):
    """A view as a notebook page shows it: in a box at most ``VIEW_HEIGHT`` pixels high."""

    def __init__(self, view):
        self.view = view
        self.title = view.title

    def html(self) -> str:
        return boxed(self.view.html())


class Budgeted(_View):
    """A boundary view or side-by-side held to ``allowance`` bytes (``fit``)."""

    def __init__(self, view, allowance: int, how: str):
        self.view = view
        self.title = view.title
        self.allowance = allowance
        self.how = how

    def html(self) -> str:
        return fit(self.view.html, self.view.doc, self.allowance, self.how)
