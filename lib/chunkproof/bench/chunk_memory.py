"""Memory of ``chunkproof chunk`` on one large file: the whole command's peak resident memory
(what ``/usr/bin/time -v`` calls its maximum resident set size), per input byte.

    python -m chunkproof.bench.chunk_memory [--mb 32] [--strategy ast_breadcrumb] [--size 1000]

Writes one generated Markdown file of ``--mb`` MB (``bench.scale.generated_markdown``) and runs
``chunkproof chunk`` on it, each run a new process: into a JSONL file and into a chunk folder
(``--out DIR/``), each with an empty content cache of its own (a first run), then again with
that cache full (a second run, which reads the parse the first stored) and with the content
cache off; prints each run's peak resident memory, bytes per input byte, and CPU and wall
seconds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..util.cache import CACHE_VARIABLE
from ..util.content_cache import SWITCH_VARIABLE
from .scale import generated_markdown


def measured(command: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``command`` (in ``env``); its peak resident memory (bytes) and CPU and wall
    seconds, read from the rusage of that one process when it ends."""
    began = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} ended with exit code {process.returncode}")
    return {"peak": usage.ru_maxrss * 1024, "cpu": usage.ru_utime + usage.ru_stime,
            "wall": time.perf_counter() - began}


CACHE_STATES = ("empty", "full", "off")
"""Each run's content cache, in the order they run: its own empty folder (what a first run
does), that folder as the first run left it (a second run: the parse read from the cache), or
turned off."""


def cache_env(cache: str, root: str) -> dict[str, str]:
    """The environment of a run whose content cache is ``cache`` (``CACHE_STATES``), its
    cache folder ``root``."""
    return {**os.environ, CACHE_VARIABLE: root,
            SWITCH_VARIABLE: "0" if cache == "off" else "1"}


def run(mb: float, strategy: str, size: int) -> None:
    with tempfile.TemporaryDirectory(prefix="chunkproof-bench-memory-") as tmp:
        folder = Path(tmp) / "corpus"
        folder.mkdir()
        text = generated_markdown(mb).encode()
        (folder / "big.md").write_bytes(text)
        chunk = [sys.executable, "-m", "chunkproof", "chunk", "--corpus", str(folder),
                 "--strategy", strategy, "--size", str(size), "--parse-seconds", "0",
                 "--max-file-mib", str(int(len(text) / 2**20) + 1)]
        print(f"one file of {len(text) / 1e6:.1f} MB, {strategy} at {size} chars; load average "
              f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
        print(f"{'output':<14}{'content cache':<15}{'peak MB':>9}{'B per input B':>15}"
              f"{'CPU s':>8}{'wall s':>8}")
        for label, out in (("JSONL file", str(Path(tmp) / "chunks.jsonl")),
                           ("chunk folder", f"{Path(tmp) / 'chunks'}/")):
            with tempfile.TemporaryDirectory(prefix="cache-", dir=tmp) as root:
                for cache in CACHE_STATES:  # empty, then full: the one folder
                    found = measured([*chunk, "--out", out], cache_env(cache, root))
                    print(f"{label:<14}{cache:<15}{found['peak'] / 1e6:>9.0f}"
                          f"{found['peak'] / len(text):>15.1f}{found['cpu']:>8.1f}"
                          f"{found['wall']:>8.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chunkproof.bench.chunk_memory",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=32.0, help="size of the file in MB")
    parser.add_argument("--strategy", default="ast_breadcrumb")
    parser.add_argument("--size", type=int, default=1000, help="chunk size in chars")
    args = parser.parse_args(argv)
    run(args.mb, args.strategy, args.size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
