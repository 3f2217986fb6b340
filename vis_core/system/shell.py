"""``shell`` handles: a process tree with bounded output buffers, input, waiting and stopping."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import functools
import itertools
import logging
import math
import shlex
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.model.activity import ActivityPresentation
from vis_core.model.block import drawn_line
from vis_core.model.handles import HandleMethod, HostHandle
from vis_core.system.environ import Audience, child_environment
from vis_core.system.git_control import GitLooks
from vis_core.system.jail import jail_argv
from vis_core.system.lifetime import ChildLimits, over_memory
from vis_core.system.loops import keep
from vis_core.system.network_bridge import bridged, proxy_environment, python_home
from vis_core.system.process import ChildProcess
from vis_core.system.shell_view import shell_call_presentation
from vis_core.system.truncate import fit_output
from vis_core.text_limits import Keep

log = logging.getLogger(__name__)

BUFFER_BYTES = 8 * 1024 * 1024
TAIL_LINES = 20  # output a background command's report carries
TAIL_CHARS = 2_000
STOP_GRACE_SECONDS = 2.0
READ_CHUNK = 65536
_ids = itertools.count(1)


def time_limit(value: Any, what: str, *, zero: bool = False) -> float | None:
    """``value``, a time limit the model gave (None: none), as seconds: a number above 0
    (``zero``: or 0), else a ``ValueError`` naming ``what``. NaN compares false with every
    bound: as a command's timeout it stopped the command at once, and ``"30"`` failed on a
    comparison of str with int."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or math.isnan(value)
        or value < 0
        or (value == 0 and not zero)
    ):
        kind = "a number >= 0" if zero else "a positive number"
        raise ValueError(f"{what} must be {kind} of seconds or None, not {value!r}")
    return value


class StreamBuffer:
    """Decoded output of one stream, capped at ``limit`` bytes (the oldest text is dropped)."""

    def __init__(self, limit: int = BUFFER_BYTES) -> None:
        self.limit = limit
        self.chunks: deque[tuple[int, str]] = deque()
        self.size = 0
        self.dropped = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def add(self, seq: int, data: bytes, *, final: bool = False) -> None:
        text = self._decoder.decode(data, final=final)
        if not text:
            return
        self.chunks.append((seq, text))
        self.size += len(text.encode("utf-8"))
        while self.size > self.limit and self.chunks:
            old_seq, old = self.chunks.popleft()
            raw = old.encode("utf-8")
            # what is kept of the oldest chunk: none, or its tail from a whole character on
            rest = raw[self.size - self.limit :].decode("utf-8", errors="ignore")
            gone = len(raw) - len(rest.encode("utf-8"))
            self.size -= gone
            self.dropped += gone
            if rest:
                self.chunks.appendleft((old_seq, rest))

    def text(self) -> str:
        return "".join(chunk for _, chunk in self.chunks)


@dataclass(frozen=True)
class ShellStatus:
    """Where a command is: running or its exit code, and the tail of its output."""

    command: str
    running: bool
    exit_code: int | None
    output: str
    timed_out: bool = False
    stopped: bool = False
    over_memory: int | None = None  # bytes its processes held when they were stopped

    @property
    def state(self) -> str:
        if self.running:
            return "still running"
        if self.over_memory is not None:
            return f"stopped: {over_memory(self.over_memory)} (exit {self.exit_code})"
        if self.timed_out:
            return f"stopped after its timeout (exit {self.exit_code})"
        if self.stopped:
            return f"stopped (exit {self.exit_code})"
        return f"exit {self.exit_code}"

    def __str__(self) -> str:
        return f"$ {self.command}\n[{self.state}]" + (f"\n{self.output}" if self.output else "")


