"""Report benchmark: what a user waits for, the whole report, measured in one run.

    python -m chunkproof.bench.report [--corpus data/sample] [--queries FILE] [--grown-mb 20]
                                    [--skip-grown] [--skip-dense]
                                    [--site DIR] [--skip-site] [--site-only]

Prints: ``chunkproof report`` on a real site of the study (``SITE``) with queries mined from
its pages, with an empty content cache, its wall and CPU seconds and where they went;
``chunkproof report`` on the corpus (the ``make run`` grid) with an empty content cache,
then again after one page is edited (its parses and tokenisations reused), each with its wall
and CPU seconds (this process and every kernel it started) and where the time went (kernel
start, imports, cells, export per notebook; the kernel start + import share); the same report
on the corpus grown to ``--grown-mb`` MB with copies of its pages, on a smaller grid
(``GROWN_GRID``); a BM25 sweep with workers auto against one worker on the corpus and on the
grown corpus (the count auto chose, and the ratio); and, with the dense extra installed,
``chunkproof.bench.dense``'s figures (dense texts per CPU-s per runtime, top-5 agreement).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..document.corpus import load_corpus
from ..evaluation.run.defaults import (
    DEFAULT_BUDGETS,
    DEFAULT_RETRIEVERS,
    DEFAULT_SIZES,
    DEFAULT_STRATEGIES,
)
from ..evaluation.run.engine import Engine
from ..evaluation.run.runs import SweepParams
from ..evaluation.run.sweep import run_sweep
from ..notebooks.report import build_report
from ..notebooks.timing import start_share
from ..util.cache import CACHE_VARIABLE
from ..util.content_cache import SWITCH_VARIABLE
from .sweep import write_grown

DENSE_PACKAGES = ("sentence_transformers", "onnxruntime", "onnxscript")
"""What ``bench.dense`` runs on (the dense extra)."""
RUN_GRID: dict[str, Any] = {"sizes": list(DEFAULT_SIZES), "strategies": list(DEFAULT_STRATEGIES),
                            "retrievers": list(DEFAULT_RETRIEVERS),
                            "budgets": list(DEFAULT_BUDGETS)}
"""``make run``'s grid: 12 configs."""
GROWN_GRID: dict[str, Any] = {**RUN_GRID, "sizes": [600, 1200],
                              "strategies": ["rct", "ast_breadcrumb"]}
"""The grid on the grown corpus: 4 configs, so the report takes minutes, not an hour."""
SWEEP_GRID: dict[str, Any] = {"sizes": (600, 1200), "strategies": ("rct", "ast_breadcrumb"),
                              "retrievers": ("bm25",)}


PR_SET_CHILD_SUBREAPER = 36
"""Linux's ``prctl`` option that makes a process the parent of its orphaned descendants."""
REAP_SECONDS = 10.0
"""Seconds to wait, after a report, for the descendants it left to end."""


def cpu_now() -> float:
    """CPU seconds of this process and of every child it has waited for: the kernels, and,
    inside ``adopting_orphans``, every process they left behind (a sweep's forkserver, which
    has waited for its pool workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def set_subreaper(on: bool) -> bool:
    """Make this process (or stop making it) the parent of every descendant whose parent ends
    first; False where the system has no such option."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@contextmanager
def adopting_orphans(timeout: float = REAP_SECONDS) -> Iterator[bool]:
    """While it is open, this process adopts every descendant whose parent ends first (a
    kernel's forkserver outlives its kernel); at its end it waits for them, until none is
    left or ``timeout`` seconds, so that ``cpu_now`` counts them (and what they waited for:
    a sweep's pool workers). Yields False where the system cannot adopt (their CPU then goes
    uncounted)."""
    adopted = set_subreaper(True)
    try:
        yield adopted
    finally:
        end = time.monotonic() + timeout
        while adopted and time.monotonic() < end:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:  # no child left
                break
            if not pid:
                time.sleep(0.05)
        if adopted:
            set_subreaper(False)


