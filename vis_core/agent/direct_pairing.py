"""Direct calls: the session's sandbox child calls its extension workers' tools on channels of
their own, and the host records each call as an Activity from the worker's reports.

The host pairs the child with each running worker (either may restart alone: a new process
gets a new channel) and grants, per worker, the tools it may call there
(:meth:`ToolInvoker.direct_grants`): the child sends those there, the worker answers it, and
tells the host first
(:mod:`vis_core.extension_host.direct_calls`). The grants are sent again before each block and
when plan mode changes; the host reads what the paired workers wrote before each frame of the
child, so Activities are stored in the order the calls ended.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from typing import TYPE_CHECKING, Any

from vis_core.system.loops import on_loop

if TYPE_CHECKING:
    from vis_core.agent.invoker import ToolInvoker
    from vis_core.extension_host.session_workers import SessionWorkers
    from vis_core.extension_host.worker_channel import Channel
    from vis_core.extension_host.worker_client import SessionWorker
    from vis_core.ipc.messages import Direct
    from vis_core.ipc.pairing import ControlSocket
    from vis_core.sandbox.calls import ChildCalls

log = logging.getLogger(__name__)


class DirectPairing:
    """Pairs one session's sandbox child with its extension workers (a
    :class:`~vis_core.sandbox.host.DirectPeer` and a
    :class:`~vis_core.extension_host.worker_client.DirectHost`)."""

    def __init__(
        self, invoker: ToolInvoker, workers: SessionWorkers, loop: asyncio.AbstractEventLoop
    ) -> None:
        self._invoker = invoker
        self._workers = workers
        self._loop = loop
        self._child: tuple[ControlSocket, ChildCalls] | None = None
        self._keys: dict[SessionWorker, int] = {}  # the child knows each worker by its key
        self._granted: dict[SessionWorker, dict[str, tuple[str, str, bool]]] = {}  # paired
        self._lines: dict[SessionWorker, int] = {}  # each one's pairing with the child now
        self._paired = 0  # pairings made (each a number the worker's reports name)
        workers.direct = self

    # -- the sandbox's side ----------------------------------------------------------------

    def child_started(self, control: ControlSocket, calls: ChildCalls) -> None:
        self._child = (control, calls)
        self._granted = {}
        self._lines = {}
        calls.before_frames = self._read_workers
        for worker in self._workers.running():
            self._pair(worker)

    def child_ended(self, control: ControlSocket) -> None:
        if self._child is not None and self._child[0] is control:
            self._child = None
            self._granted = {}
            self._lines = {}

    def before_block(self) -> None:
        self.refresh()

    # -- the workers' side -----------------------------------------------------------------

    def worker_started(self, worker: SessionWorker) -> None:
        if on_loop(self._loop):
            self._pair(worker)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._pair, worker)

    def settling(self, worker: SessionWorker) -> None:
        """``worker`` has a call to stop first: what the child calls goes through the host
        (which waits for it) until it stopped."""
        if on_loop(self._loop):
            self.refresh()
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self.refresh)

    def report(self, worker: SessionWorker, channel: Channel, frame: Direct) -> None:
        """A worker took one of the child's calls (or saw it cancelled): record it as a quick
        call of the session's, answered as the worker answers it."""
        if not on_loop(self._loop):  # read off the loop (it was not running): rare
            if not self._loop.is_closed():  # closed: the session has ended, nobody shows it
                self._loop.call_soon_threadsafe(self.report, worker, channel, frame)
            return
        child = self._child
        if child is None or frame.line != self._lines.get(worker):  # its child is gone
            if not frame.cancelled:
                worker.abandon(channel, frame.id, frame.name)
            return
        calls = child[1]
        if frame.cancelled:
            calls.give_up(frame.rid)
            return
        given: Any = None
        if frame.payload:
            from vis_core.ipc.trusted import loads

            given = loads(frame.payload, channel.exports, channel)
        invoker = self._invoker

        def record(answer: Any) -> Any:
            return invoker.direct_call(frame.name, given, answer, worker, channel, frame.id)

        if not calls.adopt(frame.rid, frame.name, record):
            worker.abandon(channel, frame.id, frame.name)

    # -- pairing and grants ----------------------------------------------------------------

    def refresh(self) -> None:
        """Send each paired worker, then the child, the tools that may be called directly
        now, where that changed (the worker first: it refuses what is no longer granted)."""
        child = self._child
        if child is None:
            return
        for worker, granted in list(self._granted.items()):
            if not worker.ready:
                del self._granted[worker]
                continue
            grants = self._invoker.direct_grants(worker)
            if grants == granted:
                continue
            self._granted[worker] = grants
            if not worker.hand(self._grants_note(grants, child[1], self._lines.get(worker, 0))):
                continue
            child[0].send(self._tools_note(worker, grants))

    def _pair(self, worker: SessionWorker) -> None:
        """Give the child and ``worker`` a new channel between them (on the loop)."""
        child = self._child
        if child is None or not worker.ready:
            return
        control, calls = child
        grants = self._invoker.direct_grants(worker)
        self._paired += 1
        line = self._paired
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if not worker.hand(self._grants_note(grants, calls, line), mine.fileno()):
                return
            self._lines[worker] = line
            if control.send(self._tools_note(worker, grants), theirs.fileno()):
                self._granted[worker] = grants
        finally:
            mine.close()
            theirs.close()

    def _key(self, worker: SessionWorker) -> int:
        key = self._keys.get(worker)
        if key is None:
            key = self._keys[worker] = len(self._keys) + 1
        return key

    def _tools_note(self, worker: SessionWorker, grants: dict[str, Any]) -> bytes:
        """What the child is told of ``worker``'s grants: the tools it may call there."""
        from vis_core.ipc.messages import DirectTools, encode  # with the first child, not before

        return encode(DirectTools(self._key(worker), sorted(grants)))

    @staticmethod
    def _grants_note(
        grants: dict[str, tuple[str, str, bool]], calls: ChildCalls, line: int
    ) -> bytes:
        from vis_core.ipc.messages import DirectGrants, encode

        message_limit, max_calls = calls.limits
        return encode(DirectGrants(grants, message_limit, max_calls, line))

    def _read_workers(self) -> None:
        """Before the child's next frames: what its paired workers wrote until now."""
        for worker in self._granted:
            worker.read_waiting()
