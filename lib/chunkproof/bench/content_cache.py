"""Content cache benchmark: what the parse and BM25 token caches cost when empty and save when
full, in CPU seconds.

    python -m chunkproof.bench.content_cache [--corpus data/sample] [--repeat 5]

Each repeat runs, in a fresh interpreter and a new cache folder: the work with the caches off,
then with them on and empty (cold), then again (warm). The work is the corpus loaded, then
chunked with the default grid (every default strategy at every default size) and the BM25
terms of every chunk made: the sweep's work the caches touch. Prints the median and least CPU
seconds of the load alone and of the whole run in each state, their ratios to the caches off,
and the size of the cache files.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..util.cache import CACHE_VARIABLE
from ..util.content_cache import SWITCH_VARIABLE

STATES = {"off": "0", "cold": "1", "warm": "1"}
"""The runs of a repeat, in order, and the content cache switch each runs with."""


def measure(corpus: str) -> dict[str, float]:
    """CPU seconds of this process loading ``corpus`` (``load``) and of the whole run (the
    load, the default grid's chunks, their BM25 terms: ``run``)."""
    from ..chunking.build import chunk_corpus
    from ..chunking.config import make_config
    from ..document.corpus import load_corpus
    from ..evaluation.retrieval.retrieve import lexical_terms
    from ..evaluation.run.defaults import DEFAULT_SIZES, DEFAULT_STRATEGIES
    from ..util.code_version import code_version

    code_version()  # a run digests the code once, whether the caches are on or not
    began = time.process_time()
    documents = load_corpus(corpus).require_documents()
    loaded = time.process_time()
    chunks = [chunk for strategy in DEFAULT_STRATEGIES for size in DEFAULT_SIZES
              for chunk in chunk_corpus(documents, make_config(strategy=strategy, size=size))]
    lexical_terms([chunk.embed_text for chunk in chunks])
    return {"load": loaded - began, "run": time.process_time() - began}


def run_state(corpus: str, folder: str, switch: str) -> dict[str, float]:
    """``measure`` in a fresh interpreter with the caches in ``folder``, switched ``switch``."""
    env = {**os.environ, CACHE_VARIABLE: folder, SWITCH_VARIABLE: switch}
    done = subprocess.run([sys.executable, "-m", "chunkproof.bench.content_cache", "--one",
                           corpus], env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def cache_bytes(folder: str) -> int:
    return sum(path.stat().st_size for path in Path(folder).iterdir() if path.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chunkproof.bench.content_cache",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="data/sample")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--one", metavar="CORPUS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one)))
        return 0
    found: dict[str, list[dict[str, float]]] = {state: [] for state in STATES}
    size = 0
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as folder:
            for state, switch in STATES.items():
                found[state].append(run_state(args.corpus, folder, switch))
            size = cache_bytes(folder)
    print(f"content caches on {args.corpus}, {args.repeat} repeats: CPU seconds, the median "
          "and the least of the repeats, and the ratio of the medians to the caches off")
    print(f"{'state':<7}{'load':>8}{'least':>8}{'x off':>8}{'run':>9}{'least':>8}{'x off':>8}")
    medians = {state: {part: statistics.median(r[part] for r in runs) for part in runs[0]}
               for state, runs in found.items()}
    for state, runs in found.items():
        cells = ""
        for part, width in (("load", 8), ("run", 9)):
            least = min(r[part] for r in runs)
            ratio = medians[state][part] / medians["off"][part]
            cells += f"{medians[state][part]:>{width}.3f}{least:>8.3f}{ratio:>8.3f}"
        print(f"{state:<7}{cells}")
    print(f"cache files after a warm run: {size / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
