"""Children that do not outlive Vis and stay within limits: the keeper, rlimits."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vis_core.system.child_process import hide_from_children

KEEPER = Path(__file__).with_name("keeper.py")  # a script: standard library only


@functools.cache
def hide_vis() -> bool:
    """Before the first block or command starts: an unjailed one then cannot read Vis's
    environment (API keys) or memory through ``/proc`` (see ``hide_from_children``). Here
    rather than at start, which would cost every start the import of ``ctypes``."""
    return hide_from_children()


def keeper_command(
    argv: Sequence[str], mode: str, limits: ChildLimits | None, channel: int
) -> list[str]:
    """``argv`` under its keeper (:mod:`vis_core.system.keeper`), which reports on the socket
    ``channel`` and applies ``limits`` to itself before it starts the command (the whole tree
    inherits them): Vis then starts the keeper without a ``preexec_fn``, by ``vfork``, whose
    cost does not grow with Vis's memory (a fork of a 300 MB process costs ~20 ms of CPU)."""
    memory = limits.memory_bytes if limits is not None else 0
    processes = limits.processes if limits is not None else 0
    return [
        *(sys.executable, "-I", "-S", str(KEEPER), str(channel), mode),
        *(str(memory), str(processes), "--", *argv),
    ]


def parent_of(pid: int) -> int:
    """The parent of ``pid`` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            return int(file.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def end_strays(root: int, keep: int) -> int:
    """Kill every process below ``root`` (a keeper) except ``keep`` and the processes between
    the two (the sandbox child, and bwrap in the jail): what blocks started and left running.
    Returns how many were killed."""
    from vis_core.system.keeper import descendants

    chain = {keep}
    pid = keep
    while pid not in (0, 1, root):
        pid = parent_of(pid)
        chain.add(pid)
    if root not in chain:  # ``keep`` is not below ``root``: nothing to tell apart
        return 0
    killed = 0
    for _ in range(10):  # a stray may fork while it is killed; its children come next
        strays = [p for p in descendants(root) if p not in chain]
        if not strays:
            break
        for stray in strays:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(stray, signal.SIGKILL)
                killed += 1
    return killed


def cap_tmpfs(argv: list[str], size: int) -> list[str]:
    """A bubblewrap ``argv`` whose memory-backed folders hold at most ``size`` bytes each: a
    private ``/dev/shm`` and the jail's ``/tmp`` (files there are memory no process owns, so
    the tree's memory limit would not see them). ``argv`` unchanged when ``size`` is 0."""
    if not size or "--" not in argv:
        return argv
    end = argv.index("--")
    options, command = argv[:end], argv[end:]
    capped: list[str] = []
    index = 0
    while index < len(options):
        item = options[index]
        if item == "--tmpfs" and options[index + 1 : index + 2] == ["/tmp"]:
            capped += ["--size", str(size)]
        capped.append(item)
        if item == "--dev" and index + 1 < len(options):
            capped += [options[index + 1], "--size", str(size), "--tmpfs", "/dev/shm"]
            index += 1
        index += 1
    return capped + command


@dataclass(frozen=True)
class ChildLimits:
    """Resource limits of the sandbox and its shells; 0 means no limit."""

    memory_mb: int = 0
    processes: int = 0

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * 1024 * 1024

    def notes(self) -> list[str]:
        """What cannot be enforced here, said plainly."""
        notes = []
        if self.processes and os.geteuid() == 0:
            notes.append(
                "the process limit is not enforced: Vis runs as root, and the kernel does not "
                "apply RLIMIT_NPROC to root"
            )
        return notes


def over_memory(held: int, limits: ChildLimits | None = None, whose: str = "its") -> str:
    """Why a tree was stopped for holding ``held`` bytes (the sandbox's and a shell's alike)."""
    limit = f" of {limits.memory_mb:,} MB" if limits is not None else ""
    return (
        f"{whose} processes together held {held / 2**20:,.0f} MB, over the memory limit{limit} "
        "(setting memory_limit)"
    )
