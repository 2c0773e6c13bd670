"""Scale benchmark: generated documents of growing size and heading count, so work that grows
faster than the input shows as a rising column.

    python -m chunkproof.bench.scale [--scale-mb 5 10 20 50] [--headings 10000 20000 40000]
                                   [--size 1000] [--strategies ...]   (default: SCALE_STRATEGIES)
    python -m chunkproof.bench --scale ...   (the same; default strategies: the default ones)

Each measurement runs in a fresh process: CPU seconds of that process (the document made, so
parsed, then chunked; the boundary view drawn and the explorer redrawn), per MB and per 1000
headings, and its peak resident memory (VmHWM) above what it held once chunkproof and the
strategy were loaded (the input text included), per input byte. A point that takes longer
than ``POINT_SECONDS`` is stopped and reported, and the rest still runs.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..evaluation.run.defaults import DEFAULT_STRATEGIES
from ..util.progress import progress_bar

POINT_SECONDS = 1200
"""Wall seconds one measurement may take before it is stopped (a quadratic path at 50 MB)."""

SECTION = """## Section {n}: node pool {n}

Each node of pool {n} keeps its data on two disks. Replace a failed disk before the second
one fails; the pool rebuilds in about {n} minutes per terabyte.

- check the pool with `pool status {n}`
- drain the node, then swap the disk
  - wait for the rebuild to finish

```bash
pool drain {n} && pool replace {n} --disk sdb
```

| disk | size | state |
|---|---|---|
| sda | 4 TB | ok |
| sdb | 4 TB | rebuilding |

"""
HEADING = "### Setting {n}\n\nThe value of setting {n}, in seconds.\n\n"


def generated_markdown(megabytes: float) -> str:
    """Sections (headings, prose, a nested list, a fence, a table) up to ``megabytes``."""
    one = len(SECTION.format(n=10_000))
    count = max(1, int(megabytes * 1_000_000 / one))
    return "# Operations guide\n\n" + "".join(SECTION.format(n=n) for n in range(count))


def headed_markdown(headings: int) -> str:
    """``headings`` short sections under one title."""
    return "# Settings\n\n" + "".join(HEADING.format(n=n) for n in range(headings - 1))


def peak_rss_bytes() -> int:
    """This process's peak resident set (VmHWM: unlike ru_maxrss, it does not carry a
    parent's peak over into a new program); 0 where /proc is missing (not Linux)."""
    status = Path("/proc/self/status")
    for line in status.read_text().splitlines() if status.exists() else ():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024  # kB
    return 0


def heading_count(text: str) -> int:
    """ATX headings of a generated document (no other line of them starts with ``#``)."""
    return sum(1 for line in text.splitlines() if line.startswith("#"))


INPUTS: dict[str, Callable[[Any], str]] = {"MB": generated_markdown, "headings": headed_markdown}
"""What a point's amount is of: megabytes of sections, or a count of short sections."""


def _chunk_once(strategy: str, kind: str, amount: float, size: int) -> dict:
    from ..chunking.build import chunk_document
    from ..chunking.config import make_config
    from ..document.corpus import make_document

    config = make_config(strategy=strategy, size=size)
    chunk_document(make_document("warm.md", generated_markdown(0.01)), config)  # imports
    before = peak_rss_bytes()
    text = INPUTS[kind](amount)
    began = time.process_time()
    chunks = chunk_document(make_document("big.md", text), config)
    seconds = time.process_time() - began
    return {"seconds": seconds, "bytes": len(text.encode()), "headings": heading_count(text),
            "chunks": len(chunks), "memory": max(peak_rss_bytes() - before, 0)}


def _view_once(headings: int, size: int) -> dict:
    from ..chunking.build import chunk_document
    from ..chunking.config import make_config
    from ..document.corpus import Corpus, make_document
    from ..viz.boundaries import BoundaryView
    from ..viz.explorer import Explorer

    doc = make_document("headed.md", headed_markdown(headings))
    config = make_config(strategy="ast_breadcrumb", size=size)
    chunks = chunk_document(doc, config)
    began = time.process_time()
    BoundaryView(doc, chunks, config).html()
    view = time.process_time() - began
    explorer = Explorer(Corpus("memory", (doc,)), size=size)
    began = time.process_time()
    explorer.size.value = size // 2
    redraw = time.process_time() - began
    return {"view": view, "redraw": redraw, "chunks": len(chunks)}


