"""Memory of ``chunkproof chunk`` on one large file: the whole command's peak resident memory
(what ``/usr/bin/time -v`` calls its maximum resident set size), per input byte.

    python -m chunkproof.bench.chunk_memory [--mb 32] [--strategy ast_breadcrumb] [--size 1000]

Writes one generated Markdown file of ``--mb`` MB (``bench.scale.generated_markdown``) and runs
``chunkproof chunk`` on it twice, each a new process: into a JSONL file, then into a chunk
folder (``--out DIR/``); prints each run's peak resident memory, bytes per input byte, and CPU
and wall seconds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .scale import generated_markdown


def measured(command: list[str]) -> dict[str, float]:
    """Run ``command``; its peak resident memory (bytes) and CPU and wall seconds, read from
    the rusage of that one process when it ends."""
    began = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} ended with exit code {process.returncode}")
    return {"peak": usage.ru_maxrss * 1024, "cpu": usage.ru_utime + usage.ru_stime,
            "wall": time.perf_counter() - began}


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
        print(f"{'output':<22}{'peak MB':>9}{'B per input B':>15}{'CPU s':>8}{'wall s':>8}")
        for label, out in (("JSONL file", str(Path(tmp) / "chunks.jsonl")),
                           ("chunk folder", f"{Path(tmp) / 'chunks'}/")):
            found = measured([*chunk, "--out", out])
            print(f"{label:<22}{found['peak'] / 1e6:>9.0f}{found['peak'] / len(text):>15.1f}"
                  f"{found['cpu']:>8.1f}{found['wall']:>8.1f}")


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
