"""A notebook whose kernel dies fails the report with the cause: the signal that ended it, the
last lines it wrote to stderr (a native crash's traceback, faulthandler being on) and the most
memory it held; it is run once, never again."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from chunkproof.notebooks import kernel_watch
from chunkproof.notebooks.report import build_report
from conftest import FIXTURES

MINI = FIXTURES / "mini_corpus"
HOLD = 300_000_000
"""Bytes the dying notebook holds for a while before it dies."""


def dying_notebook(path, marker):
    cells = [
        f"from pathlib import Path\nwith Path({str(marker)!r}).open('a') as f:\n"
        "    f.write('ran\\n')",
        f"import time\nheld = bytearray({HOLD})\nheld[::4096] = b'x' * len(held[::4096])\n"
        "time.sleep(2.5)",
        "import os, signal, sys\nprint('about to crash', file=sys.__stderr__, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGSEGV)",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "language": "python",
                                       "display_name": "Python 3"}
    nbformat.write(notebook, path)
    return path


@pytest.mark.slow
def test_a_dead_kernel_is_reported_with_its_signal_stderr_and_memory(tmp_path, monkeypatch):
    # a kernel under pytest leaves its descriptors alone whatever it is told: be a plain run
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    marker = tmp_path / "ran.txt"
    source = dying_notebook(tmp_path / "99_dies.ipynb", marker)
    report = build_report(tmp_path / "out", corpus=str(MINI), queries=str(MINI / "queries.jsonl"),
                          notebooks=[str(source)], progress=False)
    (run,) = report.runs
    assert run.status == "failed" and report.exit_code == 1, (run.status, run.error)
    first = run.error.splitlines()[0]
    assert first.startswith("DeadKernelError: Kernel died: ended by SIGSEGV (signal 11)"), first
    peak = int(first.split("peak memory: kernel ")[1].split(" MB")[0].replace(",", ""))
    assert peak * 1_000_000 >= HOLD
    assert "about to crash" in run.error
    assert "Fatal Python error: Segmentation fault" in run.error  # faulthandler was on
    assert "Current thread" in run.error  # the crashing thread's stack
    assert marker.read_text() == "ran\n"  # run once: nothing retried
    assert "ended by SIGSEGV" in report.index.read_text()


@pytest.mark.parametrize(("code", "said"), [
    (-signal.SIGKILL, "ended by SIGKILL (signal 9) (sent by the kernel's out-of-memory killer"),
    (-signal.SIGABRT, "ended by SIGABRT (signal 6)"),
    (1, "exited with status 1"),
    (None, "its exit status is unknown"),
])
def test_how_a_kernel_ended_is_said(tmp_path, code, said):
    watch = kernel_watch.KernelWatch(tmp_path / "none.stderr", returncode=code)
    text = watch.death()
    assert text.startswith(said) and "peak memory: kernel not measured" in text
    assert text.endswith("it wrote nothing to stderr")


def test_the_stderr_tail_keeps_the_last_lines(tmp_path):
    path = tmp_path / "k.stderr"
    path.write_text("".join(f"line {i}\n" for i in range(100)))
    tail = kernel_watch.stderr_tail(path).splitlines()
    assert tail == [f"line {i}" for i in range(100 - kernel_watch.TAIL_LINES, 100)]


def test_the_stderr_tail_starts_at_a_native_crash_report(tmp_path):
    path = tmp_path / "k.stderr"
    path.write_text("noise\n\n#\n# Fatal error in , line 0\n# Fatal process out of memory: "
                    "Zone\n#\n" + "".join(f"    lib.so(+0x{i:x}) [0x7f]\n" for i in range(40)))
    tail = kernel_watch.stderr_tail(path)
    assert tail.startswith("noise\n\n#\n# Fatal error in , line 0\n# Fatal process out of memory")
    assert len(tail.splitlines()) == 5 + kernel_watch.TAIL_LINES  # 4 before, the line, 15 after


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit (util-linux)")
def test_a_limit_that_kills_the_chart_renderer_is_refused_before_anything_runs(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(["prlimit", "--as=4000000000", sys.executable, "-m", "chunkproof",
                           "report", "--corpus", str(MINI), "--out", str(out)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 2, done.stderr[-2000:]
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("chunkproof: error: the chart renderer (vl-convert) cannot run here: "
                           "a test chart ended by SIGTRAP"), line
    assert "Fatal process out of memory" in line and "ulimit -v" in line
    assert not out.exists()  # no folder made, no kernel started


def test_the_memory_watch_searches_the_machine_for_a_kernels_processes_seldom(monkeypatch):
    """Each sample measures the kernel and the processes it started, but only one sample in
    TREE_EVERY reads every process on the machine to find them."""
    import time

    import psutil

    searches = []
    children = psutil.Process.children
    monkeypatch.setattr(psutil.Process, "children",
                        lambda self, **kw: searches.append(1) or children(self, **kw))
    monkeypatch.setattr(kernel_watch, "SAMPLE_SECONDS", 0.01)
    holding = "import time; held = bytearray(10**8); held[::4096] = b'x' * len(held[::4096]); " \
        "print(flush=True); time.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", holding], stdout=subprocess.PIPE)
    child.stdout.readline()
    try:
        watch = kernel_watch.KernelWatch(Path("unused"))
        watch.start(os.getpid())
        time.sleep(0.5)
        watch.stop()
        own = psutil.Process().memory_info().rss
        assert watch.tree_peak >= own + 90_000_000  # the child's 100 MB counted
        samples = 0.5 / 0.01
        assert 0 < len(searches) <= samples / kernel_watch.TREE_EVERY + 2
    finally:
        child.kill()
        child.wait()
