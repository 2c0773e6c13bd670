"""Joining a Ray cluster (the optional ray extra): a missing extra, a malformed or unreachable
address and no running instance are each one line (MissingExtraError, ClusterError); a local
start that fails stops every process it started."""

from __future__ import annotations

import os
import re
import socket
from typing import Any

import psutil

from ..errors import ClusterError, MissingExtraError

PROBE_SECONDS = 5.0
"""How long the address's port may take to accept a connection: Ray itself waits minutes for
a host that does not answer before it gives up."""
SETTINGS_PREFIX = "CHUNKPROOF_"
"""The environment variables that carry this process's settings (the tokenizer and encoder
window, the file size and parse time limits, the content cache) to the processes it starts."""
NAMED_BY_RAY = ("", "auto", "local")
"""Addresses Ray resolves itself, at once: a running instance (else a new local one), the
instance this machine belongs to, a new local instance."""


def ray_module(feature: str) -> Any:
    """The ``ray`` module; MissingExtraError naming ``feature`` when it is not installed."""
    try:
        import ray
    except ImportError:
        raise MissingExtraError(feature, "ray", "ray") from None
    return ray


def connect(address: str, *, feature: str) -> tuple[Any, bool]:
    """The ``ray`` module joined to ``address`` (empty: a running instance, else a new local
    one), and whether this call joined it (so its caller shuts it down); a process already
    joined stays as it is."""
    ray = ray_module(feature)
    if ray.is_initialized():
        return ray, False
    probe(address)
    before = descendants()
    try:
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": settings()})
    except Exception as err:  # Ray raises bare Exception for a local start that timed out
        started = [p for p in _children() if p.pid not in before]  # before Ray's own shutdown
        ray.shutdown()  # orphans the agents of a raylet it stops: they were listed first
        stop(started)
        stop(of_session(os.getpid()))  # an agent started after the list, orphaned since
        raise ClusterError(address, str(err) or type(err).__name__) from None
    return ray, True


STOP_SECONDS = 5.0
"""How long the processes a failed start left are given to end on SIGTERM before SIGKILL."""


def _children() -> list[psutil.Process]:
    return psutil.Process().children(recursive=True)


def of_session(pid: int) -> list[psutil.Process]:
    """The processes still running that name the Ray session the process ``pid`` started in
    their command line (Ray names the session folder ``session_<time>_<pid>``), wherever
    they were reparented."""
    session = re.compile(rf"session_[\d_-]+_{pid}\b")
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if session.search(" ".join(process.info["cmdline"] or [])):
                found.append(process)
        except psutil.Error:
            continue
    return found


def descendants() -> set[int]:
    """The process ids of this process's children, theirs and so on."""
    return {p.pid for p in _children()}


def stop(processes: list[psutil.Process]) -> None:
    """End ``processes`` (what a failed local start of Ray left: its GCS, raylet and their
    agents), each by its own id: SIGTERM, then SIGKILL for those still there after
    ``STOP_SECONDS``; one already gone is passed over."""
    for process in processes:
        try:
            process.terminate()
        except psutil.Error:
            continue
    _gone, alive = psutil.wait_procs(processes, timeout=STOP_SECONDS)
    for process in alive:
        try:
            process.kill()
        except psutil.Error:
            continue
    psutil.wait_procs(alive, timeout=STOP_SECONDS)


def settings() -> dict[str, str]:
    """This process's ``CHUNKPROOF_*`` settings, for every task and actor of the job: a cluster
    started before this command never saw its environment."""
    return {name: value for name, value in os.environ.items()
            if name.startswith(SETTINGS_PREFIX)}


def probe(address: str) -> None:
    """ClusterError unless ``address`` (``host:port`` or ``ray://host:port``) is one Ray
    resolves itself or its port accepts a connection within ``PROBE_SECONDS``."""
    if address.strip().lower() in NAMED_BY_RAY:
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ClusterError(address, "expected host:port, ray://host:port or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_SECONDS).close()
    except OSError as err:
        reason = "no answer" if isinstance(err, TimeoutError) else (err.strerror or str(err))
        raise ClusterError(address, f"{host}:{port}: {reason}") from None
