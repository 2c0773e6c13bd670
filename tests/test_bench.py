"""The benchmark: a slow strategy is timed on fewer whole copies of the corpus, and every row
takes turns with the references it is compared with."""

from __future__ import annotations

import pytest

from chunkproof.bench.throughput import copies_within


def test_every_copy_when_the_passes_fit_the_budget():
    assert copies_within(0.1, copies=40, repeat=3, budget=60) == 40


def test_fewer_copies_when_they_do_not():
    assert copies_within(2.0, copies=40, repeat=3, budget=60) == 10


def test_never_fewer_than_one_copy():
    assert copies_within(100.0, copies=40, repeat=3, budget=60) == 1


def test_timers_take_turns_pass_by_pass():
    from chunkproof.bench.throughput import _together

    calls = []
    best = _together({"a": (calls.append, ["a1", "a2"]), "b": (calls.append, ["b1"])}, 2)
    assert calls == ["a1", "a2", "b1", "a1", "a2", "b1"]
    assert set(best) == {"a", "b"} and all(s >= 0 for s in best.values())


def test_every_row_has_its_ratio_to_the_parse_timed_with_it(capsys):
    from chunkproof.bench.throughput import run

    rows = run("data/sample", 0.05, 1000, 1, strategies=["ast_breadcrumb"])
    stages = [row["stage"] for row in rows]
    assert stages[0] == "block parse (markdown-it)" and rows[0]["x parse"] == 1
    assert "ast_breadcrumb" in stages
    for row in rows:
        assert row["x parse"] > 0 and row["MB/s"] > 0 and "references" not in row
    out = capsys.readouterr().out
    assert "timed pass by pass" in out


def test_langchain_header_and_recursive_splitter_is_a_reference():
    from chunkproof.bench.throughput import run

    rows = run("data/sample", 0.05, 1000, 1, strategies=["ast_breadcrumb"])
    stages = [row["stage"] for row in rows]
    assert "LangChain header + recursive" in stages
    ours = next(row for row in rows if row["stage"] == "ast_breadcrumb")
    reference = next(row for row in rows if row["stage"] == "LangChain header + recursive")
    assert reference["x LC+RCT"] == 1 and ours["x LC+RCT"] > 0


@pytest.mark.needs("tokenizer")
def test_the_strategy_is_timed_with_its_size_in_tokens_too():
    from chunkproof.bench.throughput import run

    rows = {row["stage"]: row for row in run("data/sample", 0.05, 1000, 1,
                                             strategies=["ast_breadcrumb"])}
    for stage in ("ast_breadcrumb, 250 tokens", "ast_breadcrumb, 250 tokens, min_size 62"):
        assert rows[stage]["seconds"] > 0 and rows[stage]["x parse"] > 0


