"""A stdio server's process group: found after the SDK spawns it, ended after it stops.

The SDK starts a server in its own session (its pid is the group id) and kills the group only
when the server outlives its grace period; a wrapper script that exits at once on stdin's close
leaves what it started in the background. Vis ends the group after every stop: SIGTERM, then
SIGKILL to what remains.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

TERM_GRACE = 2.0  # seconds between SIGTERM and SIGKILL of what is left of the group
POLL = 0.05


def spawned_with_stderr(pipe_fd: int) -> int | None:
    """The pid of this process's child whose stderr is the pipe ``pipe_fd`` writes to, when it
    leads its own group (as the SDK starts servers); None when not found (not Linux)."""
    try:
        inode = os.fstat(pipe_fd).st_ino
        entries = list(Path("/proc").iterdir())
    except OSError:
        return None
    me = os.getpid()
    wanted = f"pipe:[{inode}]"
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != me or int(fields[2]) != int(entry.name):  # ppid, pgrp
                continue
            if os.readlink(entry / "fd" / "2") == wanted:
                return int(entry.name)
        except (OSError, ValueError, IndexError):
            continue
    return None


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def end_group(pgid: int) -> None:
    """SIGTERM to the group ``pgid``, then SIGKILL to what is left after a grace period."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return  # the whole group is gone already
    except PermissionError:
        pass
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TERM_GRACE
    while _group_alive(pgid) and loop.time() < deadline:
        await asyncio.sleep(POLL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
