"""Sweep benchmark: what a sweep's cost grows with, every figure measured in one run.

    python -m chunkproof.bench --sweep [--corpus data/sample] [--queries FILE] [--mb 1]
                                     [--file-mb 1,4,16,32]

Prints: the start time of ``import chunkproof`` and ``chunkproof --help`` (fresh interpreters);
a BM25 sweep of one strategy at 1, 2, 4 and 8 sizes (the marginal cost of a size); the same
sweep with one worker and with every local core (the speed-up); the statistics' share of a
sweep's wall time at 12, 24 and 48 configs; the texts per second of a dense sweep's embedding
pass (cold cache) beside a bare ``SentenceTransformer.encode`` of the same texts, its limit
(with the dense extra); and CPU seconds and peak RSS per MB of one Markdown file of growing
size (each in a fresh process). The corpus is grown to ``--mb``
with copies of its documents (the originals keep their ids, so the queries still find their
gold), so that the work, not the start of the workers, dominates.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..document.corpus import Corpus, load_corpus, make_document
from ..evaluation.queries.queries import load_queries
from ..evaluation.run.engine import Engine, all_cores
from ..evaluation.run.runs import SweepParams
from ..evaluation.run.sweep import run_sweep
from .scale import peak_rss_bytes

STRATEGIES = ("rct", "mhs_rct", "ast_merge", "ast_breadcrumb")
SIZES = (200, 300, 400, 600, 800, 1000, 1200, 1600, 2000, 2400, 3200, 4000)
START = {"import chunkproof": ["-c", "import chunkproof"],
         "chunkproof --help": ["-m", "chunkproof", "--help"]}


def start_seconds(args: list[str], repeat: int = 3) -> float:
    """Best wall time of a fresh interpreter running ``args``."""
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        subprocess.run([sys.executable, *args], check=True, capture_output=True)
        best = min(best, time.perf_counter() - began)
    return best


def grown(corpus: Corpus, megabytes: float) -> Corpus:
    """The corpus plus copies of its documents (new ids) until ``megabytes``."""
    docs = list(corpus)
    size = sum(len(d.text.encode()) for d in docs)
    round_ = 1
    while size < megabytes * 1_000_000 and corpus.documents:
        for doc in corpus:
            docs.append(make_document(f"copy{round_}/{doc.id}",
                                      f"{doc.text}\n\n<!-- copy {round_} -->\n"))
            size += len(docs[-1].text.encode())
        round_ += 1
    return Corpus(corpus.root, tuple(docs), corpus.skipped)



def write_grown(corpus_dir: str, megabytes: float, folder: Path) -> tuple[int, int]:
    """``corpus_dir`` grown to ``megabytes`` (``grown``) written as files under
    ``folder``; its documents and bytes."""
    corpus = grown(load_corpus(corpus_dir), megabytes)
    size = 0
    for doc in corpus:
        path = folder / doc.id
        path.parent.mkdir(parents=True, exist_ok=True)
        size += path.write_bytes(doc.text.encode())
    return len(corpus), size

def timed_sweep(params: SweepParams, corpus: Corpus, workers: int | None = None
                ) -> dict[str, float]:
    """Wall seconds of a whole sweep (``total``) and of each of its stages."""
    began = time.perf_counter()
    result = run_sweep(params, None, corpus=corpus, progress=False,
                       engine=Engine(workers=workers))
    return {"total": time.perf_counter() - began, **result.run_info["seconds"]}


@contextmanager
def cold_cache():
    """An empty embedding cache for the duration (``CHUNKPROOF_CACHE`` set to a new folder)."""
    old = os.environ.get("CHUNKPROOF_CACHE")
    with tempfile.TemporaryDirectory() as folder:
        os.environ["CHUNKPROOF_CACHE"] = folder
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("CHUNKPROOF_CACHE", None)
            else:
                os.environ["CHUNKPROOF_CACHE"] = old


def embedding_pass(corpus: Corpus, base: dict[str, Any]) -> dict[str, Any] | None:
    """Texts per second of a dense sweep's embedding pass on a cold cache, and of a bare
    ``SentenceTransformer(model).encode`` of the same texts (the model loaded first, its
    load timed apart): the limit of the pass. None without the dense extra."""
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        return None
    from ..chunking.encoder import load_encoder

    params = SweepParams(**{**base, "retrievers": ("dense",)},
                         strategies=("ast_breadcrumb",), sizes=(800, 1600))
    with cold_cache():
        result = run_sweep(params, None, corpus=corpus, progress=False)
    texts = list(dict.fromkeys([q.query for q in load_queries(params.queries, corpus)]
                               + list(result.chunks["embed_text"])))
    began = time.perf_counter()
    model = load_encoder()  # SentenceTransformer(model folder), strictly offline
    load = time.perf_counter() - began
    began = time.perf_counter()
    model.encode(texts, show_progress_bar=False)
    bare = len(texts) / (time.perf_counter() - began)
    cache = result.run_info["embedding_cache"]
    return {"configs": len(params.configs()), "texts": len(texts), "embedded": cache["misses"],
            "sweep": cache["texts_per_second"], "bare": bare, "load": load,
            "ratio": cache["texts_per_second"] / bare}


def one_file(megabytes: float, corpus_dir: str) -> dict[str, float]:
    """CPU seconds of chunking one Markdown file of ``megabytes``, and the process's peak
    RSS above what it held before the file was read (run it in a fresh process)."""
    from ..chunking.build import chunk_document
    from ..chunking.config import make_config

    config = make_config(strategy="ast_breadcrumb", size=1000)
    chunk_document(make_document("warm.md", "# Warm\n\nup.\n"), config)  # lazy imports
    before = peak_rss_mb()
    texts = [d.text for d in load_corpus(corpus_dir)]
    parts, size = [], 0
    while size < megabytes * 1_000_000:
        for text in texts:
            parts.append(text)
            size += len(text.encode())
    text = "\n\n".join(parts)
    began = time.process_time()
    chunks = chunk_document(make_document("one.md", text), config)
    cpu = time.process_time() - began
    peak = peak_rss_mb()
    return {"MB": len(text.encode()) / 1_000_000, "cpu": cpu, "rss_mb": peak - before,
            "base_mb": before,
            "chunks": len(chunks)}


def peak_rss_mb() -> float:
    """This process's peak resident set in MB (``scale.peak_rss_bytes``)."""
    return peak_rss_bytes() / 1024 / 1024


