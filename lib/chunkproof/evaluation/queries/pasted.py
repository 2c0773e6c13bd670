"""An answer pasted from the rendered site (link brackets and targets, backticks and emphasis
gone) found in the Markdown source: the one span of the document whose text, as a reader sees
it (``plain_text``), is the pasted text, so the question file stores the source span."""

from __future__ import annotations

import re

from ...document.inline import plain_text

_LINK_END = r"\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:\s+\"[^\"]*\")?\)|\]\[[^\]]*\]|\]"
"""The end of a link: its bracket and target (``](url "title")``), reference label or nothing."""
_BETWEEN = rf"(?:[\s*_`~\\\[!<>]|{_LINK_END})*"
"""What may stand in the source between two pieces of the rendered text: whitespace, emphasis
and code marks, escapes, a link's brackets and its target or reference label."""
_OPENERS = "[*_`"
_CLOSERS = "*_`"
_LINK_TAIL = re.compile(_LINK_END)
MAX_FOUND = 20
"""Places the pasted text's pieces are tried at, at most (a text found more often than this is
too common to be an answer anyway)."""


def rendered(text: str, references=None) -> str:
    """Inline Markdown as a reader sees it, its whitespace single-spaced."""
    return " ".join(plain_text(text, references).split())


def source_span(pasted: str, doc) -> str | None:
    """The text of ``doc`` that ``pasted`` is: itself when it is found as written, else the
    one source span whose rendered text is the pasted text (single-spaced); None when there is
    no such span or more than one."""
    if pasted and pasted in doc.text:
        return pasted
    wanted = " ".join(pasted.split())
    pieces = re.findall(r"\w+|[^\w\s]", wanted)
    if not pieces:
        return None
    pattern = re.compile(_BETWEEN.join(re.escape(p) for p in pieces))
    found: list[str] = []
    for number, match in enumerate(pattern.finditer(doc.text)):
        if number >= MAX_FOUND:
            break
        span = _rendered_as(doc, match.start(), match.end(), wanted)
        if span is not None and span not in found:
            found.append(span)
    return found[0] if len(found) == 1 else None


def _rendered_as(doc, start: int, end: int, wanted: str) -> str | None:
    """The span around [start, end), widened over the marks that open before it and close
    after it, whose rendered text is ``wanted``; None when no widening renders so."""
    text = doc.text
    left = start
    while left > 0 and text[left - 1] in _OPENERS:
        left -= 1
    right = end
    while True:
        tail = _LINK_TAIL.match(text, right)
        if tail and tail.end() > right:
            right = tail.end()
        elif right < len(text) and text[right] in _CLOSERS:
            right += 1
        else:
            break
    for a, b in ((left, right), (left, end), (start, right), (start, end)):
        if rendered(text[a:b], doc.references) == wanted:
            return text[a:b]
    return None
