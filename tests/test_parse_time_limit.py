"""A document whose parse uses more CPU time than the limit: a file is skipped with its reason
and the rest loads; a text handed to the API stops with one error; time spent waiting, or
spent by other threads, does not count."""

from __future__ import annotations

import multiprocessing
import threading
import time

import pytest

from chunkproof import cli
from chunkproof.document import corpus as corpus_module
from chunkproof.document.corpus import load_corpus
from chunkproof.document.time_limit import ENV, PARSE_SECONDS, parse_limit, time_limit
from chunkproof.errors import ConfigError, ParseTimeLimitError

SLOW = "slow.md"


SLOW_TEXT = "# slow\n\nA page that parses for long.\n"


def slow_parser(monkeypatch, seconds: float = 30, *, busy: bool = True) -> None:
    """Parsing ``SLOW_TEXT`` from now on takes ``seconds``: busy, as a parser stuck on a
    hostile file is, or waiting (``busy=False``), as a process on a loaded machine does."""
    real = corpus_module.parse_text

    def slow_parse(text, *args):
        if text == SLOW_TEXT:
            end = time.monotonic() + seconds
            while busy and time.monotonic() < end:
                pass
            time.sleep(max(end - time.monotonic(), 0))
        return real(text, *args)

    monkeypatch.setattr(corpus_module, "parse_text", slow_parse)


def pages(folder):
    """Three pages, one of them ``SLOW_TEXT``."""
    for name in ("a.md", "z.md"):
        (folder / name).write_text(f"# {name}\n\nA page called {name}.\n", encoding="utf-8")
    (folder / SLOW).write_text(SLOW_TEXT, encoding="utf-8")
    return folder


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    """Three pages, one of which (slow.md) parses for 30 s."""
    slow_parser(monkeypatch)
    return pages(tmp_path)


def skipped(corpus) -> dict[str, str]:
    return {s.path: s.reason for s in corpus.skipped}


def test_a_file_over_the_time_limit_is_skipped_and_the_rest_loads(folder):
    began = time.monotonic()
    corpus = load_corpus(folder, parse_seconds=0.3)
    assert time.monotonic() - began < 20
    assert [d.id for d in corpus] == ["a.md", "z.md"]
    assert skipped(corpus) == {SLOW: f"took more than the 0.3 CPU-s limit to parse ({ENV} or "
                                     "parse_seconds sets it): skipped"}
    assert {"path": SLOW, "status": "skipped", "reason": skipped(corpus)[SLOW]} in corpus.report()


def test_the_limit_comes_from_the_environment(folder, monkeypatch):
    monkeypatch.setenv(ENV, "0.2")
    assert SLOW in skipped(load_corpus(folder))
    monkeypatch.setenv(ENV, "soon")
    with pytest.raises(ConfigError, match=f"{ENV}: expected seconds per file.*got 'soon'"):
        load_corpus(folder)


def test_the_default_limit_and_bad_values():
    assert parse_limit() == PARSE_SECONDS == 60
    assert parse_limit(0) == 0  # no limit
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="parse_seconds: expected seconds per file"):
            parse_limit(bad)


def _load_in_worker(folder, queue):
    corpus = load_corpus(folder, parse_seconds=0.3)
    queue.put((len(corpus), skipped(corpus)))


def test_the_limit_holds_in_a_pool_worker_process(folder):
    context = multiprocessing.get_context("fork")  # the worker inherits the slow parser
    queue = context.Queue()
    worker = context.Process(target=_load_in_worker, args=(folder, queue))
    worker.start()
    loaded, reasons = queue.get(timeout=60)
    worker.join(timeout=60)
    assert loaded == 2 and SLOW in reasons


def test_without_timer_signals_files_load_without_the_limit_and_a_warning_says_so():
    found = {}

    def work():
        with pytest.warns(RuntimeWarning, match="needs timer signals"), time_limit(0.05):
            time.sleep(0.2)
            found["done"] = True

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert found == {"done": True}


def spin(seconds: float) -> None:
    """Use ``seconds`` of this thread's CPU time."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_an_outer_timer_survives_the_limit():
    import signal

    fired = []
    previous = signal.signal(signal.SIGPROF, lambda *_: fired.append(True))
    signal.setitimer(signal.ITIMER_PROF, 0.5)
    try:
        with time_limit(5):
            pass
        with pytest.raises(ParseTimeLimitError):
            with time_limit(0.05):
                spin(1)
        spin(0.8)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
    assert fired == [True]


def test_waiting_does_not_count_against_the_limit(tmp_path, monkeypatch):
    """On a loaded machine a parse waits for the CPU: only the CPU time it uses counts."""
    slow_parser(monkeypatch, 1.0, busy=False)
    corpus = load_corpus(pages(tmp_path), parse_seconds=0.3)
    assert [d.id for d in corpus] == ["a.md", SLOW, "z.md"] and not corpus.skipped


def test_what_other_threads_use_does_not_count_against_the_limit():
    other = threading.Thread(target=spin, args=(1.5,))
    other.start()
    try:
        with time_limit(0.3):
            time.sleep(0.6)  # the process uses CPU time meanwhile, this thread none
            spin(0.1)
    finally:
        other.join()


def test_the_api_has_the_same_limit(monkeypatch):
    from chunkproof import chunk_text, make_config, make_document

    slow_parser(monkeypatch)
    began = time.process_time()
    with pytest.raises(ParseTimeLimitError, match="took more than the 0.2 CPU-s limit"):
        make_document(SLOW, SLOW_TEXT, parse_seconds=0.2)
    monkeypatch.setenv(ENV, "0.2")
    with pytest.raises(ParseTimeLimitError, match=f"({ENV} or parse_seconds sets it)"):
        chunk_text(SLOW_TEXT, make_config(strategy="ast_merge", size=200))
    assert time.process_time() - began < 10
    assert make_document("quick.md", "# Quick\n\nText.\n").title == "Quick"


@pytest.mark.needs("langchain")
def test_an_adapter_leaves_out_a_document_past_the_limit_and_chunks_the_rest(monkeypatch):
    from chunkproof.errors import SkippedDocumentWarning
    from chunkproof.integrations.langchain import ChunkproofTextSplitter

    slow_parser(monkeypatch)
    monkeypatch.setenv(ENV, "0.2")
    splitter = ChunkproofTextSplitter(strategy="ast_merge", size=200)
    with pytest.warns(SkippedDocumentWarning, match=f"{SLOW}: took more than .*: left out"):
        pieces = splitter.create_documents(["# A\n\nFirst page.\n", SLOW_TEXT],
                                           [{"source": "a.md"}, {"source": SLOW}])
    assert [p.metadata["source"] for p in pieces] == ["a.md"]


def test_the_cli_option_sets_the_limit_in_one_line(folder, capsys, monkeypatch):
    monkeypatch.setenv(ENV, "60")  # restored after the test; main sets it for its process
    began = time.monotonic()
    assert cli.main(["summary", "--corpus", str(folder), "--parse-seconds", "0.3"]) == 0
    assert time.monotonic() - began < 20 and capsys.readouterr().out
    assert corpus_module.os.environ[ENV] == "0.3"
    assert cli.main(["summary", "--corpus", str(folder), "--parse-seconds", "-2"]) == 2
    assert capsys.readouterr().err.strip() == (
        "chunkproof: error: --parse-seconds: expected seconds per file, a number >= 0 "
        "(0: no limit); got -2.0")
