"""What every Vis child process does first: protocol fds apart from stdio, exit with its parent.

The sandbox child and the extension workers talk to the host over their original stdin and
stdout; the code they run must not read the protocol or print into it. Imports nothing of Vis.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from dataclasses import dataclass

PARENT_POLL_INTERVAL = 1.0  # seconds between two looks at the parent


@dataclass(frozen=True)
class ProtocolFds:
    """The child's ends of the host's pipes, kept apart from fd 0 and 1."""

    read: int
    write: int


def take_protocol_fds() -> ProtocolFds:
    """Keep the original stdin/stdout for the protocol; fd 0 becomes ``/dev/null`` and fd 1 a
    copy of fd 2, so output that bypasses ``sys.stdout`` lands where the host collects it."""
    fds = ProtocolFds(os.dup(0), os.dup(1))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return fds


def exit_with_parent(interval: float = PARENT_POLL_INTERVAL) -> threading.Thread:
    """Start a daemon thread that ends this process (``os._exit(0)``) once the process that
    started it is gone: reparented children see another parent id."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(interval)
            if os.getppid() != parent:
                os._exit(0)

    thread = threading.Thread(target=watch, name="vis-parent-watch", daemon=True)
    thread.start()
    return thread


PR_SET_DUMPABLE = 4


def hide_from_children() -> bool:
    """Make this process unreadable to processes of the same user (``PR_SET_DUMPABLE`` 0):
    an unjailed block then cannot read Vis's environment (API keys) or memory through
    ``/proc/<pid>/environ`` or ``mem``, nor attach a debugger. Root (``CAP_SYS_PTRACE``) still
    can. Children are not affected (``execve`` makes them dumpable again). Linux only; returns
    whether it took effect."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
