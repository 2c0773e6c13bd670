"""Parsing stays linear on hostile pages: each family of pathological Markdown (containers left
open or nested past any real page, an opening line padded with blanks) is parsed at 1x, 4x and
16x its size, and its CPU time may grow no faster than bytes^1.3 from one size to the next (the
least of several runs each, so a busy machine does not decide). The sizes stay inside one
parse window (``blocks.WINDOW``), so what is timed is the rules, not the window's widening."""

from __future__ import annotations

import math
import time

import pytest

from chunkproof.document.blocks import WINDOW, parse_blocks

GROWTH = 1.3
"""The largest exponent of CPU time over bytes allowed between two sizes."""
REPEATS = 5


def lines(make, n: int) -> str:
    return "# Title\n\n" + "".join(make(i) for i in range(n)) + "# After\n\nEnd.\n"


FAMILIES = {
    "unclosed :::{note}": lambda n: lines(lambda i: f":::{{note}}\nNote {i} text.\n\n", n),
    "unclosed ```{warning}": lambda n: lines(lambda i: f"```{{warning}}\nWarn {i} text.\n\n", n),
    "unclosed ///": lambda n: lines(lambda i: f"/// note | T{i}\nBody {i} text.\n\n", n),
    "unclosed :::note": lambda n: lines(lambda i: f":::note\nNote {i} text.\n\n", n),
    "unclosed ::::note": lambda n: lines(lambda i: f"::::note Title {i}\nText {i}.\n\n", n),
    "unclosed <Tabs>": lambda n: lines(lambda i: f"<Tabs>\nTabs {i} text.\n\n", n),
    "unclosed <TabItem>": lambda n: lines(
        lambda i: f'<TabItem value="v{i}" label="L{i}">\nItem {i} text.\n\n', n),
    "nested <Tabs>": lambda n: "<Tabs>\n" * n + "x\n" + "</Tabs>\n" * n,
    "MyST options never ended": lambda n: lines(lambda i: f"```{{note}}\n---\nkey{i}: v\n", n),
    "MyST :option: lines": lambda n: lines(lambda i: f":::{{note}}\n:opt{i}: v\n", n),
    "/// padded with blanks": lambda n: "/// note" + " " * (40 * n) + "x\n",
    "control: prose": lambda n: lines(lambda i: f"## H{i}\n\nSome prose {i} here.\n\n", n),
}
BASE = 40
"""Repetitions of a family's unit at 1x (16x stays inside one parse window)."""


def cpu_seconds(text: str) -> float:
    best = math.inf
    for _ in range(REPEATS):
        began = time.process_time()
        parse_blocks(text)
        best = min(best, time.process_time() - began)
    return best


@pytest.mark.parametrize("family", FAMILIES)
def test_parse_time_grows_linearly_with_the_page(family):
    texts = [FAMILIES[family](BASE * scale) for scale in (1, 4, 16)]
    assert len(texts[-1]) < WINDOW
    times = [cpu_seconds(text) for text in texts]
    exponents = [math.log(times[i + 1] / times[i]) / math.log(len(texts[i + 1]) / len(texts[i]))
                 for i in range(2)]
    assert max(exponents) <= GROWTH, (
        f"{family}: {[len(t) for t in texts]} bytes took "
        f"{[round(t, 4) for t in times]} CPU-s: exponents {[round(e, 2) for e in exponents]}")
