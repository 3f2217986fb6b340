"""The model's processes held still while Vis acts on files they could change (an editor opening
a path, git in a draft): none can swap a link in on the way.

With the jail on, everything the model runs (its sandbox, its shells and what they start) lives
in a PID namespace of its own below this process; orphans there stay there. A command still
starting has no process in its jail yet: its keeper and bwrap's outer half, below this process
too, are about to make one. So, while any jailed process exists, every process below this one
is stopped, until two looks at ``/proc`` in a row find the same processes, all stopped (a
process may fork just before its stop lands: the second look finds its child). A stopped
process cannot fork, rename or continue another: a path checked then stays as checked until
they continue. With the jail off there is none to stop, and no boundary to keep: the model's
code reads and writes whatever this user can.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator

STOP_SECONDS = 2.0  # a process in an uninterruptible wait stops when its call returns
_STOPPED = frozenset("TtZX")  # stopped, traced, zombie, dead: none of them acts


class NotQuiet(OSError):
    """The model's processes could not all be stopped in time (the tool uses disk)."""


def _tree() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            state = _stat(int(name))
            if state is not None:
                tree.setdefault(state[1], []).append(int(name))
    return tree


def _stat(pid: int) -> tuple[str, int] | None:
    """``(state, parent pid)`` of ``pid``; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


def _jailed(pid: int, own: str) -> bool:
    """In another PID namespace than this process (unreadable counts as jailed)."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid") != own
    except FileNotFoundError:
        return False  # gone
    except OSError:
        return True


def held_processes() -> list[int]:
    """Every process below this one while any of them is jailed (none with the jail off)."""
    own = os.readlink("/proc/self/ns/pid")
    tree = _tree()
    found: list[int] = []
    pending = list(tree.get(os.getpid(), []))
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending += tree.get(pid, [])
    return found if any(_jailed(pid, own) for pid in found) else []


@contextlib.contextmanager
def model_stopped() -> Iterator[None]:
    """Inside, every process below this one is stopped (see the module docstring); each one
    this stopped continues after. ``NotQuiet`` when one would not stop within
    :data:`STOP_SECONDS`."""
    stopped: list[int] = []
    try:
        deadline = time.monotonic() + STOP_SECONDS
        still: set[int] | None = None  # what the last look found, when all of it was stopped
        while True:
            found = held_processes()
            running = []
            for pid in found:
                state = _stat(pid)
                if state is not None and state[0] not in _STOPPED:
                    running.append(pid)
            if not running:
                if still == set(found):
                    break  # two looks, the same processes, all stopped: none of them can act
                still = set(found)
                continue
            still = None
            if time.monotonic() > deadline:
                raise NotQuiet(f"{len(running)} of the model's processes would not stop")
            for pid in running:  # again if another continued it before it stopped
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
                    if pid not in stopped:
                        stopped.append(pid)
            time.sleep(0.001)  # the signal lands when each is next scheduled
        yield
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
