"""Joining a Ray cluster (the optional ray extra): a missing extra, a malformed or unreachable
address and no running instance are each one line (MissingExtraError, ClusterError)."""

from __future__ import annotations

import os
import socket
from typing import Any

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
    try:
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": settings()})
    except Exception as err:  # Ray raises bare Exception for a local start that timed out
        ray.shutdown()
        raise ClusterError(address, str(err) or type(err).__name__) from None
    return ray, True


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
