"""Children that do not outlive Vis and stay within limits: the keeper, rlimits, and the
confinement (jail, limits, folders) a session's children run under."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

KEEPER = Path(__file__).with_name("keeper.py")  # a script: standard library only


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


def end_strays(root: int, keep: int) -> int:
    """Kill every process below ``root`` (a keeper) except ``keep`` and the processes between
    the two (the sandbox child, and bwrap in the jail): what blocks started and left running.
    Returns how many were killed."""
    from vis_core.system.keeper import descendants, parent_of

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


# What each emptied Vis folder of the jail may hold: the mount points of what is shown in it (a
# session's saved outputs, its draft); nothing of the jail's belongs there. At most four
# (config, data, logs, cache), whose share comes off the rest.
VIS_FOLDER_BYTES = 1 << 20
VIS_FOLDERS = 4


@dataclass(frozen=True)
class JailTmpfs:
    """What each memory-backed folder of a jail may hold, in bytes. Files there are memory no
    process owns (the tree's memory limit does not see them), so together they hold at most
    the memory limit, or half the RAM without one (what the kernel gives one tmpfs alone).
    Of that, ``/tmp`` gets half (builds, pip's unpacked wheels, pytest's folders), home
    three eighths (pip's and npm's caches, ``pip install --user``), ``/dev/shm`` an eighth
    (multiprocessing's semaphores and queues), each emptied Vis folder 1 MiB."""

    tmp: int
    home: int
    shm: int
    vis: int = VIS_FOLDER_BYTES

    @classmethod
    def within(cls, memory: int) -> JailTmpfs:
        """The sizes for a memory limit of ``memory`` bytes (0: none)."""
        budget = memory or os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
        rest = budget - VIS_FOLDERS * VIS_FOLDER_BYTES

        def share(eighths: int) -> int:  # whole MiB, at least one (a size of 0 is no cap)
            return max(rest * eighths // 8 >> 20, 1) << 20

        return cls(tmp=share(4), home=share(3), shm=share(1))


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


@dataclass(frozen=True)
class Confinement:
    """What confines the children a session runs for its model (the sandbox, its shells):
    the jail, why nothing may run (a setting that cannot be read), memory and process limits,
    whether home's dot entries are writable in the jail, and the folders it shows read-only
    (``jail_read_paths``)."""

    jail: bool
    refusal: str | None
    limits: ChildLimits
    home_writable: bool
    read_paths: tuple[Path, ...] = ()


def over_memory(held: int, limits: ChildLimits | None = None, whose: str = "its") -> str:
    """Why a tree was stopped for holding ``held`` bytes (the sandbox's and a shell's alike)."""
    limit = f" of {limits.memory_mb:,} MB" if limits is not None else ""
    return (
        f"{whose} processes together held {held / 2**20:,.0f} MB, over the memory limit{limit} "
        "(setting memory_limit)"
    )
