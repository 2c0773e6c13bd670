"""A file that takes too long to read and parse is skipped with its reason; the rest loads."""

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


@pytest.fixture()
def folder(tmp_path, monkeypatch):
    """Three pages, one of which (slow.md) parses for 30 s."""
    for name in ("a.md", SLOW, "z.md"):
        (tmp_path / name).write_text(f"# {name}\n\nA page called {name}.\n", encoding="utf-8")
    made = corpus_module.make_document

    def slow_parse(doc_id, text, **kwargs):
        if doc_id == SLOW:
            end = time.monotonic() + 30
            while time.monotonic() < end:  # busy, as a parser stuck on a hostile file is
                pass
        return made(doc_id, text, **kwargs)

    monkeypatch.setattr(corpus_module, "make_document", slow_parse)
    return tmp_path


def skipped(corpus) -> dict[str, str]:
    return {s.path: s.reason for s in corpus.skipped}


def test_a_file_over_the_time_limit_is_skipped_and_the_rest_loads(folder):
    began = time.monotonic()
    corpus = load_corpus(folder, parse_seconds=0.3)
    assert time.monotonic() - began < 20
    assert [d.id for d in corpus] == ["a.md", "z.md"]
    assert skipped(corpus) == {SLOW: f"took longer than the 0.3 s limit to read and parse "
                                     f"({ENV} sets it): skipped"}
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


def test_an_outer_timer_survives_the_limit():
    import signal

    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(True))
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with time_limit(5):
            pass
        with pytest.raises(ParseTimeLimitError):
            with time_limit(0.05):
                time.sleep(1)
        time.sleep(0.8)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert fired == [True]


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