def file_row(megabytes: float, corpus_dir: str) -> dict[str, float]:
    code = (f"import json; from chunkproof.bench.sweep import one_file; "
            f"print(json.dumps(one_file({megabytes!r}, {corpus_dir!r})))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run(corpus_dir: str, queries: str, megabytes: float, file_mb: list[float]) -> None:
    for name, args in START.items():
        print(f"{name:<20}{start_seconds(args):>8.2f} s (best of 3, fresh interpreter)")

    corpus = grown(load_corpus(corpus_dir), megabytes)
    mb = sum(len(d.text.encode()) for d in corpus) / 1_000_000
    print(f"\ncorpus: {len(corpus)} documents, {mb:.2f} MB; queries: {queries}; BM25")
    base: dict[str, Any] = {"corpus": corpus_dir, "queries": queries, "retrievers": ("bm25",)}

    print(f"\n{'sizes':>5}{'configs':>8}{'wall s':>9}{'chunk s':>9}{'chunk s/size':>14}")
    for n in (1, 2, 4, 8):
        seconds = timed_sweep(SweepParams(**base, strategies=("ast_breadcrumb",),
                                          sizes=SIZES[:n]), corpus)
        print(f"{n:>5}{n:>8}{seconds['total']:>9.2f}{seconds['chunk']:>9.2f}"
              f"{seconds['chunk'] / n:>14.2f}")

    cores = all_cores()
    params = SweepParams(**base, strategies=STRATEGIES[:2], sizes=SIZES[4:6])
    one = timed_sweep(params, corpus, workers=1)
    many = timed_sweep(params, corpus, workers=cores)
    print(f"\n{'workers':>7}{'wall s':>9}{'chunk s':>9}{'retrieve s':>12}   (4 configs)")
    for workers, seconds in ((1, one), (cores, many)):
        print(f"{workers:>7}{seconds['total']:>9.2f}{seconds['chunk']:>9.2f}"
              f"{seconds['retrieve']:>12.2f}")
    print(f"speed-up with {cores} workers: {one['total'] / many['total']:.2f}x")

    print(f"\n{'configs':>7}{'wall s':>9}{'statistics s':>14}{'share':>8}")
    for n_sizes in (3, 6, 12):
        seconds = timed_sweep(SweepParams(**base, strategies=STRATEGIES,
                                          sizes=SIZES[:n_sizes]), corpus)
        print(f"{len(STRATEGIES) * n_sizes:>7}{seconds['total']:>9.2f}"
              f"{seconds['statistics']:>14.2f}{seconds['statistics'] / seconds['total']:>8.1%}")

    print_embedding(embedding_pass(load_corpus(corpus_dir), base))

    print(f"\n{'file MB':>7}{'CPU s':>8}{'CPU s/MB':>10}{'RSS MB':>8}{'x input':>9}"
          "   (ast_breadcrumb, size 1000, one file, fresh process; RSS: peak above the "
          "process before reading the file)")
    for size in file_mb:
        row = file_row(size, corpus_dir)
        print(f"{row['MB']:>7.1f}{row['cpu']:>8.2f}{row['cpu'] / row['MB']:>10.2f}"
              f"{row['rss_mb']:>8.0f}{row['rss_mb'] / row['MB']:>9.1f}"
              f"   (process before: {row['base_mb']:.0f} MB)")


def print_embedding(row: dict[str, Any] | None) -> None:
    if row is None:
        print("\nembedding pass: not measured (the dense extra is not installed: "
              "pip install 'chunkproof[dense]')")
        return
    print(f"\nembedding pass ({row['configs']} configs, {row['texts']} distinct texts, "
          f"{row['embedded']} embedded by the sweep, cold cache): sweep {row['sweep']:.1f} "
          f"text/s, bare SentenceTransformer.encode {row['bare']:.1f} text/s "
          f"(model load {row['load']:.1f} s apart): {row['ratio']:.2f}x of the limit")
