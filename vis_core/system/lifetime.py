"""Children that do not outlive Vis and stay within limits: the keeper, rlimits."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import resource
import signal
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.system.child_process import hide_from_children

KEEPER = Path(__file__).with_name("keeper.py")  # a script: standard library only


def keeper_lines(channel: socket.socket, carry: bytes) -> tuple[list[bytes], bytes, bool]:
    """The whole lines a keeper's channel holds now (``carry``: the start of a line read
    before), the start of the next one, and whether the keeper has closed the channel."""
    lines: list[bytes] = []
    while True:
        try:
            chunk = channel.recv(4096)
        except (BlockingIOError, InterruptedError):
            return lines, carry, False
        except OSError:
            chunk = b""
        if not chunk:
            return lines, carry, True
        *new, carry = (carry + chunk).split(b"\n")
        lines += new


class Kept:
    """A command started under its keeper (``keeper.py``): a small process that owns the
    command's whole tree, ``setsid()`` and double forks included, and kills it when Vis ends,
    even by kill -9; with a memory limit it also stops the tree once all of it holds more.

    ``process`` is the keeper (its exit is the command's: same code or signal); ``ended``
    gets the command's own exit code as soon as the command ends (a shell's background
    processes may run on); ``over_memory`` the bytes the tree held when it was stopped.
    """

    def __init__(self, process: asyncio.subprocess.Process, channel: socket.socket) -> None:
        self.process = process
        self.pid = process.pid
        self.over_memory: int | None = None
        loop = asyncio.get_running_loop()
        self.ended: asyncio.Future[int] = loop.create_future()
        self._channel: socket.socket | None = channel
        self._carry = b""
        channel.setblocking(False)
        loop.add_reader(channel.fileno(), self.collect)
        self._watch = loop.create_task(self._wait())

    def collect(self) -> None:
        """Take what the keeper said so far (also called once it ended)."""
        if self._channel is None:
            return
        lines, self._carry, closed = keeper_lines(self._channel, self._carry)
        for line in lines:
            self._on_line(line.decode("ascii", "replace"))
        if closed:
            self._close()

    def _on_line(self, line: str) -> None:
        kind, _, value = line.partition(" ")
        if kind == "exit" and not self.ended.done():
            with contextlib.suppress(ValueError):
                self.ended.set_result(int(value))
        elif kind == "memory":
            with contextlib.suppress(ValueError):
                self.over_memory = int(value)

    def _close(self) -> None:
        channel, self._channel = self._channel, None
        if channel is not None:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(channel.fileno())
            channel.close()

    async def _wait(self) -> None:
        code = await self.process.wait()
        self.collect()  # what the keeper said before it ended
        self._close()
        if not self.ended.done():
            self.ended.set_result(code)

    def signal(self, sig: int) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.process.pid, sig)

    def terminate(self) -> None:
        """SIGTERM to every process of the tree."""
        self.signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL to every process of the tree; the keeper then exits as the command did."""
        self.signal(signal.SIGUSR1)

    async def wait(self) -> int:
        """Wait for the keeper (so the whole tree) to end; its code is the command's."""
        await asyncio.shield(self._watch)
        return self.process.returncode if self.process.returncode is not None else -9


@functools.cache
def hide_vis() -> bool:
    """Before the first block or command starts: an unjailed one then cannot read Vis's
    environment (API keys) or memory through ``/proc`` (see ``hide_from_children``). Here
    rather than at start, which would cost every start the import of ``ctypes``."""
    return hide_from_children()


def keeper_command(
    argv: Sequence[str], mode: str, limits: ChildLimits | None, channel: int
) -> list[str]:
    """``argv`` under its keeper (see :class:`Kept`), which reports on the socket ``channel``."""
    memory = limits.memory_bytes if limits is not None else 0
    return [sys.executable, "-I", "-S", str(KEEPER), str(channel), mode, str(memory), "--", *argv]


async def start_kept(
    argv: Sequence[str],
    *,
    mode: str,
    limits: ChildLimits | None = None,
    **options: Any,
) -> Kept:
    """Start ``argv`` under a keeper (see :class:`Kept`), with ``limits`` (memory: per process
    and for the whole tree) and ``options`` for ``create_subprocess_exec`` (pipes, cwd, env).
    ``mode``: ``sandbox`` ends the tree when the command ends, ``shell`` lets what it left
    running go on until it ends or is stopped."""
    hide_vis()
    ours, theirs = socket.socketpair()
    try:
        process = await asyncio.create_subprocess_exec(
            *keeper_command(argv, mode, limits, theirs.fileno()),
            pass_fds=(theirs.fileno(),),
            start_new_session=True,
            preexec_fn=child_setup(limits) if limits is not None else None,
            **options,
        )
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return Kept(process, ours)


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


def child_setup(limits: ChildLimits) -> Callable[[], None]:
    """A ``preexec_fn`` that applies ``limits`` (memory per process, processes of the user)."""

    def setup() -> None:
        if limits.memory_mb:
            resource.setrlimit(resource.RLIMIT_DATA, (limits.memory_bytes, limits.memory_bytes))
        if limits.processes:
            resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))

    return setup
