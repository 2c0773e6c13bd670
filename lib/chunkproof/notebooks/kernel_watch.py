"""A report's kernels, watched: each starts with faulthandler on and its stderr kept in a file,
its memory (the kernel and every process it starts) is sampled while it runs, and a kernel
that dies is described by how it ended (exit status or signal), the last lines it wrote and
the most memory it held, with the out-of-memory kills counted meanwhile where the system says."""

from __future__ import annotations

import itertools
import os
import re
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from jupyter_client.manager import KernelManager

from ..errors import RendererError

KEEP_DESCRIPTORS = "--IPKernelApp.capture_fd_output=False"
"""The kernel option that leaves its stdout and stderr descriptors as they were given."""
SAMPLE_SECONDS = 0.5
"""Seconds between two samples of a kernel's memory."""
TREE_EVERY = 4
"""Samples between two searches for the processes a kernel started (each reads every process
on the machine; the ones found are sampled every time)."""
TAIL_LINES = 15
"""Lines of a dead kernel's stderr quoted in the report."""
TAIL_CHARS = 3000
"""Characters of those lines at most (the last ones kept)."""
CGROUP_FILES = ("/sys/fs/cgroup{path}/memory.events",
                "/sys/fs/cgroup/memory{path}/memory.oom_control")
"""Where the kernel's memory cgroup counts its out-of-memory kills (v2, then v1)."""


RENDER_CHECK = ("import vl_convert; vl_convert.vegalite_to_svg({'data': {'values': [{'a': 1}]}, "
                "'mark': 'bar', 'encoding': {'x': {'field': 'a', 'type': 'quantitative'}}})")
"""A chart drawn by the renderer every report page uses (vl-convert's V8, in process)."""


def check_renderer(timeout: float = 300.0) -> None:
    """Draw one chart in a process like a report kernel (same limits, same interpreter);
    RendererError in one line when it dies or fails, naming how and V8's fatal line: an
    address-space or data limit kills every kernel at its first chart, and the report's own
    process at the index page, so it is refused before anything starts."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", RENDER_CHECK], capture_output=True,
                          text=True, timeout=timeout, check=False)
    if done.returncode == 0:
        return
    lines = [line.strip(" #") for line in done.stderr.splitlines() if line.strip(" #")]
    said = next((line for line in lines if FATAL.search(line)), lines[-1] if lines else "")
    raise RendererError(f"the chart renderer (vl-convert) cannot run here: a test chart "
                        f"{_ending(done.returncode)}: {said or 'no message'}; an address-space "
                        "or data limit (ulimit -v, ulimit -d) is the usual cause: lift it, or "
                        "limit resident memory instead")


def oom_kills() -> int | None:
    """Processes the kernel out-of-memory killer has ended in this process's memory cgroup
    (None where the system does not say)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    paths = {part[0]: part[2] for part in (line.split(":", 2) for line in lines)
             if len(part) == 3}
    v1 = next((p for k, p in paths.items() if "memory" in k.split(",")), None)
    for template, path in zip(CGROUP_FILES, (paths.get(""), v1), strict=True):
        if path is None:
            continue
        try:
            text = Path(template.format(path=path.rstrip("/"))).read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
    return None


@dataclass
class KernelWatch:
    """What is known of one notebook's kernel: its stderr file, its memory peaks, its end."""

    stderr: Path
    kernel_peak: int = 0
    """Bytes: the kernel process's own peak resident memory."""
    tree_peak: int = 0
    """Bytes: the most the kernel and the processes it started held at one sample."""
    returncode: int | None = None
    """The kernel's exit status once it has ended (negative: the signal that ended it)."""
    oom_before: int | None = None
    pid: int | None = None
    _done: threading.Event = field(default_factory=threading.Event)

    def start(self, pid: int) -> None:
        """Sample the memory of process ``pid`` and its descendants until ``stop``."""
        self.pid = pid
        self.oom_before = oom_kills()
        threading.Thread(target=self._sample, args=(pid,), name="kernel-memory",
                         daemon=True).start()

    def stop(self) -> None:
        self._done.set()

    def cpu_seconds(self) -> float:
        """CPU seconds (user and system) the kernel and every process it started have used so
        far: those still running, and those ended once their parent has waited for them (a
        sweep's pool workers, through the forkserver that started them); 0.0 when the kernel
        is gone or was never started."""
        try:
            kernel = psutil.Process(self.pid) if self.pid else None
            family = [kernel, *kernel.children(recursive=True)] if kernel else []
        except psutil.Error:
            return 0.0
        total = 0.0
        for process in family:
            try:
                times = process.cpu_times()
            except psutil.Error:  # ended meanwhile: counted by its parent once waited for
                continue
            total += times.user + times.system + times.children_user + times.children_system
        return total

    def _sample(self, pid: int) -> None:
        try:
            kernel = psutil.Process(pid)
            family: list[psutil.Process] = []
            for count in itertools.count():
                if self._done.is_set():
                    return
                if count % TREE_EVERY == 0:  # finding them reads every process on the machine
                    family = kernel.children(recursive=True)
                self._measure(kernel, family)
                self._done.wait(SAMPLE_SECONDS)
        except psutil.Error:  # the kernel has ended
            return

    def _measure(self, kernel: psutil.Process, family: list[psutil.Process]) -> None:
        own = kernel.memory_info()
        total = own.rss
        for child in family:
            try:
                total += child.memory_info().rss
            except psutil.Error:
                continue
        self.kernel_peak = max(self.kernel_peak, own.rss, _high_water(kernel.pid))
        self.tree_peak = max(self.tree_peak, total)

    def death(self) -> str:
        """How the kernel ended and the most memory it held, in one line, then the last
        lines of its stderr."""
        self.stop()
        ending = _ending(self.returncode)
        kills = oom_kills()
        if kills is not None and self.oom_before is not None and kills > self.oom_before:
            ending += (f"; the out-of-memory killer ended {kills - self.oom_before} process(es) "
                       "of this memory group while it ran")
        memory = (f"peak memory: kernel {_mb(self.kernel_peak)}, with the processes it "
                  f"started {_mb(self.tree_peak)}")
        tail = stderr_tail(self.stderr)
        return (f"{ending}; {memory}"
                + (f"\nits last stderr lines:\n{tail}" if tail else "; it wrote nothing to stderr"))


