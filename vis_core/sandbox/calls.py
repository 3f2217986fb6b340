"""The host side of a sandbox child's protocol pipe: its frames read in the loop's reader
callback, the tool and handle calls in them served, their results written back.

Imported with the first child, not with :mod:`vis_core.sandbox.host`: it loads the IPC layer
(msgspec with it), which a ``vis run`` that runs no block never needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from vis_core.ipc import values as wire
from vis_core.ipc.encoded import Encoded, was_sent
from vis_core.ipc.framing import READ_CHUNK, FrameReader, ProtocolError, check_in_flight
from vis_core.ipc.messages import (
    CancelCall,
    Done,
    Ready,
    Result,
    ToolCall,
    framed,
    from_child,
)
from vis_core.ipc.messages import HandleCall as HandleCallMessage
from vis_core.model.handles import HostHandle
from vis_core.sandbox.host import HandleCall
from vis_core.system.loops import keep
from vis_core.system.process import ChildGone

if TYPE_CHECKING:
    from vis_core.sandbox.host import HandleCaller, QuickCall, ToolCaller
    from vis_core.system.process import ChildProcess


class ChildSide(Protocol):
    """What the calls need of the sandbox whose child they serve."""

    def ready(self, msg: Ready) -> None:
        """The child started."""

    def finished(self, msg: Done) -> None:
        """A block of the child is done."""

    def broke(self, proc: ChildProcess, why: str) -> None:
        """``proc`` broke the protocol: it is stopped, and ``why`` is how it ended."""

    def pipe_ended(self, proc: ChildProcess) -> None:
        """The protocol pipe of ``proc`` ended (it exits, or it closed the pipe)."""

    def write_now(self, line: bytes) -> None:
        """Write ``line`` to the running child now (a dead child's exit reports itself)."""

    async def write(self, line: bytes) -> None:
        """Write ``line`` to the running child, waiting while its pipe is full."""

    async def tools_update(self) -> None:
        """Before a call's result: the session's tools, when they changed since the child got
        them, are written to it first."""


class ChildCalls:
    """The calls of one sandbox's children: each call's task or quick call (a direct call the
    host records), and the host handles its results carried (ids stay valid across the
    sandbox's children)."""

    def __init__(
        self,
        side: ChildSide,
        *,
        tasks: set[asyncio.Task[Any]],
        call_tool: ToolCaller,
        call_handle: HandleCaller | None,
    ) -> None:
        """``tasks``: the sandbox's own set, which its ``close`` cancels: a call's task is kept
        there while it runs."""
        self._side = side
        self._tasks = tasks
        self._call_tool = call_tool
        self._call_handle_hook = call_handle
        self._calls: dict[int, asyncio.Task[None] | QuickCall] = {}
        self._handles: dict[str, HostHandle] = {}
        self._handle_ids: dict[int, str] = {}
        self._handle_origins: dict[str, str | None] = {}
        self._stop_listening: Callable[[], None] | None = None
        # reads what the workers paired with the child wrote, before the child's next frames
        self.before_frames: Callable[[], None] | None = None
        self.limits = (0, 0)  # the child's: the longest message, calls in flight (``listen``)
        # the direct calls answered last (as many as may be in flight), in order: one the
        # child makes again through the host, its direct channel ended before it read the
        # answer, is not made twice
        self._direct_ended: deque[int] = deque()
        self._ended_ids: set[int] = set()

    def listen(self, proc: ChildProcess, fd: int, *, max_calls: int, message_limit: int) -> None:
        """Read the child's protocol pipe in the loop's reader callback: each whole frame is
        checked and dispatched at once. A frame that breaks the protocol stops the child."""
        loop = asyncio.get_running_loop()
        self.limits = (message_limit, max_calls)
        self._direct_ended.clear()  # a new child numbers its calls from 1 again
        self._ended_ids.clear()
        frames = FrameReader(message_limit)
        os.set_blocking(fd, False)
        side = self._side

        def stop() -> None:  # at the end of the pipe, or when the sandbox closes
            if self._stop_listening is stop:
                self._stop_listening = None
            if loop.remove_reader(fd):
                os.close(fd)

        def readable() -> None:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:  # the pipe broke: as good as its end
                chunk = b""
            if self.before_frames is not None:
                self.before_frames()  # what direct calls ended before this was written
            try:
                frames.feed(chunk)
                while (body := frames.next()) is not None:
                    self._dispatch(from_child(body), loop, max_calls)
            except ProtocolError as exc:
                side.broke(proc, f"was stopped because it broke the protocol ({exc})")
                chunk = b""
            if not chunk:
                stop()
                side.pipe_ended(proc)

        self._stop_listening = stop
        loop.add_reader(fd, readable)

    def stop_listening(self) -> None:
        if self._stop_listening is not None:
            self._stop_listening()

    def cancel_all(self) -> None:
        """Cancel every call in flight (its block stopped, or its child ended)."""
        for call in list(self._calls.values()):
            self._cancel(call)
        self._calls.clear()  # a task cancelled before it ran never removes itself

    def _dispatch(
        self,
        msg: Ready | ToolCall | HandleCallMessage | CancelCall | Done,
        loop: asyncio.AbstractEventLoop,
        max_calls: int,
    ) -> None:
        kind = type(msg)
        if kind is ToolCall or kind is HandleCallMessage:
            assert isinstance(msg, ToolCall | HandleCallMessage)
            if msg.id in self._calls or msg.id in self._ended_ids:  # made on a direct channel
                return  # that ended: it runs, or its answer is on its way
            check_in_flight(len(self._calls), max_calls)  # the child itself refuses more
            task = loop.create_task(self._serve(msg, loop))
            self._tasks.add(task)
            self._calls[msg.id] = task
        elif isinstance(msg, CancelCall):
            call = self._calls.pop(msg.id, None)
            if call is not None:
                self._cancel(call)
        elif isinstance(msg, Done):
            self._side.finished(msg)
        elif isinstance(msg, Ready):
            self._side.ready(msg)

    def _cancel(self, call: asyncio.Task[None] | QuickCall) -> None:
        """Cancel one tool call; a direct call's end is waited for as a task's would be."""
        ending = call.cancel()
        if isinstance(ending, asyncio.Task) and not ending.done():
            keep(self._tasks, ending)

    def adopt(
        self,
        rid: int,
        name: str,
        make: Callable[[Callable[[BaseException | None, Any], None]], QuickCall | None],
    ) -> bool:
        """The child's call ``rid`` of ``name`` came on a direct channel and runs in its
        worker: ``make(answer)`` records it (as a quick call); ``answer`` writes the outcome
        to the child unless the worker sent it there itself. False: nothing was made."""

        def answer(error: BaseException | None, value: Any) -> None:
            if self._calls.pop(rid, None) is None:  # given up meanwhile
                return
            self._ended(rid)
            if error is not None or not was_sent(value):  # else the worker answered it
                self._side.write_now(self._result_frame(rid, name, error, value))

        call = make(answer)
        if call is None:  # no such tool in the session now: the child hears so
            missing = LookupError(f"{name} is not a tool of this session now")
            self._side.write_now(self._result_frame(rid, name, missing, None))
            return False
        self._calls[rid] = call
        return True

    def _ended(self, rid: int) -> None:
        ended, ids = self._direct_ended, self._ended_ids
        ended.append(rid)
        ids.add(rid)
        if len(ended) > max(self.limits[1], 1):
            ids.discard(ended.popleft())

    def give_up(self, rid: int) -> None:
        """The child's direct call ``rid`` was cancelled, or its channel ended with it."""
        call = self._calls.pop(rid, None)
        if call is not None:
            self._cancel(call)

    async def _serve(
        self, msg: ToolCall | HandleCallMessage, loop: asyncio.AbstractEventLoop
    ) -> None:
        """Answer one ``call``/``hcall``; its task then leaves ``_tasks`` itself (a done
        callback would cost the loop one more pass per call)."""
        try:
            line = await self._result_line(msg)
            with contextlib.suppress(ChildGone):
                await self._side.tools_update()  # what the call changed is callable after it
                await self._side.write(line)
        finally:
            self._tasks.discard(asyncio.current_task(loop))

    async def _result_line(self, msg: ToolCall | HandleCallMessage) -> bytes:
        """The ``Result`` frame for one ``ToolCall``/``HandleCall``."""
        rid = msg.id
        origin: str | None = None
        try:
            args = wire.decode(msg.args, handle_in=self._handle_in)
            kwargs = wire.decode(msg.kwargs, handle_in=self._handle_in)
            if isinstance(msg, ToolCall):
                origin = msg.name
                value = await self._call_tool(msg.name, tuple(args), kwargs)
            else:
                hid = msg.handle
                origin = self._handle_origins.get(hid)
                value = await self._call_handle(hid, msg.method, args, kwargs)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # every tool failure goes back
            return self._result_frame(rid, origin, exc, None)
        finally:
            self._calls.pop(rid, None)
        return self._result_frame(rid, origin, None, value)

    def _result_frame(
        self, rid: int, origin: str | None, error: BaseException | None, value: Any
    ) -> bytes:
        """The ``Result`` frame of call ``rid``: ``value``, or ``error`` (also when ``value``
        cannot be written); ``origin``: the tool a handle in it came from."""
        if error is None and type(value) is Encoded:  # packed by its worker: as it is
            return framed(Result(rid, True, msgspec.Raw(value.data)))
        if error is None:

            def handle_out(obj: HostHandle) -> dict[str, Any]:
                return self._handle_out(obj, origin)

            try:
                data = wire.dumps(value, handle_out=handle_out, root="result")
                return framed(Result(rid, True, data))
            except Exception as exc:  # a result it cannot write
                error = exc
        described = {"type": type(error).__name__, "message": str(error)}
        return framed(
            Result(rid, False, error={k: wire.safe_text(v) for k, v in described.items()})
        )

    async def _call_handle(
        self, hid: str, method: str, args: list[Any], kwargs: dict[str, Any]
    ) -> Any:
        obj = self._handles.get(hid)
        if obj is None:
            raise LookupError(
                f"handle {hid} is unknown to this sandbox; it may belong to an earlier session"
            )
        if method not in type(obj).__vis_methods__:
            raise AttributeError(f"{type(obj).__name__} handles have no method {method!r}")
        if self._call_handle_hook is not None:  # the engine: one Activity per call
            call = HandleCall(obj, method, tuple(args), kwargs, self._handle_origins.get(hid))
            return await self._call_handle_hook(call)
        value: Awaitable[Any] | Any = getattr(obj, method)(*args, **kwargs)
        return await value if inspect.isawaitable(value) else value

    def _handle_out(self, obj: HostHandle, origin: str | None = None) -> dict[str, Any]:
        hid = self._handle_ids.get(id(obj))
        if hid is None:
            hid = f"h{len(self._handles) + 1}"
            self._handles[hid] = obj
            self._handle_ids[id(obj)] = hid
            self._handle_origins[hid] = origin
        return {"id": hid, **wire.describe_handle(obj)}

    def _handle_in(self, ref: dict[str, Any]) -> HostHandle:
        obj = self._handles.get(str(ref.get("id")))
        if obj is None:
            raise LookupError(f"handle {ref.get('id')} is unknown to this sandbox")
        return obj