def test_the_scale_bench_takes_its_points_and_strategies_from_the_command_line(
        monkeypatch, capsys):
    from chunkproof.bench import scale

    monkeypatch.setattr(scale, "_in_fresh_process", lambda func, *args: func(*args))
    assert scale.main(["--scale-mb", "0.02", "--headings", "30", "--size", "400",
                             "--strategies", "rct"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith("rct ")]
    assert len(rows) == 2  # one point of each kind, rct alone
    by_size, by_headings = rows
    assert 0 < int(by_size[2]) and int(by_headings[2]) == 30 and int(by_headings[3]) > 0
    view = [line.split() for line in out.splitlines() if line.split()[:1] == ["30"]]
    assert len(view) == 1 and int(view[0][1]) > 0  # the boundary view of 30 headings


def test_the_report_bench_grows_the_corpus_on_disk_and_edits_one_page(tmp_path):
    from chunkproof import load_corpus
    from chunkproof.bench.report import edit_one_page
    from chunkproof.bench.sweep import write_grown
    from conftest import SAMPLE

    mb = write_grown(str(SAMPLE), 0.3, tmp_path / "grown")[1] / 1e6
    grown = load_corpus(tmp_path / "grown")
    original = load_corpus(SAMPLE)
    assert mb >= 0.3 and len(grown) > len(original)
    assert {d.id for d in original} <= {d.id for d in grown}  # the queries' gold is there
    page = edit_one_page(tmp_path / "grown")
    assert load_corpus(tmp_path / "grown").get(page).text != grown.get(page).text


def test_the_report_bench_says_when_auto_chose_one_process(capsys):
    from chunkproof.bench.report import print_workers

    print_workers([{"label": "sample", "chose": 1, "wall": 2.0},
                   {"label": "sample", "chose": 1, "wall": 2.2},
                   {"label": "grown", "chose": 2, "wall": 10.0},
                   {"label": "grown", "chose": 1, "wall": 15.0}])
    lines = capsys.readouterr().out.splitlines()
    assert "same engine" in lines[-2] and lines[-1].split()[-1] == "1.50"


def test_the_chunk_engine_bench_writes_the_grown_corpus_the_sweep_bench_grows(tmp_path):
    from chunkproof import load_corpus
    from chunkproof.bench.sweep import grown, write_grown
    from chunkproof.document.corpus import text_digest
    from conftest import SAMPLE

    documents, written = write_grown(str(SAMPLE), 0.2, tmp_path)
    expected = grown(load_corpus(SAMPLE), 0.2)
    loaded = load_corpus(tmp_path)
    assert documents == len(expected) == len(loaded) > len(load_corpus(SAMPLE))
    assert written >= 0.2 * 1_000_000 and not loaded.skipped
    assert sorted((d.id, text_digest(d.text)) for d in loaded) == sorted(
        (d.id, text_digest(d.text)) for d in expected)


def test_the_report_bench_says_which_dense_packages_it_lacks(monkeypatch, capsys):
    import importlib.util

    from chunkproof.bench import report

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    monkeypatch.setattr(report.subprocess, "run", lambda *a, **k: pytest.fail("ran the bench"))
    report.dense_figures()
    assert "onnxruntime" in capsys.readouterr().out


def test_the_memory_bench_runs_chunk_on_one_file_into_both_outputs(capsys):
    """Each output's peak memory per input byte, read from the rusage of its own process."""
    from chunkproof.bench.chunk_memory import main

    assert main(["--mb", "0.2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {(line[:14].strip(), line[14:29].strip()): line[29:].split() for line in lines[2:]}
    assert set(rows) == {(output, cache) for output in ("JSONL file", "chunk folder")
                         for cache in ("empty", "full", "off")}
    for peak_mb, per_byte, cpu, _wall in rows.values():
        assert float(peak_mb) > 0 and float(per_byte) > 0 and float(cpu) > 0


def test_the_report_bench_runs_a_real_site_on_mined_queries(monkeypatch, capsys):
    """--site-only: one report on the site, its queries mined (no query file), the grid of
    make run, nothing on the sample."""
    from chunkproof.bench import report

    calls = []

    def timed(corpus, queries, out, grid):
        calls.append((corpus, queries, grid))
        return {"wall": 2.0, "cpu": 1.5, "share": 0.25, "lines": ["head", "row"],
                "failed": [], "start": 0.5, "notebooks": 2.0}

    monkeypatch.setattr(report, "timed_report", timed)
    assert report.main(["--site-only", "--site", "tests/fixtures/mini_corpus"]) == 0
    [(corpus, queries, grid)] = calls
    assert corpus.endswith("tests/fixtures/mini_corpus") and queries == ""
    assert grid == report.RUN_GRID
    out = capsys.readouterr().out
    assert "queries mined" in out and "CPU 1.5 s" in out


def test_the_report_bench_counts_the_processes_that_outlive_their_parent():
    """A grandchild that outlives its parent (as a sweep's forkserver outlives its kernel) is
    counted in the report's CPU seconds: adopted, waited for, its CPU in ``cpu_now``."""
    import subprocess
    import sys

    from chunkproof.bench import report

    burn = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end: pass"
    orphaning = (f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {burn!r}])")
    before = report.cpu_now()
    with report.adopting_orphans() as adopted:
        subprocess.run([sys.executable, "-c", orphaning], check=True)
    assert adopted
    assert report.cpu_now() - before >= 0.4
