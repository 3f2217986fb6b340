"""Standard streams a command was started without (``vis … >&-``, ``<&-``), held open."""

from __future__ import annotations

import os
import sys

_STREAMS = ((0, "stdin"), (1, "stdout"), (2, "stderr"))


def hold_closed_streams() -> list[str]:
    """Put the null device on each of file descriptors 0, 1 and 2 that is closed, and a Python
    stream on it in ``sys`` (Python leaves ``None`` there, and a write or flush failed with a
    traceback); the names of those that were closed. Held, a number cannot go to a file Vis
    opens later, where a child process would write its output."""
    closed = []
    for fd, name in _STREAMS:
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if null != fd:  # the lowest free number is taken: a lower one was closed too
                os.dup2(null, fd)
                os.close(null)
            closed.append(name)
            stream = open(fd, "r" if fd == 0 else "w", encoding="utf-8", closefd=False)
            setattr(sys, name, stream)
    return closed
