"""The report's kernels, each started one notebook ahead (the next notebook's kernel boots while
the current notebook runs, so no notebook waits for its kernel's start) and each watched
(``kernel_watch``: a kernel that dies is described by how it ended)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .kernel_watch import KernelWatch, watched_manager

KERNEL = "python3"


def kernel_config(sockets: Path):
    """Kernels reach their client over IPC sockets (named ``sockets``-N) instead of local TCP
    ports: no port is opened, and no kernel warns that it runs over TCP without encryption.
    Each kernel gets its own ``sockets`` prefix in a fresh temporary folder, so kernels
    started at the same time never share a socket and none is left in the working folder."""
    from traitlets.config import Config

    return Config({"KernelManager": {"transport": "ipc", "ip": str(sockets)}})


BLAS_THREADS = {"OPENBLAS_NUM_THREADS": "1"}
"""What a kernel's BLAS (numpy's and scipy's OpenBLAS) runs on unless the environment says
otherwise: one thread. A notebook's matrices are small (a paired test's sign vectors times its
differences, many times a report) and a second BLAS thread's start and spin-wait cost more CPU
than it saves: the significance table of a 12-config sweep on 2,688 queries took 3.5-4.0 CPU-s
with OpenBLAS's default threads on two cores and 2.2-2.9 CPU-s on one. The table is the same
either way."""


def kernel_env() -> dict[str, str]:
    """The environment a kernel starts with: this process's, its ``PYTHONPATH`` entries made
    absolute from the folder the command was run in (a kernel works in another folder, and a
    plug-in strategy named on ``PYTHONPATH=.`` must import there as it does here), and BLAS
    on one thread unless this process's environment says otherwise (``BLAS_THREADS``)."""
    env = {**BLAS_THREADS, **os.environ}
    entries = [e for e in env.get("PYTHONPATH", "").split(os.pathsep) if e]
    if entries:
        env["PYTHONPATH"] = os.pathsep.join(str(Path(e).resolve()) for e in entries)
    return env


class Kernels:
    """``count`` kernels handed out in turn (``take``), the next one started as one is taken;
    each asked to shut down when its notebook is done (``done``) and waited for once it has
    gone, or when the report ends (every kernel left is then ended)."""

    def __init__(self, cwd: Path, count: int):
        self.cwd, self.left = cwd, count
        self.ahead: tuple[Any, Path] | None = None
        self.running: list[tuple[Any, Path]] = []
        self.stopping: list[tuple[Any, Path]] = []
        self.watches: dict[int, KernelWatch] = {}
        """Each kernel's watch, by its manager's ``id``."""

    def watch(self, manager) -> KernelWatch:
        """What is known of ``manager``'s kernel (its stderr, memory, how it ended)."""
        return self.watches[id(manager)]

    def _start(self) -> tuple[Any, Path]:
        sockets = Path(tempfile.mkdtemp(prefix="chunkproof-kernel-"))
        watch = KernelWatch(sockets / "kernel.stderr")
        manager = watched_manager(watch)(kernel_name=KERNEL,
                                         config=kernel_config(sockets / "kernel"))
        self.watches[id(manager)] = watch
        try:
            manager.start_kernel(cwd=str(self.cwd), env=kernel_env())
        except BaseException:
            shutil.rmtree(sockets, ignore_errors=True)
            raise
        return manager, sockets

    def take(self):
        """A started kernel for the next notebook (its KernelManager); the one after it
        starts now, while this one runs."""
        self._reap(wait=False)
        kernel = self.ahead or self._start()
        self.running.append(kernel)
        self.left -= 1
        self.ahead = None
        if self.left > 0:
            self.ahead = self._start()
        return kernel[0]

    def done(self, manager) -> None:
        """Ask ``manager``'s kernel to shut down (its notebook has run), without waiting: it
        ends while the next notebook runs."""
        for kernel in [k for k in self.running if k[0] is manager]:
            self.running.remove(kernel)
            try:
                manager.request_shutdown()
            except Exception:  # its channel is gone: it is ended when reaped
                pass
            self.stopping.append(kernel)

    def _reap(self, wait: bool) -> None:
        """Wait for the kernels asked to shut down (``wait``: ending those that do not), or
        only collect those already gone."""
        for kernel in list(self.stopping):
            manager, sockets = kernel
            if wait or not manager.is_alive():
                self.stopping.remove(kernel)
                self.watches.pop(id(manager)).stop()
                try:
                    manager.finish_shutdown()  # killed after its wait
                    manager.cleanup_resources()
                finally:
                    shutil.rmtree(sockets, ignore_errors=True)

    def __enter__(self) -> Kernels:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._reap(wait=True)
        finally:
            for kernel in [*self.running, *([self.ahead] if self.ahead else [])]:
                _stop(kernel)
            for watch in self.watches.values():
                watch.stop()
            self.running, self.ahead, self.watches = [], None, {}


def _stop(kernel: tuple[Any, Path]) -> None:
    manager, sockets = kernel
    try:
        if manager.has_kernel:
            manager.shutdown_kernel(now=True)
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