class ShellHandle(HostHandle):
    """A running command on the host: ``logs()``, ``wait(seconds)``, ``type(text)``, ``stop()``."""

    __vis_methods__ = ("logs", "wait", "type", "stop")
    __vis_activities__ = {
        "logs": HandleMethod("observation", "Run command", show_start=False),
        "wait": HandleMethod("observation", "Run command"),
        "type": HandleMethod("mutation", "Run command", show_start=False),
        "stop": HandleMethod("mutation", "Run command"),
    }

    def __init__(
        self,
        command: str,
        child: ChildProcess,
        streams: tuple[asyncio.StreamWriter, asyncio.StreamReader | None, asyncio.StreamReader],
        output_dir: Path,
        *,
        timeout: float | None = None,
        jailed: bool = False,
    ) -> None:
        self.id = f"sh-{next(_ids)}"
        self.command = command
        self.jailed = jailed  # started in the jail
        self.pid = child.pid  # its keeper, which owns every process the command starts
        self._child = child
        self._stdin, stdout, stderr = streams
        self._output_dir = output_dir
        self._seq = itertools.count()
        self.stdout = StreamBuffer()
        self.stderr = StreamBuffer()
        self.timed_out = False
        self.stopped = False
        # still running when a block ended; ``seen`` once the model read how it ended
        self.left_running = False
        self.seen = False
        self.started_at = time.monotonic()
        self.ended_at: float | None = None  # when an exit was seen (wait, or the settle)
        self.exit_read = False  # its exit and its output were read (on_exit is told next)
        self._drains = [
            asyncio.ensure_future(self._drain(stdout, self.stdout)),
            asyncio.ensure_future(self._drain(stderr, self.stderr)),
        ]
        # called once the command has exited and its output is read (the row shows it)
        self.on_exit: Callable[[ShellHandle], Awaitable[None]] | None = None
        self._exit_watch = asyncio.ensure_future(self._watch_exit())
        self._tasks: set[asyncio.Task[None]] = set()  # its stop after a time out
        self._timer = (
            asyncio.get_running_loop().call_later(timeout, self._on_timeout) if timeout else None
        )

    @property
    def activity_handle_id(self) -> str:
        return self.id

    def render_activity(
        self, method: str, *, phase: str, args: Any, kwargs: Any, result: Any, error: Any
    ) -> ActivityPresentation:
        return shell_call_presentation(
            self, method, phase=phase, args=args, kwargs=kwargs, error=error
        )

    def __repr__(self) -> str:
        state = "running" if self.running else f"exit {self.exit_code}"
        return f"<shell {self.id} pid {self.pid} {state}: {self.command[:60]!r}>"

    async def _drain(self, stream: asyncio.StreamReader | None, buffer: StreamBuffer) -> None:
        if stream is None:
            return
        while True:
            data = await stream.read(READ_CHUNK)
            if not data:
                buffer.add(next(self._seq), b"", final=True)
                return
            buffer.add(next(self._seq), data)

    async def _watch_exit(self) -> None:
        """The exit is noted when it happens (a true duration, not when someone next looks),
        and :attr:`on_exit` is told once the output is read."""
        await self._settle()
        self.exit_read = True
        if self.on_exit is not None:
            try:
                await self.on_exit(self)
            except Exception:  # the row stays as it was; the command's end is still reported
                log.exception("shell %s: the exit listener failed", self.id)

    async def exit_told(self) -> None:
        """Return once the exit was noted and :attr:`on_exit` told of it."""
        await asyncio.shield(self._exit_watch)

    def _on_timeout(self) -> None:
        if self.running:
            self.timed_out = True
            keep(self._tasks, asyncio.ensure_future(self.end(STOP_GRACE_SECONDS)))

    @property
    def running(self) -> bool:
        """The command itself runs (what it left in the background may run on)."""
        return self._child.command_exit is None

    @property
    def alive(self) -> bool:
        """The command, or something it left running, still runs (its keeper has not ended)."""
        return self._child.returncode is None

    @property
    def runtime(self) -> float | None:
        """Seconds from start to exit, once the exit was seen; None while it runs."""
        return None if self.ended_at is None else self.ended_at - self.started_at

    @property
    def exit_code(self) -> int | None:
        return self._child.command_exit

    def output_lines(self) -> list[tuple[str, str]]:
        """``(stream, line)`` pairs in the order the lines ended (chunk order across the two
        streams); a line that came in several reads is one line, an unended one comes last.
        Each line is as a terminal draws it: a carriage return does not end it (the last
        draw of a progress bar shows)."""
        merged = sorted(
            [(seq, "stdout", text) for seq, text in self.stdout.chunks]
            + [(seq, "stderr", text) for seq, text in self.stderr.chunks]
        )
        out: list[tuple[str, str]] = []
        unended = {"stdout": "", "stderr": ""}
        for _, stream, text in merged:
            lines = (unended[stream] + text).split("\n")
            unended[stream] = lines.pop()
            out.extend((stream, drawn_line(line)) for line in lines)
        out.extend((stream, drawn_line(rest)) for stream, rest in unended.items() if rest)
        return out

    def combined(self) -> str:
        merged = sorted(list(self.stdout.chunks) + list(self.stderr.chunks))
        return "".join(text for _, text in merged)

    def printed(self) -> str:
        """Everything printed so far, stdout and stderr in arrival order, after a line that
        says how many earlier bytes the buffers dropped, if any."""
        dropped = self.stdout.dropped + self.stderr.dropped
        note = f"[{dropped:,} earlier bytes dropped from the 8 MiB buffer]\n" if dropped else ""
        return note + self.combined()

    def logs(self) -> str:
        """:meth:`printed`, tail-bounded."""
        return fit_output(
            self.printed(), self._output_dir, keep=Keep.TAIL, label=f"shell-{self.id}"
        )

    @property
    def over_memory(self) -> int | None:
        """Bytes its processes held together when they were stopped for the memory limit."""
        return self._child.over_memory

    def status(self) -> ShellStatus:
        return ShellStatus(
            self.command,
            self.running,
            self.exit_code,
            self.logs(),
            self.timed_out,
            self.stopped,
            self.over_memory,
        )

    async def _settle(self) -> None:
        await self._child.ended()
        if self.ended_at is None:
            self.ended_at = time.monotonic()
        if self._timer is not None:
            self._timer.cancel()
        # A background grandchild can hold the pipes open; do not wait on it forever.
        await asyncio.wait(self._drains, timeout=0.5)

    async def wait(self, seconds: float | None = 30) -> ShellStatus:
        """Wait up to ``seconds`` (None: no limit) for the command to exit and return its status."""
        seconds = time_limit(seconds, "wait: seconds", zero=True)
        if not self.running:  # exited already: wait(0) returns (after at most the drain grace)
            await self._settle()
            return self._seen_status()
        try:
            await asyncio.wait_for(asyncio.shield(self._settle()), seconds)
        except TimeoutError:
            tail = "\n".join(line for _, line in self.output_lines()[-10:])
            raise TimeoutError(
                f"shell: {self.command!r} (pid {self.pid}) is still running after {seconds:g}s. "
                "Call logs() to see its output, wait() again to keep waiting, or stop() to end it."
                + (f" Last output:\n{tail}" if tail else "")
            ) from None
        return self._seen_status()

    def _seen_status(self) -> ShellStatus:
        """The status the model receives of an ended command (no background report follows)."""
        self.seen = True
        return self.status()

    def tail(self) -> str:
        """The last ``TAIL_LINES`` lines of output (at most ``TAIL_CHARS`` characters)."""
        text = "\n".join(line for _, line in self.output_lines()[-TAIL_LINES:])
        return text if len(text) <= TAIL_CHARS else "…" + text[-(TAIL_CHARS - 1) :]

    async def type(self, text: str) -> None:
        """Send ``text`` to the command's stdin (add ``\\n`` to press Enter)."""
        if not isinstance(text, str):
            raise TypeError(f"type: text must be a string, got {type(text).__name__}")
        stdin = self._stdin
        if not self.running or stdin.is_closing():
            raise RuntimeError(
                f"shell: {self.command!r} has exited (exit {self.exit_code}); it cannot read "
                "input. Start it again with shell()."
            )
        stdin.write(text.encode("utf-8"))
        try:
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise RuntimeError(
                f"shell: {self.command!r} closed its input; it no longer reads what you type"
            ) from None

    async def stop(self, grace: float = STOP_GRACE_SECONDS) -> ShellStatus:
        """Stop every process the command started (``setsid`` ones too): SIGTERM, then
        SIGKILL after ``grace`` seconds."""
        await self.end(grace)
        return self._seen_status()

    async def end(self, grace: float) -> None:
        """Like :meth:`stop`, returning once every process is gone; the model is told of the
        end in its next request (a command left running)."""
        if self.running:
            self.stopped = True
        self._child.terminate()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._child.wait(), max(0.0, grace))
        self._child.kill()
        await self._child.wait()
        await self._settle()
        # closed now, not when the loop is gone ("Event loop is closed")
        self._stdin.close()
        with contextlib.suppress(OSError):  # the command closed its end first
            await self._stdin.wait_closed()


