"""The host side of ``python_execution``: start the child, run blocks, serve tool calls."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import functools
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vis_core.extension.metadata import build_metadata
from vis_core.model.block import time_limit_note
from vis_core.model.handles import HostHandle
from vis_core.sandbox.output import MAX_BYTES, TailBuffer, keep_tail
from vis_core.sandbox.protocol import MAX_CALLS_IN_FLIGHT, MAX_MESSAGE_BYTES
from vis_core.sandbox.reroot import RerootFailed, reroot
from vis_core.system.child_process import VIS_ROOT
from vis_core.system.environ import child_environment
from vis_core.system.jail import (
    JailUnavailable,
    jail_argv,
    protected_files,
    reserve_control_folder,
    vis_runtime,
)
from vis_core.system.lifetime import ChildLimits, Confinement, end_strays, over_memory
from vis_core.system.loops import end_tasks, keep
from vis_core.system.network_bridge import proxy_environment
from vis_core.system.process import ChildGone, ChildProcess, Ending

if TYPE_CHECKING:
    from vis_core.ipc.messages import Done, Ready
    from vis_core.ipc.pairing import ControlSocket
    from vis_core.sandbox.calls import ChildCalls
    from vis_core.system.git_control import GitLooks


ToolCaller = Callable[[str, tuple[Any, ...], dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class HandleCall:
    """One method call on a host handle from the sandbox, as the host callback receives it.

    ``origin`` names the tool whose result first carried the handle (``None`` if unknown).
    """

    handle: HostHandle
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    origin: str | None = None


HandleCaller = Callable[[HandleCall], Awaitable[Any]]


class QuickCall(Protocol):
    """A call the child made on a direct channel, as the host records it (without a task:
    :meth:`~vis_core.sandbox.calls.ChildCalls.adopt`): it answers once; ``cancel`` gives it
    up (no answer then) and returns the task that ends it, if one does."""

    def cancel(self) -> asyncio.Task[None] | None: ...


class DirectPeer(Protocol):
    """What pairs the sandbox's child with the session's extension workers, so that it calls
    their tools on direct channels (:mod:`vis_core.ipc.pairing`)."""

    def child_started(self, control: ControlSocket, calls: ChildCalls) -> None:
        """A child started: ``control`` hands it channels, ``calls`` serves its calls."""

    def child_ended(self, control: ControlSocket) -> None:
        """The child of ``control`` ended."""

    def before_block(self) -> None:
        """A block is about to be sent (what may be called directly is brought up to date)."""


log = logging.getLogger(__name__)

INTERRUPT_GRACE = 1.0
START_TIMEOUT = 60.0
_DRAIN_ABOVE = 1 << 20
_MARK = b"\x1e\x1fvis-block-end:"
_CHILD = "vis_core.sandbox.child:main"
# a block's ``globals``: data, or an awaitable of it (built while the child starts)
Globals = Mapping[str, Any] | Awaitable[Mapping[str, Any] | None] | None


def host_pid(outer: int, inner: int, *, namespaced: bool = True) -> int | None:
    """The host pid of the process that is ``inner`` in the PID namespace of a descendant of
    ``outer`` (bwrap), found through ``/proc``; None when there is none. ``namespaced=False``:
    ``inner`` is a host pid, accepted only when it is a descendant of ``outer`` (a child that
    names another process of the person's is never signalled)."""
    from vis_core.system.keeper import descendants  # each thread's children: one a thread started

    for pid in (outer, *descendants(outer)):
        try:
            with open(f"/proc/{pid}/status", encoding="utf-8") as status:
                nspid = next((line.split()[1:] for line in status if line.startswith("NSpid:")), [])
        except OSError:
            continue
        if (len(nspid) > 1) is namespaced and nspid[-1] == str(inner):
            return pid
    return None


@dataclass(frozen=True)
class ToolEntry:
    """One host tool as the sandbox sees it; a dotted name becomes a namespace attribute."""

    name: str
    doc: str = ""
    contract: dict[str, Any] | None = None
    hidden: bool = False  # callable, but left out of its namespace's repr() and dir()


@dataclass(frozen=True)
class BlockResult:
    """What one block produced: printed output, the error, and any restart note.

    ``forms`` are the block's top-level statements as evaluated (``index``, ``line``,
    ``end_line``, ``source``, ``status``: ok / error / not-run / unknown); empty when the block
    did not run (a syntax error, a refusal, a dead sandbox).
    """

    stdout: str
    error: str | None
    restarted: str | None
    duration: float
    forms: tuple[dict[str, Any], ...] = ()


def _names(items: Sequence[str], most: int = 12) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def _changed_settings(names: Sequence[str]) -> str:
    """How the restart note says the child was stopped for settings that changed."""
    if len(names) == 1:
        return f"was stopped to apply the changed setting {names[0]}"
    return f"was stopped to apply the changed settings {', '.join(names[:-1])} and {names[-1]}"


def restore_summary(report: Mapping[str, Any]) -> str:
    """One sentence on what a new child restored from the snapshot, and what it could not."""
    parts = []
    for key in ("helpers", "variables", "modules"):
        if report.get(key):
            parts.append(f"{key} {_names(list(report[key]))}")
    text = (
        "variables were restored from the last snapshot: " + "; ".join(parts) + "."
        if parts
        else "there were no saved helpers or variables to restore."
    )
    failed = dict(report.get("failed") or {})
    if failed:
        text += " Not restored: " + "; ".join(f"{n} ({r})" for n, r in list(failed.items())[:8])
        text += "." if len(failed) <= 8 else f"; and {len(failed) - 8} more."
    lost = list((report.get("lost") or {}).keys())
    if lost:
        text += f" Lost because they could not be saved: {_names(lost)}."
    return text


def _reroot(pid: int, old_root: Path, new_root: Path) -> str | None:
    """:func:`reroot` of the jail of ``pid``; why it failed, or None."""
    try:
        reserve_control_folder(new_root, Path.home().resolve())
        reroot(pid, old_root, new_root, protected_files(new_root))
    except (RerootFailed, OSError) as exc:
        return str(exc)
    return None


@dataclass(frozen=True)
class ChildConfinement:
    """What confines a sandbox child for its whole life: the jail, its memory and process
    limits, whether home's dot entries are writable in the jail, and the folders outside the
    workspace the jail shows read-only. Another takes a new child (:meth:`Sandbox.confine`)."""

    jail: bool
    limits: ChildLimits | None
    home_writable: bool
    read_paths: tuple[Path, ...]


class Sandbox:
    """A persistent Python namespace in a child process; tools are awaitable proxies in it."""

    def __init__(
        self,
        *,
        workspace: Path,
        call_tool: ToolCaller,
        tools: Callable[[], Sequence[ToolEntry]],
        tools_version: Callable[[], int] | None = None,
        globals: Mapping[str, Any] = {},
        call_handle: HandleCaller | None = None,
        snapshot_save: Callable[[dict[str, Any]], None] | None = None,
        snapshot_load: Callable[[], dict[str, Any] | None] | None = None,
        jail: bool = False,
        python: str = sys.executable,
        output_limit: int = MAX_BYTES,
        idle_timeout: float | None = None,
        output_dir: Path | None = None,
        environment: Mapping[str, str] | None = None,
        project_root: Path | None = None,
        refusal: str | None = None,
        limits: ChildLimits | None = None,
        time_limit: float = 0,
        max_calls: int = MAX_CALLS_IN_FLIGHT,
        message_limit: int = MAX_MESSAGE_BYTES,
        home_writable: bool = False,
        read_paths: tuple[Path, ...] = (),
        read_only: bool = False,
        network: Callable[[], Awaitable[Path]] | None = None,
        draft_slot: Callable[[], Path | None] | None = None,
        direct: DirectPeer | None = None,
        git_looks: GitLooks | None = None,
    ) -> None:
        """``environment``: the project's values the child sees on top of a minimal base (never
        the host environment); ``refusal``: why no block may run (e.g. the jail setting could
        not be read), returned as every block's error; ``limits``: memory and processes of the
        child; ``time_limit``: seconds a block may run before it is stopped (0: no limit);
        ``max_calls``: tool calls in flight at once, ``message_limit``: bytes of one message
        from the child (default: a full snapshot, ``MAX_MESSAGE_BYTES``); the child keeps to
        both, so a child that goes over them is stopped; ``home_writable``: home's dot entries
        writable in the jail when the workspace holds home (``jail_home_writable``);
        ``read_paths``: folders outside the workspace the jail shows read-only
        (``jail_read_paths``);
        ``read_only``: the jail shows the workspace read-only (plan mode);
        ``network``: with the jail on, the folder of the proxy that is the jail's only way out
        (:mod:`network_proxy`), started on demand; without it the jail has no network;
        ``draft_slot``: the empty folder the session's next draft will be made in, shown
        read-only in the jail so that a draft entered mid-block can be made writable there
        (:meth:`follow_now`); ``direct``: pairs each child with the extension workers, whose
        tools it then calls directly; ``git_looks``: the workspace's looks for its git files,
        which the jail keeps read-only (None: each jail takes a look of its own)."""
        self.read_only = read_only
        self.max_calls = max_calls
        self.message_limit = message_limit
        # the running child's (or, with none, the next one's); :meth:`confine` changes it
        self._confinement = ChildConfinement(jail, limits, home_writable, read_paths)
        self.time_limit = time_limit
        self.workspace = Path(workspace)
        self.environment = dict(environment or {})
        self.project_root = project_root
        self.refusal = refusal
        self.idle_timeout = idle_timeout  # stop the child after this long without a block
        self._callers = (call_tool, call_handle)  # for the child's calls
        self._direct = direct
        self._git_looks = git_looks
        self._control: ControlSocket | None = None  # the running child's, with ``direct``
        self._tools = tools
        # what changes when the tools do (a block's calls send the child the new ones)
        self._tools_version = tools_version
        self._sent_version = -1
        self._updating: asyncio.Future[None] | None = None
        self._globals: dict[str, Any] = {}
        if globals:
            from vis_core.ipc.values import encode  # the IPC layer: only with globals now

            try:
                self._globals = encode(dict(globals), root="globals")
            except TypeError as exc:
                raise TypeError(f"Sandbox globals must be JSON-able data: {exc}") from exc
        self._snapshot_save = snapshot_save
        self._snapshot_load = snapshot_load
        self.python = python
        self.output_limit = output_limit  # printed output shown, in bytes (lines: MAX_LINES)
        self.output_dir = output_dir  # where a cut output is saved whole
        self._proc: ChildProcess | None = None
        self._stdin: asyncio.StreamWriter | None = None
        self._pid: int | None = None
        self._nonce = ""
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._calls: ChildCalls | None = None  # made with the first child
        self._ready: asyncio.Future[Ready] | None = None
        self._done: dict[int, asyncio.Future[Done]] = {}
        self._block_id = 0
        self._running: int | None = None
        self._sent_tools: list[dict[str, Any]] | None = None
        self._last_snapshot: dict[str, Any] | None = None
        self._death: str | None = None
        self._kill_reason: str | None = None
        self._stopping: asyncio.Task[None] | None = None
        self._output = self._new_output()
        self._outputs: dict[int, asyncio.Future[str]] = {}
        self._output_closed: asyncio.Future[None] | None = None
        self._exited: ChildProcess | None = None
        self._busy = False
        self._interrupt_pending = False
        self._idle_timer: asyncio.TimerHandle | None = None
        self._moved = False  # the workspace moved (a draft): the next block needs a new child
        self._move_reason: str | None = None  # why, when not a move (plan mode)
        self._network = network
        self._network_folder: Path | None = None
        self._draft_slot = draft_slot
        self._slot_shown: Path | None = None  # the draft slot the running jail shows
        self._next: ChildConfinement | None = None  # the next child's, when it differs
        self._changed: list[str] = []  # the settings that asked for it, named in its note
        self._restarted: str | None = None  # what the last start says, for the next block
        self._preparing: asyncio.Task[None] | None = None  # a start ahead of a block

    # -- public ------------------------------------------------------------------------------
    async def run(self, code: str, *, globals: Globals = None) -> BlockResult:
        """Run one block; starts (or restarts) the child first when needed.

        ``globals`` (plain data) are set in the namespace before the block, e.g. ``session``;
        given as an awaitable (a task its caller owns: not awaited when the block does not
        start), it is awaited once the child runs, just before the block is sent, so what
        builds them (the ``session`` dict: the extensions' ``ctx``, which may start the
        session's extension worker) works while the child starts.
        """
        started = time.monotonic()
        if self.refusal is not None:
            return BlockResult("", self.refusal, None, 0.0)
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        # busy from here: an Esc while a start ahead of it (:meth:`prepare`) holds the lock
        # stops the block before it begins, as one while the block starts the child does
        self._busy = True
        self._interrupt_pending = False
        try:
            async with self._lock:
                failed = await self._child_ready(started)
                if failed is not None:
                    return failed
                restarted, self._restarted = self._restarted, None
                return await self._run_block(code, restarted, started, globals)
        finally:
            self._busy = False
            self._arm_idle_stop()

    def _arm_idle_stop(self) -> None:
        """Stop the child after ``idle_timeout`` seconds without a block (none: kept), to free
        it; the next block restores the saved snapshot."""
        if self.idle_timeout is None:
            return
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        idle = f"was stopped after {self.idle_timeout:g} s without a block"
        self._idle_timer = asyncio.get_running_loop().call_later(
            self.idle_timeout, lambda: self._spawn(self._stop_now(idle, latest=False))
        )

    def printed(self, lines: int) -> str:
        """The last ``lines`` lines the running block printed so far ("" between blocks)."""
        return self._output.tail(lines) if self._busy else ""

    def printed_since(self, mark: int, most: int) -> tuple[str, int]:
        """What the running block printed after its first ``mark`` characters (at most its
        last ``most``, after a note of the cut), and the mark of what it printed so far; ("",
        ``mark``) between blocks."""
        output = self._output
        if not self._busy or output.total < mark:  # the block ended: its output is its result
            return "", mark
        return output.since(mark, most), output.total

    def move_to(self, workspace: Path, project_root: Path | None) -> None:
        """The session entered or left a draft: the next block runs in a new child whose
        working folder (and jail's writable root) is ``workspace``, its namespace restored
        from the snapshot; a block running now finishes where it started."""
        if Path(workspace) == self.workspace and project_root == self.project_root:
            return
        self.workspace = Path(workspace)
        self.project_root = project_root
        self._moved = True
        self._move_reason = None

    def set_read_only(self, read_only: bool) -> asyncio.Task[None] | None:
        """Plan mode began or ended: the next block runs in a new child whose jail shows the
        workspace read-only (or writable again), its namespace restored from the snapshot.
        Entering plan mode stops the writable child now (a thread or task a block left in it
        would write on while the session plans); the task returned ends when it has."""
        if read_only == self.read_only:
            return None
        self.read_only = read_only
        self._moved = True
        self._move_reason = (
            "switched to plan mode (the workspace is read-only)"
            if read_only
            else "left plan mode (the workspace is writable)"
        )
        proc = self._proc
        if not read_only or proc is None or proc.returncode is not None:
            return None
        return self._spawn(self._stop_now(self._move_reason))

    def confine(self, now: Confinement, setting: str) -> asyncio.Task[None] | None:
        """The setting ``setting``, which shapes the child, changed: the next block runs in a
        new child under ``now``, its namespace restored from the snapshot, and its
        restart note names every setting changed until then; a block running now finishes
        under the old ones. ``now.refusal`` holds from the next block. The old child is stopped
        once no block runs in it (a thread a block left there must not run on unjailed, with a
        writable home or past a lowered limit); the task returned ends when it has."""
        self.refusal = now.refusal
        shaped = ChildConfinement(now.jail, now.limits, now.home_writable, now.read_paths)
        if shaped == (self._next or self._confinement):
            return None
        self._next = shaped
        if setting not in self._changed:
            self._changed.append(setting)
        reason = _changed_settings(self._changed)
        if self._death is not None and self._death == self._move_reason:
            self._death = reason  # stopped for an earlier change and not started again yet
        self._moved = True
        self._move_reason = reason
        proc = self._proc
        if proc is None or proc.returncode is not None:
            return None
        return self._spawn(self._stop_now(reason))

    async def _stop_now(self, reason: str, *, latest: bool = True) -> None:
        """Stop the child once no block runs in it; its note says ``reason``, or (``latest``)
        the reason of the changes made while it waited (they all apply from the next child)."""
        async with self._lock:
            proc = self._proc
            if proc is not None and proc.returncode is None:
                why = (latest and self._move_reason) or reason
                self._on_exit(proc, await self._kill(proc, why))

    async def follow_now(self, old_root: Path, new_root: Path) -> None:
        """The session entered a draft (``new_root``) while a block may be running: with the
        jail on, ``old_root`` becomes read-only in the running jail now and the draft
        writable, so the rest of the block writes nowhere but the draft (the jail off: the
        child moves its working folder itself, see ``proxies.MOVING_TOOLS``). When that
        cannot be done (a file of ``old_root`` held open for writing), the child is stopped:
        the block ends there and the next one starts in the draft."""
        proc, pid = self._proc, self._pid
        if not self._confinement.jail or proc is None or proc.returncode is not None:
            return
        slot = self._slot_shown
        if not pid:
            problem = "its process could not be found"
        elif slot is None or not Path(new_root).is_relative_to(slot):
            problem = "the draft is not visible in the running jail"
        else:
            problem = await asyncio.to_thread(_reroot, pid, Path(old_root), Path(new_root))
        if problem is not None and proc.returncode is None:
            why = (
                f"was stopped when the session entered its draft ({problem}), so nothing "
                f"more of this block could write to {old_root}; the next block runs in "
                f"{new_root}"
            )
            await self._kill(proc, why)  # dead before the call returns: the block runs no further

    def prepare(self) -> asyncio.Task[None] | None:
        """Start the child now, in the background, when the next block would start one: the
        model has begun writing a block, so the child starts while its code streams. What
        that start says (a restart, what was restored) goes with the next block; a start
        that fails is tried again, and said, by the block itself. The task returned ends
        once the child runs (None: nothing to start)."""
        if self.refusal is not None or self._busy or (self._alive() and not self._moved):
            return None
        if self._preparing is None or self._preparing.done():
            self._preparing = self._spawn(self._prepare())
        return self._preparing

    async def _prepare(self) -> None:
        async with self._lock:
            await self._child_ready(time.monotonic())
        if not self._busy:  # no block may come (a cancelled turn): stopped when idle
            self._arm_idle_stop()

    async def _child_ready(self, started: float) -> BlockResult | None:
        """A running child for the next block, (re)started when needed, what its start says
        kept in ``_restarted``; or the result of a block that cannot run (no jail, a child
        that died while starting)."""
        if self._stopping is not None:
            await asyncio.shield(self._stopping)
            self._stopping = None
        if self._moved:
            self._moved = False
            proc = self._proc
            if proc is not None and proc.returncode is None:
                why, self._move_reason = self._move_reason or f"moved to {self.workspace}", None
                self._on_exit(proc, await self._kill(proc, why))
        if not self._alive():
            proc = self._proc
            if proc is not None and proc.returncode is None:  # its start was cancelled: ended
                cancelled = "was stopped as its start was cancelled"
                self._on_exit(proc, await self._kill(proc, cancelled))
                self._death = None  # the cancel was the person's: no restart to tell of
            elif proc is not None:  # its end, told before its pipe's
                self._on_exit(proc, proc.returncode)
            if self._next is not None:  # what :meth:`confine` asked for, from this child on
                self._confinement, self._next = self._next, None
                self._changed = []
            self._restarted = None
            try:
                self._restarted = await self._start()
            except JailUnavailable as exc:
                return BlockResult("", str(exc), None, time.monotonic() - started)
            except ChildGone as died:
                await self._drain_output()
                output = self._output.text()
                error = f"The sandbox process {died.how} while starting, so the block did not run."
                return BlockResult(output, error, None, time.monotonic() - started)
        return None

    async def interrupt(self) -> None:
        """Stop the running block: KeyboardInterrupt first, then kill the child after ~1 s."""
        block = self._running
        if block is None:
            if self._busy:  # still starting the child: stop before the block begins
                self._interrupt_pending = True
            return
        await self._interrupt(self._done.get(block))

    def end_strays(self) -> None:
        """The turn ended: kill every process its blocks started that still runs (a
        ``subprocess`` child, a double fork); the child and its namespace stay."""
        proc, pid = self._proc, self._pid
        if proc is None or not pid or proc.returncode is not None or self._busy:
            return
        end_strays(proc.pid, pid)

    async def close(self) -> None:
        """Kill the child and every process of its tree; the next ``run`` starts a new one."""
        if self._idle_timer is not None:
            self._idle_timer.cancel()
        if self._preparing is not None:  # first: a child it started is killed below
            await end_tasks({self._preparing})
            self._preparing = None
        proc = self._proc
        if proc is not None:
            if proc.returncode is None:
                await self._kill(proc, "was closed")
            self._on_exit(proc, await proc.wait())
        if self._calls is not None:
            self._calls.stop_listening()
        if self._stdin is not None:
            self._stdin.close()
            self._stdin = None
        await end_tasks(self._tasks)
        self._proc = None
        self._death = None

    # -- starting ----------------------------------------------------------------------------
    def _alive(self) -> bool:
        return self._proc is not None and self._proc.returncode is None and self._pid is not None

    def _jail(self) -> Callable[[list[str]], list[str]]:
        """The jail of the next child as the sandbox is now (what it shows is set here): a
        function that wraps the child's command in it, checking the workspace's protected
        files as it does (``JailUnavailable`` when there is no jail), in the thread that starts
        the child."""
        # Vis's packages, not VIS_ROOT: run from its source, that is the whole checkout (its
        # .env, the tokens in its .git/config)
        runtime = {*vis_runtime(), VIS_ROOT / "vis_core", Path(self.python).resolve().parent.parent}
        shown: list[Path] = []
        if self.output_dir is not None:  # what a tool saved whole: the block may read it
            with contextlib.suppress(OSError):
                Path(self.output_dir).mkdir(parents=True, exist_ok=True, mode=0o700)
                shown.append(Path(self.output_dir))
        self._slot_shown = self._draft_slot() if self._draft_slot is not None else None
        if self._slot_shown is not None:  # empty and read-only until a draft is made in it
            shown.append(self._slot_shown)
        confined = self._confinement
        return functools.partial(
            jail_argv,
            workspace=self.workspace,
            read_only=sorted({*runtime, *confined.read_paths}),
            project_root=self.project_root,
            shown_in_vis=shown,
            home_writable=confined.home_writable,
            workspace_read_only=self.read_only and confined.jail,
            network_folder=self._network_folder,
            tmpfs_bytes=confined.limits.memory_bytes if confined.limits else 0,
            git_looks=self._git_looks,
        )

    async def _start(self) -> str | None:
        import msgspec

        from vis_core.ipc.messages import Init, framed
        from vis_core.ipc.values import encode
        from vis_core.sandbox.calls import ChildCalls

        proxy, confined = {}, self._confinement
        if confined.jail and self._network is not None:  # the jail's only way out
            self._network_folder = await self._network()
            proxy = proxy_environment()
        env = child_environment(self.environment, proxy)
        loop = asyncio.get_running_loop()
        self._output = self._new_output()
        self._outputs = {}
        self._output_closed = loop.create_future()
        self._pid = None
        self._kill_reason = None
        self._sent_tools = None
        self._nonce = os.urandom(8).hex()  # what secrets.token_hex(8) returns
        if self._control is not None:  # a child that never started
            self._control.close()
            self._control = None
        control = None
        if self._direct is not None:
            from vis_core.ipc.pairing import ControlSocket

            control = ControlSocket()
        control_fd = -1 if control is None else control.child_fd
        # -I: nothing of the working folder or PYTHON* variables (the project's values stay in
        # the environment, for what the block starts); -u: as PYTHONUNBUFFERED did before -I.
        # The jail raises JailUnavailable before anything starts; the keeper ends every
        # process of the block with the child, and when Vis ends. The jail's set-up (up to
        # 2,000 files checked for hard links) and the fork run in a thread.
        child = functools.partial(
            ChildProcess,
            _CHILD,
            env=env,
            cwd=self.workspace,
            python=self.python,
            flags=("-u",),
            jail=self._jail() if confined.jail else None,
            keeper="sandbox",
            limits=confined.limits,
            drain=False,
            pass_fds=() if control is None else (control_fd,),
        )
        starting = asyncio.ensure_future(asyncio.to_thread(child))
        cancelled: asyncio.CancelledError | None = None
        try:
            await asyncio.shield(starting)
        except asyncio.CancelledError as exc:  # the child starts all the same: it is kept
            cancelled = exc  # below, as this sandbox's, for its close to end
            await asyncio.wait([starting])
        if starting.cancelled() or starting.exception() is not None:
            if control is not None:
                control.close()
            if cancelled is not None:
                raise cancelled
            starting.result()  # what the start raised
        proc = starting.result()
        if control is not None:
            control.spawned()
        self._control = control
        self._proc = proc
        if cancelled is not None:
            raise cancelled
        self._ready = loop.create_future()
        if self._calls is None:
            call_tool, call_handle = self._callers
            self._calls = ChildCalls(
                self, tasks=self._tasks, call_tool=call_tool, call_handle=call_handle
            )
        self._calls.listen(
            proc, proc.take_stdout(), max_calls=self.max_calls, message_limit=self.message_limit
        )
        self._stdin, _, stderr = await proc.streams()
        self._spawn(self._read_output(stderr))
        snapshot = self._last_snapshot
        if self._snapshot_load is not None:  # the store's (up to 64 MB of JSON): in a thread
            snapshot = await asyncio.to_thread(self._snapshot_load)
        metadata = await asyncio.to_thread(build_metadata)
        tools = await self._new_tools()  # a new child has none: the whole list
        init = Init(
            nonce=self._nonce,
            tools=tools or [],
            # project_root_path: the block's side of vis.workspace_root() (the session's
            # working copy, its draft included: a move starts a new child)
            globals={
                **self._globals,
                **encode(metadata),
                "project_root_path": str(self.workspace),
            },
            snapshot=snapshot,
            max_calls=self.max_calls,
            message_limit=self.message_limit,
            confined=confined.jail,
            control=control_fd,
        )
        await self.write(framed(init))
        try:
            ready = await asyncio.wait_for(asyncio.shield(self._ready), START_TIMEOUT)
        except TimeoutError:
            late = f"did not start within {START_TIMEOUT:.0f} s"
            await self._kill(proc, late)
            raise ChildGone(late) from None
        # a jailed child has a PID namespace of its own: its pid there is not the host's
        inner = ready.pid
        # (0 when it cannot be found: Esc then stops the block by killing the child)
        self._pid = host_pid(proc.pid, inner, namespaced=confined.jail) or 0
        if control is not None and self._direct is not None and proc is self._proc:
            assert self._calls is not None
            self._direct.child_started(control, self._calls)
        death, self._death = self._death, None
        report = msgspec.structs.asdict(ready.restore)
        if death:
            return f"The sandbox process {death} and was restarted; {restore_summary(report)}"
        if any(report.get(k) for k in ("helpers", "variables", "modules", "failed", "lost")):
            return f"A new sandbox process started; {restore_summary(report)}"
        return None

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        return keep(self._tasks, asyncio.ensure_future(coro))

    def _new_output(self) -> TailBuffer:
        return TailBuffer(self.output_limit, save_dir=self.output_dir)

    def _version(self) -> int:
        return -1 if self._tools_version is None else self._tools_version()

    async def tools_update(self) -> None:
        """Before a call's result: when the session's tools changed since the child got them
        (an MCP server's list changed during the block), the child gets them first; calls
        ending meanwhile wait for the same update."""
        if self._updating is None and self._version() != self._sent_version:
            self._updating = asyncio.ensure_future(self._send_tools())
        if self._updating is not None:
            await asyncio.shield(self._updating)

    async def _send_tools(self) -> None:
        from vis_core.ipc.messages import Tools, framed

        try:
            tools = await self._new_tools()
            if tools is not None:
                await self.write(framed(Tools(tools)))
        except ChildGone:
            raise
        except Exception:  # the result still goes; the next block gets the tools
            self._sent_tools = None
            log.exception("sending the changed tools to the sandbox")
        finally:
            self._updating = None

    async def _new_tools(self) -> list[dict[str, Any]] | None:
        """The session's tools as the child gets them, when it has not got this list yet
        (built in a thread: the first list renders every tool's contract, and imports what
        does it), else None."""
        self._sent_version = self._version()
        tools = await asyncio.to_thread(
            lambda: [
                {"name": t.name, "doc": t.doc, "contract": t.contract, "hidden": t.hidden}
                for t in self._tools()
            ]
        )
        if tools == self._sent_tools:
            return None
        self._sent_tools = tools
        return tools

    # -- one block ---------------------------------------------------------------------------
    async def _run_block(
        self,
        code: str,
        restarted: str | None,
        started: float,
        globals: Globals = None,
    ) -> BlockResult:
        if not self._interrupt_pending and globals is not None and not isinstance(globals, Mapping):
            globals = await globals  # built while the child started
        if self._interrupt_pending:
            self._interrupt_pending = False
            return BlockResult(
                "",
                "KeyboardInterrupt: the block was interrupted before it started",
                restarted,
                time.monotonic() - started,
            )
        self._block_id += 1
        block = self._block_id
        loop = asyncio.get_running_loop()
        # a lone surrogate (from a provider's "\udcff" escape) is written out: the same
        # character inside a string literal, a syntax error outside one, as it would be anyway
        from vis_core.ipc.messages import Run, framed
        from vis_core.ipc.values import encode, safe_text

        message = Run(block, safe_text(code))
        if globals and isinstance(globals, Mapping):
            message.globals = encode(dict(globals), root="globals")
        message.tools = await self._new_tools()  # built again after a reload
        if self._direct is not None:  # before the block: it calls as the host allows now
            self._direct.before_block()
        done = self._done[block] = loop.create_future()
        output = self._outputs[block] = loop.create_future()
        self._running = block
        overran = ""
        try:
            await self.write(framed(message))
            try:
                reply = await asyncio.wait_for(asyncio.shield(done), self.time_limit or None)
            except TimeoutError:
                overran = time_limit_note(self.time_limit)
                await self._stop_block(done)
                try:
                    reply = await asyncio.wait_for(asyncio.shield(done), 5.0)
                except TimeoutError:
                    raise ChildGone("did not stop after the time limit") from None
                reply.error = "\n".join(p for p in (overran, reply.error) if p)
            try:
                text = await asyncio.wait_for(asyncio.shield(output), 5.0)
            except TimeoutError:  # the end marker never came: take what arrived
                text = self._output.text()
                self._output = self._new_output()
        except ChildGone as died:
            await self._drain_output()
            text = self._output.text()
            error = (
                f"The sandbox process died during this block: it {died.how}. The block did "
                "not finish; the next block starts a new sandbox process and restores the "
                "helpers and variables saved after the last finished block."
            )
            error = f"{overran}\n{error}" if overran else error
            return BlockResult(text, error, restarted, time.monotonic() - started)
        except asyncio.CancelledError:
            self._stopping = self._spawn(self._interrupt(done))
            raise
        finally:
            self._running = None
            self._done.pop(block, None)
            self._outputs.pop(block, None)
        snapshot = reply.snapshot
        error = reply.error
        if snapshot is not None:
            self._last_snapshot = snapshot
            if self._snapshot_save is not None:
                try:
                    await asyncio.to_thread(self._snapshot_save, snapshot)  # to the store
                except Exception as exc:  # the block's result must not be lost
                    note = (
                        f"[vis: saving helpers and variables failed: {type(exc).__name__}: {exc}]"
                    )
                    error = f"{error}\n{note}" if error else note
        return BlockResult(
            text,
            keep_tail(error, self.output_limit) if error else None,
            restarted,
            time.monotonic() - started,
            tuple(reply.forms),
        )

    async def _interrupt(self, done: asyncio.Future[Any] | None) -> None:
        """The turn was cancelled (Esc, Ctrl+C): stop the block, then every tool call still
        in flight. The child cancels the calls its block awaited; one a task of the block
        started and left running (or whose cancel was lost) would run on, holding its
        extension, while no block waits for it."""
        try:
            await self._stop_block(done)
        finally:
            if self._calls is not None:
                self._calls.cancel_all()

    async def _stop_block(self, done: asyncio.Future[Any] | None) -> None:
        proc = self._proc
        if proc is None or proc.returncode is not None or (done is not None and done.done()):
            return
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGINT)
        if done is not None:
            try:
                await asyncio.wait_for(asyncio.shield(done), INTERRUPT_GRACE)
                return
            except TimeoutError:
                pass
            except (ChildGone, asyncio.CancelledError):
                return
        if proc.returncode is None:
            await self._kill(
                proc,
                f"was killed because the block did not stop within "
                f"{INTERRUPT_GRACE:g} s of the interrupt",
            )
            if done is not None:
                with contextlib.suppress(ChildGone, asyncio.CancelledError, TimeoutError):
                    await asyncio.wait_for(asyncio.shield(done), 1.0)

    # -- the pipes ---------------------------------------------------------------------------
    async def write(self, line: bytes) -> None:
        """Write ``line`` to the running child, waiting while its pipe holds over 1 MiB
        (:class:`ChildGone` when none runs)."""
        stdin = self._stdin
        if self._proc is None or stdin is None:
            raise ChildGone(self._death or "is not running")
        # a dead child: the exit handler reports its death
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            stdin.write(line)
            transport = stdin.transport
            if transport.get_write_buffer_size() > _DRAIN_ABOVE:  # type: ignore[attr-defined]
                await stdin.drain()

    # -- what the child's calls need (:class:`~vis_core.sandbox.calls.ChildSide`) ------------
    def ready(self, msg: Ready) -> None:
        if self._ready is not None and not self._ready.done():
            self._ready.set_result(msg)

    def finished(self, msg: Done) -> None:
        future = self._done.get(msg.id)
        if future is not None and not future.done():
            future.set_result(msg)

    def broke(self, proc: ChildProcess, why: str) -> None:
        if proc is self._proc and self._kill_reason is None:
            self._kill_reason = why
        proc.kill()

    def pipe_ended(self, proc: ChildProcess) -> None:
        self._spawn(self._wait_exit(proc))

    def write_now(self, line: bytes) -> None:
        stdin = self._stdin
        if self._proc is not None and stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                stdin.write(line)  # a dead child: the exit handler reports its death

    async def _wait_exit(self, proc: ChildProcess) -> None:
        self._on_exit(proc, await proc.wait())

    async def _read_output(self, stderr: asyncio.StreamReader) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        carry = b""
        try:
            while chunk := await stderr.read(1 << 16):
                data = carry + chunk
                while (start := data.find(_MARK)) >= 0:
                    end = data.find(b"\x1f\x1e", start + len(_MARK))
                    if end < 0:
                        break
                    self._output.add(decoder.decode(data[:start]))
                    self._on_marker(data[start + len(_MARK) : end], decoder)
                    data = data[end + 2 :]
                keep = data.rfind(b"\x1e", max(0, len(data) - 64))
                if keep < 0:
                    keep = len(data)
                self._output.add(decoder.decode(data[:keep]))
                carry = data[keep:]
            self._output.add(decoder.decode(carry, final=True))
        finally:
            if self._output_closed is not None and not self._output_closed.done():
                self._output_closed.set_result(None)

    def _on_marker(self, body: bytes, decoder: codecs.IncrementalDecoder) -> None:
        nonce, _, block = body.decode("ascii", "replace").partition(":")
        if nonce != self._nonce or not block.isdigit():  # not ours: it is printed text
            self._output.add(decoder.decode(_MARK + body + b"\x1f\x1e"))
            return
        text = self._output.text()
        self._output = self._new_output()
        future = self._outputs.get(int(block))  # None for a block the caller stopped waiting for
        if future is not None and not future.done():
            future.set_result(text)

    async def _drain_output(self) -> None:
        if self._output_closed is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._output_closed), 1.0)

    async def _kill(self, proc: ChildProcess, reason: str) -> int:
        """Kill ``proc`` and its whole tree, its death said as ``reason`` (what the next
        block's restart note tells), and wait for it: its exit code."""
        self._kill_reason = reason
        proc.kill()
        return await proc.wait()

    def _on_exit(self, proc: ChildProcess, code: int | None) -> None:
        if proc is not self._proc or self._exited is proc:
            return
        self._exited = proc
        control, self._control = self._control, None
        if control is not None:
            if self._direct is not None:
                self._direct.child_ended(control)
            control.close()
        how = self._kill_reason or str(Ending(code))
        proc.collect()  # the keeper's last words: the tree went over the memory limit
        limits = self._confinement.limits
        if proc.over_memory is not None and limits is not None:
            why = over_memory(proc.over_memory, limits, whose="the block's")
            how = f"was stopped because {why}"
        self._death = how
        self._pid = None
        proc.kill()  # orphans of the block would keep the output pipe open
        died = ChildGone(how)
        for future in [self._ready, *self._done.values()]:
            if future is not None and not future.done():
                future.set_exception(died)
                future.exception()  # retrieved: no "never retrieved" warning when unused
        if self._calls is not None:
            self._calls.cancel_all()