def _ending(returncode: int | None) -> str:
    if returncode is None:
        return "its exit status is unknown"
    if returncode < 0:
        number = -returncode
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        why = (" (sent by the kernel's out-of-memory killer when memory runs out, or by a "
               "person)" if number == signal.SIGKILL else "")
        return f"ended by {name} (signal {number}){why}"
    return f"exited with status {returncode}"


def _high_water(pid: int) -> int:
    """Bytes: process ``pid``'s peak resident memory (VmHWM), 0 where unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB" if size else "not measured"


FATAL = re.compile(r"^\s*#?\s*Fatal|out of memory", re.IGNORECASE)
"""A line that opens a crash report: Python's faulthandler (``Fatal Python error``), V8's
(``# Fatal error``, ``Fatal process out of memory``) or an allocator's."""


def stderr_tail(path: Path) -> str:
    """What a dead kernel last wrote: the ``TAIL_LINES`` lines before the last line that
    opens a crash report, that line, and then Python's stack of the crashing thread when
    faulthandler dumped one, else the lines after it; without such a line, the last
    ``TAIL_LINES`` lines (at most ``TAIL_CHARS`` characters, the start kept)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").rstrip().splitlines()
    except OSError:
        return ""
    fatal = [i for i, line in enumerate(lines) if FATAL.search(line)]
    if not fatal:
        return "\n".join(lines[-TAIL_LINES:])[-TAIL_CHARS:]
    crash = fatal[-1]
    current = next((i for i in range(crash, len(lines))
                    if lines[i].startswith("Current thread")), None)
    if current is None:
        after = lines[crash + 1:crash + 1 + TAIL_LINES]
    else:
        end = next((i for i in range(current, len(lines)) if not lines[i].strip()), len(lines))
        after = lines[current:end]
    return "\n".join([*lines[max(crash - TAIL_LINES, 0):crash + 1], *after])[:TAIL_CHARS]


def watched_manager(watch: KernelWatch) -> type[KernelManager]:
    """A kernel manager class (started from this thread; its client asyncio's, as the notebook
    runner talks to it from its own event loop) that starts its kernel with faulthandler on
    and its own stdout and stderr into ``watch.stderr``, samples its memory into ``watch``
    and records how it ended. The kernel leaves its file descriptors alone
    (``capture_fd_output`` off): otherwise it turns them into a pipe it reads itself, and a
    crash's traceback dies with it; what native code prints goes to the file, not the cell."""

    class WatchedKernelManager(KernelManager):
        client_class = "jupyter_client.asynchronous.AsyncKernelClient"

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            env = dict(kw.get("env") or os.environ)
            env["PYTHONFAULTHANDLER"] = "1"
            command = [*kernel_cmd, KEEP_DESCRIPTORS]
            with watch.stderr.open("ab") as output:  # the kernel keeps its own handle
                await super()._async_launch_kernel(command, **{**kw, "env": env,
                                                               "stdout": output,
                                                               "stderr": output})
            assert self.provisioner is not None
            watch.start(self.provisioner.process.pid)  # type: ignore[attr-defined]

        async def _async_is_alive(self) -> bool:
            alive = await super()._async_is_alive()
            process = getattr(self.provisioner, "process", None)
            if not alive and process is not None and watch.returncode is None:
                watch.returncode = process.returncode
            return alive

    return WatchedKernelManager
