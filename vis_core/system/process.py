"""One supervisor of Vis's children (the sandbox child, the extension workers, the shell's
commands): isolated start, jail, limits, its own session, stderr drained into the log,
parent death, stop, and how it ended."""

from __future__ import annotations

import asyncio
import contextlib
import functools
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
from typing import IO

from vis_core.system.child_process import (
    hide_from_children,
    killed_with_parent,
    on_lasting_thread,
    python_argv,
)
from vis_core.system.jail_guard import guarded
from vis_core.system.lifetime import ChildLimits, keeper_command
from vis_core.system.quiet import model_command

log = logging.getLogger(__name__)
LINGER = 5.0  # seconds a child that closed its pipe may take to exit before it is killed


class ChildGone(RuntimeError):
    """A child process ended, or stopped answering, before it did what it was asked (or could
    not do it); ``how`` says how, e.g. ``exited with code 1``."""

    def __init__(self, how: str) -> None:
        super().__init__(how)
        self.how = how


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

    def __str__(self) -> str:
        """How it ended, said once for every child: ``exited with code 1``, ``was killed
        (SIGKILL)``, ``crashed (SIGSEGV)``."""
        if self.code is None:
            return "ended"
        if self.code >= 0:
            return f"exited with code {self.code}"
        if self.code == -signal.SIGKILL:
            return "was killed (SIGKILL)"
        return f"crashed ({self.signal})"


