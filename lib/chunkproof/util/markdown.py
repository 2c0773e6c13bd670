"""Text from a corpus or a query file placed in Markdown output, as code: shown as the text
it is, never read as HTML (a file named ``<img onerror=...>.md`` stays a name)."""

from __future__ import annotations

import re


def _fence_for(text: str, mark: str, least: int) -> str:
    longest = max((len(run) for run in re.findall(re.escape(mark) + "+", text)), default=0)
    return mark * max(least, longest + 1)


def markdown_code(value: object) -> str:
    """``value`` as an inline code span whose backtick fence is longer than any run of
    backticks inside it, so the text cannot close the span early."""
    text = " ".join(str(value).split())
    fence = _fence_for(text, "`", 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_block(text: str, language: str = "") -> str:
    """``text`` as a fenced code block whose fence no line of the text can close."""
    fence = _fence_for(text, "`", 3)
    return f"{fence}{language}\n{text}\n{fence}"