def _in_fresh_process(func, *args) -> dict | None:
    """``func(*args)`` in a new interpreter; None when it outlasts ``POINT_SECONDS``."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        try:
            return pool.apply_async(func, args).get(POINT_SECONDS)
        except multiprocessing.TimeoutError:
            return None  # leaving the block terminates the worker


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min), {os.cpu_count()} CPUs"


def run_scale(sizes: list[float], heading_counts: list[int], size: int,
              strategies: tuple[str, ...] = DEFAULT_STRATEGIES) -> dict:
    """Print and return, for every available strategy, CPU s per MB on generated documents of
    ``sizes`` MB and per 1000 headings on documents of ``heading_counts`` headings, with the
    peak memory per input byte; then CPU s per 1000 headings of the boundary view and one
    explorer redraw."""
    from ..chunking.registry import REGISTRY

    chosen = [s for s in strategies if REGISTRY[s].available]
    for name in (s for s in strategies if not REGISTRY[s].available):
        print(f"not run: {name} ({REGISTRY[name].status()})")
    points = [(s, kind, amount) for kind, amounts in (("MB", sizes), ("headings", heading_counts))
              for s in chosen for amount in amounts]
    found: dict = {"chunking": [], "view": []}
    print(f"start: {_load()}; size {size}; CPU s of a fresh process per point")
    bar = progress_bar(total=len(points) + len(heading_counts), desc="scale bench", unit="point")
    header = ""
    for strategy, kind, amount in points:
        if header != kind:
            header = kind
            bar.write(f"{'strategy':<18}{'MB':>7}{'headings':>10}{'chunks':>9}{'CPU s':>9}"
                      f"{'s/MB':>8}{'s/1k head':>11}{'bytes/byte':>12}   (by {kind})")
        bar.set_postfix_str(f"{strategy} {amount:g} {kind}")
        measured = _in_fresh_process(_chunk_once, strategy, kind, amount, size)
        bar.update()
        if measured is None:
            bar.write(f"{strategy:<18}{amount:>7g} {kind}: stopped after {POINT_SECONDS} s")
            continue
        row = {"strategy": strategy, "input": kind, "amount": amount, **measured}
        row["s/MB"] = row["seconds"] / (row["bytes"] / 1e6)
        row["s/1k headings"] = row["seconds"] * 1e3 / row["headings"]
        row["bytes/byte"] = row["memory"] / row["bytes"]
        found["chunking"].append(row)
        bar.write(f"{strategy:<18}{row['bytes'] / 1e6:>7.1f}{row['headings']:>10}"
                  f"{row['chunks']:>9}{row['seconds']:>9.2f}{row['s/MB']:>8.3f}"
                  f"{row['s/1k headings']:>11.3f}{row['bytes/byte']:>12.1f}")
    bar.write(f"{'headings':>9}{'chunks':>9}{'view s':>9}{'s/1k':>8}{'redraw s':>10}{'s/1k':>8}"
              "   (boundary view, explorer redraw; ast_breadcrumb)")
    for count in heading_counts:
        bar.set_postfix_str(f"view {count} headings")
        measured = _in_fresh_process(_view_once, count, size)
        bar.update()
        if measured is None:
            bar.write(f"{count:>9} headings: stopped after {POINT_SECONDS} s")
            continue
        row = {"headings": count, **measured}
        found["view"].append(row)
        bar.write(f"{count:>9}{row['chunks']:>9}{row['view']:>9.2f}"
                  f"{row['view'] * 1e3 / count:>8.3f}{row['redraw']:>10.2f}"
                  f"{row['redraw'] * 1e3 / count:>8.3f}")
    bar.close()
    print(f"end: {_load()}")
    return found


SCALE_STRATEGIES = ("rct", "mhs_rct", "mts", "emsts", "ast_merge", "ast_breadcrumb",
                    "heading_flush", "text_splitter_md", "chonkie_recursive", "llamaindex_md")
"""``make bench-scale``'s strategies: the baselines, the ast strategies that cut by size, and
the peers that handle a 50 MB file in minutes (not ``semantic_embed``, which embeds every
sentence, nor ``docling_hybrid``, about 45 CPU s per MB here); those not installed are listed
as not run."""



def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The scale bench's options (what ``run_scale`` takes but the strategies)."""
    parser.add_argument("--scale-mb", type=float, nargs="+", default=[5, 10, 20, 50],
                        help="sizes in MB of the generated documents")
    parser.add_argument("--headings", type=int, nargs="+", default=[10_000, 20_000, 40_000],
                        help="heading counts of the generated documents")


def main(argv: list[str] | None = None) -> int:
    from ..chunking.registry import REGISTRY

    parser = argparse.ArgumentParser(prog="python -m chunkproof.bench.scale", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    parser.add_argument("--size", type=int, default=1000, help="chunk size in chars")
    parser.add_argument("--strategies", nargs="+", choices=list(REGISTRY),
                        default=list(SCALE_STRATEGIES),
                        help="strategies to time (those not installed are listed as not run)")
    args = parser.parse_args(argv)
    run_scale(args.scale_mb, args.headings, args.size, tuple(args.strategies))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
