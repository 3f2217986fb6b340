"""Children that do not outlive Vis and stay within limits: parent-death signal, rlimits."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

PR_SET_PDEATHSIG = 1
# Holds a pipe from Vis; when Vis dies (even by kill -9) the pipe ends and it kills the group.
REAPER = "read -r _; kill -9 -$1 2>/dev/null"


async def start_reaper(group: int) -> asyncio.subprocess.Process:
    """A tiny watcher that kills process group ``group`` once Vis is gone."""
    return await asyncio.create_subprocess_exec(
        "/bin/sh",
        "-c",
        REAPER,
        "vis-reaper",
        str(group),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )


async def stop_reaper(
    process: asyncio.subprocess.Process, reaper: asyncio.subprocess.Process
) -> None:
    """Once ``process`` has ended, end its reaper before its group id could be reused."""
    try:
        await process.wait()
    finally:
        if reaper.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                reaper.kill()
        await end_process(reaper)


async def end_process(process: asyncio.subprocess.Process) -> int:
    """Wait for ``process`` to exit and close its stdin pipe, so that nothing of it is left
    open once the event loop closes: its transport, collected later, would close that pipe by
    calling into the closed loop ("Event loop is closed")."""
    code = await process.wait()
    stdin = process.stdin
    if stdin is not None:
        stdin.close()
        with contextlib.suppress(OSError):  # the child closed its end first (a broken pipe)
            await stdin.wait_closed()
    return code


@dataclass(frozen=True)
class ChildLimits:
    """Resource limits of the sandbox and its shells; 0 means no limit."""

    memory_mb: int = 0
    processes: int = 0

    def notes(self) -> list[str]:
        """What cannot be enforced here, said plainly."""
        notes = []
        if self.processes and os.geteuid() == 0:
            notes.append(
                "the process limit is not enforced: Vis runs as root, and the kernel does not "
                "apply RLIMIT_NPROC to root"
            )
        return notes


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """The C library, found once when the first child is set up (``find_library`` runs
    ``ldconfig``, so not at import and never in a forked child)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name, use_errno=True) if name else None
    except OSError:
        return None


def child_setup(
    limits: ChildLimits | None = None, death_signal: int | None = None
) -> Callable[[], None]:
    """A ``preexec_fn``: apply ``limits`` and ask for ``death_signal`` when Vis dies."""
    parent = os.getpid()
    libc = _libc() if death_signal is not None else None

    def setup() -> None:
        if death_signal is not None and libc is not None:
            libc.prctl(PR_SET_PDEATHSIG, int(death_signal), 0, 0, 0)
            if os.getppid() != parent:  # Vis died before the request took effect
                os.kill(os.getpid(), int(death_signal))
        if limits is None:
            return
        if limits.memory_mb:
            size = limits.memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_DATA, (size, size))
        if limits.processes:
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))

    return setup
