"""One supervisor of the Python children Vis talks to over pipes (the sandbox child, the
extension workers): isolated start, jail, limits, its own session, stderr drained into the
log, parent death, stop, and how it ended."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from vis_core.system.child_process import killed_with_parent, on_lasting_thread, python_argv
from vis_core.system.lifetime import (
    ChildLimits,
    child_setup,
    hide_vis,
    keeper_command,
    keeper_lines,
)

log = logging.getLogger(__name__)
LINGER = 5.0  # seconds a child that closed its pipe may take to exit before it is killed


@dataclass(frozen=True)
class Ending:
    """How a child ended: its exit code, negative for the signal that killed it (None: not
    known, e.g. it never started)."""

    code: int | None

    @property
    def signal(self) -> str | None:
        """The name of the signal that killed it (``SIGSEGV``); None when it exited."""
        if self.code is None or self.code >= 0:
            return None
        try:
            return signal.Signals(-self.code).name
        except ValueError:
            return f"signal {-self.code}"


class ChildProcess:
    """A Python child whose original stdin and stdout are its protocol pipes
    (:func:`~vis_core.system.child_process.take_protocol_fds` on its side), in a session and
    process group of its own, its stderr logged line by line; it ends with Vis
    (:func:`~vis_core.system.child_process.exit_with_parent` on its side).

    With a ``keeper`` (the sandbox), the child runs under its keeper
    (:mod:`vis_core.system.keeper`), which owns the whole tree of the block, holds it to the
    memory limit and ends it with Vis; :attr:`pid` is then the keeper's, whose exit is the
    child's (same code or signal)."""

    def __init__(
        self,
        target: str,
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        python: str = sys.executable,
        flags: Sequence[str] = ("-B",),
        jail: Callable[[list[str]], list[str]] | None = None,
        keeper: str | None = None,
        limits: ChildLimits | None = None,
        stderr: Callable[[str], None] | None = None,
        drain: bool = True,
    ) -> None:
        """Start ``target`` (``"package.module:function"``) of this Vis in an isolated
        ``python`` (``-I``; ``flags``, by default ``-B``: no ``.pyc`` files written beside entry
        files) with exactly ``env``. ``jail`` wraps the command (it raises before anything
        starts when it cannot); ``keeper``: its mode (``sandbox``), with ``limits`` on memory
        and processes. Each line the child prints to stderr goes to ``stderr`` (default: the
        log), unless ``drain`` is false: the owner then reads :meth:`streams`."""
        argv = python_argv(python, target, *flags)
        if jail is not None:
            argv = jail(argv)
        self.over_memory: int | None = None  # bytes the tree held when its keeper stopped it
        self.kept = keeper is not None
        self._keeper: socket.socket | None = None
        self._carry = b""
        self._exit: asyncio.Future[int] | None = None
        options: dict[str, Any] = {}
        theirs: socket.socket | None = None
        if keeper is not None:
            hide_vis()
            self._keeper, theirs = socket.socketpair()
            argv = keeper_command(argv, keeper, limits, theirs.fileno())
            options = {"pass_fds": (theirs.fileno(),)}
            if limits is not None:
                options["preexec_fn"] = child_setup(limits)
        else:  # the kernel ends it with Vis, even while its own watch cannot run
            options = {"preexec_fn": killed_with_parent()}
        try:
            self.process = on_lasting_thread(
                lambda: subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=dict(env),
                    cwd=None if cwd is None else str(cwd),
                    start_new_session=True,
                    **options,
                )
            )
        except BaseException:
            if self._keeper is not None:
                self._keeper.close()
            raise
        finally:
            if theirs is not None:
                theirs.close()
        if self._keeper is not None:
            self._keeper.setblocking(False)
        self.pid = self.process.pid
        assert self.process.stderr is not None
        if drain:
            threading.Thread(
                target=_drain,
                args=(self.process.stderr, stderr or _log_line),
                name="vis-child-stderr",
                daemon=True,
            ).start()

    @property
    def read_fd(self) -> int:
        """The end of the child's stdout the host reads."""
        assert self.process.stdout is not None
        return self.process.stdout.fileno()

    @property
    def write_fd(self) -> int:
        """The end of the child's stdin the host writes."""
        assert self.process.stdin is not None
        return self.process.stdin.fileno()

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    @property
    def returncode(self) -> int | None:
        """Its exit code once it ended (minus the signal that killed it), else None."""
        return self.process.poll()

    def take_stdout(self) -> int:
        """The read end of the child's stdout, from now on the caller's to close."""
        stream = self.process.stdout
        assert stream is not None
        fd = os.dup(stream.fileno())
        stream.close()
        self.process.stdout = None
        return fd

    async def streams(self) -> tuple[asyncio.StreamWriter, asyncio.StreamReader]:
        """The child's stdin and stderr as streams of the running loop (``drain=False``)."""
        loop = asyncio.get_running_loop()
        stderr = asyncio.StreamReader(loop=loop)
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stderr, loop=loop), self.process.stderr
        )
        protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop)
        transport, _ = await loop.connect_write_pipe(lambda: protocol, self.process.stdin)
        return asyncio.StreamWriter(transport, protocol, None, loop), stderr

    def kill(self) -> None:
        """SIGKILL to the child's process group: what it started in it ends too. Under a
        keeper, the keeper kills the whole tree and then exits as the child did."""
        if self.process.poll() is not None:
            return
        try:
            if self.kept:
                os.kill(self.pid, signal.SIGUSR1)
            else:
                os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            self.process.kill()

    async def wait(self) -> int:
        """Wait on the running loop for the child to end (a pidfd, else a thread)."""
        code = self.process.poll()
        if code is not None:
            return code
        loop = asyncio.get_running_loop()
        if self._exit is None or self._exit.get_loop() is not loop:
            try:
                pidfd = os.pidfd_open(self.pid)
            except (AttributeError, OSError):  # no pidfd here, or reaped by another waiter
                self._exit = asyncio.ensure_future(asyncio.to_thread(self.process.wait))
            else:
                exit = self._exit = loop.create_future()

                def exited() -> None:
                    loop.remove_reader(pidfd)
                    os.close(pidfd)
                    if not exit.done():
                        exit.set_result(self.process.wait())

                loop.add_reader(pidfd, exited)
        return await asyncio.shield(self._exit)

    def collect(self) -> None:
        """Read what its keeper said: ``memory BYTES`` when the tree went over its limit."""
        if self._keeper is None:
            return
        lines, self._carry, closed = keeper_lines(self._keeper, self._carry)
        for line in lines:
            kind, _, value = line.partition(b" ")
            if kind == b"memory" and value.isdigit():
                self.over_memory = int(value)
        if closed:
            self._keeper.close()
            self._keeper = None

    def ending(self, linger: float = LINGER) -> Ending:
        """Wait for the child to end (it closed its pipe): one that lingers ``linger``
        seconds more is killed."""
        try:
            code = self.process.wait(linger)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        return Ending(code)

    def close(self) -> Ending:
        """Kill the child if it runs, wait for it and close the host's ends of its pipes."""
        self.kill()
        code = self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    continue  # a broken pipe to a killed process: nothing left to flush
        return Ending(code)


def _log_line(line: str) -> None:
    log.info("extension worker: %s", line)


def _drain(stream: IO[bytes], sink: Callable[[str], None]) -> None:
    """Hand each line the child prints to ``sink``, so its stderr pipe never fills."""
    with stream:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                sink(line)