@contextmanager
def environment(**values: str) -> Iterator[None]:
    """``os.environ`` with ``values`` set for the duration (what the kernels inherit)."""
    old = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def timed_report(corpus: str, queries: str, out: Path, grid: dict[str, Any]) -> dict:
    """Wall and CPU seconds of one report (every process it started, ``cpu_now``), and its
    split (``Report.times``)."""
    began, cpu = time.perf_counter(), cpu_now()
    with adopting_orphans() as adopted:
        report = build_report(out, corpus=corpus, queries=queries, progress=False,
                              overwrite=True, **grid)
    wall, used = time.perf_counter() - began, cpu_now() - cpu
    failed = [] if adopted else ["CPU: this system cannot adopt orphaned processes, so the "
                                 "figure leaves out the sweep's pool workers"]
    failed += [f"{r.name}: {r.error.splitlines()[0] if r.error else r.status}"
              for r in report.failed]
    times = report.times()
    return {"wall": wall, "cpu": used, "share": start_share(times), "lines":
            report.time_lines(), "failed": failed,
            "start": sum(t.start for t in times), "notebooks": sum(t.total for t in times)}


def print_report(label: str, row: dict) -> None:
    print(f"\n{label}: wall {row['wall']:.1f} s, CPU {row['cpu']:.1f} s; kernel start + "
          f"imports {row['start']:.1f} s of the notebooks' {row['notebooks']:.1f} s "
          f"({row['share']:.0%})")
    for line in row["lines"][1:]:
        print(f"  {line}")
    for line in row["failed"]:
        print(f"  FAILED {line}")


def edit_one_page(folder: Path) -> str:
    """Append a line to the first page of ``folder``; its id."""
    page = sorted(p for p in folder.rglob("*.md"))[0]
    with page.open("a", encoding="utf-8") as file:
        file.write("\nOne line added since the last report.\n")
    return page.relative_to(folder).as_posix()


def workers_rows(corpus: str, queries: str, label: str) -> list[dict]:
    """A BM25 sweep (``SWEEP_GRID``) with workers auto, then with one worker, three times each
    in turns (a machine that slows down slows both alike); the best of each."""
    docs = load_corpus(corpus)
    params = SweepParams(corpus=corpus, queries=queries, **SWEEP_GRID)
    best: dict[str, dict] = {}
    for _ in range(3):
        for name, engine in (("auto", Engine()), ("1", Engine(workers=1))):
            began = time.perf_counter()
            result = run_sweep(params, None, corpus=docs, progress=False, engine=engine)
            seconds = time.perf_counter() - began
            if name not in best or seconds < best[name]["wall"]:
                best[name] = {"label": label, "workers": name, "wall": seconds,
                              "chose": result.run_info["engine"]["workers"]}
    return [best["auto"], best["1"]]


def print_workers(rows: list[dict]) -> None:
    print(f"\n{'corpus':<28}{'auto chose':>11}{'auto s':>9}{'1 worker s':>12}{'1 / auto':>10}"
          f"   (BM25 sweep, {len(SWEEP_GRID['sizes']) * len(SWEEP_GRID['strategies'])} "
          f"configs, best of 3 in turns; load average {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} CPUs)")
    for auto, one in zip(rows[::2], rows[1::2], strict=True):
        same = "   (auto chose one process: the same engine, so the ratio is noise)"
        print(f"{auto['label']:<28}{auto['chose']:>11}{auto['wall']:>9.2f}{one['wall']:>12.2f}"
              f"{one['wall'] / auto['wall']:>10.2f}" + (same if auto["chose"] == 1 else ""))