class ChildProcess:
    """A child in a session and process group of its own, its stdin, stdout and stderr pipes.
    A Python child of this Vis talks over its original stdin and stdout
    (:func:`~vis_core.system.child_process.take_protocol_fds` on its side) and ends with Vis
    (:func:`~vis_core.system.child_process.exit_with_parent`); each line of its stderr is
    logged, unless the owner reads :meth:`streams`.

    With a ``keeper``, the command runs under its keeper (:mod:`vis_core.system.keeper`), which
    owns its whole tree (``setsid()`` and double forks included), holds it to the memory limit,
    ends it with Vis, and says when the command itself ended (:meth:`ended`); :attr:`pid` is
    then the keeper's, whose exit is the command's (same code or signal). A jailed command
    under a keeper is the model's: :func:`~vis_core.system.quiet.model_stopped` holds it."""

    def __init__(
        self,
        target: str | Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path | str | None = None,
        python: str = sys.executable,
        flags: Sequence[str] = ("-B",),
        jail: Callable[[list[str]], list[str]] | None = None,
        keeper: str | None = None,
        limits: ChildLimits | None = None,
        stderr: Callable[[str], None] | None = None,
        drain: bool = True,
        pass_fds: Sequence[int] = (),
    ) -> None:
        """Start ``target``: ``"package.module:function"`` of this Vis in an isolated ``python``
        (``-I``; ``flags``, by default ``-B``: no ``.pyc`` files written beside entry files), or
        a command (a list: its argv), with exactly ``env``. ``jail`` wraps the command in
        bubblewrap (it raises before anything starts when it cannot), which gets the
        :mod:`~vis_core.system.jail_guard` filter; ``keeper``: its mode (``sandbox``: the
        tree ends with the command; ``shell``: what it left running goes on), with ``limits``
        on memory and processes. Each line the child prints to stderr goes to ``stderr``
        (default: the log), unless ``drain`` is false: the owner then reads :meth:`streams`.
        ``pass_fds``: fds the child inherits under the same numbers (through its keeper and
        jail too)."""
        # a Python child of Vis's (unjailed: Vis is its parent) asks the kernel itself to end
        # it with Vis, so that it starts by vfork (see python_argv's killed_with)
        by_itself = (
            keeper is None
            and jail is None
            and isinstance(target, str)
            and sys.platform.startswith("linux")
        )
        if isinstance(target, str):
            parent = os.getpid() if by_itself else None
            argv = python_argv(python, target, *flags, killed_with=parent)
        else:
            argv = list(target)
        guard: int | None = None  # the fd the jail reads its seccomp filter from
        if jail is not None:
            argv, guard = guarded(jail(argv))
            pass_fds = (*pass_fds, *([] if guard is None else [guard]))
        self.over_memory: int | None = None  # bytes the tree held when its keeper stopped it
        self.command_exit: int | None = None  # the command's own exit code, once it ended
        self.kept = keeper is not None
        self._keeper: socket.socket | None = None
        self._carry = b""
        self._exit: asyncio.Future[int] | None = None
        self._ended: asyncio.Future[int] | None = None
        self._reading: asyncio.AbstractEventLoop | None = None  # the loop reading the keeper
        self._watch: asyncio.Task[None] | None = None
        theirs: socket.socket | None = None
        setup = None  # by itself, or under its keeper: started by vfork
        if keeper is not None:
            hide_from_children()
            self._keeper, theirs = socket.socketpair()
            argv = keeper_command(argv, keeper, limits, theirs.fileno())
            pass_fds = (theirs.fileno(), *pass_fds)  # the keeper applies the limits
        elif not by_itself:  # the kernel ends it with Vis, even while its own watch cannot run
            setup = killed_with_parent()
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
                    pass_fds=tuple(pass_fds),
                    preexec_fn=setup,
                )
            )
        except BaseException:
            if self._keeper is not None:
                self._keeper.close()
            raise
        finally:
            if theirs is not None:
                theirs.close()
            if guard is not None:
                os.close(guard)
        self.pid = self.process.pid
        if self._keeper is not None:
            self._keeper.setblocking(False)
            start = functools.partial(_start_command, os.dup(self._keeper.fileno()))
            if jail is None:
                start()
            else:  # the model's: held while Vis acts on files it could change
                model_command(self.pid, start)
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

    async def streams(
        self,
    ) -> tuple[asyncio.StreamWriter, asyncio.StreamReader | None, asyncio.StreamReader]:
        """The child's stdin, stdout (None once taken) and stderr as streams of the running
        loop (``drain=False``)."""
        loop = asyncio.get_running_loop()

        async def reader(pipe: IO[bytes]) -> asyncio.StreamReader:
            stream = asyncio.StreamReader(loop=loop)
            await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(stream, loop=loop), pipe
            )
            return stream

        process = self.process
        assert process.stderr is not None
        stdout = None if process.stdout is None else await reader(process.stdout)
        stderr = await reader(process.stderr)
        protocol = asyncio.StreamReaderProtocol(asyncio.StreamReader(loop=loop), loop=loop)
        transport, _ = await loop.connect_write_pipe(lambda: protocol, process.stdin)
        return asyncio.StreamWriter(transport, protocol, None, loop), stdout, stderr

    def terminate(self) -> None:
        """SIGTERM to the child's process group (under a keeper: to every process of its
        tree)."""
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL to the child's process group: what it started in it ends too. Under a
        keeper, the keeper kills the whole tree and then exits as the child did."""
        self._signal(signal.SIGKILL)

    def _signal(self, sig: int) -> None:
        if self.process.poll() is not None:
            return
        try:
            if self.kept:  # the keeper passes SIGTERM on; SIGUSR1 asks it to kill them all
                os.kill(self.pid, signal.SIGUSR1 if sig == signal.SIGKILL else sig)
            else:
                os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            self.process.send_signal(sig)

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

    async def ended(self) -> int:
        """Wait on the running loop for the command itself to end; its exit code. Under a
        keeper in ``shell`` mode, what it left running may go on."""
        if self._ended is None:
            loop = asyncio.get_running_loop()
            self._ended = loop.create_future()
            if self._keeper is not None:
                self._reading = loop
                loop.add_reader(self._keeper.fileno(), self.collect)
            self._watch = loop.create_task(self._watch_exit())
            if self.command_exit is not None:
                self._ended.set_result(self.command_exit)
        return await asyncio.shield(self._ended)

    async def _watch_exit(self) -> None:
        code = await self.wait()
        self.collect()  # what the keeper said before it ended
        self._close_keeper()
        self._command_ended(code)

    def _command_ended(self, code: int) -> None:
        if self.command_exit is None:
            self.command_exit = code
        if self._ended is not None and not self._ended.done():
            self._ended.set_result(self.command_exit)

    def collect(self) -> None:
        """Read what its keeper said: ``exit CODE`` when the command itself ended, ``memory
        BYTES`` when the tree went over its limit."""
        while self._keeper is not None:
            try:
                chunk = self._keeper.recv(4096)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._close_keeper()
                return
            *lines, self._carry = (self._carry + chunk).split(b"\n")
            for line in lines:
                kind, _, value = line.partition(b" ")
                try:
                    number = int(value)
                except ValueError:
                    continue
                if kind == b"memory":
                    self.over_memory = number
                elif kind == b"exit":
                    self._command_ended(number)

    def _close_keeper(self) -> None:
        channel, self._keeper = self._keeper, None
        if channel is None:
            return
        if self._reading is not None and not self._reading.is_closed():
            self._reading.remove_reader(channel.fileno())
        channel.close()

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


def _start_command(channel: int) -> None:
    """Tell a keeper to start its command, on a copy of its channel (closed then)."""
    with contextlib.suppress(OSError):  # the keeper is gone: so is the command
        os.write(channel, b"go\n")
    os.close(channel)


def _log_line(line: str) -> None:
    log.info("extension worker: %s", line)


def _drain(stream: IO[bytes], sink: Callable[[str], None]) -> None:
    """Hand each line the child prints to ``sink``, so its stderr pipe never fills."""
    with stream:
        for raw in stream:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                sink(line)
