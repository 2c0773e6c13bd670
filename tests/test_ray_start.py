"""A local Ray start that fails stops every process it started: none is left running after the
command has said so in one line and exited."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import psutil
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.needs("ray")]

FAILING_START = """
import os
import ray._private.services as services

def node_never_registers(*args, **kwargs):  # as when the raylet or its agents miss their window
    raise Exception("the current node timed out during startup")

services.get_node = node_never_registers
from chunkproof.errors import ClusterError
from chunkproof.util.ray_cluster import connect

print(os.getpid(), flush=True)
try:
    connect("", feature="the ray engine")
except ClusterError as err:
    print(err, flush=True)
"""


def started_by(pid: int) -> list[psutil.Process]:
    """The processes of the Ray session process ``pid`` started (Ray names the session folder
    after the process that starts it: ``session_<time>_<pid>``)."""
    session = re.compile(rf"session_[\d_-]+_{pid}\b")
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if session.search(" ".join(process.info["cmdline"] or [])):
                found.append(process)
        except psutil.Error:
            continue
    return found


def test_a_failed_local_start_leaves_no_process_running(tmp_path):
    done = subprocess.run([sys.executable, "-c", FAILING_START], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path, env=os.environ.copy())
    pid, message = done.stdout.splitlines()[:2]
    assert "cannot join a Ray instance" in message and "timed out during startup" in message
    time.sleep(2)  # what would outlive the command has had time to show
    left = started_by(int(pid))
    for process in left:  # this test's own child started them: end them by their id
        process.kill()
    assert [" ".join(p.info["cmdline"])[:80] for p in left] == []