def dense_figures() -> None:
    """``python -m chunkproof.bench.dense`` (the dense extra), its output as it prints it."""
    missing = [name for name in DENSE_PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        print(f"\ndense runtimes: not measured ({', '.join(missing)} not installed: "
              "make install-dense)")
        return
    print("\ndense runtimes (python -m chunkproof.bench.dense):", flush=True)
    done = subprocess.run([sys.executable, "-m", "chunkproof.bench.dense"], check=False)
    if done.returncode:
        print(f"dense runtimes: the bench ended with exit code {done.returncode}")


SITE = "data/study/mkdocs-material/docs"
"""A real site of the study (Material for MkDocs, 77 pages): its report runs on queries mined
from its pages, as a user without a query file gets."""


def site_report(site: str, root: Path) -> None:
    """``chunkproof report`` on ``site`` with mined queries and ``make run``'s grid, with an
    empty content cache: its wall and CPU seconds and where they went."""
    docs = load_corpus(site)
    label = (f"report on {site} ({len(docs)} pages, {sum(len(d.text) for d in docs) / 1e6:.2f}"
             f" MB), queries mined, grid: {RUN_GRID}, empty content cache")
    with environment(**{CACHE_VARIABLE: str(root / "site-cache"), SWITCH_VARIABLE: "1"}):
        print_report(label, timed_report(str(Path(site).resolve()), "", root / "out-site",
                                         RUN_GRID))


def run(corpus: str, queries: str, grown_mb: float, *, grown_too: bool = True,
        dense: bool = True, site: str = SITE, sample: bool = True) -> None:
    with tempfile.TemporaryDirectory(prefix="chunkproof-bench-report-") as tmp:
        root = Path(tmp)
        if site:
            site_report(site, root)
        if not sample:
            return
        here = root / "corpus"
        shutil.copytree(corpus, here)
        print(f"corpus {corpus}: {sum(len(d.text) for d in load_corpus(here)) / 1e6:.2f} MB; "
              f"grid: {RUN_GRID}; load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
        with environment(**{CACHE_VARIABLE: str(root / "cache"), SWITCH_VARIABLE: "1"}):
            print_report("report, empty content cache",
                         timed_report(str(here), queries, root / "out", RUN_GRID))
            page = edit_one_page(here)
            print_report(f"report again after editing {page} (its parses and tokens reused)",
                         timed_report(str(here), queries, root / "out", RUN_GRID))
            rows = workers_rows(str(here), queries, "corpus")
            if grown_too:
                big = root / "grown"
                mb = write_grown(corpus, grown_mb, big)[1] / 1e6
                print_report(f"report on the corpus grown to {mb:.1f} MB, grid {GROWN_GRID}, "
                             "empty content cache", timed_report(str(big), queries,
                                                                 root / "out-grown",
                                                                 GROWN_GRID))
                rows += workers_rows(str(big), queries, f"grown to {mb:.1f} MB")
        print_workers(rows)
    if dense:
        dense_figures()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m chunkproof.bench.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="data/sample")
    parser.add_argument("--queries", default="",
                        help="a JSONL query file (default: the corpus's queries.jsonl)")
    parser.add_argument("--grown-mb", type=float, default=20.0,
                        help="size in MB of the grown corpus")
    parser.add_argument("--skip-grown", action="store_true",
                        help="leave out the grown corpus (minutes of work)")
    parser.add_argument("--skip-dense", action="store_true",
                        help="leave out chunkproof.bench.dense")
    parser.add_argument("--site", default=SITE,
                        help="a real site whose report runs on mined queries first")
    parser.add_argument("--skip-site", action="store_true", help="leave out the site's report")
    parser.add_argument("--site-only", action="store_true",
                        help="the site's report alone (nothing on --corpus)")
    args = parser.parse_args(argv)
    queries = str(Path(args.queries or Path(args.corpus) / "queries.jsonl").resolve())
    run(args.corpus, queries, args.grown_mb, grown_too=not args.skip_grown,
        dense=not args.skip_dense and not args.site_only,
        site="" if args.skip_site else args.site, sample=not args.site_only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
