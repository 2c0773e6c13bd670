"""Scale benchmark: generated documents of growing size and heading count, so work that grows
faster than the input shows as a rising column.

    python -m chunklab.bench --scale [--scale-mb 5 10 20 50] [--headings 10000 20000 40000]

Each measurement runs in a fresh process: CPU seconds of that process (documents made, so
parsed, then chunked; the boundary view drawn and the explorer redrawn) and its peak resident
memory beyond what it held once the input text was made, per input byte.
"""

from __future__ import annotations

import multiprocessing
import resource
import time

from .evaluation.defaults import DEFAULT_STRATEGIES

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


def _rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _chunk_once(strategy: str, megabytes: float, size: int) -> dict:
    from .chunking.build import chunk_document
    from .chunking.config import make_config
    from .document.corpus import make_document

    config = make_config(strategy=strategy, size=size)
    chunk_document(make_document("warm.md", generated_markdown(0.01)), config)  # imports
    text = generated_markdown(megabytes)
    before = _rss_bytes()
    began = time.process_time()
    chunks = chunk_document(make_document("big.md", text), config)
    seconds = time.process_time() - began
    return {"seconds": seconds, "bytes": len(text.encode()), "chunks": len(chunks),
            "memory": max(_rss_bytes() - before, 0)}


def _view_once(headings: int, size: int) -> dict:
    from .chunking.build import chunk_document
    from .chunking.config import make_config
    from .document.corpus import Corpus, make_document
    from .viz.boundaries import BoundaryView
    from .viz.explorer import Explorer

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


def _in_fresh_process(func, *args) -> dict:
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(func, args)


def run_scale(sizes: list[float], heading_counts: list[int], size: int,
              strategies: tuple[str, ...] = DEFAULT_STRATEGIES) -> dict:
    """Print and return CPU s per MB and memory per input byte for every strategy and size,
    and CPU s per 1000 headings of the boundary view and one explorer redraw."""
    from .chunking.registry import REGISTRY

    found: dict = {"chunking": [], "view": []}
    print(f"{'strategy':<16}{'MB':>7}{'chunks':>9}{'CPU s':>9}{'s/MB':>8}{'bytes/byte':>12}")
    for strategy in (s for s in strategies if REGISTRY[s].available):
        for megabytes in sizes:
            row = {"strategy": strategy, "MB": megabytes,
                   **_in_fresh_process(_chunk_once, strategy, megabytes, size)}
            row["s/MB"] = row["seconds"] / (row["bytes"] / 1e6)
            row["bytes/byte"] = row["memory"] / row["bytes"]
            found["chunking"].append(row)
            print(f"{strategy:<16}{row['bytes'] / 1e6:>7.1f}{row['chunks']:>9}"
                  f"{row['seconds']:>9.2f}{row['s/MB']:>8.3f}{row['bytes/byte']:>12.1f}",
                  flush=True)
    print(f"{'headings':>9}{'chunks':>9}{'view s':>9}{'s/1k':>8}{'redraw s':>10}{'s/1k':>8}")
    for count in heading_counts:
        row = {"headings": count, **_in_fresh_process(_view_once, count, size)}
        found["view"].append(row)
        print(f"{count:>9}{row['chunks']:>9}{row['view']:>9.2f}{row['view'] * 1e3 / count:>8.3f}"
              f"{row['redraw']:>10.2f}{row['redraw'] * 1e3 / count:>8.3f}", flush=True)
    return found