class ShellManager:
    """Every process one session started; :meth:`close_all` stops them at session end.

    ``environment`` is what the project defines (``environment:``, ``.env*``): children see it
    on top of a minimal base, never the host environment, unless ``host_environment`` (the
    processes an extension starts unjailed with ``vis.shell``). ``refusal`` says why no command
    may start (e.g. the jail setting could not be read). ``project_root`` keeps the project's
    control files read-only when the jail is on. ``limits`` bound memory and processes. No
    child outlives Vis: each command runs under a keeper that owns its whole tree (also what
    calls ``setsid()`` or forks twice) and kills it when Vis ends, even by kill -9.
    ``git_looks``: the workspace's looks for its git files, which the jail keeps read-only
    (None: each jail takes a look of its own).
    """

    def __init__(
        self,
        *,
        environment: Mapping[str, str] | None = None,
        host_environment: bool = False,
        project_root: Path | None = None,
        refusal: str | None = None,
        limits: ChildLimits | None = None,
        home_writable: bool = False,
        read_paths: tuple[Path, ...] = (),
        git_looks: GitLooks | None = None,
    ) -> None:
        self.limits = limits
        self.git_looks = git_looks
        self.home_writable = home_writable  # jail_home_writable: home's dot entries writable
        self.read_paths = read_paths  # jail_read_paths: folders shown read-only in the jail
        self.handles: dict[str, ShellHandle] = {}
        self.environment = dict(environment or {})
        self.host_environment = host_environment
        self.project_root = project_root
        self.refusal = refusal
        # told when a command exits (the session redraws its row); set by who owns the session
        self.on_exit: Callable[[ShellHandle], Awaitable[None]] | None = None
        self.closing = False  # the session ends: its commands are being stopped
        # the folder of the session's network proxy (started on demand): a jailed command's
        # only network; without it a jailed command has none
        self.network: Callable[[], Awaitable[Path]] | None = None

    async def start(
        self,
        command: str,
        *,
        cwd: Path,
        output_dir: Path,
        timeout: float | None = None,
        jail_workspace: Path | None = None,
        jail_read_write: tuple[Path, ...] = (),
        env: dict[str, str] | None = None,
        jail_read_only: tuple[Path, ...] = (),
    ) -> ShellHandle:
        """Start ``command`` under bash in its own session; jailed if ``jail_workspace`` is set
        (``jail_read_only``: folders outside it the command may read)."""
        if self.refusal is not None:
            raise PermissionError(self.refusal)
        shell = "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh"
        argv = [shell, "-c", command]
        jail = None
        if jail_workspace is not None:
            # the jail starts in the workspace; move to the asked folder first
            argv = [shell, "-c", f"cd -- {shlex.quote(str(cwd))} || exit 125\n{command}"]
            network = None if self.network is None else await self.network()
            if network is not None:
                argv = bridged(argv)
                env = {**(env or {}), **proxy_environment()}
            # the bridge runs Vis's interpreter: shown where there is a network to bridge
            bridge = [] if network is None else [python_home()]
            jail = functools.partial(  # never runs unconfined when it cannot be applied
                jail_argv,
                workspace=jail_workspace,
                read_write=jail_read_write,
                project_root=self.project_root,
                home_writable=self.home_writable,
                network_folder=network,
                read_only=[*self.read_paths, *jail_read_only, *bridge],
                tmpfs_bytes=self.limits.memory_bytes if self.limits else 0,
                git_looks=self.git_looks,
            )
        audience = Audience.INHERITED if self.host_environment else Audience.MODEL
        handle = await start_handle(
            command,
            argv,
            output_dir,
            timeout=timeout,
            limits=self.limits,
            cwd=cwd,
            env=child_environment(self.environment, env, audience=audience),  # see the class
            jail=jail,
        )
        handle.on_exit = self.on_exit
        self.handles[handle.id] = handle
        return handle

    async def stop_unleft(self) -> None:
        """A block was cancelled (Esc, Ctrl+C): stop the commands it started that still run.
        Those earlier blocks left running (a dev server, a watcher) go on."""
        started = [h for h in self.handles.values() if h.running and not h.left_running]
        await asyncio.gather(*(h.stop() for h in started), return_exceptions=True)

    def leave_running(self) -> None:
        """A block ended: the commands still running report back when they end."""
        for handle in self.handles.values():
            if handle.running:
                handle.left_running = True

    def left_running(self) -> list[ShellHandle]:
        """The commands an ended block left running that still run."""
        return [h for h in self.handles.values() if h.left_running and h.running]

    async def stop_running(self) -> None:
        """Stop every command still running, and what ended ones left running (the session
        entered a draft: what it started in the live workspace must not write there any more)."""
        running = [h for h in self.handles.values() if h.alive]
        await asyncio.gather(*(h.stop() for h in running), return_exceptions=True)

    async def stop_unjailed(self) -> None:
        """The jail went on: kill every command started without it, and what such a command
        left running, at once (the model could type into one, and each reaches the whole host)."""
        unjailed = [h for h in self.handles.values() if h.alive and not h.jailed]
        await asyncio.gather(*(h.end(0) for h in unjailed), return_exceptions=True)

    async def ended_in_background(self) -> list[ShellHandle]:
        """Commands left running that ended since and whose end the model has not read; each
        is returned once (its output drained)."""
        ended = [
            h for h in self.handles.values() if h.left_running and not h.seen and not h.running
        ]
        for handle in ended:
            handle.seen = True
            await handle._settle()
        return ended

    def exited_unseen(self) -> list[ShellHandle]:
        """Commands left running whose exit and output were read, and whose end the model
        has not read yet (the caller marks the one it reports ``seen``)."""
        return [h for h in self.handles.values() if h.left_running and h.exit_read and not h.seen]

    async def close_all(self) -> None:
        """Stop every command, and wait until each one's exit was told (its row redrawn);
        ``closing`` from now on: no end of a command is reported to the model any more."""
        self.closing = True
        handles = list(self.handles.values())
        await asyncio.gather(*(h.stop() for h in handles), return_exceptions=True)
        await asyncio.gather(*(h.exit_told() for h in handles), return_exceptions=True)


async def start_handle(
    command: str,
    argv: list[str],
    output_dir: Path,
    *,
    timeout: float | None = None,
    limits: ChildLimits | None = None,
    cwd: Path | str,
    env: Mapping[str, str],
    jail: Callable[[list[str]], list[str]] | None = None,
) -> ShellHandle:
    """Start ``argv`` (``command`` under bash), in ``jail`` if given, with pipes for a handle.
    Its keeper owns every process it starts (also ``setsid`` ones) and ends them all when Vis
    ends."""
    child = ChildProcess(
        argv, env=env, cwd=cwd, jail=jail, keeper="shell", limits=limits, drain=False
    )
    try:
        streams = await child.streams()
    except BaseException:
        child.kill()
        raise
    jailed = jail is not None
    return ShellHandle(command, child, streams, output_dir, timeout=timeout, jailed=jailed)
