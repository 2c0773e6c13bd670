"""The sections of a corpus as a splitter cutting at every heading with no size ceiling would
cut them, and how long they are in chars and tokens against the encoder window: what decides
whether a heading-only split fits a model (notebooks 01 and 05)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..document.corpus import Document
from ..document.sections import Breadcrumbs
from .sizes import encoder_window, token_counts

CEILING_PERCENTILE = 97
"""The percentile read against the encoder window: the top of the tail decides a ceiling."""


def section_spans(doc: Document) -> list[tuple[int, int, int, tuple[str, ...]]]:
    """(start, end, level, path): the text before the first heading (level 0, front matter
    left out) and each heading with everything up to the next heading of any depth."""
    blocks = doc.blocks
    body = [b for b in blocks if b.kind != "front_matter"]
    if not body:
        return []
    crumbs = Breadcrumbs(blocks)
    heads = [b for b in body if b.is_heading]
    spans: list[tuple[int, int, int, tuple[str, ...]]] = []
    first = heads[0].start if heads else len(doc.text)
    if body[0].start < first:
        spans.append((body[0].start, first, 0, ()))
    ends = [h.start for h in heads[1:]] + [len(doc.text)]
    for head, end in zip(heads, ends, strict=False):
        spans.append((head.start, end, head.level, crumbs.at(head.start)))
    return spans


def sections_table(corpus: Iterable[Document]) -> pd.DataFrame:
    """One row per section as a heading-only splitter with no ceiling would cut it: the
    heading and its text up to the next heading, with its length in chars and tokens."""
    rows = []
    for doc in corpus:
        for start, end, level, path in section_spans(doc):
            text = doc.text[start:end].rstrip()
            rows.append({"doc_id": doc.id, "structure_source": doc.structure_source,
                         "level": level, "path": " > ".join(path), "start": start,
                         "end": start + len(text), "chars": len(text), "text": text})
    frame = pd.DataFrame(rows, columns=["doc_id", "structure_source", "level", "path", "start",
                                        "end", "chars", "text"])
    tokens, method = token_counts(frame["text"].tolist())
    frame["tokens"] = tokens
    frame["token_method"] = method
    return frame.drop(columns="text")


def length_stats(sections: pd.DataFrame, *, window: int | None = None) -> pd.DataFrame:
    """Median, mean, p97 and max section length in chars and tokens; the share and count of
    sections longer than the encoder window (in tokens; None: ``sizes.encoder_window``), and
    how tokens were counted."""
    window = window or encoder_window()
    rows = []
    for unit in ("chars", "tokens"):
        values = sections[unit].to_numpy(dtype=float)
        over = values > window if unit == "tokens" else np.zeros(len(values), dtype=bool)
        rows.append({
            "unit": unit, "sections": len(values),
            "median": _pct(values, 50), "mean": float(values.mean()) if len(values) else math.nan,
            f"p{CEILING_PERCENTILE}": _pct(values, CEILING_PERCENTILE),
            "max": float(values.max()) if len(values) else math.nan,
            "over_window": int(over.sum()) if unit == "tokens" else None,
            "over_window_share": float(over.mean()) if unit == "tokens" and len(values) else None,
            "method": _method(sections) if unit == "tokens" else "len(text)",
        })
    return pd.DataFrame(rows)


def _pct(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q)) if len(values) else math.nan


def _method(sections: pd.DataFrame) -> str:
    methods = set(sections.get("token_method", pd.Series(dtype=str)))
    return methods.pop() if len(methods) == 1 else "none"
